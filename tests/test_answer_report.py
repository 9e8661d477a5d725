"""The answer report: every marker against its own source, every sentence against the sources it cites,
uncited claims, citation precision and recall — through the fixture site and a judge stand-in."""
import csv
import json
import re

import pytest
from standins.judge import verdict_json
from test_verify import judge, judge_server, url  # noqa: F401 - the fixture site and judge stand-in

from citecheck import answer, cli
from citecheck.answer import outputs
from citecheck.answer.read import read
from citecheck.answer.uncited import asserts_fact
from citecheck.report.answer_html import render
from citecheck.source import sources

SEA = "At sea level, pure water boils at 100 °C (212 °F)."
SALT = "A tablespoon of salt raises the boiling point of pasta water by several degrees."
ALTITUDE = "At 3,000 metres above sea level, water boils at roughly 90 °C."
VERDICTS = {SEA: ("supported", SEA), SALT: ("contradicted", "Dissolved salt does raise the boiling point, but only a "
                                                             "little.")}


def scripted(body: dict) -> str:
    """The stand-in judge: supported for the sea-level claim, contradicted for the salt claim (each with a
    quote that is on the page), not_found otherwise."""
    claim = re.match(r"Claim: (.*)\n", body["messages"][1]["content"]).group(1)
    label, quote = VERDICTS.get(claim, ("not_found", None))
    return verdict_json(label, quote, 0.9)


def markdown_answer(url) -> str:
    return (f"Hello! {SEA} [1]\n\n"                                 # a right marker
            f"{SEA} [2][1]\n\n"                                      # the second source is the one that supports
            f"{SALT} [1]\n\n"                                        # a wrong marker: the page says the opposite
            "The boiling point falls by about 1 °C for every 300 metres of altitude.\n\n"   # an uncited claim
            f"{ALTITUDE} [9]\n\n"                                    # a marker pointing nowhere
            "I hope this helps!\n\n"
            f"[1]: {url('/articles/boiling-point')}\n[2]: {url('/articles/boiling-point-table-2019')}\n")


@pytest.fixture
def scripted_judge(judge):  # noqa: F811
    judge.content = scripted
    return judge


def test_each_marker_sentence_and_the_answer_numbers(scripted_judge, judge_server, url, run):  # noqa: F811
    result = answer.report(markdown_answer(url), run.ctx)
    rows = [(m.id, m.sentence, m.label, m.reason) for m in result.markers]
    assert rows == [("m1", 2, "supported", None), ("m2", 3, "unreachable", "http_404"),
                    ("m3", 3, "supported", None), ("m4", 4, "contradicted", None),
                    ("m5", None, "no_source", "marker [9] has no source (the numbered sources are [1]-[2])")]
    assert result.markers[0].evidence_quote == SEA and result.markers[3].evidence_quote.startswith("Dissolved salt")
    sentences = [(s.sentence, s.kind, s.markers, s.supported_by, s.label) for s in result.sentences]
    assert sentences == [(1, "no_claim", [], [], None),                     # "Hello!"
                         (2, "cited", ["m1"], ["m1"], "supported"),
                         (3, "cited", ["m2", "m3"], ["m3"], "supported"),
                         (4, "cited", ["m4"], [], "contradicted"),
                         (5, "uncited", [], [], None),
                         (6, "uncited", [], [], None),      # its one marker points nowhere: no citation
                         (7, "no_claim", [], [], None)]
    assert result.sentences[2].note == "supported by m3 (source 2 of 2); not by m2: unreachable (http_404)"
    assert result.sentences[3].note == "its one source does not support it: m4: contradicted"
    assert result.lines() == ["citation_precision=0.4000 (2/5)", "citation_recall=0.4000 (2/5)"]
    # one check per (sentence, URL), the sea-level one shared; then each uncited sentence against the one page
    # read (the 2019 table is a 404): 2 + 2 questions
    assert len(judge_server.requests) == 4
    assert result.own.line() == "asked 2 of 2 uncited sentences against 1 source (2 calls, budget 20)"
    said = f"not supported by the answer's one source: {url('/articles/boiling-point')}: not_found"
    assert result.sentences[4].note == f"asserts a checkable fact and cites nothing; {said}"
    assert result.bad_input() and result.problems() == [
        "m2 (sentence 3) -> " + url("/articles/boiling-point-table-2019") + ": unreachable, http_404",
        "m4 (sentence 4) -> " + url("/articles/boiling-point") + ": contradicted",
        "m5 (line 9:64) -> no source: no_source, marker [9] has no source (the numbered sources are [1]-[2])",
        f"sentence 4: none of its sources supports it: {SALT}",
        f"sentence 5: an uncited claim ({said}): The boiling point falls by about 1 °C for every 300 metres "
        "of altitude.",
        f"sentence 6: an uncited claim ({said}): {ALTITUDE}"]


