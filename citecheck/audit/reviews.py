"""A person's decisions on audited citations (the `reviews` table, audit migration 3).

Rules:
- A review names the citation (batch, id, url) and the verdict it reviewed (that row's `decided_at`), who,
  when (UTC), the action (confirm | correct), the label (the judged one for a confirmation, another of the
  flow's labels for a correction) and an optional note. Rows are only ever added: history is kept.
- A citation's *current* review is its latest review of its current verdict; a verdict decided again
  (a resumed batch under another model) has no current review until a person looks again.
- `record` refuses, changing nothing, a review of a citation that does not exist, of a verdict that has
  been decided again since the page was shown, or of a citation reviewed meanwhile (its current review is
  not the one the reviewer saw); changing a review means reviewing again from its page (`replaces` links
  the new review to the one it supersedes).
- A review is a person's work: it commits with synchronous=FULL (the WAL synced before `record` returns),
  so a power cut does not lose it (`audit`'s crash guarantees); the connection is set back afterwards.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .. import config
from . import as_row
from ..vocabulary import REVIEW_ACTIONS, labels_of

CURRENT = """
SELECT r.* FROM reviews r
JOIN citations c ON (c.batch, c.id, c.url, c.decided_at) = (r.batch, r.id, r.url, r.decided_at)
WHERE r.review_id = (SELECT max(review_id) FROM reviews x
                     WHERE (x.batch, x.id, x.url, x.decided_at) = (r.batch, r.id, r.url, r.decided_at))"""
"""Every citation's current review (one row per reviewed citation)."""


class ReviewRefused(ValueError):
    """A review that was not recorded; `kind` is missing | stale | reviewed | invalid."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


@dataclass(frozen=True)
class Decision:
    """What a reviewer submits about one citation."""
    batch: str
    id: str
    url: str
    decided_at: str            # the verdict they were shown
    seen_review: int | None    # the current review they were shown (None: none)
    action: str
    label: str | None          # the corrected label (ignored for a confirmation)
    note: str
    reviewer: str


def current(conn: sqlite3.Connection, batch: str, item_id: str, url: str) -> dict | None:
    """The citation's current review, or None."""
    row = conn.execute(CURRENT + " AND (r.batch, r.id, r.url) = (?, ?, ?)", (batch, item_id, url)).fetchone()
    return dict(row) if row else None


def history(conn: sqlite3.Connection, batch: str, item_id: str, url: str) -> list[dict]:
    """Every review of the citation, oldest first, whichever verdict it reviewed."""
    return [dict(r) for r in conn.execute("SELECT * FROM reviews WHERE (batch, id, url) = (?, ?, ?) "
                                          "ORDER BY review_id", (batch, item_id, url))]


def _check(decision: Decision, citation: dict) -> str:
    """The label to record, or ReviewRefused('invalid', ...)."""
    if decision.action not in REVIEW_ACTIONS:
        raise ReviewRefused("invalid", f"action must be one of {', '.join(REVIEW_ACTIONS)}")
    if decision.action == "confirm":
        return citation["label"]
    allowed = labels_of(citation["flow"])
    if decision.label not in allowed:
        raise ReviewRefused("invalid", f"a correction needs one of the labels {', '.join(allowed)}")
    if decision.label == citation["label"]:
        raise ReviewRefused("invalid", f"the verdict already says {citation['label']}: confirm it, "
                                       "or pick another label to correct it")
    return decision.label


def record(conn: sqlite3.Connection, decision: Decision, now: str) -> dict:
    """Add one review (see module rules) and return it; the checks and the insert are one transaction."""
    was = conn.execute("PRAGMA synchronous").fetchone()[0]
    conn.execute("PRAGMA synchronous=FULL")
    try:
        return _record(conn, decision, now)
    finally:
        conn.execute(f"PRAGMA synchronous={int(was)}")


def _record(conn: sqlite3.Connection, decision: Decision, now: str) -> dict:
    conn.execute("BEGIN IMMEDIATE")
    try:
        citation = conn.execute("SELECT label, flow, decided_at FROM citations "
                                "WHERE (batch, id, url) = (?, ?, ?)",
                                (decision.batch, decision.id, decision.url)).fetchone()
        if citation is None:
            raise ReviewRefused("missing", f"no citation {decision.id} ({decision.url}) in batch "
                                           f"{decision.batch}: it was never decided, or was removed")
        if citation["decided_at"] != decision.decided_at:
            raise ReviewRefused("stale", f"citation {decision.id} was decided again at "
                                         f"{citation['decided_at']}, after the page you reviewed was shown: "
                                         "nothing was saved; open it again to review the new verdict")
        label = _check(decision, dict(citation))
        latest, seen = current(conn, decision.batch, decision.id, decision.url), decision.seen_review
        if (latest["review_id"] if latest else None) != seen:
            raise ReviewRefused("reviewed", _meanwhile(decision.id, latest))
        redact = config.redactor()
        values = (decision.batch, decision.id, decision.url, decision.decided_at, citation["label"],
                  decision.action, label, redact(decision.note.strip()) or None,
                  redact(decision.reviewer.strip()), now, seen)
        marks = ", ".join("?" * len(values))
        cursor = conn.execute("INSERT INTO reviews (batch, id, url, decided_at, judged_label, action, label, "
                              f"note, reviewer, reviewed_at, replaces) VALUES ({marks})", values)
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return dict(conn.execute("SELECT * FROM reviews WHERE review_id = ?", (cursor.lastrowid,)).fetchone())


def _meanwhile(item_id: str, now: dict | None) -> str:
    if now is None:
        return (f"the review you meant to change no longer applies to citation {item_id}: nothing was saved; "
                "open it again")
    return (f"citation {item_id} was reviewed meanwhile by {now['reviewer']} at {now['reviewed_at']} "
            f"({now['action']}: {now['label']}); your review was not saved: open it again to see theirs and "
            "change it")


def reviewed(conn: sqlite3.Connection, batch: str | None = None) -> list[dict]:
    """Audited citations that have a current review, each with `reviewed_label`, `action` and `reviewer`
    (`auto` a boolean, as `as_row` gives it)."""
    where, params = ("WHERE c.batch = ?", (batch,)) if batch is not None else ("", ())
    rows = conn.execute(f"SELECT c.*, cur.label AS reviewed_label, cur.action, cur.reviewer, cur.reviewed_at "
                        f"FROM citations c JOIN ({CURRENT}) cur ON (cur.batch, cur.id, cur.url) = "
                        f"(c.batch, c.id, c.url) {where} ORDER BY c.batch, c.id, c.url", params)
    return [as_row(r) for r in rows]
