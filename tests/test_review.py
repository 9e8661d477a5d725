"""Verdicts and the AUTO_ACCEPT gate (review), and the `check` command (check)."""
import json
import os
import subprocess
import sys

import pytest

from citecheck import check, matching, review, sources
from citecheck.config import Settings
from standins.jev import jev_standin

DOC = sources.load("data/rfc7519.txt")
FOUND = matching.Match("found", "4.1.4", "4.1.4")


@pytest.mark.parametrize("match, answer, threshold, expected", [
    (matching.Match("missing", None, "1"), None, 0.8,
     {"relation": None, "confidence": None, "verdict": "fabricated", "auto": True}),
    (FOUND, {"relation": "supports", "confidence": 0.91}, 0.8,
     {"relation": "supports", "confidence": 0.91, "verdict": "verified", "auto": True}),
    (FOUND, {"relation": "contradicts", "confidence": 0.8}, 0.8,
     {"relation": "contradicts", "confidence": 0.8, "verdict": "contradicted", "auto": True}),
    (FOUND, {"relation": "says_nothing", "confidence": 0.79999}, 0.8,
     {"relation": "says_nothing", "confidence": 0.8, "verdict": "unsupported", "auto": True}),
    (FOUND, {"relation": "says_nothing", "confidence": 0.7}, 0.8,
     {"relation": "says_nothing", "confidence": 0.7, "verdict": "unsupported", "auto": False}),
    (matching.Match("misquoted", "4.1.3", "4.1.3", 93.5), {"relation": "supports", "confidence": 0.99}, 0.8,
     {"relation": "supports", "confidence": 0.99, "verdict": "verified", "auto": False}),
])
def test_decide(match, answer, threshold, expected):
    assert review.decide(match, answer, threshold) == expected


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
