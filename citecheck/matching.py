"""Find each citation's quote in the source.

Rules:
- Comparison is on normalised text: typographic quotes folded to ASCII, dashes to '-', every run of
  whitespace (line wraps included) to one space.
- `found`: the normalised quote is a verbatim substring of a section (the cited one is tried first).
  Exact match is the only way to be found.
- `section-only`: the citation names a section and gives no quote.
- `misquoted`: not verbatim anywhere, but the closest span of some section scores at least
  NEAR_MISS (rapidfuzz partial_ratio, 0-100); it is reported with that span and a word-level diff.
- `missing`: anything else. No model is asked about a missing quote.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from rapidfuzz import fuzz

from .sources import Document

NEAR_MISS = 90.0
"""partial_ratio score (0-100) from which a non-verbatim quote counts as a misquote, not an invention."""

_FOLD = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
                       "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
                       "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00a0": " "})
_SPACE = re.compile(r"\s+")
_WRAPPED_HYPHEN = re.compile(r"(?<=\w)-\n\s*(?=\w)")


def normalise(text: str) -> str:
    """Fold typographic quotes and dashes, rejoin words wrapped at a hyphen ("case-\\nsensitive"
    -> "case-sensitive"), collapse whitespace, strip."""
    return _SPACE.sub(" ", _WRAPPED_HYPHEN.sub("-", text.translate(_FOLD))).strip()


@dataclass(frozen=True)
class Match:
    status: str                 # found | misquoted | missing | section-only
    section: str | None         # where the quote (or its closest span) was located
    cited_section: str | None
    score: float | None = None  # partial_ratio of the closest span, for misquoted/missing
    closest: str | None = None  # closest source span (normalised) for a near miss
    diff: str | None = None     # word-level diff quote -> source, for a near miss

    @property
    def elsewhere(self) -> bool:
        """The quote was found, but in another section than the one cited."""
        return self.status == "found" and self.section != self.cited_section


def word_ops(quote: str, source: str) -> list[tuple[str, str]]:
    """Word-level diff going from the quote to the source, as (op, words): op is equal, removed or added."""
    a, b = quote.split(), source.split()
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("equal", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("removed", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(("added", " ".join(b[j1:j2])))
    return out


def word_diff(quote: str, source: str) -> str:
    """Word-level diff: [-removed-] {+added+} going from the quote to the source."""
    marks = {"equal": "{}", "removed": "[-{}-]", "added": "{{+{}+}}"}
    return " ".join(marks[op].format(words) for op, words in word_ops(quote, source))


def _word_starts(text: str, lo: int, hi: int) -> list[int]:
    return [i for i in range(max(lo, 0), min(hi, len(text)) + 1) if i == 0 or text[i - 1] == " "]


def _word_ends(text: str, lo: int, hi: int) -> list[int]:
    return [i for i in range(max(lo, 0), min(hi, len(text)) + 1) if i == len(text) or text[i] == " "]


def _closest(quote: str, text: str) -> tuple[float, str]:
    """Best partial_ratio alignment of `quote` in `text`, then the whole-word span around it whose
    full ratio to the quote is highest (an inserted or dropped word changes the span's length)."""
    result = fuzz.partial_ratio_alignment(quote, text)
    slack = max(8, len(quote) // 5)
    starts = _word_starts(text, result.dest_start - slack, result.dest_start + slack)
    ends = _word_ends(text, result.dest_end - slack, result.dest_end + slack)
    pairs = [(start, end) for start in starts for end in ends if end > start]
    if not pairs:
        return result.score, text[result.dest_start:result.dest_end]
    start, end = max(pairs, key=lambda p: (fuzz.ratio(quote, text[p[0]:p[1]]), -p[0]))
    return result.score, text[start:end].strip()


def locate(quote: str | None, document: Document, cited_section: str | None = None) -> Match:
    """Status of one quote against the document (see module rules)."""
    cited = str(cited_section) if cited_section is not None else None
    if quote is None or not normalise(quote):
        return Match("section-only" if cited else "missing", cited, cited)
    needle = normalise(quote)
    order = ([cited] if cited in document.sections else []) + [k for k in document.sections if k != cited]
    normalised = {key: normalise(document.sections[key].text) for key in order}
    for key in order:
        if needle in normalised[key]:
            return Match("found", key, cited)
    best_key, best_score, best_span = None, -1.0, ""
    for key in order:
        score, span = _closest(needle, normalised[key])
        if score > best_score:
            best_key, best_score, best_span = key, score, span
    score = round(best_score, 1)
    if best_score >= NEAR_MISS:
        return Match("misquoted", best_key, cited, score, best_span, word_diff(needle, best_span))
    return Match("missing", None, cited, score)
