"""Split prose into sentences and find the sentence(s) a citation belongs to.

Rules:
- Sentences come from pysbd 0.3.4 (rule-based, English "golden rules"), run in its non-destructive mode
  (clean=False) one paragraph at a time, so each sentence is an exact span of the prose. It was chosen
  over syntok 1.4.4, which reads the "C." of "120 °C. See ..." as an initial and joins the two
  sentences; temperatures are this cookbook's bread and butter. A blank line always ends a sentence.
- A point (where a marker stood) belongs to the last sentence that starts before it: a marker after the
  full stop ("boils.[1]") and one before it ("boils [1].") both cite "boils." A point before the first
  sentence belongs to the first.
- A span belongs to every sentence it overlaps (a span over blank space is read as its start point).
- The claim is those sentences' text with each run of whitespace made one space.
"""
from __future__ import annotations

import re
from bisect import bisect_left

import pysbd

_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")


def split(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of text, in order, without surrounding whitespace."""
    spans = []
    for paragraph in _PARAGRAPH.finditer(text):
        if not paragraph.group().strip():
            continue
        cursor = paragraph.start()
        for piece in pysbd.Segmenter(language="en", clean=False).segment(paragraph.group()):
            body = piece.strip()
            if not body:
                cursor += len(piece)
                continue
            start = text.find(body, cursor, paragraph.end())
            if start < 0:                      # pysbd altered the text: keep what can be placed
                continue
            spans.append((start, start + len(body)))
            cursor = start + len(body)
    return spans


def covering(spans: list[tuple[int, int]], start: int, end: int) -> tuple[int, ...]:
    """Indices of the sentences a point (start == end) or span belongs to; () when there are none."""
    if not spans:
        return ()
    if end > start:
        hit = tuple(i for i, (lo, hi) in enumerate(spans) if lo < end and hi > start)
        if hit:
            return hit
    before = bisect_left([lo for lo, _ in spans], start) - 1
    return (max(before, 0),)


def claim(text: str, spans: list[tuple[int, int]], indices: tuple[int, ...]) -> str:
    return " ".join(" ".join(text[spans[i][0]:spans[i][1]].split()) for i in indices)
