"""audit: a SQLite index of every citation decided, and `replay RID` to read the stored page back.

Rules:
- One row per (batch, id, url): the claim, label, reason, confidence, evidence, the judge model, the
  Crawlbase rid ('' when no page was stored, e.g. a skipped PDF or a direct fetch) and the UTC time.
- Only the rid is kept: never a storage URL, never a token (every text field passes `config.redact`).
- Writing the same (batch, id, url) again replaces the row, so a resumed batch never duplicates one.
- `replay` asks the Crawlbase Storage API for the page by rid, with CRAWLBASE_TOKEN or
  CRAWLBASE_JS_TOKEN (either of the account's tokens works); it is a live lookup and is not cached,
  because the point of an audit is to read what Crawlbase holds now.
"""
from __future__ import annotations

import datetime as _dt
import sqlite3
import sys
from pathlib import Path

from . import config

COLUMNS = ("batch", "id", "claim", "url", "label", "reason", "confidence", "evidence_quote",
           "final_url", "original_status", "rid", "model", "decided_at")
SCHEMA = """
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
)
"""


def db_path() -> Path:
    return Path(config.get("AUDIT_DB"))


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """Open (and create) the audit DB at `path` or AUDIT_DB; a path that cannot be opened names itself."""
    path = Path(path) if path is not None else db_path()
    try:
        conn = sqlite3.connect(str(path))
        conn.execute(SCHEMA)
    except sqlite3.Error as exc:
        raise OSError(f"audit DB {path} cannot be opened: {exc}") from None
    conn.row_factory = sqlite3.Row
    return conn


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _clean(value):
    return config.redact(value) if isinstance(value, str) else value


def record(conn: sqlite3.Connection, batch: str, item_id: str, claim: str, citation: dict,
           model: str = "") -> dict:
    """Write one decided citation (committed at once, so a kill loses at most the ones in flight)."""
    row = {"batch": batch, "id": item_id, "claim": claim, "url": citation["url"],
           "label": citation["label"], "reason": citation.get("reason"),
           "confidence": citation.get("confidence"), "evidence_quote": citation.get("evidence_quote"),
           "final_url": citation.get("final_url"), "original_status": citation.get("original_status"),
           "rid": citation.get("rid") or "", "model": model, "decided_at": utc_now()}
    row = {key: _clean(value) for key, value in row.items()}
    names = ", ".join(COLUMNS)
    marks = ", ".join("?" for _ in COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c not in ("batch", "id", "url"))
    with conn:
        conn.execute(f"INSERT INTO citations ({names}) VALUES ({marks}) "
                     f"ON CONFLICT (batch, id, url) DO UPDATE SET {updates}",
                     [row[c] for c in COLUMNS])
    return row


def decided(conn: sqlite3.Connection, batch: str) -> dict[tuple[str, str], dict]:
    """The rows already decided in `batch`, keyed by (id, url)."""
    rows = conn.execute("SELECT * FROM citations WHERE batch = ?", (batch,)).fetchall()
    return {(r["id"], r["url"]): dict(r) for r in rows}


# ---------------------------------------------------------------- replay (Crawlbase Storage API)

def storage_token() -> str:
    """CRAWLBASE_TOKEN, else CRAWLBASE_JS_TOKEN; neither set is an error naming the variable."""
    for name in ("CRAWLBASE_TOKEN", "CRAWLBASE_JS_TOKEN"):
        if config.has(name):
            return config.secret(name)
    raise config.MissingSetting("CRAWLBASE_TOKEN", "set it (or CRAWLBASE_JS_TOKEN) to read stored pages "
                                "through the Crawlbase Storage API")


def replay(rid: str) -> str:
    """The page Crawlbase stored under `rid`, as stored (HTML)."""
    rid = (rid or "").strip()
    if not rid or any(ch.isspace() for ch in rid) or rid.startswith(("http://", "https://")):
        raise ValueError(f"{rid!r} is not a rid: pass the rid column of the audit table "
                         "(an empty rid means no page was stored for that citation)")
    from crawlbase import StorageAPI

    from .fetch import point_sdk_at_api_url
    point_sdk_at_api_url()
    api = StorageAPI({"token": storage_token(), "timeout": 60})
    try:
        response = api.get(rid, {"format": "html"})   # a fresh dict: the SDK mutates its default
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        raise OSError(config.redact(f"Crawlbase Storage API unreachable: {reason}")) from None
    status = response.get("status_code")
    if status == 404:
        raise LookupError(f"no stored page for rid {rid} (never stored, expired or deleted)")
    if status != 200:
        raise OSError(f"Crawlbase Storage API answered HTTP {status} for rid {rid}")
    body = response.get("body") or b""
    return body.decode("utf-8", errors="replace") if isinstance(body, bytes) else str(body)


def add_arguments(parser) -> None:
    parser.add_argument("rid", help="the rid column of the audit table")


def run(args) -> int:
    try:
        page = replay(args.rid)
    except LookupError as exc:
        print(f"citecheck replay: error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(page if page.endswith("\n") else page + "\n")
    return 0
