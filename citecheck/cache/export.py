"""json_cache.json, the export: the committed, sorted, human-diffable snapshot that replays read.

Rules:
- Format: one JSON object, keys sorted, each entry's fields in the order they were produced, indent 1,
  UTF-8 unescaped, a final newline. The same entries always give the same bytes, so `git diff` shows
  only entries that were added or changed.
- `export` merges the store into the file under the file lock (`json_cache.json.lock`): every entry
  of both, the store's entry winning for a key in both (it is the newer recording). Nothing is ever
  removed, and an unchanged export is not rewritten.
- The file is written to a temp file in its directory, fsynced and renamed over the old one, with the
  old file's permission bits; a file without write permission is refused, never replaced.
- Temp files are made only under the file lock, so one found while holding it was left by a process
  that died (kill -9): it is deleted at the start of an export or of a recording run.
- A file that is empty, not UTF-8, not JSON or not a JSON object raises CacheCorrupted naming it and is
  never overwritten.
- Reading (`Export`): a process that needs ten entries does not parse a hundred thousand. A file in the
  export's own format (it starts `{\n "` and ends `\n}\n`) is opened without being read: a lookup bisects
  the byte offsets of its key lines (keys sorted, one a line at indent 1; no other line starts with one
  space and a quote) and parses that entry alone. Any other file (written by hand, on one line) is parsed
  whole at open, as are the whole-file reads (`cache export`, `cache stats`, `models_used`).
- Once a process's lookups have cost about one whole parse (each counted as LOOKUP_BYTES of the file),
  the file is parsed whole and later lookups are dictionary reads: a process that reads most entries pays
  at most about twice the whole parse.
- A miss is trusted only after the key lines were checked, once, to be sorted and unique (one scan over
  the file, no parse): a file that is not (a merge conflict resolved by hand) is parsed whole instead.
- An entry or key line that is not valid JSON raises CacheCorrupted naming the file (and key) when it is
  read; the file's other corruption is reported by the first whole read. Nothing is repaired or emptied.
"""
from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import re
import stat
import threading
import weakref
from pathlib import Path

from ..files import replace_file
from .errors import CacheCorrupted, CacheReadOnly
from .store import writable

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def read_export(path: Path) -> dict:
    """The export's entries ({} when the file does not exist); CacheCorrupted naming it otherwise."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    restore = "restore it from git or delete it to start over"
    if not raw.strip():
        raise CacheCorrupted(f"cache file {path} is empty; {restore}")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CacheCorrupted(f"cache file {path} is not UTF-8 text (byte {exc.start}): {restore}") from None
    except json.JSONDecodeError as exc:
        raise CacheCorrupted(f"cache file {path} is not valid JSON (line {exc.lineno}): {restore}") from None
    if not isinstance(data, dict):
        raise CacheCorrupted(f"cache file {path} does not hold a JSON object: {restore}")
    return data


HEAD, TAIL, KEY_LINE = b'{\n "', b"\n}\n", b'\n "'
"""How a file in the export's format starts and ends, and what starts each key line (`render`)."""
LOOKUP_BYTES = 16_384
"""What one lookup costs, counted in bytes of whole-file parsing (benchmarks/bench_cache.py measures both)."""
_CHUNK = 65_536
_MEMO_DEPTH = 12
_WINDOW = 4096


