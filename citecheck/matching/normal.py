"""The comparison every quote check shares: `normalise` (and `has_content`, whether a quote is evidence).

Rules: typographic quotes folded to ASCII, dashes to '-', a word wrapped at a hyphen rejoined, every run
of whitespace (line wraps included) one space, stripped; a quote carries content only with at least
MIN_QUOTE_CHARS letters or digits (`isalnum`). `spans.Folded` maps the normalised text back.
"""
from __future__ import annotations

import re

MIN_QUOTE_CHARS = 4
"""Letters or digits (Unicode) a quote needs to be evidence: '100 °C' has 4, '.' and '—' none."""

_FOLD = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
                       "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
                       "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00a0": " "})
_SPACE = re.compile(r"\s+")
_WRAPPED_HYPHEN = re.compile(r"(?<=\w)-\n\s*(?=\w)")


def has_content(quote: str | None) -> bool:
    """True when the quote holds at least MIN_QUOTE_CHARS letters or digits (punctuation is not evidence)."""
    count = 0
    for char in quote or "":
        count += char.isalnum()
        if count >= MIN_QUOTE_CHARS:
            return True
    return False


def normalise(text: str) -> str:
    """Fold typographic quotes and dashes, rejoin words wrapped at a hyphen ("case-\\nsensitive"
    -> "case-sensitive"), collapse whitespace, strip."""
    return _SPACE.sub(" ", _WRAPPED_HYPHEN.sub("-", text.translate(_FOLD))).strip()
