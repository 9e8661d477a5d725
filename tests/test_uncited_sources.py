"""Uncited sentences asked against the answer's own sources (`citecheck.answer.own_sources`): through the
fixture site and a capable judge stand-in on 127.0.0.1 (Choice endpoint + OpenAI, the pooled method), reached
by the real clients. An uncited sentence a page the answer cites elsewhere supports says so in every output
(text, --json, --out CSV, --report HTML, MCP's check_answer); the budget caps the questions and is stated; a
judge failure, an offline miss and no judge at all are labelled rows, and the rest of the report stands."""
from __future__ import annotations

import csv
import json

import pytest
from standins.capable import capable_standin
from standins.judge import free_port
from test_mcp import answer as tool_answer
from test_mcp import session

from citecheck import cli

SEA = "At sea level, pure water boils at 100 °C (212 °F)."
HUT = ("In a mountain hut at 3,000 metres above sea level, a pot of water comes to a full boil at roughly "
       "90 °C.")
FALLS = "The boiling point falls by about 1 °C for every 300 metres of altitude."   # uncited: page 1 holds it
COPPER = "Copper pans bring water to the boil 20 percent faster than steel pans."  # uncited: no page holds it
STORIES = [{"claim": SEA, "support": [SEA]},
           {"claim": HUT, "support": ["a pot of water comes to a full boil at roughly 90 °C"]},
           {"claim": FALLS, "support": ["by roughly 1 °C for every 300 metres near sea level"]},
           {"claim": COPPER}]


@pytest.fixture(scope="module")
def judge():
    with capable_standin(STORIES) as server:
        yield server


def markdown(url) -> str:
    return (f"{SEA} [1]\n\n{HUT} [2]\n\n{FALLS}\n\n{COPPER}\n\n"
            f"[1]: {url('/articles/boiling-point')}\n[2]: {url('/guides/cooking-at-altitude')}\n")


@pytest.fixture
def live(judge, fixture_site, monkeypatch, tmp_path):
    """The CLI's environment: the capable judge as Choice endpoint and OpenAI, the pooled method, the fixture
    site allowed; the answer file written. Returns its path."""
    judge.requests.clear()
    for name, value in {"TYPESAFE_ENDPOINT": judge.url, "OPENAI_BASE_URL": judge.url + "/v1",
                        "JUDGE_PROVIDER": "openai", "JUDGE_METHOD": "pooled", "JUDGE_RETRIES": "0",
                        "CITECHECK_ALLOW_PRIVATE": "1"}.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "answer.md"
    path.write_text(markdown(fixture_site.url), encoding="utf-8")
    return path


