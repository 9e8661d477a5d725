"""One HTTP client per judge provider and per fetch backend for the life of a run, closed with it.

The stand-ins speak HTTP/1.1 here (`keep_alive`), so a reused connection shows as one client port.
"""
from __future__ import annotations

import json

import pytest
from standins.http import StandIn
from standins.jev import jev_standin
from standins.judge import Script

from citecheck import config
from citecheck.judge import calibration, judges
from citecheck.vocabulary import BLOCKED_ADDRESS
from citecheck.web import fetch
from citecheck.web.fetch import direct

PAGE = "Water boils at 100 °C at sea level. " * 20
PROBS = {"supports": 0.7, "contradicts": 0.1, "says_nothing": 0.2}


def peers(server) -> set:
    return {request.peer for request in server.requests}


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
def test_json_judge_calls_of_a_run_share_one_connection_until_it_closes(make_ctx, provider):
    with StandIn(Script(), keep_alive=True) as server:
        keys = {"OPENAI_API_KEY": "sk-test-0123456789", "ANTHROPIC_API_KEY": "sk-test-0123456789"}
        model, url = config.DEFAULT_JUDGE_MODELS[provider], server.url
        ctx = make_ctx(secrets=keys, judge_provider=provider, judge_model=model,
                       openai_base_url=f"{url}/v1", anthropic_base_url=url, ollama_host=url)
        verdicts = [judges.json_judge(f"claim {n}", ["Water boils at 100 °C."], ctx) for n in range(3)]
        assert [v["label"] for v in verdicts] == ["supported"] * 3
        assert len(server.requests) == 3 and len(peers(server)) == 1     # one connection, kept alive
        client = judges._http(ctx, provider)
        assert judges._http(ctx.replace(judge_method="json"), provider) is client     # derived: shared
        ctx.close()
        assert client.is_closed
        judges.json_judge("claim after close", ["Water boils at 100 °C."], ctx)   # opens again
        assert len(server.requests) == 4 and len(peers(server)) == 2


def test_choice_judge_calls_of_a_run_share_one_typesafe_client(make_ctx):
    with StandIn(jev_standin(PROBS).handler, keep_alive=True) as server:
        with make_ctx(typesafe_endpoint=server.url) as ctx:
            answers = [judges.choice_judge("claim", f"source {n}", ctx) for n in range(3)]
            assert len(peers(server)) == 1
            client = judges._typesafe(ctx)
            assert judges._typesafe(ctx.replace(judge_method="pooled")) is client
            assert judges._typesafe(ctx.replace(typesafe_model="another-model")) is not client   # its model
    assert [a["relation"] for a in answers] == ["supports"] * 3
    assert len(server.requests) == 3


def text_site(set_cookie: bool = True) -> StandIn:
    """An HTTP/1.1 site answering every path with a plain-text page (and a cookie)."""
    def handle(request):
        headers = {"Content-Type": "text/plain; charset=utf-8"}
        if set_cookie:
            headers["Set-Cookie"] = "visited=1; Path=/"
        return 200, headers, PAGE
    return StandIn(handle, keep_alive=True)


def test_direct_fetches_of_a_run_share_one_pool_but_not_cookies(make_ctx):
    with text_site() as site:
        with make_ctx(allow_private=True) as ctx:
            pages = [fetch.fetch(f"{site.url}/page/{n}", ctx) for n in range(3)]
            pool = direct.connections(ctx)
            assert direct.connections(ctx.replace(judge_method="json")) is pool
        assert [p.label for p in pages] == [None] * 3 and all("boils" in p.markdown for p in pages)
        assert len(site.requests) == 3 and len(peers(site)) == 1            # one connection, kept alive
        assert not any("Cookie" in r.headers for r in site.requests)        # each fetch its own cookie jar
        assert pool._transport._pool.connections == []                      # closed with the run


def test_a_pool_serves_only_contexts_with_its_own_allowances(make_ctx):
    with text_site(set_cookie=False) as site:
        allowing = make_ctx(allow_private=True)
        assert fetch.fetch(f"{site.url}/a", allowing).label is None
        strict = allowing.replace(allow_private=False)          # shares the run's clients, not that pool
        assert direct.connections(strict) is not direct.connections(allowing)
        refused = fetch.fetch(f"{site.url}/b", strict)
        assert refused.reason == BLOCKED_ADDRESS and len(site.requests) == 1
        allowing.close()


def test_no_network_wait_outside_a_fetch(make_ctx):
    import httpcore
    pool = direct.connections(make_ctx())
    with pytest.raises(httpcore.ReadTimeout, match="no fetch is running"):
        pool.backend.wait(5.0, httpcore.ReadTimeout)
    with pytest.raises(httpcore.ConnectError, match="no fetch is running"):
        pool.backend.connect_tcp("127.0.0.1", 9)


def test_the_calibration_file_is_parsed_once_while_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "judge_calibration.json"
    path.write_text(json.dumps({"questions": {"abc": {"offsets": {"supports": 0.5}}}}), encoding="utf-8")
    parsed = []
    real = calibration.json.loads
    monkeypatch.setattr(calibration.json, "loads", lambda text: parsed.append(1) or real(text))
    first = calibration.load_calibration(path)
    first["abc"]["supports"] = 99.0                     # a caller's change stays its own
    assert [calibration.load_calibration(path) for _ in range(3)] == [{"abc": {"supports": 0.5}}] * 3
    assert len(parsed) == 1
    path.write_text(json.dumps({"questions": {"abc": {"offsets": {"supports": 0.25, "says_nothing": 0.1}}}}),
                    encoding="utf-8")                   # refitted: read again
    assert calibration.load_calibration(path) == {"abc": {"supports": 0.25, "says_nothing": 0.1}}
    assert len(parsed) == 2
    path.unlink()
    assert calibration.load_calibration(path) == {}


def test_questions_are_keyed_exactly_as_the_sdk_s_choice_objects():
    """Cache keys are built without typesafe-sdk: each plain question dumps as the SDK's `Choice` does."""
    from citecheck.judge.methods import chunks, pooled, qa
    for question in (judges.RELATION, pooled.question(), chunks.question(), qa.same_question()):
        sdk = judges.sdk_question(question)
        wire = sdk.model_dump(mode="json", exclude_none=True)
        assert question.model_dump(mode="json", exclude_none=True) == wire
    assert judges.RELATION.model_dump() == judges.choice_question().model_dump(mode="json", exclude_none=True)
