"""The Choice judge through the unmodified typesafe-sdk against a Jev-compatible stand-in."""

import json

import pytest
from standins.jev import jev_standin

from citecheck import config
from citecheck.cache import Cache, CacheCorrupted, request_key
from citecheck.config import Settings
from citecheck.judge import calibration, judge_contract, judges
from citecheck.paths import ROOT

PROBS = {"supports": 0.7, "contradicts": 0.1, "says_nothing": 0.2}


def test_request_the_sdk_sends_and_the_answer(make_ctx):
    with jev_standin(PROBS) as server:
        result = judges.choice_judge("the claim", "the source text", make_ctx(typesafe_endpoint=server.url))
        [request] = server.requests
    assert request.path == "/v1/systemone" and request.method == "POST"
    assert request.headers["Authorization"] == "Bearer local"
    body = request.json()
    assert body["state"] == {"claim": "the claim", "source": "the source text"}
    assert body["questions"]["relation"]["type"] == "choice"
    assert list(body["questions"]["relation"]["criteria"]) == list(judges.RELATIONS)
    assert result["relation"] == "supports" and result["confidence"] == pytest.approx((0.7 - 1 / 3) / (2 / 3))
    assert result["probabilities"] == PROBS


def test_answer_is_cached_and_stamped_with_the_answering_model(make_ctx):
    with jev_standin(PROBS, model="jev-2026-10") as server:
        ctx = make_ctx(typesafe_endpoint=server.url)
        first = judges.choice_judge("c", "s", ctx)
        second = judges.choice_judge("c", "s", ctx)
        assert len(server.requests) == 1
    assert first == second
    entry = next(iter(ctx.cache.entries().values()))
    assert entry["model"] == "jev-2026-10" and entry["usage"] == {"input_tokens": 42, "output_tokens": 1}


def test_a_changed_question_misses_the_cache(monkeypatch, make_ctx):
    with jev_standin(PROBS) as server:
        ctx = make_ctx(typesafe_endpoint=server.url)
        judges.choice_judge("c", "s", ctx)
        monkeypatch.setitem(judges.CHOICE_CRITERIA, "supports", "reworded")
        judges.choice_judge("c", "s", ctx)
        assert len(server.requests) == 2


def test_hosted_key_is_sent_and_never_printed(monkeypatch, make_ctx):
    with jev_standin(status=401) as server:
        monkeypatch.setenv("TYPESAFE_BASE_URL", server.url)   # the SDK's own routing variable
        with pytest.raises(judges.JudgeUnavailable) as err:
            judges.choice_judge("c", "s", make_ctx(secrets={"TYPESAFE_API_KEY": "sk-test-SECRET-123"}))
        assert server.requests[0].headers["Authorization"] == "Bearer sk-test-SECRET-123"
    assert "401" in str(err.value) and "SECRET" not in str(err.value)


def test_no_key_and_no_endpoint_names_the_variable(ctx):
    with pytest.raises(Exception) as err:
        judges.choice_judge("c", "s", ctx)
    assert "TYPESAFE_API_KEY" in str(err.value) and "TYPESAFE_ENDPOINT" in str(err.value)


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_name_the_endpoint(make_ctx, status):
    with jev_standin(status=status) as server:
        with pytest.raises(judges.JudgeUnavailable) as err:
            judges.choice_judge("c", "s", make_ctx(typesafe_endpoint=server.url))
    assert server.url in str(err.value) and str(status) in str(err.value)
    assert "TYPESAFE_ENDPOINT" in str(err.value)


def test_unreachable_and_timeout_are_told_apart(make_ctx):
    with pytest.raises(judges.JudgeUnavailable, match="did not answer.*judge-server"):
        judges.choice_judge("c", "s", make_ctx(typesafe_endpoint="http://127.0.0.1:9"))
    with jev_standin(PROBS, delay=1.5) as server:
        with pytest.raises(judges.JudgeUnavailable) as err:
            judges.choice_judge("c", "s", make_ctx(typesafe_endpoint=server.url, judge_timeout=0.3))
    assert "timed out after 0.3 s (JUDGE_TIMEOUT)" in str(err.value) and "not answer" not in str(err.value)


