"""verify: the whole live-web flow against the fixture site on 127.0.0.1 and a judge stand-in."""
import json
import os
import re
import sqlite3

import pytest
from standins.jev import jev_standin
from standins.judge import free_port, judge_standin, verdict_json

from citecheck import cli
from citecheck.cache import CacheMiss
from citecheck.judge import methods
from citecheck.verify import trace_citation, verify_citation, verify_claim
from citecheck.vocabulary import CitationRow
from citecheck.web import fixture_site as site
from citecheck.web.fetch import pages

FIELDS = CitationRow.field_names()

HUNDRED = "Water boils at 100 °C at sea level."
FIFTY = "Water boils at 50 °C at sea level."
SETTLED = [row for row in site.pages(include_test_only=True) if row["label"]]


def first_sentence_shown(body: dict) -> str:
    """The first sentence of 3 words or more in passage 1 of the judge's prompt (a heading such as
    "3. Why" is skipped): a quote that is really on the page."""
    prompt = body["messages"][1]["content"]
    passage = prompt.split("--- passage 1 ---\n", 1)[1].split("\n\n--- passage 2 ---", 1)[0]
    sentences = re.split(r"(?<=[.!?])\s", passage.strip())
    return next((s for s in sentences if len(s.split()) >= 3), sentences[0])


def quoting(label, confidence=0.9):
    return lambda body: verdict_json(label, first_sentence_shown(body), confidence)


@pytest.fixture(scope="module")
def judge_server():
    with judge_standin() as server:
        yield server


@pytest.fixture
def judge(judge_server, fixture_site, monkeypatch, run):
    judge_server.script.reset()
    judge_server.requests.clear()
    monkeypatch.setattr(pages, "BACKOFF", (0.0, 0.0))           # retries without the waiting
    run.ctx = run.ctx.replace(allow_private=True,               # the fixture site is on 127.0.0.1
                              openai_base_url=judge_server.url + "/v1")
    return judge_server.script


@pytest.fixture
def url(fixture_site):
    return fixture_site.url


def test_the_fixture_site_has_every_failure_mode():
    reasons = {row["reason"] for row in SETTLED}
    assert {"http_404", "http_410", "redirected_to_homepage", "soft_404", "pdf_unsupported",
            "empty_page", "crawl_failed"} <= reasons


@pytest.mark.parametrize("page", SETTLED, ids=[row["path"] for row in SETTLED])
def test_pages_that_settle_the_citation_skip_the_judge(judge, judge_server, url, page, run):
    row = verify_citation(HUNDRED, url(page["path"]), run.ctx)
    assert (row["label"], row["reason"]) == (page["label"], page["reason"])
    assert row["confidence"] is None and row["evidence_quote"] is None
    assert judge_server.requests == []


def test_row_has_exactly_the_contract_fields(judge, url, run):
    row = verify_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    assert tuple(row) == FIELDS
    assert row["url"] == url("/articles/boiling-point") and row["original_status"] == 200


def test_supported_with_a_quote_from_the_page(judge, judge_server, url, run):
    judge.content = quoting("supported", 0.93)
    trace = trace_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    row = trace.row
    assert row["label"] == "supported" and row["reason"] is None and row["confidence"] == 0.93
    assert row["evidence_quote"] in trace.shown[0]
    (request,) = judge_server.requests
    body = request.json()
    assert request.path == "/v1/chat/completions"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["messages"][1]["content"].startswith(f"Claim: {HUNDRED}\n\nPassages:\n--- passage 1 ---\n")
    assert len(trace.shown) == 3 and all(p in trace.passages for p in trace.shown)
    assert trace.scores == sorted(trace.scores, reverse=True)


def test_the_row_is_gated_for_the_model_that_answered(judge, url, run, tmp_path):
    judge.content = quoting("supported", 0.93)
    trace = trace_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    model = trace.judged["model"]
    assert trace.row["auto"] is False
    assert f"uncalibrated: no AUTO_ACCEPT for {model} in " in trace.row["auto_note"]
    table = tmp_path / "gate.json"
    table.write_text(json.dumps({model: {"threshold": 0.9}, "another": {"threshold": 0.99}}))
    again = trace_citation(HUNDRED, url("/articles/boiling-point"), run.ctx.replace(auto_accept_table=table))
    assert (again.row["auto"], again.row["auto_note"]) == (True, None)
    dead = trace_citation(HUNDRED, url("/articles/boiling-point-table-2019"), run.ctx)   # no model asked
    assert (dead.row["confidence"], dead.row["auto"], dead.row["auto_note"]) == (None, True, None)


def test_the_judge_sees_the_top_3_passages_best_first(judge, judge_server, url, run):
    trace = trace_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    prompt = judge_server.requests[0].json()["messages"][1]["content"]
    assert prompt == f"Claim: {HUNDRED}\n\nPassages:\n" + "\n\n".join(
        f"--- passage {n} ---\n{text}" for n, text in enumerate(trace.shown, 1))
    assert any("100 °C" in p for p in trace.shown)


