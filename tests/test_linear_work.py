"""Work that grows with the input only once: counted, never timed."""
from __future__ import annotations

import json

from citecheck import check, matching
from citecheck.source import sources

RFC = sources.load("data/rfc7519.txt")
CITATIONS = json.loads(open("data/citations.json", encoding="utf-8").read())


def constant_judge(claim, source):
    return {"relation": "supports", "confidence": 0.9}


def test_check_normalises_each_section_once_per_document_not_once_per_citation(ctx, monkeypatch):
    calls = []
    real = matching.normalise
    monkeypatch.setattr(matching, "normalise", lambda text: calls.append(text) or real(text))
    citations = [{**c, "id": f"{c['id']}-{n}"} for n in range(10) for c in CITATIONS]
    rows = check.check_citations(RFC, citations, ctx, judge=constant_judge)
    assert len(rows) == 90
    sections = [s.text for s in RFC.sections.values()]
    assert sum(text in sections for text in calls) == len(sections)     # each section once
    assert len(calls) <= len(sections) + len(citations)                  # and each quote at most once


# ---------------------------------------------------------------- extract

PROSE = ("At sea level, pure water boils at 100 °C (212 °F). Dr. Smith measured it, e.g. at 3,000 m, "
         "i.e. higher up! Recipes say the same [1]. ")


def test_pysbd_reads_a_long_paragraph_in_bounded_windows_covering_it_about_once(monkeypatch):
    from citecheck.extract import sentences
    read = []
    segment = sentences.pysbd.Segmenter.segment
    monkeypatch.setattr(sentences.pysbd.Segmenter, "segment", lambda self, text: read.append(len(text))
                        or segment(self, text))
    text = PROSE * (200_000 // len(PROSE))                  # one paragraph of 200 KB
    spans = sentences.split(text)
    assert max(read) <= 2 * sentences.WINDOW and sum(read) <= 3 * len(text)
    assert [text[a:b] for a, b in spans[:3]] == ["At sea level, pure water boils at 100 °C (212 °F).",
                                                 "Dr. Smith measured it, e.g. at 3,000 m, i.e. higher up!",
                                                 "Recipes say the same [1]."]
    assert len(spans) == 3 * (200_000 // len(PROSE))        # every window's sentences, none twice or lost
    assert all(a < b <= c for (a, b), (c, _) in zip(spans, spans[1:]))


def test_finding_a_long_paragraph_holds_memory_of_the_order_of_a_window_not_of_the_text(monkeypatch):
    import tracemalloc

    from citecheck.extract import sentences
    monkeypatch.setattr(sentences, "_segment", lambda text, start, stop, lang="en": [])     # pysbd aside
    text = PROSE * (1_000_000 // len(PROSE))                # one paragraph of 1 MB
    tracemalloc.start()
    try:
        sentences.split(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(text) // 10           # matching the paragraph whole held ~120 bytes a character


def test_paragraphs_end_at_blank_lines_as_the_pattern_of_a_paragraph_says():
    import random
    import re

    from citecheck.extract import sentences
    paragraph = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")      # what a paragraph is, matched whole
    rng = random.Random(5)
    for _ in range(5000):
        text = "".join(rng.choice(["a", " ", "\t", "\n", "b. ", "\n\n", " \n", "\r"]) for _ in range(30))
        assert list(sentences._paragraphs(text)) == [m.span() for m in paragraph.finditer(text)]


def test_a_paragraph_within_the_window_is_split_exactly_as_pysbd_splits_it_whole():
    import pysbd

    from citecheck.extract import sentences
    text = (PROSE * 60)[:sentences.WINDOW].rsplit(" ", 1)[0]
    whole = [s.strip() for s in pysbd.Segmenter(language="en", clean=False).segment(text) if s.strip()]
    assert [text[a:b] for a, b in sentences.split(text)] == whole


def test_a_sentence_longer_than_the_window_is_cut_at_a_space_and_nothing_is_lost():
    from citecheck.extract import sentences
    text = "word " * (3 * sentences.WINDOW // 5) + "end."
    spans = sentences.split(text)
    assert len(spans) > 1 and all(b - a <= sentences.WINDOW for a, b in spans)
    assert " ".join(text[a:b] for a, b in spans) == text.strip()


def test_covering_by_bisection_is_the_scan_it_replaced():
    import random

    from citecheck.extract import sentences
    text = "\n\n".join(PROSE * n for n in range(1, 6))
    found = sentences.Sentences(text)

    def scanned(start, end):                               # the rule, read literally (the old covering)
        hit = tuple(i for i, (lo, hi) in enumerate(found.spans) if lo < end and hi > start) if end > start else ()
        if hit:
            return hit
        return (max(sum(lo < start for lo, _ in found.spans) - 1, 0),)
    rng = random.Random(25)
    for _ in range(2000):
        start = rng.randrange(len(text) + 1)
        end = min(len(text), start + rng.choice([0, 0, 1, 5, 40, 300]))
        assert found.covering(start, end) == scanned(start, end), (start, end)