def test_refitted_local_calibration_misses_the_cache(monkeypatch, make_ctx):
    with jev_standin(PROBS) as server:
        ctx = make_ctx(typesafe_endpoint=server.url)
        judges.choice_judge("c", "s", ctx)
        judges.choice_judge("c", "s", ctx)
        assert len(server.requests) == 1
        monkeypatch.setattr(calibration, "load_calibration",
                            lambda path=None: {calibration.question_key(judges.CHOICE_INSTRUCTIONS,
                                                                        judges.CHOICE_CRITERIA): {"supports": 0.7}})
        judges.choice_judge("c", "s", ctx)
        assert len(server.requests) == 2


# ---------------------------------------------------------------- confidence: Jev's reference formula

@pytest.mark.parametrize("probabilities, expected", [
    ({"supports": 0.869, "contradicts": 0.1, "says_nothing": 0.031}, (0.869 - 1 / 3) / (2 / 3)),
    ({"supports": 1 / 3, "contradicts": 1 / 3, "says_nothing": 1 / 3}, 0.0),
    ({"supports": 0.0, "contradicts": 1.0, "says_nothing": 0.0}, 1.0),
])
def test_confidence_is_the_reference_formula_over_the_probabilities(make_ctx, probabilities, expected):
    with jev_standin(probabilities) as server:
        result = judges.choice_judge("c", "s", make_ctx(typesafe_endpoint=server.url))
    assert result["confidence"] == pytest.approx(expected)


def test_an_answer_recorded_with_the_top_probability_replays_with_the_reference_meaning(ctx):
    """Entries recorded before the formula (confidence = top probability) keep their bytes; the judge
    recomputes, so a replay means what a hosted Jev answer means."""
    request = {"state": judges.choice_state("c", "s"),
               "questions": {"relation": judges.choice_question().model_dump(mode="json", exclude_none=True)},
               "local_calibration": judges.local_calibration()}
    recorded = {"relation": "contradicts", "confidence": 0.745,
                "probabilities": {"supports": 0.242, "contradicts": 0.745, "says_nothing": 0.013}}
    key = request_key("typesafe.system_one", config.LOCAL_MODEL, request)
    ctx.cache.put(key, {"function": "typesafe.system_one", "model": config.LOCAL_MODEL, "answer": recorded,
                        "usage": None, "seconds": 0.0, "recorded": "2026-11-30"})
    result = judges.choice_judge("c", "s", ctx.replace(offline=True))
    assert result["relation"] == "contradicts"
    assert result["confidence"] == pytest.approx((0.745 - 1 / 3) / (2 / 3))


def test_every_committed_choice_and_json_answer_is_on_contract():
    entries = json.loads((ROOT / "json_cache.json").read_text(encoding="utf-8"))
    judged = 0
    for entry in entries.values():
        if entry["function"] == "typesafe.system_one" and "relation" in entry["answer"]:
            judges.check_relation(entry["answer"])
            judged += 1
        elif entry["function"] == "typesafe.system_one":         # a judge method's step: named questions
            for answer in entry["answer"].values():
                judge_contract.check_choice(answer, tuple(answer["probabilities"]))
            judged += 1
        elif entry["function"].startswith("judge.json/"):
            judges._check_content(entry["answer"])
            judged += 1
    assert judged > 0


# ---------------------------------------------------------------- off-contract answers

GOOD = {"type": "choice", "choice": "supports", "confidence": 0.55, "probabilities": PROBS}


