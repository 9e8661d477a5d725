"""The local judge's HTTP layer through the real clients (typesafe-sdk, httpx), with a deterministic fake model."""
from __future__ import annotations

import contextlib
import json
import math
import sys
import threading
import time

import httpx
import pytest
import zstandard
from typesafe_sdk import Choice, Noul, RetryPolicy, Score, TypeSafeClient
from typesafe_sdk._core import compression as sdk_compression
from typesafe_sdk._core.errors import (
    TypeSafeAPIError,
    TypeSafeAuthenticationError,
    TypeSafeInternalServerError,
    TypeSafeNotFoundError,
    TypeSafeUnprocessableEntityError,
)

from citecheck import cli, config
from citecheck.judge import calibration, judges
from citecheck.judge.local_judge import readout, weights
from citecheck.judge.local_judge import server as server_module

MODEL = config.LOCAL_MODEL
LOGPROBS = {"supports": math.log(0.5), "contradicts": math.log(0.1), "says_nothing": math.log(0.2)}


class FakeModel:
    """Answers from fixed log-probabilities and records what it was asked (no model file needed)."""
    name = MODEL

    def __init__(self, logprobs=None, content='{"label": "supported", "evidence_quote": "s", "confidence": 0.9}',
                 delay=0.0, fail=None):
        self.lock = threading.Lock()
        self.logprobs, self.content, self.delay, self.fail = logprobs or LOGPROBS, content, delay, fail
        self.choice_calls, self.chat_calls = [], []

    def option_logprobs(self, messages, options):
        self.choice_calls.append((messages, options))
        if self.fail:
            raise self.fail
        time.sleep(self.delay)
        return {o: self.logprobs.get(o, math.log(0.05)) for o in options}, 123

    def chat(self, messages, *, schema, json_mode, max_tokens, temperature, seed):
        self.chat_calls.append({"messages": messages, "schema": schema, "json_mode": json_mode,
                                "max_tokens": max_tokens, "temperature": temperature, "seed": seed})
        if self.fail:
            raise self.fail
        return {"content": self.content, "finish_reason": "stop", "prompt_tokens": 50, "completion_tokens": 20}


@contextlib.contextmanager
def running(backend, **kwargs):
    server = server_module.make_server(backend, "127.0.0.1", 0, **kwargs)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def client(server, **kwargs):
    return TypeSafeClient(api_key=kwargs.pop("api_key", "local"), base_url=server.url, model=kwargs.pop("model", MODEL),
                          timeout=10, compression=kwargs.pop("compression", False), **kwargs)


QUESTION = Choice(instructions=judges.CHOICE_INSTRUCTIONS, criteria=dict(judges.CHOICE_CRITERIA))


def test_choice_through_the_sdk_is_the_readout_of_the_model_logprobs():
    fake = FakeModel()
    with running(fake) as server, client(server) as c:
        response = c.system_one(state={"claim": "c", "source": "s"}, questions={"relation": QUESTION})
    answer = response.choices["relation"]
    expected = readout.readout(LOGPROBS)
    assert answer.choice == "supports" == expected["choice"]
    assert answer.probabilities == pytest.approx({"supports": 0.625, "contradicts": 0.125, "says_nothing": 0.25})
    assert answer.confidence == pytest.approx((0.625 - 1 / 3) / (2 / 3))      # Jev's reference formula
    assert response.model == MODEL and response.usage.input_tokens == 123 and response.usage.output_tokens == 1
    [(messages, options)] = fake.choice_calls
    assert options == list(judges.CHOICE_CRITERIA)
    assert "## claim\nc\n\n## source\ns" in messages[-1]["content"]
    assert judges.CHOICE_CRITERIA["contradicts"] in messages[-1]["content"]


def test_zstd_bodies_from_the_sdk_are_decoded(monkeypatch):
    # The SDK compresses only when a zstd codec is importable; give it zstandard's.
    monkeypatch.setitem(sdk_compression.COMPRESSORS, "zstd", zstandard.ZstdCompressor().compress)
    fake = FakeModel()
    source = "The exp claim is OPTIONAL. " * 100            # well over the SDK's 1024-byte threshold
    with running(fake) as server, client(server, compression="zstd") as c:
        response = c.system_one(state={"claim": "c", "source": source}, questions={"relation": QUESTION})
    assert response.choices["relation"].choice == "supports"
    assert source.strip() in fake.choice_calls[0][0][-1]["content"]


