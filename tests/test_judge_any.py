"""Every method on every configured judge: with only OpenAI, only Anthropic or only Ollama
configured, pooled, decompose, qa, choice and json all give verdicts through verify and check (their Choice
questions answered as JSON by the provider, `choice_json`); OpenAI's logprobs give the probabilities where it
returns them, the answer's confidence elsewhere; a Choice-only judge falls back with one stderr line; the
typesafe route's cache keys are unchanged; no judge at all names every variable. Stand-ins on 127.0.0.1
behind the real clients; contexts read from a mapping as an entry point reads the environment."""
import json
import math
import os
import subprocess
import sys

import pytest
from standins.jev import jev_standin
from standins.judge import (
    MODEL,
    answer_tokens,
    by_kind,
    choice_of,
    choice_reply,
    judge_standin,
    kind_of,
    verdict_json,
)

from citecheck import check, config, verify
from citecheck.cache import request_key
from citecheck.config import MissingSetting, Settings
from citecheck.context import RunContext
from citecheck.judge import choice_json, judges, methods
from citecheck.judge.methods import pooled
from citecheck.paths import ROOT
from citecheck.source import sources
from citecheck.vocabulary import JUDGE_UNAVAILABLE

CLAIM = "Water boils at 100 °C at sea level."
SUPPORTING = "At sea level, pure water boils at 100 °C."
PAGE = ("# Boiling\n\n"
        f"{SUPPORTING} Salt barely changes that. The kettle clicks off.\n\n"
        "Denver is a mile high. Water there boils near 95 °C. Mountain huts are colder still.")
SAYS_IT = "boils at 100 °C"
METHODS = ("pooled", "decompose", "qa", "choice", "json")
PROVIDERS = ("openai", "anthropic", "ollama")


def capable_choice(body: dict) -> str:
    """A strong judge's Choice answer: yes / same / supports where the shown text says the claim."""
    state, options = choice_of(body)
    said = SAYS_IT in " ".join(str(v) for k, v in state.items() if k != "claim") or state.get("answer_2") == "100 °C"
    return choice_reply(options[0] if said else options[-1], 0.9)


CAPABLE = by_kind(
    verdict=lambda body: verdict_json("supported", SUPPORTING, 0.9),
    choice=capable_choice,
    facts=lambda body: json.dumps({"facts": [CLAIM]}),
    question=lambda body: json.dumps({"question": "At what temperature does water boil at sea level?",
                                      "answer": "100 °C"}),
    answer=lambda body: json.dumps({"answer": "100 °C"}),
)


