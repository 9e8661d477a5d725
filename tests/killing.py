"""Killing a batch mid-run: wait until its audit DB holds some rows, then SIGKILL it."""
from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Callable


def _count(db: Path) -> int:
    """Citations in `db` so far; 0 while the batch is still creating its tables (a poll can land between
    the file's creation and the migration's commit)."""
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT count(*) FROM citations").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return 0
        raise


def kill_mid_batch(proc: subprocess.Popen, db: Path, rows: int, timeout: float = 30.0,
                   watch: Callable[[], None] | None = None) -> dict:
    """SIGKILL `proc` once `db` holds `rows` citations (or after `timeout` s); return the rows it left,
    {"id url": decided_at}. `watch` is called on every poll (e.g. to note the process's children)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if watch is not None:
            watch()
        if db.exists() and _count(db) >= rows:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT id || ' ' || url, decided_at FROM citations").fetchall())
