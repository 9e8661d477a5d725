"""The cache store: where live runs record, one SQLite row per key.

Rules:
- One table, `entries(key, function, recorded, entry)`, keyed by the request digest; `entry` is the
  stamped entry as JSON text, fields in the order they were produced. A write is one INSERT in its
  own transaction, so its cost does not grow with the number of entries (a B-tree insert, no rewrite).
- WAL journal with synchronous=NORMAL: readers never block the writer and the writer never blocks
  readers; threads and processes write at once and lose nothing (SQLite's own locks). A process
  killed mid-write loses at most that write; a power cut at most the last commits (a cache entry
  lost is a call made again, never a wrong answer).
- A store opened for reading only (offline replay) never creates or changes anything.
- Failures name the path and empty nothing: a file that is not a SQLite database, or a SQLite
  database that is not a citecheck store -> CacheCorrupted; a write that waited `busy_timeout`
  seconds for another process's lock -> CacheLocked; a file without write permission, or a
  directory where SQLite cannot write its journal -> CacheReadOnly.
- The connection is per process: a forked child opens its own instead of sharing its parent's.
- Processes may open a new store at once: creating it waits for the others (up to busy_timeout).
"""
from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Iterator

from .errors import CacheCorrupted, CacheLocked, CacheReadOnly

SCHEMA_VERSION = 1
_SCHEMA = ("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, function TEXT NOT NULL, "
           "recorded TEXT NOT NULL, entry TEXT NOT NULL) WITHOUT ROWID")


def writable(path: Path) -> bool:
    """False when the file exists without its owner's write bit (root ignores permissions, so the bit
    is what says 'read-only' here, as a person who ran chmod a-w means it)."""
    try:
        return bool(os.stat(path).st_mode & stat.S_IWUSR)
    except FileNotFoundError:
        return True


class Store:
    """One SQLite store file (module rules)."""

    def __init__(self, path: str | os.PathLike, *, read_only: bool = False, busy_timeout: float = 30.0):
        self.path = Path(path)
        self.read_only = read_only
        self.busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    # ------------------------------------------------------------ connection

    def exists(self) -> bool:
        return self.path.exists()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        if self.read_only:
            uri = f"file:{self.path.resolve()}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, check_same_thread=False)
        else:
            if not writable(self.path):
                raise CacheReadOnly(f"cache store {self.path} is read-only (no write permission): make it "
                                    "writable, or set CITECHECK_OFFLINE=1 to replay without recording")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout, check_same_thread=False)
        try:
            self._adopt(conn)
        except BaseException:
            conn.close()
            raise
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _adopt(self, conn: sqlite3.Connection) -> None:
        """Check (and, when writable, create) the schema; refuse a database that is not a store."""
        with self._errors("open"):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if version > SCHEMA_VERSION:
                raise CacheCorrupted(f"cache store {self.path} has schema version {version}, newer than this "
                                     f"citecheck ({SCHEMA_VERSION}): upgrade citecheck")
            if tables and "entries" not in tables:
                raise CacheCorrupted(f"{self.path} is a SQLite database but not a citecheck cache store "
                                     f"(tables: {', '.join(sorted(tables))}); set CITECHECK_CACHE_STORE")
            if self.read_only:
                return
            self._until_free(conn, self._create)

    @staticmethod
    def _create(conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            with conn:
                conn.execute(_SCHEMA)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _until_free(self, conn: sqlite3.Connection, step) -> None:
        """`step(conn)`, tried again while another process holds the lock, for up to busy_timeout seconds:
        SQLite answers a second process switching a new file to WAL "locked" at once, without waiting."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                return step(conn)
            except sqlite3.OperationalError as exc:
                if not ("locked" in str(exc) or "busy" in str(exc)) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    def _errors(self, doing: str):
        return _Translate(self.path, doing, self.busy_timeout)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # ------------------------------------------------------------ reads and writes

    def get(self, key: str) -> str | None:
        """The entry's JSON text, or None (also when a read-only store's file does not exist)."""
        if self.read_only and not self.exists():
            return None
        with self._lock, self._errors("read"):
            row = self._connect().execute("SELECT entry FROM entries WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put_many(self, rows: list[tuple[str, str, str, str]]) -> None:
        """Insert or replace (key, function, recorded, entry_json) rows in one transaction."""
        if self.read_only:
            raise CacheReadOnly(f"cache store {self.path} was opened for replay only")
        with self._lock, self._errors("write"):
            conn = self._connect()
            with conn:
                conn.executemany("INSERT OR REPLACE INTO entries (key, function, recorded, entry) "
                                 "VALUES (?, ?, ?, ?)", rows)

    def items(self) -> Iterator[tuple[str, str]]:
        """(key, entry_json) for every row, in key order."""
        if self.read_only and not self.exists():
            return iter(())
        with self._lock, self._errors("read"):
            rows = self._connect().execute("SELECT key, entry FROM entries ORDER BY key").fetchall()
        return iter(rows)

    def models(self) -> set[str]:
        """The distinct `model` stamps of the stored entries (one query, the entries are not parsed here)."""
        if self.read_only and not self.exists():
            return set()
        with self._lock, self._errors("read"):
            rows = self._connect().execute(
                "SELECT DISTINCT json_extract(entry, '$.model') FROM entries").fetchall()
        return {row[0] for row in rows if isinstance(row[0], str)}

    def __len__(self) -> int:
        if self.read_only and not self.exists():
            return 0
        with self._lock, self._errors("read"):
            return self._connect().execute("SELECT count(*) FROM entries").fetchone()[0]


class _Translate:
    """sqlite3 errors -> the cache's errors, each naming the store's path."""

    def __init__(self, path: Path, doing: str, busy_timeout: float):
        self.path, self.doing, self.busy_timeout = path, doing, busy_timeout

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if not isinstance(exc, sqlite3.Error):
            return False
        text = str(exc)
        if "locked" in text or "busy" in text:
            raise CacheLocked(f"cache store {self.path} is locked by another process (waited "
                              f"{self.busy_timeout:g} s to {self.doing}); try again when it finishes") from None
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            raise CacheReadOnly(f"cache store {self.path} cannot be written ({text}): check the permissions "
                                "of the file and its directory") from None
        raise CacheCorrupted(f"cache store {self.path} is not a readable cache store ({text}): move it aside "
                             "or restore it; it is never emptied") from None
