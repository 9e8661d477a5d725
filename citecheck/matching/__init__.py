"""Find each citation's quote in the source.

Rules:
- Comparison is on normalised text: typographic quotes folded to ASCII, dashes to '-', every run of
  whitespace (line wraps included) to one space.
- `found`: the normalised quote is a verbatim substring of a section (the cited one is tried first).
  Exact match is the only way to be found.
- A quote carries content only with at least MIN_QUOTE_CHARS letters or digits (`has_content`):
  ".", "—" or "a" prove nothing and count as no quote, here and in the guard.
- `section-only`: the citation names a section and gives no quote.
- `misquoted`: not verbatim anywhere, but the closest span of some section scores at least
  NEAR_MISS (rapidfuzz partial_ratio, 0-100); it is reported with that span and a word-level diff.
- `missing`: anything else. No model is asked about a missing quote.
- A document's sections are normalised once (`Sections`): `check` builds them once per document and
  every `locate` compares against them, so a check's cost is one normalisation plus one search a quote.
- A found quote, and a misquote's closest span, carry where they stand in the section's own text
  (`Match.start`, `Match.end`: `spans`' raw offsets, so section.text[start:end] is the source's wording).
- Bounded work: a quote of up to EXACT_CHARS is scored with partial_ratio; a longer one is located with
  one LCS alignment per section (rapidfuzz Indel.opcodes, bit-parallel) and scored as the ratio of the
  quote to the best whole-word span there. A section longer than the quote plus its slack is aligned
  only in the window most of the quote's anchors (at most MAX_ANCHORS of its ANCHOR_CHARS-long pieces,
  MAX_HITS places each) agree on, so a quote keeps its place on a 5 MB page; with no anchor on the
  page, the whole section up to FULL_ALIGN_CHARS. Only the best section's span is refined, over at most
  MAX_EDGES candidate starts and ends. A quote over NEAR_MISS_MAX_CHARS (a setting) that is not
  verbatim is `missing` without a near-miss search (score None); one longer than every section is not
  even normalised. A short quote's search of each section takes the best score so far as its cutoff
  (rapidfuzz's score_cutoff): a section that cannot beat it is given up early, and the result (status,
  section, score, closest span) is the one the search without a cutoff finds (ties keep the first section).

Imports: `source` (the sections a quote is looked for in) and the foundation.
"""
from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

from ..source.sources import Document
from . import spans
from .normal import _FOLD, MIN_QUOTE_CHARS, has_content, normalise

__all__ = ["ANCHOR_CHARS", "EXACT_CHARS", "FULL_ALIGN_CHARS", "MAX_ANCHORS", "MAX_EDGES", "MAX_HITS",
           "MIN_QUOTE_CHARS", "NEAR_MISS", "NEAR_MISS_MAX_CHARS", "Match", "Sections", "_FOLD",
           "has_content", "locate", "normalise", "spans", "word_diff", "word_ops"]

NEAR_MISS = 90.0
"""partial_ratio score (0-100) from which a non-verbatim quote counts as a misquote, not an invention."""
EXACT_CHARS = 256
"""Quotes up to this length get rapidfuzz's exact partial_ratio (cheap there); longer ones the LCS
alignment."""
MAX_EDGES = 16
"""Candidate word starts (and ends) tried around the aligned span when refining it."""
ANCHOR_CHARS = 12
"""Length of the quote's pieces looked for verbatim to place a long quote in a long section."""
MAX_ANCHORS = 32
"""Anchors taken from one quote, evenly spread over it."""
MAX_HITS = 64
"""Places of one anchor counted (the first ones): a common phrase votes no more than that."""
FULL_ALIGN_CHARS = 200_000
"""A section where no anchor stands is aligned whole only up to this length (else: no near miss)."""
NEAR_MISS_MAX_CHARS = 5000
"""Default of the NEAR_MISS_MAX_CHARS setting: longer non-verbatim quotes get no near-miss search."""


@dataclass(frozen=True)
class Match:
    status: str                 # found | misquoted | missing | section-only
    section: str | None         # where the quote (or its closest span) was located
    cited_section: str | None
    score: float | None = None  # partial_ratio of the closest span, for misquoted/missing
    closest: str | None = None  # closest source span (normalised) for a near miss
    diff: str | None = None     # word-level diff quote -> source, for a near miss
    start: int | None = None    # where the quote (found) or the closest span (misquoted) stands in the
    end: int | None = None      # section's own text: section.text[start:end] (`spans`)

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


