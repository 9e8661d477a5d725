"""Audit DBs as an older citecheck left them: the migrations up to a version, applied by hand."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from citecheck.audit import migrations


def at_version(path: Path, version: int) -> sqlite3.Connection:
    """A new DB at `path` with migrations 1..version applied and recorded (a raw connection, uncommitted)."""
    raw = sqlite3.connect(path)
    raw.execute(migrations._LEDGER)
    for number, name, fn in migrations.MIGRATIONS[:version]:
        fn(raw)
        raw.execute("INSERT INTO citecheck_migrations VALUES (?, ?, 'x')", (number, name))
    return raw