def test_a_sentence_whose_marker_points_nowhere_is_read_as_uncited_when_it_asserts(scripted_judge, url, run):  # noqa: F811
    """The dangling marker's sentence has no checked citation: with a fact in it, it is an uncited claim."""
    result = answer.report(f"{ALTITUDE} [3]\n\n[1]: {url('/articles/boiling-point')}\n", run.ctx)
    assert [(s.kind, s.markers) for s in result.sentences] == [("uncited", [])]
    assert [m.label for m in result.markers] == ["no_source"]


def anthropic_answer(url, cited_text: str) -> str:
    block = {"type": "text", "text": SEA, "citations": [
        {"type": "web_search_result_location", "url": url("/articles/boiling-point"), "title": "t",
         "encrypted_index": "x", "cited_text": cited_text}]}
    return json.dumps({"type": "message", "role": "assistant", "content": [block]})


def test_a_fabricated_cited_text_fails_its_marker_without_a_model(scripted_judge, judge_server, url, run):  # noqa: F811
    invented = "Water always boils at exactly 100 °C, on every mountain and in every pressure cooker."
    result = answer.report(anthropic_answer(url, invented), run.ctx)
    (marker,) = result.markers
    assert (marker.label, marker.reason, marker.status, marker.quote) == (
        "not_found", "fabricated_quote", "missing", invented)
    assert judge_server.requests == [] and result.lines()[0] == "citation_precision=0.0000 (0/1)"
    honest = answer.report(anthropic_answer(url, SEA), run.ctx)
    assert (honest.markers[0].label, honest.markers[0].status) == ("supported", "found")


def test_quoted_documents_are_checked_against_the_source_or_said_unchecked(run):
    text = open("data/answers/anthropic_rfc.json", encoding="utf-8").read()
    unchecked = answer.report(text, run.ctx)
    assert {m.label for m in unchecked.markers} == {"unchecked"}
    assert unchecked.lines() == ["citation_precision=n/a (0/0)", "citation_recall=n/a (0/0)"]
    rfc = sources.load("data/rfc7519.txt", "rfc")
    checked = answer.report(text, run.ctx, source=rfc)           # no judge configured: string matching only
    by = {m.id: m for m in checked.markers}
    assert (by["m5"].label, by["m5"].reason, by["m5"].status) == ("not_found", "fabricated_quote", "missing")
    assert (by["m8"].status, by["m8"].reason) == ("misquoted", "judge_unavailable")
    assert by["m8"].diff and any(line.startswith("m8 (sentence 9)") and "misquoted: " in line
                                 for line in checked.problems())
    assert {m.reason for m in checked.markers} == {"fabricated_quote", "judge_unavailable"}


def test_read_keeps_reading_problems_and_numbers_markers_in_text_order():
    got = read(open("data/answers/perplexity.json", encoding="utf-8").read())
    assert [m.id for m in got.markers] == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert [m.source is None for m in got.markers] == [False] * 5 + [True]
    assert [p.kind for p in got.problems] == ["dangling_marker", "uncited_source"]


