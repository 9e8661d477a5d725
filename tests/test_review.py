"""Verdicts and the AUTO_ACCEPT gate (review), and the `check` command (check)."""
import json
import os
import subprocess
import sys

import pytest
from standins.jev import jev_standin

from citecheck import check, matching
from citecheck.config import Settings
from citecheck.source import sources
from citecheck.verdict import review

DOC = sources.load("data/rfc7519.txt")
FOUND = matching.Match("found", "4.1.4", "4.1.4")


MISQUOTE = matching.Match("misquoted", "4.1.3", "4.1.3", 93.5)
MISSING = matching.Match("missing", None, "1")


# ---------------------------------------------------------------- the gate: its whole truth table

@pytest.mark.parametrize("confidence, threshold, misquoted, auto", [
    # a model's verdict: confidence >= threshold
    (0.95, 0.8, False, True), (0.8, 0.8, False, True), (0.7999, 0.8, False, False), (0.0, 0.8, False, False),
    (0.0, 0.0, False, True),                       # AUTO_ACCEPT=0 accepts every verdict, a guarded one too
    # no model asked (a dead link, a PDF, a fabricated quote): automatic
    (None, 0.8, False, True), (None, 0.0, False, True),
    # AUTO_ACCEPT=1: everything to a person, even 1.0 and even no model asked
    (1.0, 1.0, False, False), (None, 1.0, False, False), (0.99, 1.0, False, False),
    # a misquote: never automatic
    (1.0, 0.8, True, False), (0.99, 0.0, True, False), (None, 0.5, True, False),
])
def test_the_gate(confidence, threshold, misquoted, auto):
    assert review.gate(confidence, threshold, misquoted=misquoted) is auto


@pytest.mark.parametrize("match, answer, threshold, expected", [
    (MISSING, None, 0.8, {"relation": None, "confidence": None, "verdict": "fabricated", "auto": True}),
    (MISSING, None, 1.0, {"relation": None, "confidence": None, "verdict": "fabricated", "auto": False}),
    (FOUND, {"relation": "supports", "confidence": 0.91}, 0.8,
     {"relation": "supports", "confidence": 0.91, "verdict": "verified", "auto": True}),
    (FOUND, {"relation": "supports", "confidence": 1.0}, 1.0,
     {"relation": "supports", "confidence": 1.0, "verdict": "verified", "auto": False}),
    (FOUND, {"relation": "contradicts", "confidence": 0.8}, 0.8,      # a contradiction: gated like any verdict
     {"relation": "contradicts", "confidence": 0.8, "verdict": "contradicted", "auto": True}),
    (FOUND, {"relation": "says_nothing", "confidence": 0.79999}, 0.8,
     {"relation": "says_nothing", "confidence": 0.8, "verdict": "unsupported", "auto": True}),
    (FOUND, {"relation": "says_nothing", "confidence": 0.7}, 0.8,
     {"relation": "says_nothing", "confidence": 0.7, "verdict": "unsupported", "auto": False}),
    (MISQUOTE, {"relation": "supports", "confidence": 0.99}, 0.8,
     {"relation": "supports", "confidence": 0.99, "verdict": "verified", "auto": False}),
])
def test_decide_the_source_document_flow(match, answer, threshold, expected):
    assert review.decide(match, answer, threshold) == expected


@pytest.mark.parametrize("row, threshold, auto", [
    ({"label": "supported", "confidence": 0.95}, 0.8, True),
    ({"label": "contradicted", "confidence": 0.95}, 0.8, True),
    ({"label": "contradicted", "confidence": 0.6}, 0.8, False),
    ({"label": "not_found", "confidence": 0.0, "reason": "evidence_quote_not_in_source"}, 0.8, False),
    ({"label": "unreachable", "confidence": None, "reason": "http_404"}, 0.8, True),
    ({"label": "unreachable", "confidence": None, "reason": "http_404"}, 1.0, False),
    ({"label": "supported", "confidence": 1.0}, 1.0, False),
])
def test_gated_the_live_web_flow(row, threshold, auto):
    assert review.gated(row, threshold) == {**row, "auto": auto}
    assert review.needs_review(row, threshold) is not auto