@pytest.mark.parametrize("answers, why", [
    ({"relation": {**GOOD, "choice": "maybe"}}, "choice 'maybe' is not one of"),
    ({"relation": {**GOOD, "confidence": 5.0}}, "confidence is 5.0"),
    ({"relation": {**GOOD, "confidence": -3}}, "confidence is -3"),
    ({"relation": {**GOOD, "probabilities": {"supports": 5, "contradicts": 1, "says_nothing": 1}}},
     "probability of 'supports' is 5"),
    ({"relation": {**GOOD, "probabilities": {"supports": 0.5, "contradicts": 0.1, "says_nothing": 0.1}}},
     "sum to 0.7"),
    ({"relation": {**GOOD, "probabilities": {"supports": 0.7, "contradicts": 0.3}}}, "exactly the keys"),
    ({"relation": {**GOOD, "choice": "contradicts"}}, "not the most probable"),
    ({"other": GOOD}, "no choice answer for the question 'relation'"),
    ({"relation": {"type": "choice", "choice": "supports"}}, "could not read the response"),
])
def test_an_off_contract_answer_is_invalid_never_cached_and_asked_again(make_ctx, answers, why):
    with jev_standin(answers=answers) as server:
        ctx = make_ctx(typesafe_endpoint=server.url)
        for _ in range(2):                       # a re-run asks again: nothing was cached, nothing crashes
            with pytest.raises(judges.JudgeOutputInvalid) as err:
                judges.choice_judge("c", "s", ctx)
            assert why in str(err.value) and err.value.reason == "judge_output_invalid"
        assert len(server.requests) == 2
    assert not ctx.cache.path.exists() or len(ctx.cache) == 0
    assert isinstance(err.value, judges.JudgeUnavailable)      # whoever handles "no answer" handles it


def test_a_malformed_entry_an_old_version_cached_is_reported_by_key_and_path(ctx):
    request = {"state": judges.choice_state("c", "s"),
               "questions": {"relation": judges.choice_question().model_dump(mode="json", exclude_none=True)},
               "local_calibration": judges.local_calibration()}
    key = request_key("typesafe.system_one", config.LOCAL_MODEL, request)
    ctx.cache.put(key, {"function": "typesafe.system_one", "model": config.LOCAL_MODEL,
                        "answer": {"choice": "maybe"}, "usage": None, "seconds": 0.0, "recorded": "2026-11-30"})
    with pytest.raises(CacheCorrupted) as err:
        judges.choice_judge("c", "s", ctx)
    message = str(err.value)
    assert "json_cache.json" in message and key in message and "typesafe.system_one" in message
    assert len(Cache(ctx.cache.path)) == 1                     # reported, never removed


# ---------------------------------------------------------------- which model

def test_a_hosted_key_with_no_endpoint_sends_the_hosted_model_name(monkeypatch, tmp_path):
    from typesafe_sdk.constants import DEFAULT_MODEL
    assert config.HOSTED_CHOICE_MODEL == DEFAULT_MODEL == "jev-latest"
    settings = Settings.from_env({"TYPESAFE_API_KEY": "sk-test-hosted-0001"})
    settings = settings.replace(cache_path=tmp_path / "c.json")
    with jev_standin(PROBS) as server:
        monkeypatch.setenv("TYPESAFE_BASE_URL", server.url)     # the SDK's own routing: "the hosted API"
        judges.choice_judge("c", "s", judges.RunContext.build(settings))
        assert server.requests[0].json()["model"] == "jev-latest"


@pytest.mark.parametrize("environ, model", [
    ({}, config.LOCAL_MODEL),                           # no key: replay the committed cache
    ({"CITECHECK_OFFLINE": "1"}, config.LOCAL_MODEL),
    ({"TYPESAFE_API_KEY": "k"}, "jev-latest"),
    ({"TYPESAFE_API_KEY": "k", "TYPESAFE_ENDPOINT": "http://127.0.0.1:8765"}, config.LOCAL_MODEL),
    ({"TYPESAFE_API_KEY": "k", "TYPESAFE_MODEL": "jev-1.13.0"}, "jev-1.13.0"),
])
def test_settings_choose_the_choice_model_from_what_is_set(environ, model):
    assert Settings.from_env(environ).typesafe_model == model