def test_evidence_in_the_second_best_passage_is_still_shown(judge, url, run):
    claim = "At 3,000 metres above sea level water boils at roughly 90 °C."
    trace = trace_citation(claim, url("/guides/cooking-at-altitude"), run.ctx)
    assert len(trace.passages) > 3
    assert any("3,000 metres" in p for p in trace.shown)


def test_a_redirect_to_the_live_article_is_judged(judge, url, run):
    judge.content = quoting("supported")
    row = verify_citation(HUNDRED, url("/articles/water-boiling-point"), run.ctx)
    assert row["final_url"] == url("/articles/boiling-point") and row["label"] == "supported"


def test_hallucinated_quote_is_caught_by_the_guard(judge, url, run):
    judge.content = verdict_json("supported", "Water boils at 100 °C everywhere on Earth.", 0.99)
    trace = trace_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    assert trace.judged["label"] == "supported"
    assert trace.row["label"] == "not_found" and trace.row["evidence_quote"] is None
    assert trace.row["confidence"] == 0.0 and trace.row["reason"] == "evidence_quote_not_in_source"


def test_malformed_judge_output_is_a_labelled_row(judge, url, run):
    judge.content = "Supported, I am fairly sure."
    trace = trace_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    assert trace.row["label"] == "not_found" and trace.row["reason"] == "judge_output_invalid"
    assert trace.judged["reason"] == "judge_output_invalid: not JSON"


@pytest.mark.parametrize("status", [401, 500])
def test_judge_failing_is_a_labelled_row(judge, url, status, run):
    judge.status = status
    row = verify_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    assert (row["label"], row["reason"], row["confidence"]) == ("not_found", "judge_unavailable", None)
    assert row["original_status"] == 200


def test_judge_unreachable_is_a_labelled_row(judge, url, run):
    run.ctx = run.ctx.replace(openai_base_url=f"http://127.0.0.1:{free_port()}/v1")
    row = verify_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    assert (row["label"], row["reason"]) == ("not_found", "judge_unavailable")


def test_a_refused_address_is_a_labelled_row(judge, url, run):
    run.ctx = run.ctx.replace(allow_private=False)
    row = verify_citation(HUNDRED, url("/articles/boiling-point"), run.ctx)
    assert (row["label"], row["reason"]) == ("unreachable", "blocked_address")


def test_the_boiling_point_story(judge, url, run):
    judge.content = quoting("contradicted", 0.9)
    fifty = verify_claim(FIFTY, [url("/articles/boiling-point")], run.ctx)
    assert fifty["overall"] == "contradicted"
    judge.content = quoting("supported", 0.95)
    hundred = verify_claim(HUNDRED, [url("/articles/boiling-point"), url("/articles/boiling-point-table-2019")], run.ctx)
    assert hundred["claim"] == HUNDRED
    assert [c["label"] for c in hundred["citations"]] == ["supported", "unreachable"]
    assert hundred["overall"] == "supported"


def test_every_citation_dead_is_unreachable_and_no_citations_is_not_found(judge, url, run):
    dead = verify_claim(HUNDRED, [url("/articles/boiling-point-table-2019"), url("/articles/kettle-scale-myths")], run.ctx)
    assert dead["overall"] == "unreachable"
    assert verify_claim(HUNDRED, [], run.ctx) == {"claim": HUNDRED, "overall": "not_found", "citations": []}


def test_offline_replays_fetch_and_judge_from_the_cache(judge, url, run):
    judge.content = quoting("supported", 0.95)
    urls = [url("/articles/boiling-point"), url("/articles/kettle-scale-myths")]
    live = verify_claim(HUNDRED, urls, run.ctx)
    run.ctx = run.ctx.replace(offline=True, openai_base_url=f"http://127.0.0.1:{free_port()}/v1")
    assert verify_claim(HUNDRED, urls, run.ctx) == live
    with pytest.raises(CacheMiss):
        verify_claim("Water boils at 90 °C at sea level.", urls[:1], run.ctx)


def test_cli_prints_the_verify_json(judge, judge_server, url, capsys, monkeypatch):
    monkeypatch.setenv("CITECHECK_ALLOW_PRIVATE", "1")           # the CLI reads its settings from the environment
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url + "/v1")
    judge.content = quoting("supported", 0.95)
    code = cli.main(["verify", "--claim", HUNDRED, "--url", url("/articles/boiling-point"),
                     "--url", url("/articles/boiling-point-table-2019")])
    printed = capsys.readouterr()
    out = json.loads(printed.out)
    assert code == 0 and out["overall"] == "supported" and list(out) == ["claim", "overall", "citations"]
    assert [tuple(c) for c in out["citations"]] == [FIELDS, FIELDS]
    assert [c["auto"] for c in out["citations"]] == [False, True]     # uncalibrated: a person; a 404: auto
    told = [line for line in printed.err.splitlines() if "to a person" in line]
    assert told == [f"citecheck verify: 1 verdict to a person, {out['citations'][0]['auto_note']}"]


