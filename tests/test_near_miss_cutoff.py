"""The near-miss search takes the best score so far as rapidfuzz's score_cutoff, and says the same.

- Twenty non-verbatim quotes over RFC 7519 three times over (tests/near_misses.py: near misses, heavier
  damage, invented sentences, two long quotes; sections that tie): status, section, score, closest span,
  diff and where it stands are those recorded before the search took a cutoff
  (tests/data/near_miss_results.json), and those of the search with the cutoff taken away.
- Each section after the first is searched with the best score so far as its cutoff.
"""
from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

import near_misses as N
from citecheck import matching

RECORDED = Path(__file__).resolve().parent / "data" / "near_miss_results.json"


@pytest.fixture(scope="module")
def document():
    return N.document()


def uncut(monkeypatch, seen: list | None = None) -> None:
    """matching's rapidfuzz with partial_ratio_alignment's cutoff taken away (and recorded in `seen`)."""
    fuzz = matching.fuzz

    def alignment(s1, s2, score_cutoff=None):
        if seen is not None:
            seen.append(score_cutoff)
        return fuzz.partial_ratio_alignment(s1, s2)
    monkeypatch.setattr(matching, "fuzz", types.SimpleNamespace(
        partial_ratio_alignment=alignment, ratio=fuzz.ratio))


def test_twenty_non_verbatim_quotes_keep_the_results_recorded_before_the_cutoff(document):
    results = N.results(document)
    assert len(results) == 20 and {r["status"] for r in results} == {"misquoted", "missing"}
    assert results == json.loads(RECORDED.read_text(encoding="utf-8"))


def test_the_results_are_those_of_the_search_without_a_cutoff(document, monkeypatch):
    cut = N.results(document)
    uncut(monkeypatch)
    assert N.results(document) == cut


def test_each_section_after_the_first_is_searched_with_the_best_score_so_far(document, monkeypatch):
    seen: list = []
    uncut(monkeypatch, seen)
    quote, cited = N.quotes(document)[0]
    match = matching.locate(quote, document, cited)
    searched = [s for s in document.sections.values() if s.text.strip()]
    assert match.status == "misquoted" and len(seen) == len(searched)
    assert seen[0] == 0                         # the cited section first, then its score as every cutoff
    assert seen[1:] == [seen[1]] * (len(seen) - 1) and round(seen[1], 1) == match.score