def test_raw_zstd_request_and_a_corrupt_one():
    body = json.dumps({"state": "x", "questions": {"q": {"type": "choice", "criteria": {"a": None, "b": None}}}})
    with running(FakeModel()) as server:
        good = httpx.post(f"{server.url}/v1/systemone", content=zstandard.ZstdCompressor().compress(body.encode()),
                          headers={"Content-Encoding": "zstd", "Content-Type": "application/json"})
        bad = httpx.post(f"{server.url}/v1/systemone", content=b"not zstd at all",
                         headers={"Content-Encoding": "zstd"})
        gzip = httpx.post(f"{server.url}/v1/systemone", content=b"x", headers={"Content-Encoding": "gzip"})
    assert good.status_code == 200 and set(good.json()["answers"]["q"]["probabilities"]) == {"a", "b"}
    assert bad.status_code == 400 and "zstd" in bad.json()["detail"]["message"]
    assert gzip.status_code == 415


def test_noul_is_the_probability_of_yes():
    fake = FakeModel(logprobs={"yes": math.log(0.6), "no": math.log(0.2)})
    with running(fake) as server, client(server) as c:
        response = c.system_one(state="I was charged twice.", questions={"billing": Noul(instructions="Billing?")})
    assert response.nouls["billing"].noul == pytest.approx(0.75)
    assert fake.choice_calls[0][1] == ["yes", "no"]


def test_unsupported_question_type_is_422_with_a_message():
    with running(FakeModel()) as server, client(server) as c:
        with pytest.raises(TypeSafeUnprocessableEntityError) as err:
            c.system_one(state="x", questions={"b": {"type": "box", "instructions": "find the logo"}})
    assert err.value.status == 422 and "'box' is not one of choice, noul, score" in str(err.value)


def test_unknown_model_is_404_naming_the_served_one_and_the_alias():
    with running(FakeModel()) as server, client(server, model="gpt-4o") as c:
        with pytest.raises(TypeSafeNotFoundError) as err:
            c.system_one(state="x", questions={"relation": QUESTION})
    assert MODEL in str(err.value) and "jev-latest" in str(err.value)


def test_the_sdks_default_model_alias_is_served():
    with running(FakeModel()) as server, client(server, model="jev-latest") as c:
        response = c.system_one(state="x", questions={"relation": QUESTION})
    assert response.model == MODEL and response.choices["relation"].choice == "supports"


def test_score_is_the_expected_level_of_the_readout_over_the_level_numbers():
    fake = FakeModel(logprobs={"0": math.log(0.1), "1": math.log(0.3), "2": math.log(0.6)})
    levels = ["Calm", "Frustrated", "Very angry"]
    with running(fake) as server, client(server) as c:
        question = Score(instructions="How angry?", criteria=levels)
        response = c.system_one(state="I was charged twice!", questions={"anger": question})
    answer = response.scores["anger"]
    assert answer.probabilities == pytest.approx({0: 0.1, 1: 0.3, 2: 0.6})
    assert answer.score == pytest.approx(0.3 + 2 * 0.6)
    assert answer.legend == {0: "Calm", 1: "Frustrated", 2: "Very angry"}
    assert answer.confidence == pytest.approx(1 - (0.1 * 2 + 0.3 * 1) / (2 / 3))   # spread around the mode
    [(messages, options)] = fake.choice_calls
    assert options == ["0", "1", "2"] and "- 2: Very angry" in messages[-1]["content"]


def test_answers_do_not_depend_on_question_ids_order_or_company():
    fake = FakeModel()
    noul = {"type": "noul", "instructions": "Billing?"}
    relation = QUESTION.model_dump(mode="json", exclude_none=True)
    with running(fake) as server:
        def ask(questions):
            body = {"state": "x", "questions": questions}
            return httpx.post(f"{server.url}/v1/systemone", json=body).json()["answers"]
        alone = ask({"relation": relation})["relation"]
        both = ask({"zz 🙂": noul, "other-id": relation})
    assert both["other-id"] == alone
    first, _, third = fake.choice_calls
    assert first == third                                  # the same prompt whatever the id, order or company