def check_answer(capsys, *argv):
    code = cli.main(["check-answer", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def asked_claims(judge) -> set[str]:
    """The uncited claims the stand-in was asked about (by an ASCII part of each, however a body escapes)."""
    parts = {FALLS: "for every 300 metres of altitude", COPPER: "Copper pans bring water"}
    return {claim for claim, part in parts.items()
            for request in judge.requests if part in request.body.decode("utf-8")}


def test_an_uncited_sentence_a_cited_page_supports_says_so_in_every_output(live, fixture_site, capsys,
                                                                            tmp_path):
    url = fixture_site.url
    supported = (f"asserts a checkable fact and cites nothing; supported by {url('/articles/boiling-point')} "
                 "(cited by m1), which it did not cite")
    code, out, err = check_answer(capsys, live, "--out", tmp_path / "r.csv", "--report", tmp_path / "r.html")
    assert code == 0 and err == "", err
    lines = out.splitlines()
    assert lines[:2] == ["citation_precision=1.0000 (2/2)", "citation_recall=0.5000 (2/4)"]   # as before
    assert lines[2].startswith("uncited: asked 2 of 2 uncited sentences against 2 sources (") \
        and lines[2].endswith(" calls, budget 20)")
    assert f"sentence 3 [uncited] {supported}" in lines
    (copper,) = [line for line in lines if line.startswith("sentence 4 [uncited]")]
    assert "not supported by any of the answer's 2 sources: " in copper
    assert f"{url('/articles/boiling-point')}: not_found" in copper \
        and f"{url('/guides/cooking-at-altitude')}: not_found" in copper
    assert f"problem: sentence 3: an uncited claim ({supported.split('; ')[1]}): {FALLS}" in lines

    code, out, _ = check_answer(capsys, live, "--json")
    data = json.loads(out)
    third = data["sentences"][2]
    assert (third["kind"], third["found_in"], third["note"]) == ("uncited", [url("/articles/boiling-point")],
                                                                 supported)
    assert data["sentences"][3]["found_in"] == [] and data["sentences"][0]["found_in"] == []
    checks = data["uncited_checks"]
    assert (checks["asked"], checks["uncited"], checks["sources"], checks["budget"]) == (2, 2, 2, 20)
    assert checks["line"] == lines[2].removeprefix("uncited: ") and checks["calls"] == len(checks["rows"])
    found = [r for r in checks["rows"] if r["label"] == "supported"]
    assert [(r["sentence"], r["source"], r["cited_by"], r["method"]) for r in found] == [
        (3, url("/articles/boiling-point"), ["m1"], "pooled")]
    assert "1 °C for every 300 metres" in found[0]["evidence_quote"]
    assert sorted(r["source"] for r in checks["rows"] if r["sentence"] == 4) == [
        url("/articles/boiling-point"), url("/guides/cooking-at-altitude")]

    rows = list(csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8")))
    kinds = ["marker"] * 2 + ["sentence"] * 4 + ["asked"] * checks["calls"] + ["answer"]
    assert [r["row"] for r in rows] == kinds
    assert rows[4]["found_in"] == url("/articles/boiling-point") and rows[4]["note"] == supported
    (asked,) = [r for r in rows if r["row"] == "asked" and r["label"] == "supported"]
    assert (asked["id"], asked["text"], asked["source"], asked["markers"]) == (
        "s3", FALLS, url("/articles/boiling-point"), "m1")
    assert rows[-1]["note"].endswith("; " + lines[2])
    page = (tmp_path / "r.html").read_text("utf-8")
    assert supported in page and checks["line"] in page and "<script" not in page


def test_the_mcp_tool_gives_the_same_uncited_checks(judge, fixture_site, tmp_path):
    (tmp_path / "answer.md").write_text(markdown(fixture_site.url), encoding="utf-8")
    env = {"CITECHECK_OFFLINE": "0", "CITECHECK_CACHE_STORE": "", "CITECHECK_CACHE": str(tmp_path / "c.json"),
           "TYPESAFE_ENDPOINT": judge.url, "OPENAI_BASE_URL": judge.url + "/v1", "JUDGE_PROVIDER": "openai",
           "CITECHECK_ALLOW_PRIVATE": "1", "JUDGE_RETRIES": "0"}
    _tools, (result,) = session(tmp_path, [("check_answer", {"answer_file": "answer.md"})], env=env)
    data = tool_answer(result)
    assert data["sentences"][2]["found_in"] == [fixture_site.url("/articles/boiling-point")]
    assert data["sentences"][2]["note"].endswith("(cited by m1), which it did not cite")
    assert data["uncited_checks"]["line"].startswith("asked 2 of 2 uncited sentences against 2 sources (")


@pytest.mark.parametrize("budget", ["1", "0"])
def test_the_budget_caps_the_questions_and_is_stated(live, judge, monkeypatch, capsys, budget):
    monkeypatch.setenv("UNCITED_MAX_CALLS", budget)
    code, out, _ = check_answer(capsys, live, "--json")
    checks = json.loads(out)["uncited_checks"]
    assert checks["calls"] == len(checks["rows"]) == int(budget) and checks["budget"] == int(budget)
    assert checks["line"] == (f"asked {budget} of 2 uncited sentences against 2 sources "
                              f"({budget} call{'s' * (budget != '1')}, budget {budget})")
    assert COPPER not in asked_claims(judge)                   # the second uncited sentence was never asked
    notes = {s["sentence"]: s["note"] for s in json.loads(out)["sentences"]}
    spent = "UNCITED_MAX_CALLS=0 asks none" if budget == "0" else "the budget (UNCITED_MAX_CALLS=1) was spent"
    assert notes[4] == f"asserts a checkable fact and cites nothing; not asked: {spent}"
    assert (FALLS in asked_claims(judge)) is (budget == "1")


def test_the_default_budget_is_the_configuration_pages(ctx):
    from citecheck.paths import ROOT
    assert ctx.settings.uncited_max_calls == 20
    assert "`UNCITED_MAX_CALLS` (20;" in (ROOT / "docs" / "configuration.md").read_text("utf-8")


def anthropic(url, invented: str) -> str:
    """One cited sentence whose cited_text is invented (settled with no model asked, the page read), one
    uncited sentence."""
    blocks = [{"type": "text", "text": SEA, "citations": [
                  {"type": "web_search_result_location", "url": url("/articles/boiling-point"), "title": "t",
                   "encrypted_index": "x", "cited_text": invented}]},
              {"type": "text", "text": " " + FALLS}]
    return json.dumps({"type": "message", "role": "assistant", "content": blocks})


@pytest.mark.parametrize("case", ["judge down", "offline, not recorded", "no judge"])
def test_a_question_no_judge_answered_is_a_labelled_row_and_the_report_stands(fixture_site, monkeypatch,
                                                                               capsys, tmp_path, case):
    url = fixture_site.url
    path = tmp_path / "answer.json"
    invented = "Water always boils at exactly 100 °C on every mountain."
    path.write_text(anthropic(url, invented), encoding="utf-8")
    monkeypatch.setenv("CITECHECK_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("JUDGE_METHOD", "pooled")
    if case != "no judge":
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")   # nothing listens
        monkeypatch.setenv("JUDGE_RETRIES", "0")
    if case == "offline, not recorded":       # the page recorded by a live run with no judge, then replayed
        monkeypatch.delenv("OPENAI_BASE_URL")
        assert check_answer(capsys, path, "--json")[0] == 0
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
        monkeypatch.setenv("CITECHECK_OFFLINE", "1")
    code, out, err = check_answer(capsys, path, "--json", "--out", tmp_path / "r.csv")
    assert code == 0 and "Traceback" not in err, err
    data = json.loads(out)
    assert [(m["label"], m["reason"]) for m in data["markers"]] == [("not_found", "fabricated_quote")]
    (row,) = data["uncited_checks"]["rows"]
    page = url("/articles/boiling-point")
    label, reason, note = {
        "judge down": ("not_found", "judge_unavailable",
                       f"not supported by the answer's one source: {page}: not_found (judge_unavailable)"),
        "offline, not recorded": ("not_asked", "not_recorded",
                                  "not asked: not recorded (an offline replay holds no answer for it)"),
        "no judge": ("not_asked", "judge_unavailable", "not asked: no judge is configured")}[case]
    assert (row["sentence"], row["source"], row["label"], row["reason"]) == (2, page, label, reason)
    assert data["sentences"][1]["note"] == f"asserts a checkable fact and cites nothing; {note}"
    assert data["uncited_checks"]["asked"] == (1 if case == "judge down" else 0)
    (asked,) = [r for r in csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8")) if r["row"] == "asked"]
    assert (asked["label"], asked["reason"]) == (label, reason)
