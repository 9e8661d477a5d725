"""Split prose into sentences and find the sentence(s) a citation belongs to.

Rules:
- Sentences come from pysbd 0.3.4 (rule-based, English "golden rules"; its French, German and Russian
  rules for a text `source.language.detect` reads as one of those: `assemble` detects the answer's prose
  once), run in its non-destructive mode
  (clean=False) one paragraph at a time, so each sentence is an exact span of the prose. It was chosen
  over syntok 1.4.4, which reads the "C." of "120 °C. See ..." as an initial and joins the two
  sentences; temperatures are this cookbook's bread and butter. A blank line always ends a sentence.
  pysbd's cost grows with the square of what it reads, so a paragraph over WINDOW characters is read in
  overlapping windows (`split`); a sentence is at most WINDOW characters.
- A point (where a marker stood) belongs to the last sentence that starts before it: a marker after the
  full stop ("boils.[1]") and one before it ("boils [1].") both cite "boils." A point before the first
  sentence belongs to the first.
- A span belongs to every sentence it overlaps (a span over blank space is read as its start point).
- The claim is those sentences' text with each run of whitespace made one space (with `cuts`: those spans
  of the prose left out, a space left before punctuation and a comma, colon or semicolon left at an end
  dropped).
- Linear in the text: it is split once (`Sentences`), and a point or span is placed by bisection over the
  sentences' starts and ends (sentences are in order and never overlap), never by a scan of them all. Its
  memory too: paragraphs are found by the blank lines that end them (`_BREAK`), never matched whole.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

import pysbd

from ..source import language

_BREAK = re.compile(r"\n(?=[ \t]*\n)")
"""A newline that ends a paragraph: a blank line follows. (Matching the paragraphs themselves, a group
repeated once per character, costs the regex engine ~120 bytes a character: 500 MB for a 4 MB paragraph.)"""
_INK = re.compile(r"\S")
_SPACE_PUNCT = re.compile(r" ([.,;:!?])")
WINDOW = 5_000
"""Most characters of a paragraph pysbd reads at once: its cost grows with the square of what it reads
(each abbreviation rewrites, and each sentence is looked for in, the whole of it)."""


def split(text: str, lang: str = "en") -> list[tuple[int, int]]:
    """(start, end) of each sentence of text, in order, without surrounding whitespace.

    A paragraph longer than WINDOW is read a window at a time, each window with the sentence before it as
    context (pysbd reads the start of a text differently): of a window's sentences, every one but its
    last is kept (the window's edge may have cut the last), and the next window starts where that last
    one starts; a window that is one sentence ends it at the window's edge."""
    spans: list[tuple[int, int]] = []
    for first, end in _paragraphs(text):
        if not _INK.search(text, first, end):
            continue
        start = context = first
        while start < end:
            stop = end if end - context <= WINDOW else _edge(text, start, start + WINDOW)
            found = [(max(lo, start), hi) for lo, hi in _segment(text, context, stop, lang) if hi > start]
            if stop == end:
                spans += found
            elif len(found) > 1:
                spans += found[:-1]
                stop = found[-1][0]
            elif found:
                spans.append((found[0][0], found[0][0] + len(text[found[0][0]:stop].rstrip())))
            context = spans[-1][0] if spans and spans[-1][0] >= first else stop
            start = stop
    return spans


def _paragraphs(text: str):
    """(start, end) of each paragraph: the runs of text between the newlines that end one (`_BREAK`)."""
    start = 0
    for newline in _BREAK.finditer(text):
        if newline.start() > start:
            yield start, newline.start()
        start = newline.end()
    if len(text) > start:
        yield start, len(text)


def _edge(text: str, start: int, limit: int) -> int:
    """Where a window from `start` ends: after the last space in its second half (else at `limit`)."""
    space = max(text.rfind(" ", start + WINDOW // 2, limit), text.rfind("\n", start + WINDOW // 2, limit))
    return space + 1 if space >= 0 else limit


def _segment(text: str, start: int, stop: int, lang: str = "en") -> list[tuple[int, int]]:
    """pysbd's sentences of text[start:stop] in `lang`'s rules, as spans of text."""
    spans, cursor = [], start
    segmenter = pysbd.Segmenter(language=language.PYSBD.get(lang, "en"), clean=False)
    for piece in segmenter.segment(text[start:stop]):
        body = piece.strip()
        if not body:
            cursor += len(piece)
            continue
        found = text.find(body, cursor, stop)
        if found < 0:                          # pysbd altered the text: keep what can be placed
            continue
        spans.append((found, found + len(body)))
        cursor = found + len(body)
    return spans


class Sentences:
    """A text's sentences (`split` once) and the sentence(s) each point or span belongs to (module rules)."""

    def __init__(self, text: str, lang: str = "en"):
        self.text = text
        self.spans = split(text, lang)
        self._starts = [lo for lo, _ in self.spans]
        self._ends = [hi for _, hi in self.spans]

    def covering(self, start: int, end: int) -> tuple[int, ...]:
        """Indices of the sentences a point (start == end) or span belongs to; () when there are none."""
        if not self.spans:
            return ()
        if end > start:
            first = bisect_right(self._ends, start)            # the first sentence ending after start
            last = bisect_left(self._starts, end) - 1           # the last one starting before end
            if first <= last:
                return tuple(range(first, last + 1))
        return (max(bisect_left(self._starts, start) - 1, 0),)

    def claim(self, indices: tuple[int, ...], cuts: list[tuple[int, int]] = ()) -> str:
        """The text of the sentences `indices` without the prose spans `cuts` (sorted; module rules)."""
        if not cuts:
            return " ".join(" ".join(self.text[self.spans[i][0]:self.spans[i][1]].split()) for i in indices)
        pieces, at = [], self.spans[indices[0]][0]
        for lo, hi in cuts:
            pieces.append(self.text[at:max(lo, at)])
            at = max(at, hi)
        pieces.append(self.text[at:self.spans[indices[-1]][1]])
        return _SPACE_PUNCT.sub(r"\1", " ".join(" ".join(pieces).split())).strip(" ,;:")
