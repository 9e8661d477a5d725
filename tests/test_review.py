"""Verdicts and the AUTO_ACCEPT gate (review), and the `check` command (check)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from standins.jev import jev_standin

from citecheck import check, matching
from citecheck.config import Settings
from citecheck.paths import ROOT
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
    # no AUTO_ACCEPT in force for the answering model (None): its verdicts to a person, no model asked: auto
    (1.0, None, False, False), (0.0, None, False, False), (None, None, False, True),
    (None, None, True, False),
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
    assert review.decide(match, answer, threshold) == {**expected, "auto_note": None}


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
    assert review.gated(row, threshold) == {**row, "auto": auto, "auto_note": None}
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
    unset = Settings.from_env({})
    assert unset.auto_accept is None and unset.auto_accept_table == ROOT / "data" / "gate.json"
    elsewhere = Settings.from_env({"AUTO_ACCEPT_TABLE": "elsewhere.json"})
    assert elsewhere.auto_accept_table == Path("elsewhere.json")


# ---------------------------------------------------------------- the AUTO_ACCEPT in force, per model

CLAIM_IN_4_1_4 = [{"id": "x", "claim": "k", "quote": "Use of this claim is OPTIONAL.", "section": "4.1.4"},
                  {"id": "gone", "claim": "k", "quote": "Words this RFC never says.", "section": "1"}]


def answered_by(model, confidence):
    return lambda claim, source: {"relation": "supports", "confidence": confidence, "model": model}


def table_at(tmp_path, table) -> Path:
    path = tmp_path / "gate.json"
    path.write_text(json.dumps(table))
    return path


def test_the_shipped_table_is_empty_so_no_model_is_calibrated():
    """No measurement supports a threshold for any model yet (docs/decisions/0024)."""
    assert review.read_table(ROOT / "data" / "gate.json") == {}
    assert Settings().auto_accept_table == ROOT / "data" / "gate.json"


def test_a_calibrated_model_is_gated_by_its_own_threshold_only(make_ctx, tmp_path):
    ctx = make_ctx(auto_accept_table=table_at(tmp_path, {"m": {"threshold": 0.7}}))
    gate = review.Gate.of(ctx.settings)
    assert (gate.threshold("m"), gate.threshold("other"), gate.threshold(None)) == (0.7, None, None)
    assert review.in_force("m", ctx.settings, gate.table) == 0.7

    def routed(model, confidence):
        rows = check.check_citations(DOC, CLAIM_IN_4_1_4, ctx, judge=answered_by(model, confidence),
                                     threshold=gate)
        return [(r["auto"], r["auto_note"]) for r in rows]
    assert routed("m", 0.7) == [(True, None), (True, None)]           # >= 0.7: automatic; fabricated too
    assert routed("m", 0.69) == [(False, None), (True, None)]         # below its threshold: a person
    note = ("uncalibrated: no AUTO_ACCEPT for other in " + str(tmp_path / "gate.json") +
            ": run `calibrate --model other --write` or set AUTO_ACCEPT")
    assert routed("other", 0.99) == [(False, note), (True, None)]     # another model: uncalibrated


def test_an_entry_that_reaches_no_threshold_sends_that_model_to_a_person(make_ctx, tmp_path):
    path = table_at(tmp_path, {"m": {"threshold": 1, "target": 0.9, "date": "2026-12-03"}})
    gate = review.Gate.of(make_ctx(auto_accept_table=path).settings)
    assert gate.threshold("m") is None and gate.shown("m") == 1.0
    routed = gate.route(1.0, "m")
    assert routed["auto"] is False and routed["auto_note"].startswith("calibrated: no AUTO_ACCEPT reaches "
                                                                      "precision 0.9 for m")
    assert gate.route(None, "m") == {"auto": True, "auto_note": None}  # no model asked: automatic still


def test_an_explicit_auto_accept_overrides_the_table_for_every_model(make_ctx, tmp_path):
    path = table_at(tmp_path, {"m": {"threshold": 0.5}})
    settings = Settings.from_env({"AUTO_ACCEPT": "0.95", "AUTO_ACCEPT_TABLE": str(path)})
    gate = review.Gate.of(settings)
    assert (gate.threshold("m"), gate.threshold("other")) == (0.95, 0.95)
    assert review.in_force("m", settings, {"m": {"threshold": 0.5}}) == 0.95
    ctx = make_ctx(auto_accept=1.0, auto_accept_table=path)             # AUTO_ACCEPT=1: everything, as before
    rows = check.check_citations(DOC, CLAIM_IN_4_1_4, ctx, judge=answered_by("m", 1.0))
    assert [(r["auto"], r["auto_note"]) for r in rows] == [(False, None), (False, None)]


def test_the_gate_headline_names_the_rule_in_force(make_ctx, tmp_path):
    path = table_at(tmp_path, {"m": {"threshold": 0.7}, "n": {"threshold": 1}})
    assert review.Gate.of(make_ctx(auto_accept_table=path).settings).headline() == (
        f"AUTO_ACCEPT per model ({path}): 1 set")
    empty = table_at(tmp_path, {})
    assert review.Gate.of(make_ctx(auto_accept_table=empty).settings).headline().endswith(
        "none set, all to a person")
    assert review.Gate.of(make_ctx(auto_accept=0.95).settings).headline() == "AUTO_ACCEPT = 0.95"


@pytest.mark.parametrize("text, why", [
    ("{not json", "is not JSON"), ("[]", "must be an object"),
    ('{"m": {"threshold": 1.5}}', "threshold between"),
    ('{"m": {"precision": 0.9}}', "threshold between"), ('{"m": 0.8}', "threshold between"),
])
def test_a_malformed_table_is_an_error_naming_the_path(tmp_path, text, why):
    path = tmp_path / "gate.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"AUTO_ACCEPT_TABLE {re.escape(str(path))}.*{why}"):
        review.Gate.of(Settings(auto_accept_table=path))
    overridden = review.Gate.of(Settings(auto_accept=0.8, auto_accept_table=path))   # the table is not read
    assert overridden.threshold("m") == 0.8
    assert review.read_table(tmp_path / "absent.json") == {}


def test_the_table_is_read_again_only_when_it_changes(tmp_path):
    path = table_at(tmp_path, {"m": {"threshold": 0.7}})
    assert review.read_table(path)["m"]["threshold"] == 0.7
    path.write_text(json.dumps({"m": {"threshold": 0.75}}))
    assert review.read_table(path)["m"]["threshold"] == 0.75
    review.read_table(path)["m"]["threshold"] = 0.1                    # a caller's copy, not the cached table
    assert review.read_table(path)["m"]["threshold"] == 0.75


def test_tell_says_it_once_per_run_not_once_per_row(capsys):
    gate = review.Gate(Settings())
    rows = [review.gated({"label": "supported", "confidence": c}, gate, "m") for c in (0.99, 0.5, 0.9)]
    rows.append(review.gated({"label": "unreachable", "confidence": None}, gate))
    assert [r["auto"] for r in rows] == [False, False, False, True]
    gate.tell(rows, "batch")
    gate.tell(rows, "batch")
    err = capsys.readouterr().err.splitlines()
    assert err == ["citecheck batch: 3 verdicts to a person, uncalibrated: no AUTO_ACCEPT for m in "
                   "data/gate.json: run `calibrate --model m --write` or set AUTO_ACCEPT"]
    assert review.needs_review(rows[0], gate) and not review.needs_review(rows[3], gate)


def run_cli(*args, env=None):
    full_env = {k: v for k, v in os.environ.items()}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "citecheck", *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


def test_check_cli_json_against_a_standin():
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as server:
        done = run_cli("check", "--source", "data/rfc7519.txt", "--citations", "data/citations.json", "--json",
                       env={"TYPESAFE_ENDPOINT": server.url, "AUTO_ACCEPT": "0.8"})
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["id"] for r in rows] == [f"C{n}" for n in range(1, 10)]
    assert set(rows[0]) == {"id", "status", "relation", "confidence", "verdict", "auto", "method",
                            "section", "span_start", "span_end"}     # C1 is found: where it stands
    assert {r["id"]: r["verdict"] for r in rows}["C5"] == "fabricated"
    assert done.stderr == ""


def test_check_cli_an_uncalibrated_model_goes_to_a_person_said_once(tmp_path):
    """The default: no AUTO_ACCEPT set, the model not in the table -> every judged row to a person, the row's
    auto_note and one stderr line saying why; the fabricated quote (no model asked) stays automatic."""
    env = {"AUTO_ACCEPT_TABLE": str(table_at(tmp_path, {"someone-else": {"threshold": 0.1}}))}
    with jev_standin({"supports": 0.99, "contradicts": 0.005, "says_nothing": 0.005}) as server:
        done = run_cli("check", "--source", "data/rfc7519.txt", "--citations", "data/citations.json",
                       "--json", env={"TYPESAFE_ENDPOINT": server.url, "TYPESAFE_MODEL": "m-1", **env})
    assert done.returncode == 0, done.stderr
    rows = {r["id"]: r for r in json.loads(done.stdout)}
    judged = [r for r in rows.values() if r["confidence"] is not None]
    assert len(judged) == 8 and not any(r["auto"] for r in judged)
    assert [r["id"] for r in judged if "auto_note" not in r] == ["C9"]     # a misquote: its status says why
    judged = [r for r in judged if r["status"] != "misquoted"]
    assert {r["auto_note"] for r in judged} == {
        f"uncalibrated: no AUTO_ACCEPT for m-1 in {tmp_path / 'gate.json'}: run "
        "`calibrate --model m-1 --write` or set AUTO_ACCEPT"}
    assert rows["C5"]["auto"] is True and "auto_note" not in rows["C5"]
    note = judged[0]["auto_note"]
    assert done.stderr.splitlines() == [f"citecheck check: 8 verdicts to a person, 7 of them {note}"]


def test_check_cli_a_malformed_table_is_one_line_naming_it(tmp_path):
    path = tmp_path / "gate.json"
    path.write_text("{")
    done = run_cli("check", "--source", "data/rfc7519.txt", "--citations", "data/citations.json",
                   env={"AUTO_ACCEPT_TABLE": str(path)})
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert f"AUTO_ACCEPT_TABLE {path} is not JSON" in done.stderr


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
