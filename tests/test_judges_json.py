"""The JSON judge over its three providers, each against a stand-in on 127.0.0.1."""
import json

import pytest
from standins.judge import MODEL, free_port, judge_standin, silent_server, verdict_json

from citecheck import config, judges
from citecheck.cache import Cache, CacheMiss
from citecheck.config import Secrets, Settings
from citecheck.context import RunContext

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
        if name in ("content", "status", "raw"):
            setattr(self.server.script, name, value)
        else:
            super().__setattr__(name, value)

    @property
    def requests(self):
        return [{"path": r.path, "headers": r.headers, "json": r.json()} for r in self.server.requests]


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


def test_the_prompt_numbers_the_passages_and_states_the_contract():
    system, user = judges.json_messages(CLAIM, PASSAGES)
    assert system["role"] == "system" and "copied exactly from the passages" in system["content"]
    assert user["content"] == (f"Claim: {CLAIM}\n\nPassages:\n[1] {PASSAGES[0]}\n\n[2] {PASSAGES[1]}")


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
    (verdict_json("supported", None, 1.5), "confidence 1.5"),
    (json.dumps({"label": "supported", "evidence_quote": 3, "confidence": 0.5}), "evidence_quote"),
    (json.dumps({"label": "supported", "evidence_quote": None, "confidence": True}), "confidence True"),
    ("", "not JSON"),
])
def test_malformed_output_becomes_not_found_with_a_reason(judge, monkeypatch, provider, content, why):
    judge.content = content
    out = ask(judge, provider, monkeypatch)
    assert out["label"] == "not_found" and out["evidence_quote"] is None and out["confidence"] == 0.0
    assert out["reason"].startswith("judge_output_invalid") and why in out["reason"]


def test_fenced_json_is_accepted(judge, monkeypatch):
    judge.content = "```json\n" + verdict_json("contradicted", PASSAGES[0], 0.8) + "\n```"
    assert ask(judge, "openai", monkeypatch)["label"] == "contradicted"


def test_openai_answer_without_choices_is_invalid_not_a_crash(judge, monkeypatch):
    judge.raw = json.dumps({"model": MODEL, "choices": []}).encode()
    assert ask(judge, "openai", monkeypatch)["reason"].startswith("judge_output_invalid")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [401, 500, 503])
def test_http_errors_raise_judge_unavailable_naming_the_endpoint(judge, monkeypatch, provider, status):
    judge.status = status
    with pytest.raises(judges.JudgeUnavailable) as err:
        ask(judge, provider, monkeypatch)
    message = str(err.value)
    assert f"HTTP {status}" in message and judge.url in message and KEY not in message
    assert len(judge.cache) == 0    # a failure is never recorded


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_raises_judge_unavailable(judge, monkeypatch, provider):
    judge.change(judge_timeout=0.3)
    with silent_server() as silent:
        judge.pointed_at(silent)
        with pytest.raises(judges.JudgeUnavailable, match="did not answer .ReadTimeout") as err:
            ask(judge, provider, monkeypatch)
    assert silent in str(err.value) and KEY not in str(err.value)


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
