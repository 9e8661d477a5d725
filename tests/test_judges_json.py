"""The JSON judge over its three providers, each against a stand-in on 127.0.0.1."""
import json
import re

import pytest
from standins.judge import MODEL, free_port, judge_standin, silent_server, verdict_json

from citecheck import config
from citecheck.cache import Cache, CacheCorrupted, CacheMiss, request_key
from citecheck.config import Secrets, Settings
from citecheck.context import RunContext
from citecheck.judge import judges
from citecheck.verdict.guard import guard

KEY = "sk-test-secret-0123456789"
CLAIM = "Water boils at 100 °C at sea level."
PASSAGES = ["Pure water boils at 100 °C at sea level.", "Denver is a mile high."]
PROVIDERS = ["openai", "anthropic", "ollama"]


@pytest.fixture(scope="module")
def server():
    with judge_standin() as standin:
        yield standin


class Judge:
    """The stand-in as one test sees it: script fields, recorded requests (as JSON), the settings the
    judge runs with (every provider pointed at the stand-in, keys set) and a cache."""

    def __init__(self, server, cache):
        self.server, self.url, self.cache = server, server.url, cache
        self.settings = Settings(openai_base_url=server.url + "/v1", anthropic_base_url=server.url,
                                 ollama_host=server.url,
                                 secrets=Secrets({"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}))

    def change(self, **settings):
        self.settings = self.settings.replace(**settings)

    def pointed_at(self, url: str):
        self.change(openai_base_url=url + "/v1", anthropic_base_url=url, ollama_host=url)

    def ctx(self, provider: str = "openai") -> RunContext:
        model = config.DEFAULT_JUDGE_MODELS[provider]
        return RunContext.build(self.settings.replace(judge_provider=provider, judge_model=model), self.cache)

    def __getattr__(self, name):
        return getattr(self.server.script, name)

    def __setattr__(self, name, value):
        if name in ("content", "status", "raw", "failures"):
            setattr(self.server.script, name, value)
        else:
            super().__setattr__(name, value)

    @property
    def requests(self):
        return [{"path": r.path, "headers": r.headers, "json": r.json()} for r in self.server.requests]


@pytest.fixture(autouse=True)
def slept(monkeypatch):
    """The retry delays the judge asked for (no real sleeping in tests)."""
    delays = []
    monkeypatch.setattr(judges, "_sleep", delays.append)
    return delays


@pytest.fixture
def judge(server, tmp_path):
    server.script.reset()
    server.requests.clear()
    return Judge(server, Cache(tmp_path / "cache.json"))


def ask(judge, provider, monkeypatch=None):
    return judges.json_judge(CLAIM, PASSAGES, judge.ctx(provider))


def test_openai_request_shape(judge, monkeypatch):
    ask(judge, "openai", monkeypatch)
    (request,) = judge.requests
    body = request["json"]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert body["model"] == config.LOCAL_MODEL and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "verdict", "strict": True, "schema": judges.JSON_SCHEMA}}
    assert body["messages"] == judges.json_messages(CLAIM, PASSAGES)


def test_the_prompt_separates_the_passages_and_states_the_contract():
    system, user = judges.json_messages(CLAIM, PASSAGES)
    assert system["role"] == "system"
    assert "Copy the quote verbatim, do not add words" in system["content"]
    assert "if you cannot, answer not_found with a null quote" in system["content"]
    assert user["content"] == (f"Claim: {CLAIM}\n\nPassages:\n--- passage 1 ---\n{PASSAGES[0]}\n\n"
                               f"--- passage 2 ---\n{PASSAGES[1]}")


def test_no_bracketed_marker_sits_in_the_text_a_quote_is_copied_from():
    """Each passage is on lines of its own: a line of the prompt holding passage text holds nothing else."""
    _, user = judges.json_messages(CLAIM, PASSAGES)
    assert not re.search(r"\[\d+\]", user["content"])
    lines = user["content"].splitlines()
    assert all(passage in lines for passage in PASSAGES)


def test_a_quote_copied_from_the_second_passage_stands_and_the_guard_stays_exact(judge):
    judge.content = verdict_json("supported", PASSAGES[1], 0.7)
    kept = guard(judges.json_judge(CLAIM, PASSAGES, judge.ctx("openai")), PASSAGES)
    assert kept["label"] == "supported" and kept["evidence_quote"] == PASSAGES[1] and kept["reason"] is None
    copied_marker = {"label": "supported", "evidence_quote": "--- passage 2 --- " + PASSAGES[1], "confidence": 0.7}
    kept = guard(copied_marker, PASSAGES)
    assert kept["label"] == "not_found" and kept["reason"] == "evidence_quote_not_in_source"


def test_schema_is_strict():
    schema = judges.JSON_SCHEMA
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"label", "evidence_quote", "confidence"}
    assert schema["properties"]["label"]["enum"] == ["supported", "contradicted", "not_found"]


