"""The Choice judge through the unmodified typesafe-sdk against a Jev-compatible stand-in."""

import pytest

from citecheck import calibration, judges
from standins.jev import jev_standin

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
    assert result["relation"] == "supports" and result["confidence"] == 0.7
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


def test_unreachable_and_timeout(make_ctx):
    with pytest.raises(judges.JudgeUnavailable, match="did not answer"):
        judges.choice_judge("c", "s", make_ctx(typesafe_endpoint="http://127.0.0.1:9"))
    with jev_standin(PROBS, delay=1.5) as server:
        with pytest.raises(judges.JudgeUnavailable, match="did not answer"):
            judges.choice_judge("c", "s", make_ctx(typesafe_endpoint=server.url, judge_timeout=0.3))


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