def _nearest(positions: list[int], around: int) -> list[int]:
    """At most MAX_EDGES of the positions, the ones nearest `around` (in their order)."""
    if len(positions) <= MAX_EDGES:
        return positions
    keep = set(sorted(positions, key=lambda i: (abs(i - around), i))[:MAX_EDGES])
    return [i for i in positions if i in keep]


def _word_starts(text: str, lo: int, hi: int) -> list[int]:
    return [i for i in range(max(lo, 0), min(hi, len(text)) + 1) if i == 0 or text[i - 1] == " "]


def _word_ends(text: str, lo: int, hi: int) -> list[int]:
    return [i for i in range(max(lo, 0), min(hi, len(text)) + 1) if i == len(text) or text[i] == " "]


def _densest(blocks: list[tuple[int, int]], width: int, length: int) -> tuple[int, int]:
    """The window of `width` (within `length`) holding the most matched characters, one starting at each
    matched block: a two-pointer pass over the blocks."""
    best, start, matched, right = -1, 0, 0, 0
    for j1, j2 in blocks:
        while right < len(blocks) and blocks[right][1] <= j1 + width:
            matched += blocks[right][1] - blocks[right][0]
            right += 1
        if matched > best:
            best, start = matched, j1
        matched -= j2 - j1
    return start, min(length, start + width)