def test_the_queue_is_contradicted_first_then_lowest_confidence():
    rows = [{"id": "a", "label": "supported", "confidence": 0.5, "auto": False},
            {"id": "b", "label": "contradicted", "confidence": 0.7, "auto": False},
            {"id": "c", "label": "not_found", "confidence": 0.0, "auto": False},
            {"id": "d", "label": "supported", "confidence": 0.95, "auto": True},
            {"id": "e", "label": "contradicted", "confidence": 0.2, "auto": False},
            {"id": "f", "label": "unreachable", "confidence": None, "auto": None},   # gate unknown: a person
            {"id": "g", "verdict": "contradicted", "confidence": 0.4, "auto": False}]   # source-document row
    assert [r["id"] for r in review.queue(rows)] == ["e", "g", "b", "c", "a", "f"]
    assert [r["id"] for r in review.queue(rows, threshold=1.0)] == ["e", "g", "b", "c", "a", "d", "f"]
    assert [r["id"] for r in review.queue(rows, threshold=0.6)] == ["e", "g", "c", "a"]


def test_fabricated_quotes_never_reach_the_judge(ctx):
    asked = []

    def judge(claim, source):
        asked.append(claim)
        return {"relation": "supports", "confidence": 0.9}
    citations, _ = sources.load_citations("data/citations.json", DOC)
    rows = check.check_citations(DOC, citations, ctx, judge=judge, threshold=0.8)
    assert [r["id"] for r in rows if r["verdict"] == "fabricated"] == ["C5"]
    assert len(asked) == len(citations) - 1


def test_judge_reads_the_located_section(ctx):
    seen = {}

    def judge(claim, source):
        seen[claim] = source
        return {"relation": "supports", "confidence": 0.9}
    check.check_citations(DOC, [{"id": "x", "claim": "k", "quote": "Use of this claim is OPTIONAL.",
                                 "section": "4.1.4"}], ctx, judge=judge, threshold=0.5)
    assert seen["k"] == DOC.sections["4.1.4"].text


def test_auto_accept_from_environment(make_ctx):
    ctx = make_ctx(auto_accept=Settings.from_env({"AUTO_ACCEPT": "0.95"}).auto_accept)
    rows = check.check_citations(DOC, [{"id": "x", "claim": "k", "quote": None, "section": "1"}], ctx,
                                 judge=lambda c, s: {"relation": "supports", "confidence": 0.9})
    assert rows[0]["auto"] is False
    with pytest.raises(ValueError, match="AUTO_ACCEPT"):
        Settings.from_env({"AUTO_ACCEPT": "high"})


def run_cli(*args, env=None):
    full_env = {k: v for k, v in os.environ.items()}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "citecheck", *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


def test_check_cli_json_against_a_standin():
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as server:
        done = run_cli("check", "--source", "data/rfc7519.txt", "--citations", "data/citations.json", "--json",
                       env={"TYPESAFE_ENDPOINT": server.url})
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["id"] for r in rows] == [f"C{n}" for n in range(1, 10)]
    assert set(rows[0]) == {"id", "status", "relation", "confidence", "verdict", "auto"}
    assert {r["id"]: r["verdict"] for r in rows}["C5"] == "fabricated"


def test_check_cli_bad_citation_is_reported_and_the_rest_checked(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{"id": "a", "claim": "x", "quote": "Made-up words here.", "section": "1"},
                                {"id": "b", "claim": "x", "section": "1"}]))
    done = run_cli("check", "--source", "data/rfc7519.txt", "--citations", str(path))
    assert done.returncode == 1
    assert done.stderr.strip() == "citecheck check: citation b: missing field 'quote'"
    assert "fabricated" in done.stdout


def test_check_cli_unreachable_judge_is_one_line_naming_the_endpoint():
    done = run_cli("check", "--source", "data/rfc7519.txt", "--citations", "data/citations.json",
                   env={"TYPESAFE_ENDPOINT": "http://127.0.0.1:9", "TYPESAFE_API_KEY": "sk-SECRET-987"})
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1
    assert "http://127.0.0.1:9" in done.stderr and "SECRET" not in done.stderr + done.stdout


def test_check_cli_no_key_names_the_variable():
    done = run_cli("check", "--source", "data/rfc7519.txt", "--citations", "data/citations.json")
    assert done.returncode == 1 and "TYPESAFE_API_KEY is not set" in done.stderr


def test_check_cli_missing_file():
    done = run_cli("check", "--source", "nope.txt", "--citations", "data/citations.json")
    assert done.returncode == 1 and done.stderr.strip() == "citecheck check: error: source file not found: nope.txt"
