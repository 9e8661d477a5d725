"""The cache: every external call (judge, crawl) recorded once and replayed forever.

Two files, one set of rules (docs/DESIGN.md, "The cache"):
- the store (`cache.store`; `json_cache.sqlite` beside the export unless CITECHECK_CACHE_STORE says
  otherwise; git-ignored): live runs record here, one row per key, so a write costs the same at 1,000
  entries and at 100,000, and threads and processes record at once without losing an entry;
- the export (`cache.export`; `json_cache.json`, committed): the sorted, human-diffable snapshot the
  notebooks replay from. `cache export` and `record` merge the store into it.

Rules:
- The key is a digest of the whole request (function, model, request body), so an edited prompt or
  question misses instead of replaying a stale answer.
- Each entry is {function, model, answer, usage, seconds, recorded}: the model the server reported,
  token usage, seconds and the UTC date. `answered` gives the answer with that model (replayed or
  recorded): what a row names as the model that answered; the cache remembers the names it gave this run
  (`seen`), and `models` is every name it holds.
- A lookup reads the store, then the export (`export.Export`: that entry alone, found by its sorted key
  line, so a process that needs ten entries does not parse a hundred thousand). A hit that is not such
  an entry, or that was recorded for another function, raises CacheCorrupted naming its key and its
  file; nothing is repaired or emptied.
- Offline (CITECHECK_OFFLINE=1): a miss raises CacheMiss naming the call and how to run it live;
  nothing is written; CACHE_MAX_AGE is ignored. CITECHECK_CACHE_STORE=off replays the export alone
  (how the notebooks are reproduced: what is committed is all they read).
- Live: a crawled page (a `fetch.*` entry) recorded CACHE_MAX_AGE or more days ago is fetched again;
  the new entry replaces the old one in the store, and in the export at the next export.
- An entry holding the value of a secret (set in the environment or in the run's settings) is
  refused, never written.

Imports: the foundation only (config, files).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from .. import config
from . import export as export_file
from .errors import CacheCorrupted, CacheError, CacheLocked, CacheMiss, CacheReadOnly, HoldsSecret
from .store import Store

__all__ = ["Cache", "CacheCorrupted", "CacheError", "CacheLocked", "CacheMiss", "CacheReadOnly", "FIELDS", "HoldsSecret",
           "OFF", "models_used", "request_key", "store_path"]

FIELDS = ("function", "model", "answer", "usage", "seconds", "recorded")
"""A stamped entry's fields, in the order they are written."""
PAGES = "fetch."
"""Entries of functions named so are crawled pages: CACHE_MAX_AGE applies to them."""
OFF = "off"
"""CITECHECK_CACHE_STORE=off: no store; the export alone is replayed (offline only)."""


