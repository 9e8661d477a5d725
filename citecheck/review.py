"""Review: turn a quote match and a judge's answer into a verdict, and gate it with AUTO_ACCEPT.

Rules:
- A quote that is not in the source is `fabricated`; no model is asked, confidence is null, and
  the verdict is automatic (string matching settled it).
- Otherwise the judge's answer maps supports -> verified, contradicts -> contradicted,
  says_nothing -> unsupported.
- `auto` is confidence >= AUTO_ACCEPT; below it a person reviews. A misquote is never automatic:
  the citation misstates the source even when the claim holds.
"""
from __future__ import annotations

from .matching import Match
from .vocabulary import FABRICATED, MISQUOTED, MISSING, VERDICT_OF


def decide(match: Match, answer: dict | None, threshold: float) -> dict:
    """Verdict, confidence and the auto/review gate for one citation."""
    if match.status == MISSING or answer is None:
        return {"relation": None, "confidence": None, "verdict": FABRICATED, "auto": True}
    confidence = round(float(answer["confidence"]), 4)
    auto = confidence >= threshold and match.status != MISQUOTED
    return {"relation": answer["relation"], "confidence": confidence,
            "verdict": VERDICT_OF[answer["relation"]], "auto": auto}


def needs_review(row: dict, threshold: float) -> bool:
    """A model's live-web verdict below the threshold goes to a person (a guarded one has confidence 0);
    a citation the page settled (dead link, PDF, homepage redirect: no model asked) does not."""
    return row.get("confidence") is not None and row["confidence"] < threshold


def review_share(rows: list[dict], thresholds: list[float]) -> list[dict]:
    """For each threshold: how many citations, and what share of all, would go to a person."""
    out = []
    for threshold in thresholds:
        n = sum(needs_review(row, threshold) for row in rows)
        share = round(n / len(rows), 4) if rows else 0.0
        out.append({"threshold": threshold, "to_review": n, "share": share})
    return out