def only(provider: str, url: str) -> dict:
    """The environment of a user with this one JSON provider and nothing else."""
    return {"openai": {"OPENAI_BASE_URL": url + "/v1"},
            "anthropic": {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-standin-0001"},
            "ollama": {"OLLAMA_HOST": url}}[provider]


def context(tmp_path, environ: dict, method: str) -> RunContext:
    environ = {**environ, "JUDGE_METHOD": method, "CITECHECK_CACHE": str(tmp_path / f"{method}.json")}
    return RunContext.build(Settings.from_env(environ))


@pytest.fixture
def capable():
    with judge_standin() as server:
        server.script.content = CAPABLE
        yield server


@pytest.fixture
def document(tmp_path):
    (tmp_path / "notes.md").write_text(PAGE + "\n", encoding="utf-8")
    return sources.load(tmp_path / "notes.md", "markdown")


@pytest.fixture(autouse=True)
def fresh_fallback_notes(monkeypatch):
    monkeypatch.setattr(methods, "_said", set())


# ---------------------------------------------------------------- the settings

@pytest.mark.parametrize(("environ", "via", "provider"), [
    ({}, "typesafe", "openai"),                                             # no key: replays the cache
    ({"CITECHECK_OFFLINE": "1"}, "typesafe", "openai"),
    ({"OPENAI_API_KEY": "k"}, "openai", "openai"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:8765/v1"}, "openai", "openai"),
    ({"ANTHROPIC_API_KEY": "k"}, "anthropic", "anthropic"),
    ({"OLLAMA_HOST": "http://127.0.0.1:11434"}, "ollama", "ollama"),
    ({"ANTHROPIC_API_KEY": "k", "OLLAMA_HOST": "http://h"}, "anthropic", "anthropic"),
    ({"OLLAMA_HOST": "http://h", "JUDGE_PROVIDER": "anthropic"}, "anthropic", "anthropic"),   # explicit wins
    ({"TYPESAFE_API_KEY": "k", "OPENAI_API_KEY": "k"}, "typesafe", "openai"),
    ({"TYPESAFE_ENDPOINT": "http://127.0.0.1:8765", "OPENAI_BASE_URL": "http://127.0.0.1:8765/v1"},
     "typesafe", "openai"),                                                 # what `record` sets
])
def test_choice_questions_go_to_typesafe_when_configured_else_the_configured_json_provider(environ, via, provider):
    settings = Settings.from_env(environ)
    assert (settings.choice_via, settings.judge_provider) == (via, provider)
    assert settings.choice_model == (settings.typesafe_model if via == "typesafe" else settings.judge_model)
    assert settings.only_choice is False


def test_a_choice_endpoint_alone_is_only_choice():
    assert Settings.from_env({"TYPESAFE_ENDPOINT": "http://127.0.0.1:8765"}).only_choice
    assert Settings.from_env({"TYPESAFE_API_KEY": "k"}).only_choice


# ---------------------------------------------------------------- every method, every provider, both flows

@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_method_gives_verdicts_with_only_one_json_provider(provider, capable, document, tmp_path, capsys):
    citation = {"id": "A1", "claim": CLAIM, "quote": SUPPORTING, "section": "Boiling"}
    for method in METHODS:
        ctx = context(tmp_path, only(provider, capable.url), method)
        trace = verify.trace_text(CLAIM, PAGE, ctx)
        assert (trace.row["label"], trace.row["reason"]) == ("supported", None), (method, trace.judged)
        assert trace.judged["method"] == method and trace.judged["model"] == MODEL       # what answered
        unavailable = []
        (row,) = check.check_citations(document, [citation], ctx, unavailable=unavailable)
        assert (row["relation"], row["verdict"], unavailable) == ("supports", "verified", []), method
    asked = [r.json() for r in capable.posts]
    assert {kind_of(body) for body in asked} == {"verdict", "choice", "facts", "question", "answer"}
    assert not any("logprobs" in body for body in asked if provider != "openai")
    assert capsys.readouterr().err == ""                          # nothing fell back


def test_a_step_with_several_questions_makes_one_call_each(capable, tmp_path):
    ctx = context(tmp_path, only("ollama", capable.url), "pooled")
    questions = {"a": pooled.question(), "b": judges.choice_question()}
    state = {"claim": CLAIM, "text": SUPPORTING}
    answers = choice_json.choice_step(state, questions, ctx)
    assert [a["choice"] for a in answers.values()] == ["yes", "supports"] and len(capable.requests) == 2
    assert set(answers["a"]) == {"type", "choice", "confidence", "probabilities", "readout"}
    keys = choice_json.request_keys(state, questions, ctx.settings)
    assert set(keys.values()) <= set(ctx.cache.entries())


# ---------------------------------------------------------------- probabilities: logprobs or confidence

def test_openai_logprobs_give_the_probabilities(capable, tmp_path):
    capable.script.logprobs = lambda body, content: (
        answer_tokens(content, {"yes": 0.6, "unknown": 0.25, "un": 0.05, "no": 0.05})
        if kind_of(body) == "choice" else None)
    ctx = context(tmp_path, only("openai", capable.url), "pooled")
    trace = verify.trace_text(CLAIM, PAGE, ctx)
    asked = [r.json() for r in capable.posts]
    assert all(body["logprobs"] is True and body["top_logprobs"] == 5 for body in asked)
    answer = trace.judged["steps"][0]["answer"][pooled.NAME]
    assert answer["readout"] == "logprobs"
    assert answer["probabilities"] == pytest.approx({"yes": 0.6 / 0.95, "no": 0.05 / 0.95, "unknown": 0.3 / 0.95})
    assert trace.row["label"] == "supported"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_without_logprobs_the_answer_s_confidence_gives_them(provider, capable, tmp_path):
    ctx = context(tmp_path, only(provider, capable.url), "pooled")
    trace = verify.trace_text(CLAIM, PAGE, ctx)
    answer = trace.judged["steps"][0]["answer"][pooled.NAME]
    assert answer["readout"] == "confidence"
    assert answer["probabilities"] == pytest.approx({"yes": 0.9, "no": 0.05, "unknown": 0.05})
    assert answer["confidence"] == pytest.approx((0.9 - 1 / 3) / (1 - 1 / 3))     # the reference formula


def test_logprobs_readout_sums_prefix_tokens_and_falls_back_when_they_name_no_option():
    options = ("supports", "contradicts", "says_nothing")
    content = '{"answer": "supports", "confidence": 0.8}'
    tokens = [{"token": '{"answer":', "logprob": 0.0, "top_logprobs": []},
              {"token": ' "sup', "logprob": -0.5,
               "top_logprobs": [{"token": ' "sup', "logprob": -0.5}, {"token": ' "s', "logprob": -2.0},
                                {"token": ' "contr', "logprob": -1.5}, {"token": ' "x', "logprob": -3.0}]},
              {"token": 'ports", "confidence": 0.8}', "logprob": 0.0, "top_logprobs": []}]
    got = choice_json.read_answer(content, tokens, options)
    s, sup, con = math.exp(-2.0), math.exp(-0.5), math.exp(-1.5)
    total = sup + s + con + s
    assert got["readout"] == "logprobs" and got["choice"] == "supports"
    assert got["probabilities"] == pytest.approx({"supports": (sup + s) / total, "contradicts": con / total,
                                                  "says_nothing": s / total})
    nothing = [{**t, "top_logprobs": [{"token": "x", "logprob": -0.1}]} for t in tokens]
    fell_back = choice_json.read_answer(content, nothing, options)
    assert fell_back["readout"] == "confidence"
    assert fell_back["probabilities"] == pytest.approx({"supports": 0.8, "contradicts": 0.1, "says_nothing": 0.1})
    low = choice_json.read_answer('{"answer": "says_nothing", "confidence": 0.2}', None, options)
    assert low["probabilities"] == pytest.approx(dict.fromkeys(options, 1 / 3))     # max(confidence, 1/n)


def test_the_messages_and_schema_are_the_interface(tmp_path):
    question = judges.choice_question()
    state = {"claim": CLAIM, "source": "é"}
    system, user = choice_json.messages(state, question)
    assert system["content"] == (f"{judges.CHOICE_INSTRUCTIONS}\n"
                                 + "".join(f"- {o}: {c}\n" for o, c in judges.CHOICE_CRITERIA.items())
                                 + 'Reply with JSON only: {"answer": <one option>, "confidence": <0-1>}')
    assert user["content"] == json.dumps(state, ensure_ascii=False, indent=1) and json.loads(user["content"]) == state
    assert choice_json.schema(question.criteria)["properties"]["answer"]["enum"] == list(judges.CHOICE_CRITERIA)


@pytest.mark.parametrize("reply", ['{"answer": "maybe", "confidence": 0.9}', '{"answer": "yes"}', "yes",
                                   '{"answer": "yes", "confidence": 1.5}'])
def test_an_off_contract_choice_is_judge_output_invalid_and_never_cached(reply, tmp_path):
    with judge_standin() as server:
        server.script.content = reply
        ctx = context(tmp_path, only("ollama", server.url), "pooled")
        trace = verify.trace_text(CLAIM, PAGE, ctx)
    assert trace.judged["reason"].startswith("judge_output_invalid: step 1: choice:")
    assert trace.row["label"] == "not_found" and trace.judged["method"] == "pooled"
    assert not any(k for k, e in ctx.cache.entries().items() if e["function"] == "judge.choice/ollama")


# ---------------------------------------------------------------- fallbacks and the typesafe route

@pytest.mark.parametrize(("method", "instead"), [("decompose", "pooled"), ("qa", "pooled"), ("json", "choice")])
def test_a_choice_only_judge_falls_back_saying_so_once(method, instead, document, tmp_path, capsys):
    citations = [{"id": f"A{i}", "claim": CLAIM, "quote": SUPPORTING, "section": "Boiling"} for i in range(3)]
    yes = {"yes": 0.9, "no": 0.05, "unknown": 0.05, "supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}
    with jev_standin(yes) as jev:
        ctx = context(tmp_path, {"TYPESAFE_ENDPOINT": jev.url}, method)
        traces = [verify.trace_text(CLAIM, PAGE, ctx) for _ in range(3)]
        rows = check.check_citations(document, citations, ctx)
    assert capsys.readouterr().err == methods.fallback_line(method, instead) + "\n"
    assert {t.judged["method"] for t in traces} == {instead}
    assert [t.row["label"] for t in traces] == ["supported"] * 3
    assert [r["verdict"] for r in rows] == ["verified"] * 3
    assert methods.relation_judge(CLAIM, PAGE, ctx)["method"] == instead
    line = methods.fallback_line(method, instead)
    assert all(name in line for name in (method, instead, "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST"))


def test_the_typesafe_route_keeps_its_cache_keys(tmp_path):
    yes = {"yes": 0.9, "no": 0.05, "unknown": 0.05}
    with jev_standin(yes) as jev:
        ctx = context(tmp_path, {"TYPESAFE_ENDPOINT": jev.url, "OPENAI_BASE_URL": jev.url + "/v1"}, "pooled")
        trace = verify.trace_text(CLAIM, PAGE, ctx)
    first = trace.judged["steps"][0]
    state = {"claim": CLAIM, "text": first["asked"]}
    key = request_key("typesafe.system_one", ctx.settings.typesafe_model,
                      judges.step_request(state, {pooled.NAME: pooled.question()}))
    assert first["key"] == key and ctx.cache.entries()[key]["function"] == "typesafe.system_one"
    asked = {e["function"] for e in ctx.cache.entries().values()} - {"judge.models/typesafe"}   # and its list
    assert asked == {"typesafe.system_one"}


def test_the_json_route_records_under_the_key_it_names(capable, tmp_path):
    ctx = context(tmp_path, only("anthropic", capable.url), "choice")
    trace = verify.trace_text(CLAIM, PAGE, ctx)
    (step,) = trace.judged["steps"]
    entry = ctx.cache.entries()[step["key"]]
    assert (entry["function"], entry["model"]) == ("judge.choice/anthropic", "standin-judge-1")


def test_no_judge_at_all_names_every_variable_and_never_a_value(document, tmp_path):
    citation = {"id": "A1", "claim": CLAIM, "quote": SUPPORTING, "section": "Boiling"}
    unavailable = []
    ctx = context(tmp_path, {"CRAWLBASE_TOKEN": "crawl-SECRET-0001"}, "pooled")
    (row,) = check.check_citations(document, [citation], ctx, unavailable=unavailable)
    assert row["verdict"] == JUDGE_UNAVAILABLE
    message = unavailable[0][1]
    for name in ("TYPESAFE_API_KEY", "TYPESAFE_ENDPOINT", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST"):
        assert name in message
    assert "SECRET" not in message
    with pytest.raises(MissingSetting, match="OLLAMA_HOST"):
        verify.trace_text(CLAIM, PAGE, ctx)


# ---------------------------------------------------------------- the CLI, as a new OpenAI-only user runs it

def test_verify_on_the_command_line_with_only_an_openai_base_url(capable, fixture_site, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in config.SECRETS and k not in config.DEFAULTS}
    env.update({"PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": capable.url + "/v1", "CITECHECK_ALLOW_PRIVATE": "1",
                "CITECHECK_CACHE": str(tmp_path / "cli.json")})
    done = subprocess.run([sys.executable, "-m", "citecheck", "verify", "--claim", CLAIM,
                           "--url", fixture_site.url("/articles/boiling-point")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["overall"] == "supported" and out["citations"][0]["reason"] is None
    asked = [r.json() for r in capable.posts]
    assert asked and all(kind_of(body) == "choice" for body in asked)           # pooled, the default
    assert "TYPESAFE_API_KEY" not in done.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_and_the_api_give_verdicts_with_only_one_json_provider(provider, capable, fixture_site, tmp_path):
    from test_api import post

    from citecheck.batch import run_batch
    from citecheck.serve.api import create_app
    url = fixture_site.url("/articles/boiling-point")
    claims = tmp_path / "claims.jsonl"
    claims.write_text(json.dumps({"id": "c1", "claim": CLAIM, "urls": [url]}) + "\n", encoding="utf-8")
    ctx = context(tmp_path, {**only(provider, capable.url), "CITECHECK_ALLOW_PRIVATE": "1"}, "pooled")
    result = run_batch(claims, ctx, db=tmp_path / "batch.db")
    assert [(row["label"], row["reason"]) for row in result.rows] == [("supported", None)]
    asked = len(capable.posts)
    api_ctx = RunContext.build(ctx.settings.replace(cache_path=tmp_path / "api.json"))     # asks again
    response = post(create_app(api_ctx), {"claim": CLAIM, "urls": [url]})
    assert response.status_code == 200 and response.json()["overall"] == "supported"
    assert len(capable.posts) == 2 * asked and {kind_of(r.json()) for r in capable.posts} == {"choice"}


def test_the_local_judge_s_openai_endpoint_answers_choice_questions_as_json(document, tmp_path):
    """The local judge alone behind OPENAI_BASE_URL: it accepts the logprobs flag, returns none, so the
    answer's confidence gives the probabilities."""
    from test_judge_server import FakeModel, running
    fake = FakeModel(content=choice_reply("supports", 0.8))
    citation = {"id": "A1", "claim": CLAIM, "quote": SUPPORTING, "section": "Boiling"}
    with running(fake) as server:
        ctx = context(tmp_path, {"OPENAI_BASE_URL": server.url + "/v1"}, "choice")
        (row,) = check.check_citations(document, [citation], ctx)
        answer = methods.relation_judge(CLAIM, PAGE, ctx)
    assert (row["relation"], row["verdict"]) == ("supports", "verified")
    assert answer["readout"] == "confidence" and answer["probabilities"]["supports"] == pytest.approx(0.8)
    assert fake.chat_calls[0]["schema"] == choice_json.schema(judges.CHOICE_CRITERIA) and fake.choice_calls == []
