"""POST /check-answer, the answer page at / and /verify's carried quotes: the report as check-answer --json
gives it (through the fixture site and a judge stand-in), every limit refused with its name, local files never
read over HTTP, and the page's token, cookie and CSRF rules."""
import json
import re
import sqlite3
import threading
import time

import pytest
from fastapi.testclient import TestClient
from test_answer_report import markdown_answer, scripted_judge  # noqa: F401 - the scripted judge stand-in
from test_carried_quotes import CLAIM, INVENTED, ON_PAGE, PAGE
from test_verify import judge, judge_server, url  # noqa: F401 - the fixture site and judge stand-in

from citecheck import answer
from citecheck.answer.checks import Checked
from citecheck.answer.read import read
from citecheck.answer.rows import build
from citecheck.serve import answer_app
from citecheck.serve.api import Limits, create_app

TOKEN = "answer-page-Rk4vQ9mX2pL7wZ3t-FAKE"
LOCAL = 'Water boils at 100 °C at sea level [1].\n\nSources:\n[1] coffee.md\n'


class StubCheck:
    """The real reader, every marker `label` (no fetch, no judge); records its calls; `gate` holds each."""

    def __init__(self, label="supported", gate=None):
        self.calls, self.label, self.gate = [], label, gate

    def __call__(self, text, fmt):
        self.calls.append((text, fmt))
        if self.gate is not None:
            self.gate.wait(10)
        got = read(text, fmt)
        return build("answer", got, {m.id: Checked(None, "no_source" if m.source is None else self.label)
                                     for m in got.markers}).to_dict()


def app_of(make_ctx, check=None, token=None, limits=None, **settings):
    return create_app(make_ctx(secrets={"REVIEW_TOKEN": token} if token else {}, audit_db=None, **settings),
                      lambda claim, urls: {}, check_answer=check, limits=limits)


def test_the_report_is_check_answer_json_through_the_fixture_site(scripted_judge, judge_server,  # noqa: F811
                                                                   url, run):
    text = markdown_answer(url)
    response = TestClient(create_app(run.ctx)).post("/check-answer", json={"answer": text, "format": "auto"})
    assert response.status_code == 200
    report, asked = response.json(), len(judge_server.requests)
    assert report == json.loads(json.dumps(answer.report(text, run.ctx).to_dict()))   # the CLI's (replayed)
    assert len(judge_server.requests) == asked                               # nothing asked twice
    assert report["summary"]["precision_of"] == [2, 5] and report["summary"]["recall_of"] == [2, 5]
    assert [(m["id"], m["label"]) for m in report["markers"]] == [
        ("m1", "supported"), ("m2", "unreachable"), ("m3", "supported"), ("m4", "contradicted"),
        ("m5", "no_source")]


def test_local_files_are_never_read_over_http_and_the_marker_says_so(make_ctx, tmp_path, monkeypatch):
    (tmp_path / "coffee.md").write_text("## Brewing\n\nWater boils at 100 °C at sea level.\n")
    monkeypatch.chdir(tmp_path)                                  # the file is right there: still not read
    response = TestClient(app_of(make_ctx)).post("/check-answer", json={"answer": LOCAL})
    assert response.status_code == 200
    (marker,) = response.json()["markers"]
    assert (marker["label"], marker["reason"], marker["evidence_quote"]) == (
        "unchecked", "document_not_named", None)
    assert any(answer_app.LOCAL_FILES in p for p in response.json()["problems"])
    assert not any("--documents ." in p for p in response.json()["problems"])


@pytest.mark.parametrize("body, status, named", [
    ({"answer": "x" * 300}, 413, "ANSWER_MAX_BYTES"),
    ({"answer": "é" * 90}, 413, "ANSWER_MAX_BYTES"),                   # 90 characters, 180 bytes of UTF-8
    ({"answer": "A [1] B [2] C [3].\n\n[1]: https://a.example/\n[2]: https://b.example/\n"
                "[3]: https://c.example/\n"}, 422, "ANSWER_MAX_MARKERS"),
    ({"answer": "{not json"}, 422, "starts like JSON"),
    ({"answer": "Plain text.", "format": "anthropic"}, 422, "anthropic"),
])
def test_an_answer_over_a_limit_or_unreadable_is_refused_with_the_limit_named(make_ctx, body, status, named):
    check = StubCheck()
    app = app_of(make_ctx, check, answer_max_bytes=160, answer_max_markers=2)
    response = TestClient(app).post("/check-answer", json=body)
    detail = json.dumps(response.json()["detail"], ensure_ascii=False)
    assert response.status_code == status and named in detail
    assert check.calls == []                                       # refused before any citation is checked