def _slack(quote: str) -> int:
    """How far a near miss's span may stray from the quote's length (inserted or dropped words)."""
    return max(8, len(quote) // 5)


def _anchored(quote: str, text: str) -> tuple[int, int] | None:
    """The window of `text` (lo, hi) where the most distinct anchors of `quote` place it, give or take
    its slack (module rules); None when no anchor stands in `text`."""
    slack, last = _slack(quote), len(quote) - ANCHOR_CHARS
    step = max(1, last // (MAX_ANCHORS - 1))
    votes = []                                           # (where the quote would start, anchor)
    for anchor, at in enumerate(range(0, last + 1, step)[:MAX_ANCHORS]):
        piece, hit, hits = quote[at:at + ANCHOR_CHARS], -1, 0
        while hits < MAX_HITS and (hit := text.find(piece, hit + 1)) >= 0:
            votes.append((hit - at, anchor))
            hits += 1
    if not votes:
        return None
    votes.sort()
    held, right, best = Counter(), 0, (0, 0, 0)          # anchors in the sweep; (count, first, last vote)
    for left, (offset, anchor) in enumerate(votes):
        while right < len(votes) and votes[right][0] <= offset + slack:
            held[votes[right][1]] += 1
            right += 1
        if len(held) > best[0]:
            best = (len(held), left, right - 1)
        held[anchor] -= 1
        if not held[anchor]:
            del held[anchor]
    return max(0, votes[best[1]][0] - slack), min(len(text), votes[best[2]][0] + len(quote) + slack)


def _window(quote: str, text: str) -> tuple[int, int] | None:
    """Where in `text` (no shorter than `quote`) to align it (module rules); None: no near miss there."""
    if len(text) <= len(quote) + 2 * _slack(quote):
        return 0, len(text)
    found = _anchored(quote, text)
    if found is None and len(text) <= FULL_ALIGN_CHARS:
        return 0, len(text)
    return found


def _aligned(quote: str, text: str, floor: float = 0.0) -> tuple[float, int, int] | None:
    """(score, start, end) of the span of `text` closest to `quote` (module rules: exact or LCS-located);
    None when the exact search finds no span scoring `floor` or more (rapidfuzz's score_cutoff).

    As partial_ratio does, the shorter string is looked for in the longer one."""
    if not text:
        return 0.0, 0, 0
    if len(quote) <= EXACT_CHARS:
        result = fuzz.partial_ratio_alignment(quote, text, score_cutoff=max(floor, 0.0))
        return None if result is None else (result.score, result.dest_start, result.dest_end)
    if len(quote) <= len(text):
        window = _window(quote, text)
        if window is None:
            return 0.0, 0, 0
        lo, hi = window
        equal = [op for op in Indel.opcodes(quote, text[lo:hi]).as_list() if op[0] == "equal"]
        start, end = _densest([(lo + j1, lo + j2) for *_, j1, j2 in equal], len(quote), hi)
        return fuzz.ratio(quote, text[start:end]), start, end
    equal = [op for op in Indel.opcodes(quote, text).as_list() if op[0] == "equal"]
    start, end = _densest([(i1, i2) for _, i1, i2, _, _ in equal], len(text), len(quote))
    return fuzz.ratio(quote[start:end], text), 0, len(text)


def _refined(quote: str, text: str, start: int, end: int) -> tuple[float, int, int]:
    """The whole-word span around text[start:end] whose full ratio to the quote is highest (an inserted
    or dropped word changes the span's length): that ratio and the span, without surrounding spaces."""
    slack = _slack(quote)
    starts = _nearest(_word_starts(text, start - slack, start + slack), start)
    ends = _nearest(_word_ends(text, end - slack, end + slack), end)
    pairs = [(a, b) for a in starts for b in ends if b > a]
    if not pairs:
        return fuzz.ratio(quote, text[start:end]), start, end
    # ties: the earliest, then the shortest span
    ratio, a, b = max((fuzz.ratio(quote, text[a:b]), -a, -b) for a, b in pairs)
    a, b = -a, -b
    return ratio, a + len(text[a:b]) - len(text[a:b].lstrip()), a + len(text[a:b].rstrip())


class Sections:
    """A document's sections, each normalised once (module rules): what `locate` compares quotes with.
    `fold` gives a section text's `spans.Folded` when asked (default: made here once per section)."""

    def __init__(self, document: Document, fold: Callable[[str], spans.Folded] | None = None):
        self.document = document
        self.normalised = {key: normalise(section.text) for key, section in document.sections.items()}
        self.longest = max(map(len, self.normalised.values()), default=0)
        self._fold = fold
        self._folded: dict[str, spans.Folded] = {}      # the map back, made for a section when asked

    def span(self, key: str, start: int, end: int) -> tuple[int, int]:
        """The span of section `key`'s own text holding normalised[key][start:end]."""
        if self._fold is not None:
            return self._fold(self.document.sections[key].text).raw_span(start, end)
        if key not in self._folded:
            self._folded[key] = spans.Folded(self.document.sections[key].text)
        return self._folded[key].raw_span(start, end)

    @classmethod
    def of(cls, source: "Document | Sections") -> "Sections":
        return source if isinstance(source, Sections) else cls(source)


def locate(quote: str | None, source: Document | Sections, cited_section: str | None = None, *,
           max_chars: int = NEAR_MISS_MAX_CHARS) -> Match:
    """Status of one quote against the document (see module rules); `max_chars` is NEAR_MISS_MAX_CHARS.
    `source` is the document, or its `Sections` (normalised once for many quotes)."""
    cited = str(cited_section) if cited_section is not None else None
    if not has_content(quote):
        return Match("section-only" if cited else "missing", cited, cited)
    sections = Sections.of(source)
    normalised = sections.normalised
    order = ([cited] if cited in normalised else []) + [k for k in normalised if k != cited]
    # a lower bound of the normalised length: a quote longer than every section and than the cap can be
    # neither verbatim anywhere nor searched, so it is not even normalised
    visible = len("".join(quote.split())) if len(quote) > max_chars else 0
    if visible > max(max_chars, sections.longest):
        return Match("missing", None, cited)
    needle = normalise(quote)
    for key in order:
        at = normalised[key].find(needle)
        if at >= 0:
            return Match("found", key, cited, None, None, None, *sections.span(key, at, at + len(needle)))
    if len(needle) > max_chars or not order:
        return Match("missing", None, cited)
    best_key, best_score, best_start, best_end = None, -1.0, 0, 0
    for key in order:                       # the best score so far is the next section's cutoff
        aligned = _aligned(needle, normalised[key], best_score)
        if aligned is not None and aligned[0] > best_score:
            best_key, (best_score, best_start, best_end) = key, aligned
    refined, start, end = _refined(needle, normalised[best_key], best_start, best_end)
    if len(needle) > EXACT_CHARS:
        best_score = max(best_score, refined)
    score = round(best_score, 1)
    if best_score >= NEAR_MISS:
        closest = normalised[best_key][start:end]
        return Match("misquoted", best_key, cited, score, closest, word_diff(needle, closest),
                     *sections.span(best_key, start, end))
    return Match("missing", None, cited, score)
