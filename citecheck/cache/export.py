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
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import stat
import threading
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