def test_key_is_enforced_when_the_server_has_one():
    with running(FakeModel(), api_key="s3cret-key") as server:
        with client(server, api_key="wrong-key") as c, pytest.raises(TypeSafeAuthenticationError):
            c.system_one(state="x", questions={"relation": QUESTION})
        with client(server, api_key="s3cret-key") as c:
            assert c.system_one(state="x", questions={"relation": QUESTION}).choices["relation"].choice == "supports"
        assert httpx.get(f"{server.url}/health").status_code == 200      # health needs no key


def test_model_failure_is_a_500_json_error_and_the_server_keeps_serving():
    fake = FakeModel(fail=RuntimeError("llama_decode returned -1"))
    with running(fake) as server:
        with client(server) as c, pytest.raises(TypeSafeInternalServerError) as err:
            c.system_one(state="x", questions={"relation": QUESTION}, retry=RetryPolicy(max_retries=0))
        assert err.value.status == 500 and "RuntimeError" in str(err.value)
        fake.fail = None
        assert httpx.get(f"{server.url}/health").json()["model"] == MODEL


@pytest.mark.parametrize("body, loc, words", [
    (b"{not json", ["body", 1], "not valid JSON"),
    (b"[1, 2]", ["body"], "JSON object"),
    (json.dumps({"questions": {"q": {"type": "choice", "criteria": {"a": None}}}}).encode(),
     ["body", "state"], "state"),
    (json.dumps({"state": None, "questions": {"q": {"type": "noul", "instructions": "?"}}}).encode(),
     ["body", "state"], "string"),
    (json.dumps({"state": "x", "questions": {}}).encode(), ["body", "questions"], "questions"),
    (json.dumps({"state": "x", "questions": {"q": {"type": "choice", "criteria": {}}}}).encode(),
     ["body", "questions", "q", "criteria"], "1 to 255 options"),
    (json.dumps({"state": "x", "questions": {"q": {"type": "noul"}}}).encode(),
     ["body", "questions", "q"], "noul"),
    (json.dumps({"state": "x",
                 "questions": {"q": {"type": "score", "criteria": {"0": "a", "1": "b"}}}}).encode(),
     ["body", "questions", "q", "criteria"], "list of 2 to 10"),
    (json.dumps({"state": "x", "questions": {"q": {"type": "score", "criteria": ["a", None]}}}).encode(),
     ["body", "questions", "q", "criteria", 1], "string"),
])
def test_bad_systemone_requests_are_422_with_fastapis_detail_list(body, loc, words):
    with running(FakeModel()) as server:
        response = httpx.post(f"{server.url}/v1/systemone", content=body)
    [detail] = response.json()["detail"]
    assert response.status_code == 422 and detail["loc"] == loc and words in detail["msg"] and detail["type"]


def test_oversized_body_is_413(monkeypatch):
    monkeypatch.setattr(server_module, "MAX_BODY", 100)
    with running(FakeModel()) as server:
        response = httpx.post(f"{server.url}/v1/systemone", content=b"x" * 500)
    assert response.status_code == 413


def test_unknown_paths_and_methods():
    with running(FakeModel()) as server:
        assert httpx.get(f"{server.url}/v2/nothing").status_code == 404
        assert httpx.post(f"{server.url}/v1/models", content=b"{}").status_code == 405


def test_models_list_reads_in_both_clients():
    with running(FakeModel()) as server:
        with client(server) as c:
            [listed] = c.models.list().models
        openai_shape = httpx.get(f"{server.url}/v1/models").json()
    assert listed.name == MODEL and listed.release_date
    assert openai_shape["object"] == "list" and openai_shape["data"][0]["id"] == MODEL


def test_calibration_offsets_apply_only_to_their_question():
    key = calibration.question_key(judges.CHOICE_INSTRUCTIONS, judges.CHOICE_CRITERIA)
    offsets = {"supports": 1.0, "contradicts": 0.0, "says_nothing": 0.0}
    other = Choice(instructions="Something else?", criteria=dict(judges.CHOICE_CRITERIA))
    with running(FakeModel(), calibration={key: offsets}) as server, client(server) as c:
        response = c.system_one(state="x", questions={"relation": QUESTION, "other": other})
    assert response.choices["relation"].probabilities == pytest.approx(
        readout.readout(LOGPROBS, offsets)["probabilities"])
    assert response.choices["relation"].choice == "says_nothing"        # log .5 - 1 < log .2
    assert response.choices["other"].choice == "supports"               # raw readout
    assert response.usage.input_tokens == 246 and response.usage.output_tokens == 2