@pytest.mark.parametrize("sentence, fact", [
    ("Water's boiling point moves with pressure.", True),
    ("Python 3.12 was released in October 2023.", True),
    ("Here is what the search found.", False),
    ("Why does this happen?", False),
    ("Under pressure:", False),
    ("I'll look that up for you.", False),
    ("Use a thermometer if you need precision.", False),
])
def test_the_uncited_rule_on_examples_of_the_tune_half(sentence, fact):
    assert asserts_fact(sentence) is fact


def test_the_uncited_rule_is_measured_on_the_committed_sample():
    from citecheck.paths import ROOT
    for half in ("tune", "report"):
        rows = [json.loads(line) for line in (ROOT / "data/uncited" / f"{half}.jsonl").read_text("utf-8").splitlines()]
        assert {row["label"] for row in rows} == {"claim", "no_claim"} and len(rows) >= 80
        assert all(row["from"] for row in rows)


def test_csv_json_and_html_carry_the_same_report(scripted_judge, url, run, tmp_path):  # noqa: F811
    result = answer.report(markdown_answer(url), run.ctx, name="=HYPERLINK(x)")
    path = tmp_path / "report.csv"
    outputs.write_csv(result, path)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert tuple(rows[0]) == outputs.CSV_COLUMNS
    assert [r["row"] for r in rows] == ["marker"] * 5 + ["sentence"] * 7 + ["asked"] * 2 + ["answer"]
    assert rows[7]["supported_by"] == "m3" and rows[7]["markers"] == "m2 m3"
    assert rows[-1]["id"] == "'=HYPERLINK(x)"                         # formula-neutralised, as batch's CSV
    assert rows[-1]["note"] == ("citation_precision=0.4000 (2/5); citation_recall=0.4000 (2/5); uncited: "
                                "asked 2 of 2 uncited sentences against 1 source (2 calls, budget 20)")
    data = result.to_dict()
    assert data["summary"]["citation_precision"] == 0.4 and data["summary"]["precision_of"] == [2, 5]
    assert data["summary"]["no_source"] == 1 and data["summary"]["uncited"] == 2
    page = render(data, result.lines())
    assert "script-src &#39;none&#39;" in page and "supported by m3 (source 2 of 2)" in page
    assert "=HYPERLINK(x)" in page and "<script" not in page


def test_html_escapes_what_the_answer_says(run, tmp_path):
    result = answer.report('<img src=x onerror=alert(1)> says "Water boils at 100 °C at sea level."', run.ctx)
    page = render(result.to_dict(), result.lines())
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def main(capsys, *argv):
    code = cli.main(["check-answer", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cli_env(scripted_judge, run, monkeypatch):
    monkeypatch.setenv("CITECHECK_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("OPENAI_BASE_URL", run.ctx.settings.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def test_the_command_prints_writes_and_exits_by_ci_gate(cli_env, url, tmp_path, capsys):  # noqa: F811
    path = tmp_path / "answer.md"
    path.write_text(markdown_answer(url), encoding="utf-8")
    code, out, err = main(capsys, path, "--out", tmp_path / "r.csv", "--report", tmp_path / "r.html")
    assert code == 1 and err == ""                      # the marker pointing nowhere is bad input: exit 1
    lines = out.splitlines()
    assert lines[:2] == ["citation_precision=0.4000 (2/5)", "citation_recall=0.4000 (2/5)"]
    assert "sentence 3 [cited supported] supported by m3 (source 2 of 2); not by m2: unreachable (http_404)" in lines
    assert (tmp_path / "r.csv").exists() and (tmp_path / "r.html").read_text("utf-8").startswith("<!doctype html>")
    code, out, err = main(capsys, path, "--json", "--fail-under", "0.9")
    assert code == 3 and json.loads(out)["summary"]["markers"] == 5
    assert err == "citecheck check-answer: gate failed: citation_precision=0.4000 (2/5) < 0.9\n"


def test_an_unreadable_answer_is_one_line(capsys, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"content": [', encoding="utf-8")
    code, out, err = main(capsys, path)
    assert code == 1 and out == ""
    assert err.startswith(f"citecheck check-answer: error: cannot tell the answer's format: ") and err.count("\n") == 1