def test_a_body_over_its_limit_is_413_before_parsing_and_names_both_variables(make_ctx):
    app = app_of(make_ctx, StubCheck(), answer_max_bytes=100, limits=Limits(max_body_bytes=1000))
    response = TestClient(app).post("/check-answer", content=b'{"answer": "' + b"x" * 1400 + b'"}',
                                    headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.json()["detail"] == ("request body is larger than 1300 bytes "
                                         "(API_MAX_BODY_BYTES + 3 x ANSWER_MAX_BYTES)")
    small = TestClient(app).post("/verify", content=b"x" * 1100, headers={"content-type": "application/json"})
    assert small.status_code == 413 and "(API_MAX_BODY_BYTES)" in small.json()["detail"]


def test_a_report_over_its_cap_a_blank_answer_and_an_unknown_field_are_422(make_ctx):
    client = TestClient(app_of(make_ctx, StubCheck(), answer_max_report_bytes=200))
    over = client.post("/check-answer", json={"answer": "Water boils at 100 °C at sea level, as every cook "
                                                        "knows and as the tables all say. [1]\n\n"
                                                        "[1]: https://a.example/\n"})
    assert over.status_code == 422 and "ANSWER_MAX_REPORT_BYTES" in over.json()["detail"][0]["msg"]
    for body in ({"answer": "  \n"}, {"answer": "a", "documents": "/etc"}, {"answer": "a", "format": "pdf"}):
        assert client.post("/check-answer", json=body).status_code == 422


def test_the_check_runs_in_the_lanes_busy_is_429_and_slow_is_504(make_ctx):
    hold = threading.Event()
    check = StubCheck(gate=hold)
    client = TestClient(app_of(make_ctx, check, limits=Limits(concurrency=1, queue_timeout=0.2, deadline=1)))
    first = {}
    worker = threading.Thread(target=lambda: first.update(r=client.post("/check-answer",
                                                                        json={"answer": "Hi."})))
    worker.start()
    try:
        for _ in range(200):                                   # the first check holds the one slot
            if check.calls:
                break
            time.sleep(0.01)
        busy = client.post("/check-answer", json={"answer": "Hi again."})
        assert busy.status_code == 429 and busy.headers["Retry-After"] == "1"
        assert "API_CONCURRENCY" in busy.json()["detail"]
    finally:
        worker.join(5)
        hold.set()
    assert first["r"].status_code == 504 and first["r"].json()["detail"] == (
        "the answer's check took longer than 1 s (API_DEADLINE)")


# --- /verify with carried quotes ------------------------------------------------------------------------

def test_verify_matches_a_carried_quote_per_url_before_any_judge(judge, judge_server, url, run):  # noqa: F811
    page = url(PAGE)
    with TestClient(create_app(run.ctx)) as client:                    # closing it drains the audit writer
        invented = client.post("/verify", json={"claim": CLAIM, "urls": [page], "quotes": {page: [INVENTED]}})
        assert invented.status_code == 200
        (row,) = invented.json()["citations"]
        assert (row["label"], row["reason"], row["status"]) == ("not_found", "fabricated_quote", "missing")
        assert judge_server.requests == []                             # no model asked
        found = client.post("/verify", json={"claim": CLAIM, "urls": [page], "quotes": [ON_PAGE]})  # all URLs
        assert found.json()["citations"][0]["status"] == "found" and len(judge_server.requests) == 1
    with sqlite3.connect(run.ctx.settings.audit_db) as conn:          # audited with the text each carried
        assert conn.execute("SELECT quote, status FROM citations WHERE batch = 'api'").fetchall() == [
            (ON_PAGE, "found")]


def test_verify_passes_quotes_per_url_or_per_claim_and_refuses_a_url_it_does_not_list(make_ctx):
    seen = []

    def verify(claim, urls, quotes=None):
        seen.append(quotes)
        return {"claim": claim, "overall": "not_found", "citations": []}
    client = TestClient(create_app(make_ctx(audit_db=None), verify))
    a, b = "https://a.example/", "https://b.example/"
    for quotes in ({a: "one"}, [ "two", "three"], None):
        body = {"claim": CLAIM, "urls": [a, b], **({"quotes": quotes} if quotes is not None else {})}
        assert client.post("/verify", json=body).status_code == 200
    assert seen == [{a: ["one"]}, {a: ["two", "three"], b: ["two", "three"]}, None]
    stray = client.post("/verify", json={"claim": CLAIM, "urls": [a], "quotes": {b: "x"}})
    assert stray.status_code == 422 and "urls does not list" in json.dumps(stray.json())
    assert client.post("/verify", json={"claim": CLAIM, "urls": [a], "quotes": {a: 3}}).status_code == 422


# --- the page at / --------------------------------------------------------------------------------------

def csrf_of(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_the_page_is_off_without_review_token_and_says_which_variable(make_ctx):
    client = TestClient(app_of(make_ctx, StubCheck()))
    for method, path in (("GET", "/"), ("POST", "/check-answer/page"), ("POST", "/login")):
        response = client.request(method, path)
        assert response.status_code == 404 and "set REVIEW_TOKEN" in response.text
    assert client.post("/check-answer", json={"answer": "Hi."}).status_code == 200   # the JSON API stays on


def test_the_page_needs_the_token_then_its_form_token_and_shows_the_report(make_ctx):
    check = StubCheck(label="contradicted")
    client = TestClient(app_of(make_ctx, check, token=TOKEN))
    first = client.get("/")
    assert first.status_code == 401 and 'action="/login"' in first.text
    assert "script-src 'none'" in first.headers["content-security-policy"]
    assert client.post("/login", data={"token": "wrong-" + TOKEN}).status_code == 401
    text = "Water boils at 100 °C at sea level. [1]\n\nThe boiling point falls by 1 °C every 300 m.\n\n" \
           "[1]: https://a.example/\n"
    assert client.post("/check-answer/page", data={"answer": text}).status_code == 401   # not logged in
    login = client.post("/login", data={"token": TOKEN}, follow_redirects=False)
    cookie = login.headers["set-cookie"]
    assert login.status_code == 303 and "HttpOnly" in cookie and "Path=/;" in cookie and TOKEN not in cookie
    form = client.get("/")
    assert form.status_code == 200 and 'action="/check-answer/page"' in form.text
    refused = client.post("/check-answer/page", data={"answer": text, "csrf": "forged"})
    assert refused.status_code == 403 and check.calls == []
    crossed = client.post("/check-answer/page", data={"answer": text, "csrf": csrf_of(form.text)},
                          headers={"origin": "https://evil.example"})
    assert crossed.status_code == 403 and check.calls == []
    shown = client.post("/check-answer/page",
                        data={"answer": text, "format": "auto", "csrf": csrf_of(form.text)})
    assert shown.status_code == 200 and check.calls == [(text, "auto")]
    body = shown.text
    assert '<li id="s1" value="1"><mark>Water boils at 100 °C at sea level.</mark>' in body
    assert '<li id="s2" value="2"><mark>The boiling point falls by 1 °C every 300 m.</mark>' in body
    assert '<a href="#s1">m1 (sentence 1) -&gt; no source: contradicted</a>' in body
    assert '<a href="#s2">sentence 2: an uncited claim' in body and '<tr id="m1">' in body
    assert "<script" not in body.lower()


def test_a_bearer_script_needs_no_form_token_and_limits_show_on_the_page(make_ctx):
    client = TestClient(app_of(make_ctx, StubCheck(), token=TOKEN, answer_max_bytes=50))
    bearer = {"authorization": f"Bearer {TOKEN}"}
    ok = client.post("/check-answer/page", data={"answer": "Water boils at 100 °C."}, headers=bearer)
    assert ok.status_code == 200 and "<mark>" in ok.text
    over = client.post("/check-answer/page", data={"answer": "x" * 60}, headers=bearer)
    assert over.status_code == 413 and "ANSWER_MAX_BYTES" in over.text
    assert "x" * 60 in over.text                                           # kept, to edit
    wrong = client.post("/check-answer/page", data={"answer": "Hi."},
                        headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401
    crowded = client.post("/check-answer/page", content="&".join(f"f{i}=x" for i in range(50)), headers={
        **bearer, "content-type": "application/x-www-form-urlencoded"})
    assert crowded.status_code == 422 and "paste an answer" in crowded.text


def test_an_offline_cache_miss_is_503_naming_the_call(make_ctx):
    client = TestClient(create_app(make_ctx(offline=True, audit_db=None)))
    text = "Water boils at 100 °C at sea level. [1]\n\n[1]: https://uncached.example/boiling\n"
    response = client.post("/check-answer", json={"answer": text})
    assert response.status_code == 503 and "CITECHECK_OFFLINE=1" in response.json()["detail"]
    assert "fetch.direct" in response.json()["detail"] and "Traceback" not in response.text


def test_a_page_not_rendered_in_time_is_503_and_the_server_answers_meanwhile(make_ctx, monkeypatch):
    from citecheck.report import render_html
    done = threading.Event()

    def slow(*args, **kwargs):
        done.wait(5)
        return ""
    monkeypatch.setattr(answer_app, "RENDER_SECONDS", 0.3)
    monkeypatch.setattr(render_html, "render", slow)
    with TestClient(app_of(make_ctx, StubCheck(), token=TOKEN)) as client:
        try:
            started = time.monotonic()
            page = client.get("/", headers={"authorization": f"Bearer {TOKEN}"})
            assert page.status_code == 503 and page.headers["Retry-After"] == "1"
            assert "took longer than 0.3 s" in page.text and time.monotonic() - started < 3
            assert client.get("/health").status_code == 200 and not done.is_set()     # the render still runs
        finally:
            done.set()
