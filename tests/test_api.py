"""api: every status of /verify and /health, against the ASGI app with a stand-in verify function."""
import asyncio
import json
import logging
import subprocess
import sys
import threading
import time

import httpx
import pytest

from citecheck import cancellation, config
from citecheck.cache import CacheMiss
from citecheck.config import Secrets, Settings, parse_origins
from citecheck.context import RunContext
from citecheck.serve.api import Limits, create_app

FAKE_TOKEN = "sk-citecheck-FAKE-7f3a9c1e-do-not-leak"
URL = "https://example.org/article"


def verdict(claim, urls, label="supported"):
    return {"claim": claim, "overall": label,
            "citations": [{"url": u, "label": label, "evidence_quote": "quoted", "confidence": 0.9,
                           "final_url": u, "original_status": 200, "rid": None, "reason": None, "auto": True,
                           "auto_note": None, "method": "pooled", "span_start": None, "span_end": None,
                           "status": None, "diff": None, "notice": None, "numbers": None}
                          for u in urls]}


class FakeVerify:
    """Records its calls; `gate` (a threading.Event) holds each call until it is set."""

    def __init__(self, result=verdict, gate=None, error=None):
        self.calls, self.result, self.gate, self.error = [], result, gate, error

    def __call__(self, claim, urls):
        self.calls.append((claim, urls))
        if self.gate is not None:
            self.gate.wait(10)
        if self.error is not None:
            raise self.error
        return self.result(claim, urls)


async def _send(app, requests):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return await asyncio.gather(*(client.request(method, path, **kw) for method, path, kw in requests))


def send(app, *requests):
    """Send (method, path, kwargs) requests concurrently; the responses in order."""
    return asyncio.run(_send(app, list(requests)))


def post(app, body=None, **kw):
    if body is not None:
        kw["json"] = body
    return send(app, ("POST", "/verify", kw))[0]


def context(**settings) -> RunContext:
    """A run context with these settings (the documented defaults otherwise, no secrets)."""
    return RunContext.build(Settings.from_env().replace(**settings))


def app_with(verify=None, ctx=None, **limits):
    return create_app(ctx or context(), verify or FakeVerify(), limits=Limits(**limits))


# --- 200 -------------------------------------------------------------------------------------------------

def test_health_reports_limits_and_replay_mode():
    response = send(app_with(ctx=context(offline=True), max_urls=3), ("GET", "/health", {}))[0]
    assert response.status_code == 200
    assert response.json()["status"] == "ok" and response.json()["offline"] is True
    assert response.json()["limits"]["max_urls"] == 3


def test_verify_delegates_the_claim_and_urls_unchanged():
    fake = FakeVerify()
    urls = [URL, "http://example.com/b?x=1#frag"]
    response = post(app_with(fake, ctx=context(auto_accept=0.8)),
                    {"claim": "  Water boils at 100 °C.  ", "urls": urls})
    assert response.status_code == 200
    assert fake.calls == [("  Water boils at 100 °C.  ", urls)]
    assert response.json() == verdict("  Water boils at 100 °C.  ", urls)


def test_each_citation_is_gated_for_the_model_that_answered_it(tmp_path, capsys):
    """The table's threshold for the answering model (verify's `model`), else a person and the note, told
    once on stderr per server run, not per request; a citation no model answered stays automatic."""
    table = tmp_path / "gate.json"
    table.write_text(json.dumps({"m": {"threshold": 0.85}}))

    def answered(claim, urls):
        result = verdict(claim, urls)
        for citation, model in zip(result["citations"], ("m", "n", None)):
            citation["model"] = model
        result["citations"][2]["confidence"] = None
        return result
    app = app_with(FakeVerify(answered), ctx=context(auto_accept=None, auto_accept_table=table))
    urls = [URL, "https://example.org/b", "https://example.org/c"]
    bodies = [post(app, {"claim": "c", "urls": urls}).json() for _ in range(2)]
    assert [(c["auto"], c["auto_note"]) for c in bodies[0]["citations"]] == [
        (True, None),
        (False, f"uncalibrated: no AUTO_ACCEPT for n in {table}: run `calibrate --model n --write` or set "
                "AUTO_ACCEPT"),
        (True, None)]
    assert bodies[1] == bodies[0] and "model" not in bodies[0]["citations"][0]
    assert capsys.readouterr().err.count("uncalibrated: no AUTO_ACCEPT for n") == 1


