"""audit: a SQLite journal of every citation decided (the `citations` table, see `audit.migrations`).

Rules:
- One row per (batch, id, url): the claim, label, reason, confidence, evidence, the model and method
  that answered (the citation's own `model` and `method`: '' and NULL when no model was asked), the
  Crawlbase rid ('' when no page was stored, e.g. a skipped PDF or a direct fetch), the UTC time, the
  gate's `auto`, the passages the judge read (a JSON list) and the evidence quote's span (`span_start`,
  `span_end`: in the page's text as stored, or in the row's section); the columns are
  `vocabulary.AuditRow`'s fields. `batch` writes its batch's name; `verify` writes batch `verify`, `/verify` batch `api` and
  `check` batch `check:<citations file>`, the first two with the claim's digest as id (`claim_id`).
- Only the rid is kept: never a storage URL, never a token (every text field passes `config.redact`, the
  environment read once per row).
- Writing the same (batch, id, url) again replaces the row, so a resumed batch never duplicates one
  (reviews of the old verdict are kept: they name the `decided_at` they reviewed, `audit.reviews`).
- Opening a DB applies the migrations it lacks (an old DB is upgraded in place, losing nothing); a
  SQLite file that is not an audit DB is refused by name, never changed (`migrations.foreign`).
- A read never trusts a row: `confidence_problem` says when a stored confidence is not a number in
  [0, 1] (a hand-edited DB), and readers show or skip that row with the note instead of failing.
- A server writes through one `writer.Writer` thread (one connection), so concurrent requests never race.
- Crash guarantees (`connect`): WAL journal, synchronous=NORMAL. A write is acknowledged when its commit
  returns; every acknowledged row survives the process being killed (kill -9: the commit is in the WAL
  file, which the next open reads), and a commit costs no fsync (the WAL is synced at its checkpoints).
  A power cut may lose the latest acknowledged verdicts (never corrupting the DB; a resumed batch decides
  them again), but not a person's review: `reviews.record` commits with synchronous=FULL.

Imports: the foundation and `matching` (check's rows); never a flow or a server.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import sqlite3
import time
from pathlib import Path

from .. import config
from ..vocabulary import WEB, AuditRow
from . import migrations

__all__ = ["COLUMNS", "KEY", "as_row", "claim_id", "confidence_problem", "connect", "decided", "set_auto", "utc_now",
           "write_citation"]

COLUMNS = AuditRow.field_names()
KEY = ("batch", "id", "url")
VERIFY_BATCH, API_BATCH, CHECK_BATCH = "verify", "api", "check:"
"""The batch names of citations audited by `verify`, by `/verify`, and (a prefix) by `check`."""
BUSY_SECONDS = 30.0
"""How long a connection waits for another process's lock (and `_write_ahead` for the switch to WAL)."""


def claim_id(claim: str) -> str:
    """The id of a claim verified on its own (no batch id): the first 16 hex digits of its sha256."""
    return hashlib.sha256(claim.encode("utf-8")).hexdigest()[:16]


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (create, migrate) the audit DB at `path`; a path that cannot be opened names itself."""
    path = Path(path)
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_SECONDS)
        migrations.migrate(conn, str(path))
        _write_ahead(conn)
    except sqlite3.Error as exc:
        raise OSError(f"audit DB {path} cannot be opened: {exc}") from None
    conn.row_factory = sqlite3.Row
    return conn


def _write_ahead(conn: sqlite3.Connection) -> None:
    """Put the DB in WAL mode, synchronous=NORMAL (module rules). The mode is kept in the file; switching a
    DB another process is opening answers "locked" at once, without SQLite's busy wait, so it is retried."""
    give_up = time.monotonic() + BUSY_SECONDS
    while conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > give_up:
                raise
            time.sleep(0.02)
    conn.execute("PRAGMA synchronous=NORMAL")


def confidence_problem(value) -> str | None:
    """Why a stored confidence is unusable (None: it is absent, or a number in [0, 1])."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                         and math.isfinite(value) and 0 <= value <= 1):
        return None
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return f"confidence {shown} is not a number from 0 to 1"


def utc_now() -> str:
    """The UTC time to the microsecond: a verdict's decided_at is also its version (a review names it)."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _passages(value) -> str | None:
    """The passages the judge read, as the JSON text the column holds (a list is encoded)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(list(value), ensure_ascii=False) if value else None


def write_citation(conn: sqlite3.Connection, batch: str, item_id: str, claim: str, citation: dict,
                   model: str | None = None) -> dict:
    """Write one decided citation (committed at once, so a kill loses at most the ones in flight).

    `citation` holds a CitationRow's keys, `model` (the model that answered; None: no model asked),
    optionally `passages` (a list) and, for a source-document row, `flow`, `section`, `status` and `quote`.
    `model` given here overrides the citation's (a hand-made row)."""
    model = citation.get("model") if model is None else model
    row = AuditRow.from_dict({**citation, "batch": batch, "id": item_id, "claim": claim,
                              "rid": citation.get("rid") or "", "model": model or "",
                              "decided_at": utc_now(),
                              "flow": citation.get("flow") or WEB,
                              "passages": _passages(citation.get("passages"))}).to_dict()
    redact = config.redactor()
    row = {key: redact(value) if isinstance(value, str) else value for key, value in row.items()}
    names = ", ".join(COLUMNS)
    marks = ", ".join("?" for _ in COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c not in KEY)
    with conn:
        conn.execute(f"INSERT INTO citations ({names}) VALUES ({marks}) "
                     f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {updates}",
                     [row[c] for c in COLUMNS])
    return row


def as_row(record: sqlite3.Row) -> dict:
    """A journal row as a dict, `auto` as True / False / None (SQLite stores 1 / 0 / NULL)."""
    row = dict(record)
    if row.get("auto") is not None:
        row["auto"] = bool(row["auto"])
    return row


def decided(conn: sqlite3.Connection, batch: str) -> dict[tuple[str, str], dict]:
    """The rows already decided in `batch`, keyed by (id, url)."""
    rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM citations WHERE batch = ?", (batch,)).fetchall()
    return {(r["id"], r["url"]): as_row(r) for r in rows}


def set_auto(conn: sqlite3.Connection, batch: str, item_id: str, url: str, auto: bool) -> None:
    """Record the gate's decision again (a resumed batch under another AUTO_ACCEPT): the verdict and its
    decided_at stay, so reviews of it stay current."""
    with conn:
        conn.execute("UPDATE citations SET auto = ? WHERE batch = ? AND id = ? AND url = ?",
                     (auto, batch, item_id, url))