@pytest.mark.parametrize("argv, message", [
    (["--claim", "  ", "--url", "http://127.0.0.1:1/x"], "--claim must not be empty"),
    (["--claim", "c", "--url", "ftp://example.com/x"], "is not an http(s) URL"),
    (["--claim", "c", "--url", "not a url"], "is not an http(s) URL"),
])
def test_cli_bad_input_is_one_line_on_stderr(argv, message, capsys):
    assert cli.main(["verify", *argv]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("citecheck verify: error:")


def test_cli_needs_a_url(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["verify", "--claim", "c"])
    assert exit_.value.code == 2 and "--url" in capsys.readouterr().err


# --- PDFs, long pages, and one citation's failure --------------------------------------------------------

def test_a_cited_text_pdf_is_read_and_judged(judge, judge_server, url, run):
    judge.content = quoting("supported", 0.9)
    claim = "At 3,000 metres above sea level, water boils at roughly 90 °C."
    trace = trace_citation(claim, url("/reports/boiling-point-survey.pdf"), run.ctx)
    assert trace.page.backend == "direct" and trace.page.label is None
    assert any("roughly 90 °C" in p for p in trace.shown)
    assert trace.row["label"] == "supported" and trace.row["evidence_quote"] in trace.shown[0]
    assert len(judge_server.requests) == 1


def test_a_long_page_encodes_at_most_max_passages(judge, url, run, monkeypatch):
    from citecheck.web import retrieval
    encoded = []
    real = retrieval.similarities
    monkeypatch.setattr("citecheck.web.retrieval.similarities",
                        lambda q, ps: encoded.append(len(ps)) or real(q, ps))
    claim = "At 3,000 metres above sea level water boils at roughly 90 °C."
    trace = trace_citation(claim, url("/guides/cooking-at-altitude"), run.ctx.replace(max_passages=3, retrieval="minilm"))
    assert len(trace.passages) > 3 and encoded == [3]
    assert any("3,000 metres" in p for p in trace.shown)      # the shortlist kept the evidence


def test_one_citation_that_raises_never_loses_the_claims_other_urls(judge, url, run, monkeypatch, caplog):
    import citecheck.verify as verify_module
    real = verify_module.judge_page

    def judge_page(claim, page, ctx, *quotes):
        if page.url.endswith("/guides/cooking-at-altitude"):
            raise RuntimeError("an unexpected bug")
        return real(claim, page, ctx, *quotes)
    monkeypatch.setattr(verify_module, "judge_page", judge_page)
    judge.content = quoting("supported")
    urls = [url("/guides/cooking-at-altitude"), url("/articles/boiling-point")]
    result = verify_claim(HUNDRED, urls, run.ctx)
    assert [(c["label"], c["reason"]) for c in result["citations"]] == [("not_found", "check_failed"),
                                                                         ("supported", None)]
    assert result["overall"] == "supported" and "RuntimeError: an unexpected bug" in caplog.text


def test_cancelled_work_stops_before_the_next_url(judge, judge_server, url, run):
    import threading

    from citecheck import cancellation
    event = threading.Event()
    event.set()
    with cancellation.cancellable(event), pytest.raises(cancellation.Cancelled):
        verify_claim(HUNDRED, [url("/articles/boiling-point")], run.ctx)
    assert judge_server.requests == []
    cancellation.check()                                       # outside the block nothing is cancelled


@pytest.mark.parametrize("argv", [["--claim", "boils \udcff", "--url", "http://127.0.0.1:1/x"],
                                  ["--claim", "c", "--url", "http://127.0.0.1:1/\ud800"]])
def test_cli_text_that_is_not_text_is_one_line_on_stderr(argv, capsys):
    assert cli.main(["verify", *argv]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not valid text" in err


@pytest.mark.parametrize("method", ["decompose", "pooled"])
def test_the_row_names_the_method_that_answered_and_the_audit_the_model(method, fixture_site, url, capsys,
                                                                        monkeypatch):
    """Only a Choice judge: decompose falls back to pooled, and the row says pooled (so does a pooled run);
    a dead link asked no model (null). The audit DB records the model that answered, TYPESAFE_MODEL's,
    not JUDGE_MODEL."""
    monkeypatch.setattr(methods, "_said", set())
    monkeypatch.setattr(pages, "BACKOFF", (0.0, 0.0))
    yes = {"yes": 0.9, "no": 0.05, "unknown": 0.05}
    with jev_standin(yes) as jev:
        env = {"CITECHECK_ALLOW_PRIVATE": "1", "TYPESAFE_ENDPOINT": jev.url, "JUDGE_METHOD": method,
               "TYPESAFE_MODEL": "choice-m", "JUDGE_MODEL": "json-m"}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        code = cli.main(["verify", "--claim", HUNDRED, "--url", url("/articles/boiling-point"),
                         "--url", url("/articles/boiling-point-table-2019")])
    printed = capsys.readouterr()
    out = json.loads(printed.out)
    assert code == 0 and [(c["label"], c["method"]) for c in out["citations"]] == [
        ("supported", "pooled"), ("unreachable", None)]
    assert ("the decompose method needs a JSON judge" in printed.err) is (method == "decompose")
    db = sqlite3.connect(os.environ["AUDIT_DB"])
    assert db.execute("SELECT model, method FROM citations ORDER BY url").fetchall() == [
        ("choice-m", "pooled"), ("", None)]