class Export:
    """The export's entries as one process reads them (module rules): looked up one at a time in a file in
    the export's format, or parsed whole."""

    def __init__(self, path: Path, entries: dict | None = None):
        self.path = path
        self._whole: dict | None = entries
        self._fd: int | None = None
        self._size = self._budget = 0
        self._ordered = False
        self._lines: dict[int, tuple[int, str] | None] = {}
        self._lock = threading.Lock()
        if entries is None:
            self._open()

    def _open(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            self._whole = {}
            return
        size = os.fstat(fd).st_size
        if size > len(HEAD) + len(TAIL) and os.pread(fd, len(HEAD), 0) == HEAD \
                and os.pread(fd, len(TAIL), size - len(TAIL)) == TAIL:
            self._fd, self._size, self._budget = fd, size, size
            weakref.finalize(self, os.close, fd)
            return
        os.close(fd)
        self._whole = read_export(self.path)

    def all(self) -> dict:
        """Every entry, the file parsed whole (once)."""
        with self._lock:
            if self._whole is None:
                self._whole = read_export(self.path)
            return self._whole

    def get(self, key: str):
        """The entry recorded under `key` as the file holds it (not checked), or None."""
        if self._whole is None:
            self._budget -= LOOKUP_BYTES
            if self._budget > 0:
                span = self._locate(key)
                if span is not None:
                    return self._value(key, *span)
                if self._check_order():
                    return None
        return self.all().get(key)

    # ------------------------------------------------------------ the file in the export's format

    def _key_lines(self, start: int, block: int = 4096):
        """(offset, key, offset of its value) of each key line beginning at or after `start`, in file
        order, read in blocks (a key line's newline ends the line before it)."""
        base = read = max(start - 1, 0)                  # the file offset of buf[0], of the next read
        buf = b""
        while True:
            at = buf.find(KEY_LINE)
            while at >= 0 and (end := buf.find(b"\n", at + 1)) >= 0:
                key, length = self._key_of(buf[at + 1:end], base + at + 1)
                yield base + at + 1, key, base + at + 1 + length
                at = buf.find(KEY_LINE, end)
            keep = at if at >= 0 else max(len(buf) - len(KEY_LINE) + 1, 0)
            more = os.pread(self._fd, block, read)
            if not more:
                return
            base, buf, read, block = base + keep, buf[keep:] + more, read + len(more), max(block, _CHUNK)

    def _key_of(self, text: bytes, line: int) -> tuple[str, int]:
        """The key of a key line's `text` (found at offset `line`) and the length of ` "key": ` in bytes."""
        try:
            decoded = text.decode("utf-8")
            key, stop = json.decoder.scanstring(decoded, 2)
        except (UnicodeDecodeError, ValueError):
            raise CacheCorrupted(f"cache file {self.path} has a line that is not a key at byte {line}: "
                                 "restore it from git") from None
        if decoded[stop:stop + 2] != ": ":
            raise CacheCorrupted(f"cache file {self.path} has a line that is not a key at byte {line}: "
                                 "restore it from git")
        return key, len(decoded[:stop + 2].encode("utf-8"))

    def _locate(self, key: str) -> tuple[int, int] | None:
        """Where `key`'s entry starts and stops in the file, or None (absent, or there twice). Bisection
        over byte offsets (keys sorted) down to one _WINDOW, then the key lines in it in turn; the lines the
        first _MEMO_DEPTH halvings land on are the same for every key, so they are remembered."""
        lo, hi, depth = 0, self._size, 0
        while hi - lo > _WINDOW:
            mid = (lo + hi) // 2
            found = self._lines[mid] if mid in self._lines else next(self._key_lines(mid), None)
            if depth < _MEMO_DEPTH:
                self._lines[mid] = found
            if found is None or found[1] >= key:
                hi = mid
            else:
                lo = found[0] + 1
            depth += 1
        lines = self._key_lines(lo)
        found = next((line for line in lines if line[1] >= key), None)
        if found is None or found[1] != key:
            return None
        after = next(lines, None)
        if after is not None and after[1] == key:
            return None
        return found[2], after[0] - 1 if after is not None else self._size - len(TAIL)

    def _value(self, key: str, start: int, stop: int):
        text = os.pread(self._fd, stop - start, start)
        try:
            return json.loads(text.decode("utf-8").rstrip().removesuffix(","))
        except UnicodeDecodeError:
            problem = "is not UTF-8 text"
        except json.JSONDecodeError as exc:
            problem = f"is not valid JSON ({exc.msg})"
        raise CacheCorrupted(f"cache entry {key} in {self.path} {problem}: restore the file from git")

    def _check_order(self) -> bool:
        """True when the key lines are sorted and unique (checked once); else the file is parsed whole."""
        with self._lock:
            if not self._ordered:
                try:
                    keys = (key for _, key, _ in self._key_lines(0, _CHUNK * 16))
                    self._ordered = all(a < b for a, b in itertools.pairwise(keys))
                except CacheCorrupted:                    # a line that is not a key: read_export says where
                    self._ordered = False
                if not self._ordered:
                    self._whole = read_export(self.path)
        return self._ordered




def render(entries: dict) -> bytes:
    """The export's bytes for these entries (module rules: sorted keys, indent 1, final newline)."""
    ordered = {key: entries[key] for key in sorted(entries)}
    return (json.dumps(ordered, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _temp_name(path: Path) -> re.Pattern:
    return re.compile(rf"^\.{re.escape(path.name)}\.[A-Za-z0-9_]{{8}}$")


def write_export(path: Path, entries: dict) -> None:
    """Atomically replace the file with `entries` (module rules); call it holding `file_lock(path)`."""
    if not writable(path):
        raise CacheReadOnly(f"cache file {path} is read-only (mode {stat.filemode(os.stat(path).st_mode)}): "
                            "make it writable to export into it")
    replace_file(path, lambda handle: handle.write(render(entries)), text=False)


@contextlib.contextmanager
def file_lock(path: Path, *, blocking: bool = True):
    """The export's lock (threads of this process and other processes); yields False when
    `blocking` is off and another holder has it."""
    with _locks_guard:
        local = _locks.setdefault(str(path.resolve()), threading.Lock())
    if not local.acquire(blocking=blocking):
        yield False
        return
    try:
        with open(path.with_name(path.name + ".lock"), "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        local.release()


def remove_orphans(path: Path) -> list[Path]:
    """Delete temp files a killed export left beside `path`; call it holding `file_lock(path)`."""
    pattern, removed = _temp_name(path), []
    with contextlib.suppress(FileNotFoundError):
        for item in os.scandir(path.parent):
            if pattern.match(item.name) and item.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(item.path)
                    removed.append(Path(item.path))
    return removed


def clean_at_start(path: Path) -> None:
    """Remove orphan temp files unless an export is running right now (then they are its own)."""
    if not path.parent.is_dir():
        return
    with contextlib.suppress(OSError), file_lock(path, blocking=False) as held:
        if held:
            remove_orphans(path)
