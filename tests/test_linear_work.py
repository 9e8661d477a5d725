"""Work that grows with the input only once (issue 25.4, 25.6): counted, never timed."""
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