def request_key(function: str, model: str, request: Any) -> str:
    """sha256 over the canonical JSON of (function, model, request)."""
    blob = json.dumps({"function": function, "model": model, "request": request},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def store_path(path: str | os.PathLike, store: str | os.PathLike | None = None) -> Path | None:
    """The store of the export at `path`: `store` when given, `<export stem>.sqlite` beside it when
    empty, None when 'off'."""
    if store is None or str(store) == "":
        return Path(path).with_suffix(".sqlite")
    return None if str(store).lower() == OFF else Path(store)


def today() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def checked(key: str, entry: Any, where: str | os.PathLike, function: str | None = None) -> dict:
    """`entry` when it is a stamped entry (recorded for `function`, if given); CacheCorrupted naming the
    key and the file otherwise."""
    problem = None
    if not isinstance(entry, dict):
        problem = f"is a JSON {type(entry).__name__}, not an object"
    elif missing := [name for name in FIELDS if name not in entry]:
        problem = "has no " + ", ".join(missing)
    elif not all(isinstance(entry[name], str) for name in ("function", "model", "recorded")):
        problem = "has a function, model or recorded date that is not text"
    elif function is not None and entry["function"] != function:
        problem = f"was recorded for {entry['function']!r}, not {function!r}"
    else:
        try:
            _dt.date.fromisoformat(entry["recorded"])
        except ValueError:
            problem = f"has recorded date {entry['recorded']!r}, not YYYY-MM-DD"
    if problem:
        raise CacheCorrupted(f"cache entry {key} in {where} {problem}: restore the file from git, or delete "
                             "the entry and run the call live")
    return entry


def _decoded(key: str, text: str, where: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CacheCorrupted(f"cache entry {key} in {where} is not valid JSON ({exc.msg}): delete the entry "
                             "and run the call live") from None


class Cache:
    """The store and the export of one run. `call()` replays a recorded answer or records a new one."""

    def __init__(self, path: str | os.PathLike, *, offline: bool = False, store: str | os.PathLike | None = None,
                 page_max_age: int = 0, secrets: config.Secrets | None = None, busy_timeout: float = 30.0):
        self.path = Path(path)
        self.offline = offline
        self.page_max_age = page_max_age
        self.secrets = secrets
        where = store_path(self.path, store)
        if where is None and not offline:
            raise ValueError("CITECHECK_CACHE_STORE=off replays the export alone, so it needs CITECHECK_OFFLINE=1 "
                             "(a live run records into the store)")
        self.store = Store(where, read_only=offline, busy_timeout=busy_timeout) if where is not None else None
        self._export = export_file.Export(self.path)
        self.seen: set[str] = set()
        if not offline:
            export_file.clean_at_start(self.path)

    def __len__(self) -> int:
        return len(self.entries())

    def __repr__(self) -> str:
        return f"Cache({self.path}, store={self.store.path if self.store is not None else OFF}, offline={self.offline})"

    def entries(self) -> dict:
        """Every entry: the export's as it was read (the whole file), the store's on top."""
        return {**self._export.all(), **self.stored()}

    def stored(self) -> dict:
        """The store's entries, each checked (CacheCorrupted naming the first malformed one)."""
        if self.store is None:
            return {}
        return {key: checked(key, _decoded(key, text, self.store.path), self.store.path)
                for key, text in self.store.items()}

    def exported(self) -> dict:
        """The export's entries as they were read (the whole file), each checked."""
        return {key: checked(key, entry, self.path) for key, entry in self._export.all().items()}

    # ------------------------------------------------------------ lookups and recording

    def lookup(self, key: str, function: str | None = None) -> dict | None:
        """The checked entry for `key` (store first, then the export), or None."""
        text = self.store.get(key) if self.store is not None else None
        if text is not None:
            return checked(key, _decoded(key, text, self.store.path), self.store.path, function)
        entry = self._export.get(key)
        return None if entry is None else checked(key, entry, self.path, function)

    def expired(self, entry: dict) -> bool:
        """A crawled page recorded `page_max_age` or more days ago, in a live run."""
        if self.offline or not self.page_max_age or not entry["function"].startswith(PAGES):
            return False
        age = _dt.date.fromisoformat(today()) - _dt.date.fromisoformat(entry["recorded"])
        return age.days >= self.page_max_age

    def run(self, compute: Callable[[], tuple]) -> tuple:
        """Make the outside call (a cluster's task cache limits how many are in flight)."""
        return compute()

    def call(self, function: str, model: str, request: Any,
             compute: Callable[[], tuple[Any, dict | None, str]], *, how_to_run_live: str = "") -> Any:
        """Replay the answer for this exact request, or record `compute()` -> (answer, usage, answered_by).

        `answered_by` is the model name the server reported; the entry is stamped with it.
        """
        return self.answered(function, model, request, compute, how_to_run_live=how_to_run_live)[0]

    def answered(self, function: str, model: str, request: Any,
                 compute: Callable[[], tuple[Any, dict | None, str]], *,
                 how_to_run_live: str = "") -> tuple[Any, str]:
        """`call`, as (answer, the model its entry is stamped with: the one that answered)."""
        key = request_key(function, model, request)
        hit = self.lookup(key, function)
        if hit is not None and not self.expired(hit):
            self.seen.add(hit["model"])
            return hit["answer"], hit["model"]
        if self.offline:
            raise CacheMiss(f"{function} (model {model}, key {key[:12]}) is not in {self.path.name} and "
                            f"CITECHECK_OFFLINE=1. To run it live, unset CITECHECK_OFFLINE"
                            + (f" and {how_to_run_live}" if how_to_run_live else ""))
        started = time.perf_counter()
        answer, usage, answered_by = self.run(compute)
        entry = {"function": function, "model": answered_by or model, "answer": answer, "usage": usage,
                 "seconds": round(time.perf_counter() - started, 3), "recorded": today()}
        self.put(key, entry)
        self.seen.add(entry["model"])
        return answer, entry["model"]

    def models(self) -> set[str]:
        """Every model name an entry is stamped with (the store's, the export's, this run's)."""
        stored = self.store.models() if self.store is not None else set()
        exported = {entry.get("model") for entry in self._export.all().values() if isinstance(entry, dict)}
        return stored | {name for name in exported if isinstance(name, str)} | self.seen

    def put(self, key: str, entry: dict) -> None:
        self.put_many([(key, entry)])

    def put_many(self, items: Iterable[tuple[str, dict]]) -> None:
        """Record entries in the store, in one transaction (each passes `recordable` first)."""
        rows = [(key, entry["function"], entry["recorded"], text) for key, entry, text in self.recordable(items)]
        if rows and self.store is None:
            raise CacheReadOnly(f"{self.path} has no store to record into (CITECHECK_CACHE_STORE=off)")
        if rows:
            self.store.put_many(rows)

    def recordable(self, items: Iterable[tuple[str, dict]]) -> list[tuple[str, dict, str]]:
        """(key, entry, entry as JSON) for entries that are stamped entries holding no secret; else an error."""
        out = []
        for key, entry in items:
            checked(key, entry, "the entry to record")
            text = json.dumps(entry, ensure_ascii=False)
            self._refuse_secrets(key, entry["function"], text)
            out.append((key, entry, text))
        return out

    def _refuse_secrets(self, key: str, function: str, text: str) -> None:
        held = {name for redact in (config.redact, self.secrets.redact if self.secrets else None) if redact
                for name in config.SECRETS if f"<{name}>" in redact(text) and f"<{name}>" not in text}
        if held:
            raise HoldsSecret(f"refusing to record {function} entry {key[:12]}: it holds the value of "
                             f"{', '.join(sorted(held))}")

    # ------------------------------------------------------------ the export

    def export(self, *, dry_run: bool = False) -> dict:
        """Merge the store into the export file (`cache.export` rules); returns {entries, added, changed,
        written}. Every entry is checked first: a malformed one is reported by key and file, nothing written.
        `dry_run` counts what would change and writes nothing."""
        with export_file.file_lock(self.path):
            export_file.remove_orphans(self.path)
            self._export = export_file.Export(self.path, export_file.read_export(self.path))
            on_disk = self.exported()
            merged, added, changed = dict(on_disk), 0, 0
            for key, entry in self.stored().items():
                added += key not in merged
                changed += key in merged and merged[key] != entry
                merged[key] = entry
            written = (bool(added or changed) or not self.path.exists()) and not dry_run
            if written:
                export_file.write_export(self.path, merged)
                self._export = export_file.Export(self.path, merged)
        return {"entries": len(merged), "added": added, "changed": changed, "written": written}


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