def test_extra_keys_from_verify_are_not_exposed():
    def chatty(claim, urls):
        result = verdict(claim, urls)
        result["debug"] = "internal"
        result["citations"][0]["storage_url"] = "https://storage.example/?token=abc"
        return result
    body = post(app_with(FakeVerify(chatty)), {"claim": "c", "urls": [URL]}).json()
    assert "debug" not in body and "storage_url" not in body["citations"][0]


def test_openapi_schema_states_the_limits():
    schema = send(app_with(max_urls=7, max_claim_chars=99), ("GET", "/openapi.json", {}))[0].json()
    request = schema["components"]["schemas"]["VerifyRequest"]
    assert request["properties"]["urls"]["maxItems"] == 7 and request["properties"]["urls"]["minItems"] == 1
    assert request["properties"]["claim"]["maxLength"] == 99 and request["additionalProperties"] is False
    assert set(schema["paths"]) == {"/health", "/verify"}
    assert {"200", "413", "422", "429", "503", "504"} <= set(schema["paths"]["/verify"]["post"]["responses"])


# --- 422: a bad body -------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, where, words", [
    ({"urls": [URL]}, ["body", "claim"], "Field required"),
    ({"claim": "c"}, ["body", "urls"], "Field required"),
    ({"claim": "", "urls": [URL]}, ["body", "claim"], "at least 1 character"),
    ({"claim": " \n\t ", "urls": [URL]}, ["body", "claim"], "claim is blank"),
    ({"claim": 5, "urls": [URL]}, ["body", "claim"], "valid string"),
    ({"claim": "c", "urls": []}, ["body", "urls"], "at least 1 item"),
    ({"claim": "c", "urls": URL}, ["body", "urls"], "valid list"),
    ({"claim": "c", "urls": [URL], "model": "x"}, ["body", "model"], "Extra inputs"),
    ({"claim": "c", "urls": ["file:///etc/passwd"]}, ["body", "urls"], "urls[0] is not an http or https URL"),
    ({"claim": "c", "urls": [URL, "ftp://example.org/x"]}, ["body", "urls"], "urls[1] is not an http or https"),
    ({"claim": "c", "urls": ["example.org/no-scheme"]}, ["body", "urls"], "http or https URL with a host: only http"),
    ({"claim": "c", "urls": ["http:///no-host"]}, ["body", "urls"], "with a host: no host"),
    ({"claim": "c", "urls": ["http://example.org:99999/"]}, ["body", "urls"], "Port out of range"),
    ({"claim": "c", "urls": ["http://example.org/" + "a" * 2048]}, ["body", "urls"], "longer than 2048"),
    ([{"claim": "c", "urls": [URL]}], ["body"], "dictionary"),
])
def test_bad_body_is_422_with_the_field_and_reason(body, where, words):
    fake = FakeVerify()
    response = post(app_with(fake), body)
    assert response.status_code == 422
    errors = response.json()["detail"]
    assert any(e["loc"] == where and words in e["msg"] for e in errors), errors
    assert fake.calls == []


def test_invalid_json_is_422():
    response = post(app_with(), content=b'{"claim": "c", "urls": [', headers={"content-type": "application/json"})
    assert response.status_code == 422 and response.json()["detail"][0]["type"] == "json_invalid"


def test_422_does_not_echo_the_input():
    response = post(app_with(), {"claim": "c", "urls": [URL], "secret_field": FAKE_TOKEN})
    assert response.status_code == 422 and FAKE_TOKEN not in response.text


def test_too_many_urls_is_422_naming_the_limit():
    response = post(app_with(max_urls=3), {"claim": "c", "urls": [URL] * 4})
    assert response.status_code == 422
    assert "at most 3 items" in response.json()["detail"][0]["msg"]
    assert post(app_with(max_urls=3), {"claim": "c", "urls": [URL] * 3}).status_code == 200


def test_too_long_claim_is_422_naming_the_limit():
    response = post(app_with(max_claim_chars=50), {"claim": "é" * 51, "urls": [URL]})
    assert response.status_code == 422
    assert "at most 50 characters" in response.json()["detail"][0]["msg"]
    assert post(app_with(max_claim_chars=50), {"claim": "é" * 50, "urls": [URL]}).status_code == 200