# ---------------------------------------------------------------- OpenAI-compatible chat completions

def test_chat_completion_with_json_schema_through_httpx():
    fake = FakeModel()
    body = {"model": MODEL, "temperature": 0, "messages": [{"role": "system", "content": "sys"},
                                                         {"role": "user", "content": [{"type": "text", "text": "u"}]}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "verdict", "strict": True, "schema": judges.JSON_SCHEMA}}}
    with running(fake) as server:
        response = httpx.post(f"{server.url}/v1/chat/completions", json=body, headers={"Authorization": "Bearer x"})
    data = response.json()
    assert response.status_code == 200 and data["object"] == "chat.completion" and data["model"] == MODEL
    assert data["choices"][0]["message"] == {"role": "assistant", "content": fake.content}
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["usage"] == {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}
    [call] = fake.chat_calls
    assert call["schema"] == judges.JSON_SCHEMA and call["temperature"] == 0.0 and not call["json_mode"]
    assert call["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "u"}]


def test_json_judge_end_to_end_through_the_local_endpoint(make_ctx):
    fake = FakeModel(content='{"label": "contradicted", "evidence_quote": "Use of this claim is OPTIONAL.", '
                             '"confidence": 0.8}')
    with running(fake) as server:
        verdict = judges.json_judge("exp is required", ["Use of this claim is OPTIONAL."],
                                    make_ctx(openai_base_url=f"{server.url}/v1"))
    assert verdict == {"label": "contradicted", "evidence_quote": "Use of this claim is OPTIONAL.",
                       "confidence": 0.8, "reason": None, "model": MODEL}


def test_choice_judge_end_to_end_is_cached_with_the_served_model(make_ctx):
    with running(FakeModel()) as server:
        ctx = make_ctx(typesafe_endpoint=server.url)
        answer = judges.choice_judge("claim", "source", ctx)
    [entry] = ctx.cache.entries().values()
    assert answer["relation"] == "supports" and entry["model"] == MODEL
    assert entry["usage"] == {"input_tokens": 123, "output_tokens": 1}


@pytest.mark.parametrize("body, status", [
    ({"messages": []}, 400),
    ({"messages": [{"role": "robot", "content": "x"}]}, 400),
    ({"messages": [{"role": "user", "content": "x"}], "stream": True}, 422),
    ({"messages": [{"role": "user", "content": "x"}], "temperature": 5}, 400),
    ({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema"}}, 400),
    ({"messages": [{"role": "user", "content": "x"}], "model": "gpt-4o-mini"}, 404),
])
def test_bad_chat_requests(body, status):
    with running(FakeModel()) as server:
        response = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert response.status_code == status and response.json()["error"]["message"]


def test_schema_the_grammar_cannot_take_is_422():
    fake = FakeModel(fail=ValueError("JSON schema cannot be compiled to a grammar: $ref"))
    with running(fake) as server:
        response = httpx.post(f"{server.url}/v1/chat/completions",
                              json={"messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == 422 and "grammar" in response.json()["error"]["message"]


# ---------------------------------------------------------------- binding, shutdown, missing model

@pytest.mark.parametrize("host, ok", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                      ("127.0.0.2", True), ("0.0.0.0", False), ("192.168.1.5", False),
                                      ("example.org", False)])
def test_loopback_only(host, ok):
    assert server_module.is_loopback(host) is ok


def test_non_loopback_bind_is_refused_without_the_flag():
    with pytest.raises(ValueError, match="loopback"):
        server_module.make_server(FakeModel(), "0.0.0.0", 0)


def test_shutdown_finishes_the_request_in_flight():
    fake = FakeModel(delay=0.5)
    server = server_module.make_server(fake, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    result = {}

    def ask():
        with client(server) as c:
            result["answer"] = c.system_one(state="x", questions={"relation": QUESTION}).choices["relation"].choice

    asking = threading.Thread(target=ask)
    asking.start()
    while not fake.choice_calls:
        time.sleep(0.01)
    server.shutdown()
    server.server_close()          # joins the handler threads
    asking.join(5)
    thread.join(5)
    assert result == {"answer": "supports"}
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/health", timeout=1)


def test_missing_model_names_the_fetch_command(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(weights, "MODELS_DIR", tmp_path / ".models")
    assert cli.main(["judge-server", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert "is missing" in err and weights.FETCH_COMMAND in err


def test_non_loopback_host_is_refused_by_the_command(capsys):
    assert cli.main(["judge-server", "--host", "0.0.0.0"]) == 1
    assert "--allow-remote" in capsys.readouterr().err


def test_errors_carry_a_message_the_sdk_reads():
    with running(FakeModel()) as server, client(server) as c:
        with pytest.raises(TypeSafeAPIError) as err:
            c.system_one(state="x", questions={"q": {"type": "box", "instructions": "find"}})
    assert "'box' is not one of" in str(err.value)


# ---------------------------------------------------------------- conformance (jevcompat)

class HashModel:
    """Log-probabilities hashed from (prompt, option): deterministic, non-uniform, blind to question ids."""
    name = MODEL
    buffer_types = "fake"

    def __init__(self):
        self.lock = threading.Lock()

    def option_logprobs(self, messages, options):
        import hashlib
        def logprob(option):
            digest = hashlib.sha256(json.dumps([messages, option], ensure_ascii=False).encode()).digest()
            return -4 * int.from_bytes(digest[:8], "big") / 2 ** 64
        return {option: logprob(option) for option in options}, 10


@pytest.mark.parametrize("key", [None, "s3cret-judge-key"])
def test_jevcompat_finds_every_must_and_should_met(key):
    """`jevcompat test` in-process against the real HTTP layer over a fake model (the real-model run and its
    numbers are in the README)."""
    from jevcompat import runner
    with running(HashModel(), api_key=key) as server:
        report = runner.run(server.url, key=key, timeout=30)
    failed = {r.id: r.findings[0].message for r in report.results if r.status == "fail"}
    assert report.verdict == "conformant" and not failed, failed
    summary = report.summary()
    assert summary["MUST"]["failed"] == summary["SHOULD"]["failed"] == 0 and not summary["untested_musts"]
    if key:                                             # the auth requirements are exercised only with a key
        assert {r.id: r.status for r in report.results}["auth.invalid"] == "pass"


# ---------------------------------------------------------------- record (fake judge process, fake notebooks)

FAKE_SERVER = """
import sys, threading
from citecheck.judge.local_judge import server as server_module
class Fake:
    name = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    lock = threading.Lock()
    def option_logprobs(self, messages, options):
        return {o: -float(i) for i, o in enumerate(options)}, 10
server_module.serve_until_signalled(server_module.make_server(Fake(), "127.0.0.1", int(sys.argv[1])))
print("stopped cleanly")
"""


def test_record_runs_live_against_the_judge_then_offline_after_it_stopped(monkeypatch, tmp_path, ctx):
    from citecheck import notebook, record
    monkeypatch.setattr(record, "LOG", tmp_path / "judge-server.log")
    port = record.free_port()
    passes = []

    def fake_execute_all(*, offline=True, save=True, env=None):
        url = (env or {}).get("TYPESAFE_ENDPOINT")
        up = None
        if url:
            with TypeSafeClient(api_key="local", base_url=url, model=MODEL, compression=False, timeout=10) as c:
                up = c.system_one(state="x", questions={"relation": QUESTION}).choices["relation"].choice
        else:
            with pytest.raises(httpx.ConnectError):
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
        passes.append({"offline": offline, "save": save, "env": env, "answer": up})
        return []

    monkeypatch.setattr(notebook, "execute_all", fake_execute_all)
    record.record(ctx, port=port, server_command=[sys.executable, "-c", FAKE_SERVER, str(port)], log=lambda m: None)
    live, offline = passes
    assert live["offline"] is False and live["save"] is False and live["answer"] == "supports"
    assert live["env"]["OPENAI_BASE_URL"] == f"http://127.0.0.1:{port}/v1"
    assert live["env"]["OPENAI_API_KEY"] == "" and live["env"]["TYPESAFE_API_KEY"] == ""
    assert offline == {"offline": True, "save": True, "env": None, "answer": None}
    assert "stopped cleanly" in record.LOG.read_text()


def test_record_reports_a_judge_that_dies_at_start(monkeypatch, tmp_path, ctx):
    from citecheck import notebook, record
    monkeypatch.setattr(record, "LOG", tmp_path / "judge-server.log")
    monkeypatch.setattr(notebook, "execute_all", lambda **kw: pytest.fail("notebooks must not run"))
    with pytest.raises(OSError, match="exited with code 3"):
        record.record(ctx, server_command=[sys.executable, "-c", "print('model missing'); raise SystemExit(3)"],
                      log=lambda m: None)


# ---------------------------------------------------------------- hostile clients

import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tracemalloc  # noqa: E402

SYSTEMONE_HEAD = (b"POST /v1/systemone HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 200\r\n\r\n")


def answer_on(sock: socket.socket) -> bytes:
    """Everything the server sends on this connection until it closes it."""
    sock.settimeout(30)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_zstd_bomb_is_413_without_being_inflated(monkeypatch):
    """A body is capped on its decompressed bytes as they inflate: 64 MiB of zstd-packed JSON against 1 MiB."""
    monkeypatch.setattr(server_module, "MAX_BODY", 1024 * 1024)
    bomb = zstandard.ZstdCompressor(level=3).compress(b'{"state": "' + b"a" * (64 * 1024 * 1024) + b'"}')
    assert len(bomb) < 64 * 1024
    with running(FakeModel()) as server:
        tracemalloc.start()
        try:
            response = httpx.post(f"{server.url}/v1/systemone", content=bomb,
                                  headers={"Content-Encoding": "zstd", "Content-Type": "application/json"})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert response.status_code == 413 and "decompressed" in response.json()["detail"]["message"]
    assert peak < 16 * 1024 * 1024, f"{peak:,} bytes allocated for a 1 MiB body limit"


@pytest.mark.parametrize("sent, what", [(b"POST /v1/systemone HTTP/1.1\r\nHost: t\r\nContent-Ty", "head"),
                                        (b"", "head"), (SYSTEMONE_HEAD + b'{"state": ', "body")],
                         ids=["half-head", "silent", "half-body"])
def test_a_stalled_request_gets_408_and_is_closed(sent, what):
    with running(FakeModel(), header_timeout=0.3, body_timeout=0.3) as server:
        with socket.create_connection(server.server_address[:2]) as sock:
            sock.sendall(sent)
            answer = answer_on(sock)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert f"request {what} did not arrive".encode() in answer


def test_connections_past_the_limit_are_503_not_another_thread():
    with running(FakeModel(), header_timeout=600, max_connections=2) as server:
        held = [socket.create_connection(server.server_address[:2]) for _ in range(2)]
        for sock in held:
            sock.sendall(b"POST /v1/systemone HTTP/1.1\r\n")
        try:
            with socket.create_connection(server.server_address[:2]) as extra:
                busy = answer_on(extra)
        finally:
            for sock in held:
                sock.close()
        # the held ones are gone (closed by the client): a slot is free again
        assert httpx.get(f"{server.url}/health").status_code == 200
    assert busy.startswith(b"HTTP/1.1 503 ") and b"too many connections" in busy


HELD_SERVER = """
import sys, threading
from citecheck.judge.local_judge import server as server_module
class Fake:
    name = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    lock = threading.Lock()
server = server_module.make_server(Fake(), "127.0.0.1", 0, header_timeout=600, body_timeout=600)
print(server.server_address[1], flush=True)
server_module.serve_until_signalled(server)
print("stopped cleanly", flush=True)
"""


def test_sigterm_stops_the_server_while_stalled_connections_are_held():
    """Held connections (half a head, half a body; deadlines 600 s) do not keep a stopped server alive."""
    proc = subprocess.Popen([sys.executable, "-c", HELD_SERVER], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    held = []
    try:
        port = int(proc.stdout.readline())
        for sent in [b"POST /v1/systemone HTTP/1.1\r\nHost: t\r\n", SYSTEMONE_HEAD + b'{"st'] * 10:
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(sent)
            held.append(sock)
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200    # all 20 are being served
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        assert (code, proc.stdout.read().strip()) == (0, "stopped cleanly")
    finally:
        for sock in held:
            sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
