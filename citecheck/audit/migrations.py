"""Numbered schema migrations for the audit DB, applied in order, each exactly once.

Rules:
- The DB records what it has applied in `citecheck_migrations` (version, name, applied_at). A
  migration's DDL and its version row commit in one transaction: a failure leaves the schema as it
  was before that migration, never half-written.
- Migration 1 is the schema of the first release (`citations`, created IF NOT EXISTS), so a DB written
  before migrations existed is adopted in place, its rows untouched.
- A DB that has applied a version this code does not know (written by a newer citecheck) is refused
  with an error naming the file and the version; nothing is changed.
- Before anything is written, a DB must be ours (`foreign`): empty, or holding `citecheck_migrations`,
  or a pre-migration DB whose only table is `citations` with exactly migration 1's columns (name, type,
  NOT NULL, default, key). Any other SQLite file is refused by name (ForeignDatabase), never migrated.
- Adding a migration: append a function decorated with `@migration` (the next number). Never edit one
  that has shipped.
"""
from __future__ import annotations

import datetime as _dt
import sqlite3
from typing import Callable

MIGRATIONS: list[tuple[int, str, Callable[[sqlite3.Connection], None]]] = []


class SchemaTooNew(OSError):
    """The audit DB was migrated by a newer citecheck than this one."""


class ForeignDatabase(OSError):
    """The file is a SQLite database, but not a citecheck audit DB."""


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    """Register `fn` as the next migration (its docstring's first line is its name)."""
    MIGRATIONS.append((len(MIGRATIONS) + 1, (fn.__doc__ or fn.__name__).strip().splitlines()[0], fn))
    return fn


@migration
def m001_citations(conn: sqlite3.Connection) -> None:
    """citations: one row per (batch, id, url) decided"""
    conn.execute("""
CREATE TABLE IF NOT EXISTS citations (
    batch           TEXT NOT NULL,
    id              TEXT NOT NULL,
    claim           TEXT NOT NULL,
    url             TEXT NOT NULL,
    label           TEXT NOT NULL,
    reason          TEXT,
    confidence      REAL,
    evidence_quote  TEXT,
    final_url       TEXT,
    original_status INTEGER,
    rid             TEXT NOT NULL DEFAULT '',
    model           TEXT NOT NULL DEFAULT '',
    decided_at      TEXT NOT NULL,
    PRIMARY KEY (batch, id, url)
)""")


@migration
def m002_gate_and_evidence(conn: sqlite3.Connection) -> None:
    """citations: the gate's decision and what the judge read; source-document rows"""
    for column in ("auto INTEGER",                    # 1 accepted, 0 to a person, NULL decided before this
                   "flow TEXT NOT NULL DEFAULT 'web'",  # web | source (vocabulary.FLOWS)
                   "section TEXT", "status TEXT", "quote TEXT",   # source-document rows only
                   "passages TEXT"):                 # JSON list of the passages shown to the judge
        conn.execute(f"ALTER TABLE citations ADD COLUMN {column}")


@migration
def m003_reviews(conn: sqlite3.Connection) -> None:
    """reviews: a person's decisions on citations, every one kept"""
    conn.execute("""
CREATE TABLE reviews (
    review_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    batch        TEXT NOT NULL,
    id           TEXT NOT NULL,
    url          TEXT NOT NULL,
    decided_at   TEXT NOT NULL,      -- the verdict reviewed: citations.decided_at when it was shown
    judged_label TEXT NOT NULL,      -- the label the reviewer was shown
    action       TEXT NOT NULL CHECK (action IN ('confirm', 'correct')),
    label        TEXT NOT NULL,      -- the reviewer's label (the judged one for a confirmation)
    note         TEXT,
    reviewer     TEXT NOT NULL,
    reviewed_at  TEXT NOT NULL,
    replaces     INTEGER REFERENCES reviews (review_id)   -- the earlier review this one supersedes
)""")
    conn.execute("CREATE INDEX reviews_by_citation ON reviews (batch, id, url, review_id)")


@migration
def m004_method(conn: sqlite3.Connection) -> None:
    """citations: the judge method that answered (NULL: no model asked, or decided before this)"""
    conn.execute("ALTER TABLE citations ADD COLUMN method TEXT")


@migration
def m005_spans(conn: sqlite3.Connection) -> None:
    """citations: where the evidence quote stands in the text the row names (NULL: none, or before this)"""
    for column in ("span_start INTEGER", "span_end INTEGER"):   # characters [start, end) of the page's text
        conn.execute(f"ALTER TABLE citations ADD COLUMN {column}")   # as stored, or of the row's section


LATEST = len(MIGRATIONS)


_LEDGER = ("CREATE TABLE IF NOT EXISTS citecheck_migrations "
           "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")


def applied(conn: sqlite3.Connection) -> list[int]:
    """The versions this DB has applied, in order ([] for a new or pre-migration DB)."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'citecheck_migrations'")
    if exists.fetchone() is None:
        return []
    return [row[0] for row in conn.execute("SELECT version FROM citecheck_migrations ORDER BY version")]


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple]:
    return conn.execute('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)',
                        (table,)).fetchall()


def _first_release() -> list[tuple]:
    """The `citations` columns migration 1 creates (read from a scratch in-memory DB, never restated)."""
    scratch = sqlite3.connect(":memory:")
    try:
        MIGRATIONS[0][2](scratch)
        return _columns(scratch, "citations")
    finally:
        scratch.close()


def foreign(conn: sqlite3.Connection) -> str | None:
    """Why this DB is not a citecheck audit DB (its tables, or what differs), or None when it is ours."""
    tables = sorted(name for name, in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"))
    if not tables or "citecheck_migrations" in tables:
        return None
    if tables != ["citations"]:
        return f"tables: {', '.join(tables)}"
    if _columns(conn, "citations") != _first_release():
        return "its citations table is not citecheck's (other columns)"
    return None


def migrate(conn: sqlite3.Connection, path: str = "the audit DB") -> list[int]:
    """Apply every migration this DB lacks; returns the versions applied now. A foreign DB is refused
    first (ForeignDatabase), with nothing written.

    Each runs in its own write transaction, which re-reads the ledger first: two processes opening a
    new DB at once apply each migration once."""
    why = foreign(conn)
    if why is not None:
        raise ForeignDatabase(f"{path} is a SQLite database but not a citecheck audit DB ({why}); nothing "
                              "was changed: use an audit DB or a new file (AUDIT_DB, --db, --audit-db)")
    done = applied(conn)
    newer = [v for v in done if v > LATEST]
    if newer:
        raise SchemaTooNew(f"audit DB {path} is at schema version {max(newer)}, newer than this citecheck "
                           f"knows ({LATEST}); upgrade citecheck or use another AUDIT_DB")
    now = []
    for version, name, fn in MIGRATIONS:
        if version in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_LEDGER)
            if version not in applied(conn):
                fn(conn)
                conn.execute("INSERT INTO citecheck_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                             (version, name, _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")))
                now.append(version)
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
    return now
