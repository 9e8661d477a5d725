"""The quote guard: a verdict stands only on evidence that is really on the page.

Rules:
- Quotes and passages are compared after `matching.normalise` (typographic quotes and dashes folded,
  whitespace collapsed); otherwise the match is exact and case-sensitive.
- A supported or contradicted verdict stands only if its evidence_quote carries content
  (`matching.has_content`: "." or "—" is no quote) and is a substring of one of the passages shown to
  the judge. Otherwise it becomes not_found, evidence_quote null, confidence 0,
  reason `evidence_quote_not_in_source` (a missing quote is not on the page either).
- A not_found verdict carrying a quote that is not on the page gets the same treatment: the quote is
  cleared, so no output ever shows invented text as evidence.
- A verdict whose quote is on the page passes through unchanged.
"""
from __future__ import annotations

from ..matching import has_content, normalise
from ..vocabulary import EVIDENCE_QUOTE_NOT_IN_SOURCE, NOT_FOUND

NOT_IN_SOURCE = EVIDENCE_QUOTE_NOT_IN_SOURCE


def quote_in_passages(quote: str | None, passages: list[str]) -> bool:
    """True when the quote carries content and, normalised, is a substring of one normalised passage."""
    needle = normalise(quote or "")
    return has_content(needle) and any(needle in normalise(passage) for passage in passages)


def guard(verdict: dict, passages: list[str]) -> dict:
    """The judge's verdict, kept or downgraded by the module rules; other keys are passed through."""
    quote = verdict.get("evidence_quote")
    if quote_in_passages(quote, passages):
        return dict(verdict)
    if verdict.get("label") == NOT_FOUND and quote is None:
        return dict(verdict)
    return {**verdict, "label": NOT_FOUND, "evidence_quote": None, "confidence": 0.0,
            "reason": NOT_IN_SOURCE}
