"""Review: turn a quote match and a judge's answer into a verdict, gate every verdict with AUTO_ACCEPT,
and order what goes to a person.

Rules (the gate, `gate`, is the only place auto vs review is decided, for both flows):
- `AUTO_ACCEPT=1` (a threshold of 1 or more) sends everything to a person: no row is automatic, not
  even a confidence of exactly 1.0 or a citation no model was asked about.
- A misquote is never automatic: the citation misstates the source whatever the judge says.
- A citation no model was asked about (confidence null: a fabricated quote, settled by string
  matching; a dead link, a PDF, a homepage redirect, settled by the page) is automatic.
- Otherwise a verdict is automatic when its confidence >= the threshold; below it a person reviews.
  A guarded verdict has confidence 0, so it goes to a person at any threshold above 0.
- A contradiction has no rule of its own in the gate: it is gated by confidence like any verdict (the
  threshold `calibrate` measures is then the one in force); it leads the queue instead.
- The queue (`queue`): what the gate sends to a person, contradicted first, then lowest confidence first,
  then the citations no model was asked about; ties in (batch, id, url) order.
- The source-document verdict: a quote that is not in the source is `fabricated` (no model asked,
  confidence null); otherwise supports -> verified, contradicts -> contradicted, says_nothing -> unsupported.
"""
from __future__ import annotations

from typing import Iterable

from ..matching import Match
from ..vocabulary import CONTRADICTED, FABRICATED, MISQUOTED, MISSING, VERDICT_OF

EVERYTHING_TO_A_PERSON = 1.0
"""The AUTO_ACCEPT that sends every citation to a person."""


def gate(confidence: float | None, threshold: float, *, misquoted: bool = False) -> bool:
    """True: accepted automatically; False: a person reviews (see module rules)."""
    if threshold >= EVERYTHING_TO_A_PERSON or misquoted:
        return False
    return confidence is None or confidence >= threshold


def decide(match: Match, answer: dict | None, threshold: float) -> dict:
    """Verdict, confidence and the gate for one source-document citation."""
    if match.status == MISSING or answer is None:
        return {"relation": None, "confidence": None, "verdict": FABRICATED, "auto": gate(None, threshold)}
    confidence = round(float(answer["confidence"]), 4)
    return {"relation": answer["relation"], "confidence": confidence,
            "verdict": VERDICT_OF[answer["relation"]],
            "auto": gate(confidence, threshold, misquoted=match.status == MISQUOTED)}


def gated(row: dict, threshold: float) -> dict:
    """A live-web row with its `auto` set by the gate."""
    return {**row, "auto": gate(row.get("confidence"), threshold)}


def needs_review(row: dict, threshold: float) -> bool:
    """The gate, read the other way round: True when this row goes to a person."""
    return not gate(row.get("confidence"), threshold, misquoted=row.get("status") == MISQUOTED)


def review_share(rows: list[dict], thresholds: list[float]) -> list[dict]:
    """For each threshold: how many citations, and what share of all, would go to a person."""
    out = []
    for threshold in thresholds:
        n = sum(needs_review(row, threshold) for row in rows)
        share = round(n / len(rows), 4) if rows else 0.0
        out.append({"threshold": threshold, "to_review": n, "share": share})
    return out


def queue_key(row: dict) -> tuple:
    """The queue's order: contradicted first, then lowest confidence, then no model asked; ties by key."""
    label = row.get("label") or row.get("verdict")
    confidence = row.get("confidence")
    return (label != CONTRADICTED, confidence is None, confidence or 0.0,
            str(row.get("batch") or ""), str(row.get("id") or ""), str(row.get("url") or ""))


def queue(rows: Iterable[dict], threshold: float | None = None) -> list[dict]:
    """The rows a person must read, in the queue's order. With `threshold`, the gate decides which rows
    those are; without it, each row's own `auto` does (a row whose `auto` is unknown goes to a person)."""
    if threshold is None:
        waiting = [row for row in rows if not row.get("auto")]
    else:
        waiting = [row for row in rows if needs_review(row, threshold)]
    return sorted(waiting, key=queue_key)
