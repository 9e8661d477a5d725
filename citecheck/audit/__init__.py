"""audit: a SQLite journal of every citation decided (the `citations` table, see `audit.migrations`).

Rules:
- One row per (batch, id, url): the claim, label, reason, confidence, evidence, the judge model, the
  Crawlbase rid ('' when no page was stored, e.g. a skipped PDF or a direct fetch) and the UTC time;
  the columns are `vocabulary.AuditRow`'s fields.
- Only the rid is kept: never a storage URL, never a token (every text field passes `config.redact`).
- Writing the same (batch, id, url) again replaces the row, so a resumed batch never duplicates one.
- Opening a DB applies the migrations it lacks (an old DB is upgraded in place, losing nothing).
"""
from __future__ import annotations

import datetime as _dt
import sqlite3
from pathlib import Path

from .. import config
from ..vocabulary import AuditRow
from . import migrations

COLUMNS = AuditRow.field_names()
KEY = ("batch", "id", "url")


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (create, migrate) the audit DB at `path`; a path that cannot be opened names itself."""
    path = Path(path)
    try:
        conn = sqlite3.connect(str(path))
        migrations.migrate(conn, str(path))
    except sqlite3.Error as exc:
        raise OSError(f"audit DB {path} cannot be opened: {exc}") from None
    conn.row_factory = sqlite3.Row
    return conn


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _clean(value):
    return config.redact(value) if isinstance(value, str) else value


def write_citation(conn: sqlite3.Connection, batch: str, item_id: str, claim: str, citation: dict,
                   model: str = "") -> dict:
    """Write one decided citation (committed at once, so a kill loses at most the ones in flight)."""
    row = AuditRow(batch=batch, id=item_id, claim=claim, url=citation["url"], label=citation["label"],
                   reason=citation.get("reason"), confidence=citation.get("confidence"),
                   evidence_quote=citation.get("evidence_quote"), final_url=citation.get("final_url"),
                   original_status=citation.get("original_status"), rid=citation.get("rid") or "",
                   model=model, decided_at=utc_now()).to_dict()
    row = {key: _clean(value) for key, value in row.items()}
    names = ", ".join(COLUMNS)
    marks = ", ".join("?" for _ in COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c not in KEY)
    with conn:
        conn.execute(f"INSERT INTO citations ({names}) VALUES ({marks}) "
                     f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {updates}",
                     [row[c] for c in COLUMNS])
    return row


def decided(conn: sqlite3.Connection, batch: str) -> dict[tuple[str, str], dict]:
    """The rows already decided in `batch`, keyed by (id, url)."""
    rows = conn.execute("SELECT * FROM citations WHERE batch = ?", (batch,)).fetchall()
    return {(r["id"], r["url"]): dict(r) for r in rows}
