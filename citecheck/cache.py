"""json_cache.json: every external call (judge, crawl) recorded once and replayed forever.

Rules:
- The key is a digest of the whole request (function, model, request body), so an edited prompt or
  question misses instead of replaying a stale answer.
- Each entry keeps the answer, the model that produced it, token usage, seconds and the UTC date.
- Writes are atomic (temp file + rename), thread-safe and process-safe (a lock file); a writer
  re-reads the file under the lock so concurrent recorders never drop each other's entries.
- A corrupted file raises CacheCorrupted naming the path and is never overwritten.
- An offline cache (CITECHECK_OFFLINE=1) raises CacheMiss on a miss, naming the call and how to run it live.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable


class CacheError(RuntimeError):
    """Base class for cache problems."""


class CacheCorrupted(CacheError):
    """The cache file exists but is not a JSON object; it is left untouched."""


class CacheMiss(CacheError):
    """Offline replay asked for a call that was never recorded."""


def request_key(function: str, model: str, request: Any) -> str:
    """sha256 over the canonical JSON of (function, model, request)."""
    blob = json.dumps({"function": function, "model": model, "request": request},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _load(path: Path) -> dict:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise CacheCorrupted(f"cache file {path} is empty; restore it from git or delete it to start over")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CacheCorrupted(f"cache file {path} is not valid JSON (line {exc.lineno}): "
                             "restore it from git or delete it to start over") from None
    if not isinstance(data, dict):
        raise CacheCorrupted(f"cache file {path} does not hold a JSON object")
    return data


def _dump(path: Path, data: dict) -> None:
    """Atomic write: keys sorted at the top level, entry fields in the order they were produced."""
    ordered = {key: data[key] for key in sorted(data)}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or Path(".")))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(ordered, handle, indent=1, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class Cache:
    """One cache file. `call()` replays a recorded answer or records a new one."""

    _locks: dict[str, threading.Lock] = {}
    _locks_guard = threading.Lock()

    def __init__(self, path: str | os.PathLike, *, offline: bool = False):
        self.path = Path(path)
        self.offline = offline
        self._entries = _load(self.path)
        with Cache._locks_guard:
            self._lock = Cache._locks.setdefault(str(self.path.resolve()), threading.Lock())

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> dict:
        return dict(self._entries)

    @contextlib.contextmanager
    def _file_lock(self):
        lock_path = self.path.with_name(self.path.name + ".lock")
        with self._lock, open(lock_path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def put(self, key: str, entry: dict) -> None:
        """Add one entry: re-read the file under the lock, merge, write atomically."""
        with self._file_lock():
            on_disk = _load(self.path)
            on_disk[key] = entry
            _dump(self.path, on_disk)
            self._entries = on_disk

    def call(self, function: str, model: str, request: Any,
             compute: Callable[[], tuple[Any, dict | None, str]], *, how_to_run_live: str = "") -> Any:
        """Replay the answer for this exact request, or record `compute()` -> (answer, usage, answered_by).

        `answered_by` is the model name the server reported; the entry is stamped with it.
        """
        key = request_key(function, model, request)
        hit = self._entries.get(key)
        if hit is not None:
            return hit["answer"]
        if self.offline:
            raise CacheMiss(f"{function} (model {model}, key {key[:12]}) is not in {self.path.name} and "
                            f"CITECHECK_OFFLINE=1. To run it live, unset CITECHECK_OFFLINE"
                            + (f" and {how_to_run_live}" if how_to_run_live else ""))
        started = time.perf_counter()
        answer, usage, answered_by = compute()
        entry = {
            "function": function,
            "model": answered_by or model,
            "answer": answer,
            "usage": usage,
            "seconds": round(time.perf_counter() - started, 3),
            "recorded": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        }
        self.put(key, entry)
        return answer


def models_used(cache: Cache) -> list[dict]:
    """Which models answered the recorded calls, how many each, and the date range."""
    rows: dict[tuple, dict] = {}
    for entry in cache.entries().values():
        row = rows.setdefault((entry["function"], entry["model"]),
                              {"function": entry["function"], "model": entry["model"], "calls": 0,
                               "first": entry.get("recorded", ""), "last": entry.get("recorded", "")})
        row["calls"] += 1
        row["first"] = min(row["first"], entry.get("recorded", ""))
        row["last"] = max(row["last"], entry.get("recorded", ""))
    return sorted(rows.values(), key=lambda r: (r["function"], r["model"]))