@pytest.mark.parametrize("body, words", [
    (b'{"claim": "caf\xe9", "urls": ["https://example.org/"]}', "not UTF-8 (byte 14)"),
    (b'\xff\xfe{}', "not UTF-8 (byte 0)"),
    (b'{"claim": "c", "urls": [' + b"[" * 5000 + b"]" * 5000 + b"]}", "nested 5002 levels deep"),
    (b"[" * 30000 + b"]" * 30000, "nested 30000 levels deep"),
])
def test_undecodable_or_deeply_nested_body_is_422_not_400(body, words):
    fake = FakeVerify()
    response = post(app_with(fake), content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body"] and error["type"] == "json_invalid" and words in error["msg"]
    assert fake.calls == []


def test_brackets_inside_strings_do_not_count_as_nesting():
    fake = FakeVerify()
    claim = "[" * 100 + "{" * 100
    assert post(app_with(fake), {"claim": claim, "urls": [URL]}).status_code == 200
    assert fake.calls == [(claim, [URL])]


@pytest.mark.parametrize("body, where", [
    (b'{"claim": "\\ud800 boils", "urls": ["https://example.org/"]}', ["body", "claim"]),
    (b'{"claim": "boils \\udfff", "urls": ["https://example.org/"]}', ["body", "claim"]),
    (b'{"claim": "c", "urls": ["https://example.org/\\udfff"]}', ["body", "urls"]),
    (b'{"claim": "c", "urls": ["https://example.org/", "https://\\ud800.example/"]}', ["body", "urls"]),
])
def test_a_lone_surrogate_in_the_claim_or_a_url_is_422_not_500(body, where):
    fake = FakeVerify()
    response = post(app_with(fake), content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert any(e["loc"] == where for e in response.json()["detail"])
    assert fake.calls == []


# --- 413: oversized body, refused before parsing ----------------------------------------------------------

def test_oversized_body_is_413_before_parsing():
    fake = FakeVerify()
    body = json.dumps({"claim": "c" * 2000, "urls": [URL]}).encode()
    response = post(app_with(fake, max_body_bytes=1024), content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.json() == {"detail": "request body is larger than 1024 bytes (API_MAX_BODY_BYTES)"}
    assert fake.calls == []


def test_oversized_chunked_body_without_length_is_413():
    async def chunks():
        for _ in range(10):
            yield b"x" * 200   # not even JSON: the size is refused before any parsing
    fake = FakeVerify()
    response = post(app_with(fake, max_body_bytes=1024), content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413 and fake.calls == []


def test_body_at_the_limit_is_parsed():
    body = json.dumps({"claim": "c", "urls": [URL]}).encode()
    ok = post(app_with(max_body_bytes=len(body)), content=body, headers={"content-type": "application/json"})
    over = post(app_with(max_body_bytes=len(body) - 1), content=body, headers={"content-type": "application/json"})
    assert (ok.status_code, over.status_code) == (200, 413)


def test_non_numeric_content_length_is_400():
    response = post(app_with(), content=b"{}", headers={"content-type": "application/json", "content-length": "x"})
    assert response.status_code == 400 and "Content-Length" in response.json()["detail"]


# --- 503: a required setting is missing ------------------------------------------------------------------

def test_missing_token_is_503_naming_the_variable_not_a_value(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_TOKEN)

    def needs_crawlbase(claim, urls):
        Secrets({}).require("CRAWLBASE_JS_TOKEN", "set it to crawl pages that need JavaScript")
    response = post(app_with(FakeVerify(needs_crawlbase)), {"claim": "c", "urls": [URL]})
    assert response.status_code == 503
    assert response.json()["detail"] == ("CRAWLBASE_JS_TOKEN is not set: set it to crawl pages that need "
                                         "JavaScript")
    assert FAKE_TOKEN not in response.text


# --- 429 and 504: the concurrency bound and the deadline -------------------------------------------------

def test_excess_request_waits_then_gets_429_with_retry_after():
    gate = threading.Event()
    fake = FakeVerify(gate=gate)
    app = app_with(fake, concurrency=1, queue_timeout=0.3)

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            first = asyncio.create_task(client.post("/verify", json={"claim": "first", "urls": [URL]}))
            await asyncio.sleep(0.1)
            second = await client.post("/verify", json={"claim": "second", "urls": [URL]})
            gate.set()
            return await first, second
    first, second = asyncio.run(scenario())
    assert first.status_code == 200 and first.json()["claim"] == "first"
    assert second.status_code == 429 and second.headers["retry-after"] == "1"
    assert "API_CONCURRENCY" in second.json()["detail"]
    assert [claim for claim, _ in fake.calls] == ["first"]


def test_queued_request_runs_when_a_slot_frees_in_time():
    gate = threading.Event()
    app = app_with(FakeVerify(gate=gate), concurrency=1, queue_timeout=5)

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            both = asyncio.gather(*(client.post("/verify", json={"claim": c, "urls": [URL]}) for c in "ab"))
            await asyncio.sleep(0.2)
            gate.set()
            return await both
    assert [r.status_code for r in asyncio.run(scenario())] == [200, 200]


class LargePage:
    """A verification that would run for `seconds` (a huge page), checking for cancellation as verify does."""

    def __init__(self, seconds=20.0):
        self.seconds, self.cancelled, self.finished = seconds, [], []

    def __call__(self, claim, urls):
        if not claim.startswith("large"):
            return verdict(claim, urls)
        started = time.monotonic()
        try:
            while time.monotonic() - started < self.seconds:
                cancellation.check()
                time.sleep(0.02)
        except cancellation.Cancelled:
            self.cancelled.append(claim)
            raise
        self.finished.append(claim)
        return verdict(claim, urls)


def test_verify_keeps_answering_while_four_large_page_requests_run():
    """Four requests on huge pages take every slot; at their deadline they get 504, their slots are free
    again and their work stops, so the other requests are answered instead of 429 for minutes."""
    large = LargePage()
    app = app_with(FakeVerify(large), concurrency=4, deadline=0.5, queue_timeout=0.1)

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            started = time.monotonic()
            slow = [asyncio.create_task(client.post("/verify", json={"claim": f"large {n}", "urls": [URL]}))
                    for n in range(4)]
            await asyncio.sleep(0.05)                                           # they take the slots first
            others = []
            while time.monotonic() - started < 2.0:
                response = await client.post("/verify", json={"claim": "small", "urls": [URL]})
                others.append((time.monotonic() - started, response.status_code))
                await asyncio.sleep(0.05)
            return [await task for task in slow], others
    slow, others = asyncio.run(scenario())
    assert [r.status_code for r in slow] == [504] * 4
    assert slow[0].json()["detail"] == "verification took longer than 0.5 s (API_DEADLINE)"
    assert {status for at, status in others if at < 0.4} == {429}         # every slot was busy
    after = [status for at, status in others if at > 0.8]
    assert after and set(after) == {200}                                   # slots freed at the deadline
    for _ in range(100):                                                   # the work itself stopped
        if len(large.cancelled) == 4:
            break
        time.sleep(0.02)
    assert sorted(large.cancelled) == [f"large {n}" for n in range(4)] and large.finished == []


class ParsingPage:
    """A verification whose page parse (the sandbox's heavy lane) runs for `seconds`, checking cancellation."""

    def __init__(self, seconds=1.5):
        self.seconds, self.lanes = seconds, []

    def __call__(self, claim, urls):
        if not claim.startswith("slow page"):
            return verdict(claim, urls)
        with cancellation.heavy():
            self.lanes.append(claim)
            ends = time.monotonic() + self.seconds
            while time.monotonic() < ends:
                cancellation.check()
                time.sleep(0.02)
        return verdict(claim, urls)


def test_requests_parsing_slow_pages_hand_their_slots_to_cheap_requests():
    """Every request slot is taken by a request whose page parse is slow: each hands its slot over once it
    parses, so cheap requests are answered beside them instead of 429, and the slow ones still end 200."""
    parsing = ParsingPage()
    app = app_with(FakeVerify(parsing), concurrency=2, deadline=10, queue_timeout=0.2)

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            slow = [asyncio.create_task(client.post("/verify", json={"claim": f"slow page {n}", "urls": [URL]}))
                    for n in range(4)]                                   # 2 x API_CONCURRENCY parses
            await asyncio.sleep(0.3)
            cheap = [(await client.post("/verify", json={"claim": "small", "urls": [URL]})).status_code
                     for _ in range(3)]
            return [await task for task in slow], cheap
    slow, cheap = asyncio.run(scenario())
    assert sorted(parsing.lanes) == [f"slow page {n}" for n in range(4)]  # all four parse at once
    assert cheap == [200, 200, 200]
    assert [r.status_code for r in slow] == [200] * 4


def test_outside_the_api_the_heavy_lane_is_a_no_op():
    with cancellation.heavy():
        pass


def test_a_slot_is_released_once_when_the_deadline_passes_and_the_work_ends_later():
    first, later = threading.Event(), threading.Event()

    def verify(claim, urls):
        (first if claim == "slow" else later).wait(10)
        return verdict(claim, urls)
    app = app_with(FakeVerify(verify), concurrency=1, deadline=1.0, queue_timeout=0.3)

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            slow = await client.post("/verify", json={"claim": "slow", "urls": [URL]})     # 504, slot freed
            first.set()                                                                 # its work ends too
            await asyncio.sleep(0.1)
            both = asyncio.gather(*(client.post("/verify", json={"claim": c, "urls": [URL]}) for c in "ab"))
            await asyncio.sleep(0.5)
            later.set()
            return slow, await both
    slow, (a, b) = asyncio.run(scenario())
    assert slow.status_code == 504
    assert sorted([a.status_code, b.status_code]) == [200, 429]     # one slot, not two: released only once


# --- upstream failures: a labelled verdict, not an error -------------------------------------------------

def test_cache_miss_in_replay_mode_is_a_labelled_verdict():
    fake = FakeVerify(error=CacheMiss("judge (model m, key abc) is not in json_cache.json and CITECHECK_OFFLINE=1"))
    response = post(app_with(fake), {"claim": "c", "urls": [URL, "http://example.com/"]})
    assert response.status_code == 200
    body = response.json()
    assert body["overall"] == "unreachable"
    assert [(c["url"], c["label"], c["reason"]) for c in body["citations"]] == [
        (URL, "unreachable", "cache_miss"), ("http://example.com/", "unreachable", "cache_miss")]


def test_only_the_citations_that_miss_the_cache_are_labelled_cache_miss():
    recorded = {"https://a.example/": "not_found", "https://c.example/": "supported"}

    def replay(claim, urls):
        if any(url not in recorded for url in urls):
            raise CacheMiss("fetch.direct is not in json_cache.json and CITECHECK_OFFLINE=1")
        return {"claim": claim, "overall": "?", "citations": [verdict(claim, [u], recorded[u])["citations"][0]
                                                               for u in urls]}
    urls = ["https://a.example/", "https://b.example/", "https://c.example/"]
    body = post(app_with(FakeVerify(replay)), {"claim": "c", "urls": urls}).json()
    assert [(c["label"], c["reason"]) for c in body["citations"]] == [
        ("not_found", None), ("unreachable", "cache_miss"), ("supported", None)]
    assert body["overall"] == "supported"      # aggregate's rule over the labels, misses included


def test_unexpected_error_is_500_without_its_message(monkeypatch, caplog):
    monkeypatch.setenv("CRAWLBASE_TOKEN", FAKE_TOKEN)
    fake = FakeVerify(error=RuntimeError(f"GET https://api.example/?token={FAKE_TOKEN} failed"))
    with caplog.at_level(logging.DEBUG):
        response = post(app_with(fake), {"claim": "c", "urls": [URL]})
    assert response.status_code == 500 and response.json() == {"detail": "internal error (RuntimeError); see the server log"}
    assert "<CRAWLBASE_TOKEN>" in caplog.text and FAKE_TOKEN not in caplog.text


# --- secrets never in a response or a log line -----------------------------------------------------------

def test_token_never_in_any_response_or_log_line(monkeypatch, caplog):
    for name in config.SECRETS:
        monkeypatch.setenv(name, FAKE_TOKEN)
    leaky = [config.MissingSetting("OPENAI_API_KEY", f"value was {FAKE_TOKEN}"),
             CacheMiss(f"call with {FAKE_TOKEN} missed"), ValueError(FAKE_TOKEN), None]
    responses = []
    with caplog.at_level(logging.DEBUG):
        for error in leaky:
            app = app_with(FakeVerify(error=error), max_body_bytes=4096)
            responses += send(app, ("POST", "/verify", {"json": {"claim": FAKE_TOKEN, "urls": [URL]}}),
                              ("POST", f"/verify?token={FAKE_TOKEN}", {"json": {"claim": "c", "urls": [URL]}}),
                              ("POST", "/verify", {"json": {"claim": "c", "urls": [URL], "k": FAKE_TOKEN}}),
                              ("POST", "/verify", {"content": FAKE_TOKEN.encode() * 500}),
                              ("GET", "/health", {}))
    statuses = {r.status_code for r in responses}
    assert {200, 413, 422, 500, 503} <= statuses
    leaked = [r for r in responses if FAKE_TOKEN in r.text and r.request.content.find(FAKE_TOKEN.encode()) < 0]
    assert leaked == []
    server_side = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]  # not the client
    assert server_side and all(FAKE_TOKEN not in record.getMessage() for record in server_side)


def test_each_request_is_logged_without_its_body(caplog):
    with caplog.at_level(logging.INFO, logger="citecheck.serve.api"):
        post(app_with(), {"claim": "a distinctive claim", "urls": [URL]})
    lines = [r.getMessage() for r in caplog.records if r.name == "citecheck.serve.api"]
    assert len(lines) == 1 and lines[0].startswith("POST /verify -> 200 in ")
    assert "distinctive" not in caplog.text


# --- configuration and the command ----------------------------------------------------------------------

def test_limits_default_from_config_and_bad_values_name_the_variable():
    assert Settings.from_env({}).api == Limits()
    assert (Limits().header_timeout, Limits().body_timeout) == (10.0, 20.0)
    limits = Settings.from_env({"API_MAX_URLS": "25", "API_DEADLINE": "1.5", "API_HEADER_TIMEOUT": "3",
                                "API_BODY_TIMEOUT": "4"}).api
    assert (limits.max_urls, limits.deadline, limits.header_timeout, limits.body_timeout) == (25, 1.5, 3, 4)
    for name, bad in [("API_MAX_URLS", "0"), ("API_CONCURRENCY", "two"), ("API_MAX_BODY_BYTES", "1.5"),
                      ("API_DEADLINE", "-1"), ("API_HEADER_TIMEOUT", "0"), ("API_BODY_TIMEOUT", "x")]:
        with pytest.raises(ValueError, match=name):
            Settings.from_env({name: bad})


def test_serve_help_and_bad_port():
    help_text = subprocess.run([sys.executable, "-m", "citecheck", "serve", "--help"],
                               capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0 and "--dry-run" in help_text.stdout and "127.0.0.1" in help_text.stdout
    bad = subprocess.run([sys.executable, "-m", "citecheck", "serve", "--port", "70000"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "--port must be between 1 and 65535" in bad.stderr


# --- integration: the real verify (fetch, netguard, judge) behind the API ---------------------------------

from standins.http import StandIn  # noqa: E402

from citecheck.web import fixture_site as site  # noqa: E402


def redirecting_to(location):
    return lambda request: (302, {"Location": location}, "")


def rows(response):
    return [(c["url"], c["label"], c["reason"]) for c in response.json()["citations"]]


def test_private_and_metadata_addresses_are_refused_through_the_api():
    with StandIn(lambda request: (200, {}, "<p>internal admin page</p>")) as internal:
        urls = [internal.url + "/admin", "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/",
                "http://[::1]:9/", "http://0x7f.1/"]
        response = post(create_app(context()), {"claim": "c", "urls": urls})
        assert internal.requests == []
    assert response.status_code == 200
    assert rows(response) == [(url, "unreachable", "blocked_address") for url in urls]
    assert response.json()["overall"] == "unreachable"


def test_a_redirect_from_an_allowed_page_into_a_private_address_is_refused():
    with StandIn(lambda request: (404, {}, "<p>nothing here</p>")) as internal, \
            StandIn(redirecting_to(internal.url + "/secret")) as into_loopback, \
            StandIn(redirecting_to("http://169.254.169.254/latest/meta-data/")) as into_metadata, \
            StandIn(redirecting_to("http://10.1.2.3/")) as into_private:
        allowed = [s.url.removeprefix("http://") for s in (into_loopback, into_metadata, into_private)]
        origins = parse_origins(",".join(allowed))                    # stand-ins for public pages
        urls = [into_loopback.url + "/a", into_metadata.url + "/b", into_private.url + "/c"]
        response = post(create_app(context(allow_hosts=origins)), {"claim": "c", "urls": urls})
        assert [len(s.requests) for s in (into_loopback, into_metadata, into_private)] == [1, 1, 1]
        assert internal.requests == []                  # the hop was refused before it was requested
        assert rows(response) == [(url, "unreachable", "blocked_address") for url in urls]

        origins = parse_origins(",".join([*allowed, internal.url.removeprefix("http://")]))
        control = post(create_app(context(allow_hosts=origins)), {"claim": "c", "urls": urls[:1]})
        assert len(internal.requests) == 1              # allowed, the same redirect is followed
        assert rows(control) == [(urls[0], "unreachable", "http_404")]


def test_missing_judge_key_is_503_naming_it_and_no_key_leaks(monkeypatch, caplog):
    others = {name: FAKE_TOKEN for name in ("ANTHROPIC_API_KEY", "CRAWLBASE_JS_TOKEN", "TYPESAFE_API_KEY")}
    for name in others:
        monkeypatch.setenv(name, FAKE_TOKEN)            # set, but not the one this judge needs
    monkeypatch.setenv("JUDGE_PROVIDER", "openai")      # named: else the first configured one (anthropic)
    ctx = context(allow_private=True, secrets=Secrets(others))
    with site.start(port=0) as fixture, caplog.at_level(logging.DEBUG):
        response = post(create_app(ctx), {"claim": "Water boils at 100 °C at sea level.",
                                       "urls": [fixture.url("/articles/boiling-point")]})
    assert response.status_code == 503
    assert response.json()["detail"].startswith("OPENAI_API_KEY is not set")
    assert FAKE_TOKEN not in response.text and FAKE_TOKEN not in caplog.text


def test_a_rejected_crawlbase_token_is_503_naming_it_not_500(tmp_path, caplog):
    import crawlbase.base_api
    from standins.crawlbase import Answer, CrawlingStandIn
    wrong = "cbFAKEwrong-4f1d2c9e-leak"
    try:
        with CrawlingStandIn(lambda call: Answer("text")) as api:
            ctx = context(cache_path=tmp_path / "cache.json", crawlbase_api_url=api.url, crawlbase_timeout=2,
                          secrets=Secrets({"CRAWLBASE_TOKEN": wrong}))
            with caplog.at_level(logging.DEBUG):
                response = post(create_app(ctx), {"claim": "c", "urls": [URL]})
    finally:
        crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"
    assert response.status_code == 503
    assert response.json()["detail"] == "CRAWLBASE_TOKEN was rejected (Crawlbase HTTP 401)"
    assert wrong not in response.text and wrong not in caplog.text


def test_offline_cache_miss_through_the_api_is_a_labelled_verdict(tmp_path):
    ctx = context(offline=True, allow_private=True, cache_path=tmp_path / "cache.json")
    with site.start(port=0) as fixture:
        url = fixture.url("/articles/boiling-point")
        response = post(create_app(ctx), {"claim": "c", "urls": [url]})
    assert response.status_code == 200
    assert response.json() == {"claim": "c", "overall": "unreachable", "citations": [
        {"url": url, "label": "unreachable", "evidence_quote": None, "confidence": None, "final_url": None,
         "original_status": None, "rid": None, "reason": "cache_miss", "auto": True, "auto_note": None,
         "method": None, "span_start": None, "span_end": None, "status": None, "diff": None,
         "notice": None, "numbers": None}]}


# --- the dry run: `serve --dry-run` in its own process, answering from the cache -----------------------

import contextlib  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

from standins.judge import free_port, judge_standin, verdict_json  # noqa: E402

from citecheck.verify import verify_claim  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HUNDRED = "Water boils at 100 °C at sea level."


@contextlib.contextmanager
def dry_run_server(env: dict, log_path: Path):
    """`python -m citecheck serve --dry-run` on a free loopback port; yields its base URL."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        server = subprocess.Popen([sys.executable, "-m", "citecheck", "serve", "--dry-run", "--port", str(port)],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            assert server.poll() is None, log_path.read_text()
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(base_url + "/health", timeout=1)
                break
            time.sleep(0.2)
        yield base_url
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_dry_run_replays_a_recorded_answer_with_no_keys_and_no_judge(tmp_path):
    cache = tmp_path / "cache.json"
    site_port = free_port()
    with judge_standin() as judge, site.start(port=site_port) as fixture:   # record once, live
        judge.script.content = verdict_json("supported", "At sea level, pure water boils at 100 °C (212 °F).", 0.95)
        ctx = context(cache_path=cache, openai_base_url=judge.url + "/v1", allow_private=True)
        urls = [fixture.url("/articles/boiling-point"), fixture.url("/articles/boiling-point-table-2019")]
        recorded = verify_claim(HUNDRED, urls, ctx)
    assert [c["label"] for c in recorded["citations"]] == ["supported", "unreachable"]

    env = {k: v for k, v in os.environ.items() if k not in config.SECRETS and k not in config.DEFAULTS}
    env.update({"CITECHECK_CACHE": str(cache), "CITECHECK_SITE_PORT": str(site_port),
                "OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",   # nothing there: replay only
                "ANTHROPIC_API_KEY": FAKE_TOKEN, "JUDGE_METHOD": "one_pass"})      # as recorded
    log_path = tmp_path / "server.log"
    with dry_run_server(env, log_path) as base_url:
        health = httpx.get(base_url + "/health").json()
        replayed = httpx.post(base_url + "/verify", json={"claim": HUNDRED, "urls": urls}, timeout=60)
        missed = httpx.post(base_url + "/verify", json={"claim": "Water boils at 90 °C.", "urls": urls},
                            timeout=60)
        refused = httpx.post(base_url + "/verify", json={"claim": HUNDRED, "urls": ["file:///etc/passwd"]})
    assert health["offline"] is True and health["fixture_site"] == f"http://127.0.0.1:{site_port}"
    assert replayed.status_code == 200 and replayed.json() == recorded
    assert missed.status_code == 200       # the judge's answer for this claim was never recorded; the 404 was
    assert rows(missed) == [(urls[0], "unreachable", "cache_miss"), (urls[1], "unreachable", "http_404")]
    assert refused.status_code == 422
    log = log_path.read_text()
    assert '"POST /verify HTTP/1.1" 200' in log and "POST /verify -> 422" in log
    assert FAKE_TOKEN not in log and "Water boils" not in log


def test_dry_run_without_a_cache_file_is_a_one_line_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in config.SECRETS}
    env["CITECHECK_CACHE"] = str(tmp_path / "absent.json")
    result = subprocess.run([sys.executable, "-m", "citecheck", "serve", "--dry-run", "--port", str(free_port())],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "absent.json, which does not exist here" in result.stderr and len(result.stderr.splitlines()) == 1


README_BODY = {"claim": "Water boils at 100 °C at sea level.",
               "urls": ["http://127.0.0.1:8731/articles/boiling-point",
                        "http://127.0.0.1:8731/articles/boiling-point-table-2019"]}


def test_the_readme_curl_replays_from_the_committed_cache(tmp_path):
    """The README's dry-run example: the repository's json_cache.json, no keys, the fixture site on 8731."""
    env = {k: v for k, v in os.environ.items() if k not in config.SECRETS and k not in config.DEFAULTS}
    with dry_run_server(env, tmp_path / "server.log") as base_url:     # no judge configured: replay only
        response = httpx.post(base_url + "/verify", json=README_BODY, timeout=60)
    assert response.status_code == 200
    body = response.json()
    assert (body["overall"], rows(response)) == ("supported", [
        (README_BODY["urls"][0], "supported", None), (README_BODY["urls"][1], "unreachable", "http_404")])
    assert body["citations"][0]["evidence_quote"] == "At sea level, pure water boils at 100 °C (212 °F)."


# --- the server itself: request heads and bodies that never finish ---------------------------------------

@contextlib.contextmanager
def live_server(app, limits, log_level="warning"):
    """`serve`'s uvicorn server (the guarded protocol) in a thread on a free loopback port."""
    import uvicorn

    from citecheck.serve import serving
    port = free_port()
    server = uvicorn.Server(serving.server_config(app, limits, "127.0.0.1", port, log_level))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def closed_with(sock) -> bytes | None:
    """What the server sent before closing the connection; None if it is still open."""
    sock.settimeout(3)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        return None
    return received


def test_half_sent_heads_and_bodies_are_answered_408_and_closed():
    """200 clients that stop half-way through the body and 200 that stop inside the head: with a 1 s head
    and body deadline, every one of the 400 connections gets 408 and is closed (uvicorn alone keeps them)."""
    from standins.slow_origin import half_sent
    limits = Limits(header_timeout=1.0, body_timeout=1.0)
    fake = FakeVerify()
    with live_server(create_app(context(), fake, limits=limits), limits) as port:
        sockets = half_sent(port, 200)
        time.sleep(1.5)
        answers = [closed_with(sock) for sock in sockets]
        for sock in sockets:
            sock.close()
        fine = httpx.post(f"http://127.0.0.1:{port}/verify", json={"claim": "c", "urls": [URL]}, timeout=10)
    assert [a is not None and a.startswith(b"HTTP/1.1 408") for a in answers] == [True] * 400
    assert b"API_BODY_TIMEOUT" in answers[0] and b"API_HEADER_TIMEOUT" in answers[-1]
    assert fine.status_code == 200 and fake.calls == [("c", [URL])]


def test_a_kept_alive_connection_that_starts_a_second_head_and_stops_is_closed():
    import socket
    limits = Limits(header_timeout=1.0, body_timeout=1.0)
    with live_server(create_app(context(), FakeVerify(), limits=limits), limits) as port:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        first = sock.recv(65536)
        sock.sendall(b"GET /hea")                       # a second request, never finished
        time.sleep(1.5)
        rest = closed_with(sock)
        sock.close()
    assert first.startswith(b"HTTP/1.1 200") and rest is not None
    assert (first + rest).count(b"HTTP/1.1 ") == 2 and (first + rest).endswith(b"(API_HEADER_TIMEOUT)\"}")


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(self.format(record))


def test_the_access_log_names_paths_without_their_query_strings():
    """L4: `GET /review?token=...` put the token in uvicorn's access log; the line now ends at the path."""
    secret = "access-log-FAKE-4f1d9b2c7e"
    access = logging.getLogger("uvicorn.access")
    with live_server(create_app(context(), FakeVerify()), Limits(), log_level="info") as port:
        seen = Lines()
        access.addHandler(seen)
        try:
            for path in (f"/health?token={secret}", f"/review?token={secret}&page=2"):
                httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10)
        finally:
            access.removeHandler(seen)
    assert len(seen.lines) == 2 and '"GET /health HTTP/1.1" 200' in seen.lines[0]
    assert '"GET /review HTTP/1.1" 404' in seen.lines[1]
    assert not any(secret in line or "?" in line for line in seen.lines)
