"""The review page's reads of the audit DB: the filtered, ordered, paginated list, and one item.

Rules:
- Views: `queue` (what the gate sent to a person, `auto` 0 or unknown, not yet reviewed: the default),
  `auto` (accepted automatically, not reviewed: label some of these too, or `calibrate` only ever sees
  the doubtful ones), `reviewed` (a current review), `all`.
- Filters: batch, reason (`-` for no reason) and view. Every view is in the package's queue order
  (`review.queue_key`): the rows are sorted in Python on their light columns, then one page is read.
- PER_PAGE items a page; a page number past the end shows the last page.
- A bad row never breaks a page (`checked`): a confidence that is not a number in [0, 1] is shown as
  absent with an `invalid` note (sorted as no model asked); a row whose key or label is not text
  cannot be linked, so it is left out and counted (`Page.skipped`).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ...audit import confidence_problem
from ...audit.reviews import CURRENT
from ...verdict.review import queue_key

VIEWS = {"queue": "to review", "auto": "accepted automatically", "reviewed": "reviewed", "all": "all"}
PER_PAGE = 50
NO_REASON = "-"
_LIGHT = ("batch", "id", "url", "label", "confidence")


@dataclass(frozen=True)
class Filters:
    batch: str = ""
    reason: str = ""
    view: str = "queue"

    @classmethod
    def read(cls, params) -> "Filters":
        """From query or form parameters; an unknown view is the queue."""
        view = params.get("view") or "queue"
        return cls((params.get("batch") or "").strip(), (params.get("reason") or "").strip(),
                   view if view in VIEWS else "queue")

    def query(self, **more) -> dict:
        """These filters (plus `more`) as URL parameters, empty ones left out."""
        every = {"batch": self.batch, "reason": self.reason, "view": self.view, **more}
        return {k: v for k, v in every.items() if v not in ("", None)}


def _where(filters: Filters) -> tuple[str, list]:
    clauses, params = [], []
    if filters.batch:
        clauses.append("c.batch = ?")
        params.append(filters.batch)
    if filters.reason == NO_REASON:
        clauses.append("c.reason IS NULL")
    elif filters.reason:
        clauses.append("c.reason = ?")
        params.append(filters.reason)
    clauses.append({"queue": "c.auto IS NOT 1 AND cur.review_id IS NULL",
                    "auto": "c.auto = 1 AND cur.review_id IS NULL",
                    "reviewed": "cur.review_id IS NOT NULL", "all": "1"}[filters.view])
    return " AND ".join(clauses), params


_FROM = f"FROM citations c LEFT JOIN ({CURRENT}) cur ON (cur.batch, cur.id, cur.url) = (c.batch, c.id, c.url)"


def checked(row: dict) -> dict | None:
    """The row made safe to sort and show (module rules), or None when it cannot be linked."""
    if not all(isinstance(row.get(c), str) for c in ("batch", "id", "url", "label")):
        return None
    problem = confidence_problem(row.get("confidence"))
    return {**row, "confidence": None, "invalid": problem} if problem else {**row, "invalid": None}


def _light(conn: sqlite3.Connection, filters: Filters, skipped: list | None = None) -> list[dict]:
    """The light columns of every row the filters select, in the queue's order (unlinkable rows are
    appended to `skipped`)."""
    where, params = _where(filters)
    rows = conn.execute(f"SELECT {', '.join('c.' + c for c in _LIGHT)} {_FROM} WHERE {where}", params)
    kept = []
    for raw in rows:
        row = checked(dict(raw))
        if row is not None:
            kept.append(row)
        elif skipped is not None:
            skipped.append(dict(raw))
    return sorted(kept, key=queue_key)


def _key(row: dict) -> tuple[str, str, str]:
    return (row["batch"], row["id"], row["url"])


def ordered_keys(conn: sqlite3.Connection, filters: Filters) -> list[tuple[str, str, str]]:
    """Every (batch, id, url) the filters select, in the queue's order."""
    return [_key(r) for r in _light(conn, filters)]


def load(conn: sqlite3.Connection, keys: list[tuple[str, str, str]]) -> list[dict]:
    """The full rows (and each one's current review) for these keys, in the keys' order."""
    if not keys:
        return []
    marks = ", ".join("(?, ?, ?)" for _ in keys)
    rows = conn.execute(f"SELECT c.*, cur.review_id, cur.label AS reviewed_label, "
                        f"cur.action AS reviewed_action, cur.reviewer, cur.reviewed_at, "
                        f"cur.note AS review_note "
                        f"{_FROM} "
                        f"WHERE (c.batch, c.id, c.url) IN (VALUES {marks})", [v for key in keys for v in key])
    found = {(r["batch"], r["id"], r["url"]): row for r in rows if (row := checked(dict(r))) is not None}
    return [found[key] for key in keys if key in found]


@dataclass
class Page:
    rows: list[dict]
    number: int
    pages: int
    total: int
    skipped: int = 0     # rows left out: their key or label is not text


def page(conn: sqlite3.Connection, filters: Filters, number: int) -> Page:
    skipped: list = []
    keys = [_key(r) for r in _light(conn, filters, skipped)]
    pages = max(1, -(-len(keys) // PER_PAGE))
    number = min(max(1, number), pages)
    return Page(load(conn, keys[(number - 1) * PER_PAGE:number * PER_PAGE]), number, pages, len(keys),
                len(skipped))


def choices(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """The batches and reasons present, for the filter menus."""
    batches = [b for b, in conn.execute("SELECT DISTINCT batch FROM citations ORDER BY batch")
               if isinstance(b, str)]
    reasons = [r for r, in conn.execute("SELECT DISTINCT reason FROM citations WHERE reason IS NOT NULL "
                                        "ORDER BY reason") if isinstance(r, str)]
    return {"batches": batches, "reasons": reasons}


def neighbours(keys: list[tuple], key: tuple) -> tuple[tuple | None, tuple | None, int | None]:
    """(previous, next, 1-based position) of `key` in `keys`; all None when it is not there."""
    if key in keys:
        i = keys.index(key)
        return (keys[i - 1] if i else None, keys[i + 1] if i + 1 < len(keys) else None, i + 1)
    return (None, None, None)


def after(conn: sqlite3.Connection, filters: Filters, row: dict) -> tuple | None:
    """The first key the filters select that comes after `row` in the queue's order."""
    mine = queue_key(row)
    return next((_key(r) for r in _light(conn, filters) if queue_key(r) > mine), None)