def test_anthropic_request_shape(judge, monkeypatch):
    ask(judge, "anthropic", monkeypatch)
    (request,) = judge.requests
    body = request["json"]
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == KEY and request["headers"]["anthropic-version"] == "2023-06-01"
    assert body["model"] == "claude-3-5-haiku-latest" and body["temperature"] == 0
    messages = judges.json_messages(CLAIM, PASSAGES)
    assert body["system"] == messages[0]["content"] and body["messages"] == messages[1:]
    assert body["tools"] == [{"name": "record_verdict", "description": "Record the verdict on the claim.",
                              "input_schema": judges.JSON_SCHEMA}]
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}


def test_ollama_request_shape(judge, monkeypatch):
    ask(judge, "ollama", monkeypatch)
    (request,) = judge.requests
    body = request["json"]
    assert request["path"] == "/api/chat"
    assert body["format"] == judges.JSON_SCHEMA and body["stream"] is False
    assert body["messages"] == judges.json_messages(CLAIM, PASSAGES)
    assert body["model"] == "llama3.1"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_valid_answer_is_parsed_and_cached_with_the_answering_model(judge, monkeypatch, provider):
    judge.content = verdict_json("supported", PASSAGES[0], 0.93)
    out = ask(judge, provider, monkeypatch)
    assert out["label"] == "supported" and out["evidence_quote"] == PASSAGES[0]
    assert out["confidence"] == 0.93 and out["reason"] is None
    assert ask(judge, provider, monkeypatch) == out and len(judge.requests) == 1   # replayed
    (entry,) = judge.cache.entries().values()
    assert entry["model"] == MODEL and entry["function"] == f"judge.json/{provider}"
    assert KEY.encode() not in judge.cache.store.path.read_bytes()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("content, why", [
    ("I think it is supported.", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    (verdict_json("verified", None, 0.5), "label 'verified'"),
    (verdict_json("supported", None, 1.5), "confidence is 1.5"),
    (json.dumps({"label": "supported", "evidence_quote": 3, "confidence": 0.5}), "evidence_quote"),
    (json.dumps({"label": "supported", "evidence_quote": None, "confidence": True}), "confidence is True"),
    ("", "not JSON"),
])
def test_malformed_output_becomes_not_found_with_a_reason(judge, monkeypatch, provider, content, why):
    judge.content = content
    out = ask(judge, provider, monkeypatch)
    assert out["label"] == "not_found" and out["evidence_quote"] is None and out["confidence"] == 0.0
    assert out["reason"].startswith("judge_output_invalid") and why in out["reason"]
    assert len(judge.cache) == 0 and ask(judge, provider, monkeypatch) == out      # never cached: asked again
    assert len(judge.requests) == 2


def test_fenced_json_is_accepted(judge, monkeypatch):
    judge.content = "```json\n" + verdict_json("contradicted", PASSAGES[0], 0.8) + "\n```"
    assert ask(judge, "openai", monkeypatch)["label"] == "contradicted"


def test_openai_answer_without_choices_is_invalid_not_a_crash(judge, monkeypatch):
    judge.raw = json.dumps({"model": MODEL, "choices": []}).encode()
    assert ask(judge, "openai", monkeypatch)["reason"].startswith("judge_output_invalid")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status, attempts", [(401, 1), (404, 1), (429, 3), (500, 3), (503, 3)])
def test_http_errors_raise_judge_unavailable_naming_the_endpoint(judge, monkeypatch, provider, status,
                                                                 attempts):
    judge.status = status
    with pytest.raises(judges.JudgeUnavailable) as err:
        ask(judge, provider, monkeypatch)
    message = str(err.value)
    assert f"HTTP {status}" in message and judge.url in message and KEY not in message
    assert len(judge.requests) == attempts and (attempts == 1) == ("attempts" not in message)
    assert len(judge.cache) == 0    # a failure is never recorded


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_raises_judge_unavailable_after_the_retries(judge, monkeypatch, provider, slept):
    judge.change(judge_timeout=0.3, judge_retries=1)
    with silent_server() as silent:
        judge.pointed_at(silent)
        with pytest.raises(judges.JudgeUnavailable) as err:
            ask(judge, provider, monkeypatch)
    message = str(err.value)
    assert "timed out after 0.3 s (JUDGE_TIMEOUT) on each of 2 attempts (JUDGE_RETRIES=1" in message
    assert silent in message and KEY not in message and "did not answer" not in message
    assert slept == [judges.RETRY_BACKOFF]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unreachable_raises_judge_unavailable(judge, monkeypatch, provider):
    dead = f"http://127.0.0.1:{free_port()}"
    judge.pointed_at(dead)
    with pytest.raises(judges.JudgeUnavailable) as err:
        ask(judge, provider, monkeypatch)
    assert dead in str(err.value) and KEY not in str(err.value)


def test_body_that_is_not_json_raises_judge_unavailable(judge, monkeypatch):
    judge.raw = b"<html>gateway</html>"
    with pytest.raises(judges.JudgeUnavailable, match="not JSON"):
        ask(judge, "openai", monkeypatch)


def test_offline_replays_and_a_miss_names_the_call(judge, monkeypatch):
    first = ask(judge, "openai", monkeypatch)
    judge.cache = Cache(judge.cache.path, offline=True)
    assert ask(judge, "openai", monkeypatch) == first
    with pytest.raises(CacheMiss, match="judge.json/openai.*OPENAI_BASE_URL"):
        judges.json_judge("another claim", PASSAGES, judge.ctx("openai"))
    assert len(judge.requests) == 1


def test_changed_passages_miss_the_cache(judge, monkeypatch):
    ask(judge, "openai", monkeypatch)
    judges.json_judge(CLAIM, PASSAGES[:1], judge.ctx("openai"))
    assert len(judge.requests) == 2


def test_openai_needs_a_key_only_for_the_hosted_endpoint(judge, monkeypatch):
    judge.change(secrets=Secrets({}))
    ask(judge, "openai", monkeypatch)
    assert judge.requests[0]["headers"]["Authorization"] == "Bearer local"
    judge.change(openai_base_url=config.DEFAULTS["OPENAI_BASE_URL"])
    with pytest.raises(config.MissingSetting, match="OPENAI_API_KEY"):
        judges.json_judge("other", PASSAGES, judge.ctx("openai"))


# ---------------------------------------------------------------- retries

@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_and_5xx_are_retried_with_backoff_honouring_retry_after(judge, monkeypatch, provider, slept):
    judge.failures = [(429, {"Retry-After": "0"}), (503, {})]
    judge.content = verdict_json("supported", PASSAGES[0], 0.9)
    out = ask(judge, provider, monkeypatch)
    assert out["label"] == "supported" and len(judge.requests) == 3
    assert slept == [0.0, 2 * judges.RETRY_BACKOFF]            # Retry-After first, then the doubled backoff
    assert len(judge.cache) == 1


def test_retry_after_as_an_http_date_and_one_too_long_to_wait_for(judge, monkeypatch, slept):
    import email.utils
    import time
    judge.failures = [(503, {"Retry-After": email.utils.formatdate(time.time() + 3, usegmt=True)})]
    ask(judge, "openai", monkeypatch)
    assert 0 < slept[0] <= 3
    judge.failures = [(429, {"Retry-After": "3600"})]
    with pytest.raises(judges.JudgeUnavailable, match="asked to retry after 3600 s; gave up"):
        judges.json_judge("another claim", PASSAGES, judge.ctx("openai"))


def test_no_retries_when_judge_retries_is_zero(judge, monkeypatch):
    judge.change(judge_retries=0)
    judge.failures = [(503, {})]
    with pytest.raises(judges.JudgeUnavailable, match="on each of 1 attempts"):
        ask(judge, "openai", monkeypatch)
    assert len(judge.requests) == 1


# ---------------------------------------------------------------- envelopes

ENVELOPES = [
    ("openai", {"model": MODEL,
                "choices": [{"message": {"role": "assistant", "content": {"label": "supported"}}}]},
     "content is {'label'"),
    ("openai", {"model": MODEL, "choices": [{"message": {"role": "assistant"}}]}, "content is None"),
    ("openai", {"model": MODEL, "choices": [{"message": {"content": None, "refusal": "I can't help"}}]},
     "refused"),
    ("openai", {"model": MODEL, "choices": [{"message": "text"}]}, "message is 'text'"),
    ("openai", {"model": MODEL, "choices": "none"}, "choices is 'none'"),
    ("openai", [], "response body is [], not an object"),
    ("anthropic", {"model": MODEL, "content": None}, "content is None"),
    ("anthropic", {"model": MODEL, "content": [{"type": "tool_use", "input": ["x"]}]}, "input is ['x']"),
    ("anthropic", {"model": MODEL, "content": [{"type": "image"}]}, "no tool call and no text"),
    ("anthropic", [], "not an object"),
    ("ollama", {"model": MODEL, "message": "a string"}, "message is 'a string'"),
    ("ollama", {"model": MODEL, "message": {"content": 7}}, "content is 7"),
    ("ollama", "plain", "response body is 'plain'"),
]


@pytest.mark.parametrize("provider, body, why", ENVELOPES)
def test_an_off_contract_envelope_is_invalid_not_a_crash_and_not_cached(judge, monkeypatch, provider, body,
                                                                        why):
    judge.raw = json.dumps(body).encode()
    for _ in range(2):                             # a re-run is the same labelled answer, never a traceback
        out = ask(judge, provider, monkeypatch)
        assert out["label"] == "not_found" and out["reason"].startswith("judge_output_invalid")
        assert why in out["reason"]
    assert len(judge.cache) == 0 and len(judge.requests) == 2


def test_a_lone_surrogate_in_the_evidence_quote_is_off_contract(judge, monkeypatch):
    judge.content = '{"label": "supported", "evidence_quote": "\\ud800 water", "confidence": 0.9}'
    assert "evidence_quote" in ask(judge, "openai", monkeypatch)["reason"]


def test_a_malformed_entry_an_old_version_cached_is_reported_by_key_and_path(judge, monkeypatch):
    request = {"messages": judges.json_messages(CLAIM, PASSAGES), "schema": judges.JSON_SCHEMA}
    key = request_key("judge.json/openai", config.LOCAL_MODEL, request)
    judge.cache.put(key, {"function": "judge.json/openai", "model": MODEL,
                          "answer": {"content": {"label": "x"}}, "usage": None, "seconds": 0.0, "recorded": "2026-11-30"})
    with pytest.raises(CacheCorrupted) as err:
        ask(judge, "openai", monkeypatch)
    assert key in str(err.value) and "cache.json" in str(err.value) and not judge.requests


# ---------------------------------------------------------------- which model

@pytest.mark.parametrize("environ, model", [
    ({}, config.LOCAL_MODEL),
    ({"CITECHECK_OFFLINE": "1"}, config.LOCAL_MODEL),
    ({"OPENAI_API_KEY": "k"}, "gpt-4o-mini"),
    ({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:8765/v1"}, config.LOCAL_MODEL),
    ({"OPENAI_API_KEY": "k", "JUDGE_MODEL": "gpt-4.1"}, "gpt-4.1"),
    ({"ANTHROPIC_API_KEY": "k", "JUDGE_PROVIDER": "anthropic"}, "claude-3-5-haiku-latest"),
])
def test_settings_choose_the_json_model_from_what_is_set(environ, model):
    assert Settings.from_env(environ).judge_model == model
