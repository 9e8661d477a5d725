"""A judge endpoint configured by URL with no model named is asked which model it serves, once a run, and the
requests ask for that model: with only OPENAI_BASE_URL (or TYPESAFE_ENDPOINT) and the committed recordings of
the local model in reach, a request the recordings hold is sent to the reader's judge, never replayed from
them. The list is a cached call, so an offline replay resolves the same name; several models and no default
among them is one line naming the variable to set; a named model, or OpenAI's own API, asks for no list.
Stand-ins on 127.0.0.1 behind the unmodified SDKs (typesafe-sdk, httpx); contexts read from a mapping as an
entry point reads the environment."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from standins.capable import JEV_MODEL, capable_standin, models_body
from standins.http import StandIn
from standins.jev import jev_standin
from standins.judge import MODEL

import levels as L
from citecheck import check, verify
from citecheck.cache import models_used
from citecheck.config import HOSTED_OPENAI_MODEL, LOCAL_MODEL, MissingSetting, Settings
from citecheck.context import RunContext
from citecheck.evaluation import evaluate, method_comparison
from citecheck.judge import judges
from citecheck.paths import ROOT
from citecheck.source import sources

COMMITTED = str(ROOT / "json_cache.json")
JEV_PROBABILITIES = {"supports": 0.93, "contradicts": 0.05, "says_nothing": 0.02}


def settings(environ: dict, store, **extra: str) -> Settings:
    """A reader's settings with the committed recordings in reach and a private store."""
    return Settings.from_env({"CITECHECK_CACHE": COMMITTED, "CITECHECK_CACHE_STORE": str(store), **environ,
                              **extra}, defaults_in=ROOT)


def listings(server) -> list:
    return [r for r in server.requests if r.method == "GET" and r.path.endswith("/models")]


def rfc_row() -> dict:
    return evaluate.rfc_rows()[0]


def verified(ctx: RunContext) -> tuple[str, str]:
    """(label, the model that answered) of the first RFC row through verify's flow."""
    row = rfc_row()
    trace = verify.trace_text(row["claim"], row["text"], ctx)
    return trace.row["label"], verify.answered_by(trace)


def checked(ctx: RunContext) -> list[dict]:
    """Notebook 01's first four citations through check's flow."""
    citations = json.loads(evaluate.CITATIONS.read_text("utf-8"))[:4]
    return check.check_citations(sources.load(method_comparison.RFC_DOCUMENT), citations, ctx)


def recorded_replay(method: str) -> RunContext:
    """The committed recordings alone, offline, no judge configured (how the cookbook replays)."""
    return RunContext.build(Settings.from_env({"CITECHECK_OFFLINE": "1", "CITECHECK_CACHE": COMMITTED,
                                               "CITECHECK_CACHE_STORE": "off", "JUDGE_METHOD": method},
                                              defaults_in=ROOT))


@pytest.fixture(scope="module")
def capable():
    with capable_standin(L.stories()) as server:
        yield server


def test_the_recordings_hold_the_requests_these_tests_send():
    """The premise: the local model answered them (replayed offline with no judge configured)."""
    assert verified(recorded_replay("one_pass"))[1] == LOCAL_MODEL
    assert {row["model"] for row in checked(recorded_replay("one_pass"))} == {LOCAL_MODEL}


def test_only_openai_base_url_asks_the_endpoint_and_a_second_run_replays_offline(capable, tmp_path):
    store = tmp_path / "store.sqlite"
    environ = {"OPENAI_BASE_URL": f"{capable.url}/v1", "JUDGE_METHOD": "one_pass"}
    before = len(capable.requests)
    ctx = RunContext.build(settings(environ, store))
    assert ctx.settings.judge_model == MODEL and ctx.as_read.judge_model == LOCAL_MODEL
    label, model = verified(ctx)
    asked = capable.requests[before:]
    assert model == MODEL and label == "supported"
    assert [r.method for r in asked[:1]] == ["GET"] and len([r for r in asked if r.method == "POST"]) >= 1
    assert {r.json()["model"] for r in asked if r.method == "POST"} == {MODEL}
    lists_used = [(e["function"], e["model"]) for e in models_used(ctx.cache) if "models/" in e["function"]]
    assert lists_used == [("judge.models/openai", MODEL)]

    again = len(capable.requests)
    offline = RunContext.build(settings(environ, store, CITECHECK_OFFLINE="1"))
    assert offline.settings.judge_model == MODEL                    # the list replayed, no network
    assert verified(offline) == (label, model) and len(capable.requests) == again


def test_only_typesafe_endpoint_asks_the_jev_endpoint_for_the_checks_it_recorded(tmp_path):
    store = tmp_path / "store.sqlite"
    with jev_standin(JEV_PROBABILITIES) as jev:
        environ = {"TYPESAFE_ENDPOINT": jev.url, "JUDGE_METHOD": "one_pass"}
        ctx = RunContext.build(settings(environ, store))
        rows = checked(ctx)
        assert ctx.settings.typesafe_model == "standin-jev"
        assert {(row["model"], row["relation"]) for row in rows} == {("standin-jev", "supports")}
        assert len(listings(jev)) == 1 and len(jev.posts) == len(rows)          # every check asked it
        assert {r.json()["model"] for r in jev.posts} == {"standin-jev"}
        asked = len(jev.requests)
    offline = RunContext.build(settings(environ, store, CITECHECK_OFFLINE="1"))
    assert checked(offline) == rows and asked == len(jev.requests)


def test_one_list_a_run_shared_by_derived_contexts(capable, tmp_path):
    """Resolved once, before a derived context (an offline pass, another method) is made from the run's."""
    ctx = RunContext.build(settings({"OPENAI_BASE_URL": f"{capable.url}/v1"}, tmp_path / "s.sqlite"))
    before = len(listings(capable))
    derived = [ctx.replace(offline=True), ctx.replace(judge_method="json"), ctx.allowing("127.0.0.1", 1)]
    assert {c.settings.judge_model for c in derived} == {MODEL} and len(listings(capable)) == before + 1
    assert ctx.settings.judge_model == MODEL and len(listings(capable)) == before + 1


def lists(openai: tuple[str, ...], jev: tuple[str, ...] = (), status: int = 200) -> StandIn:
    """A stand-in answering GET /v1/models with these names (or `status`)."""
    return StandIn(lambda request: (status, {}, models_body(openai, jev) if status == 200 else {"error": {}}))


def test_several_models_is_one_line_naming_the_variable_to_set(tmp_path):
    names = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
    with lists(names, names[:3]) as server:
        for environ, variable, endpoint, shown in [
                ({"OPENAI_BASE_URL": f"{server.url}/v1"}, "JUDGE_MODEL", "OPENAI_BASE_URL",
                 "6 models (alpha, beta, gamma, delta, epsilon, …)"),
                ({"TYPESAFE_ENDPOINT": server.url}, "TYPESAFE_MODEL", "TYPESAFE_ENDPOINT",
                 "3 models (alpha, beta, gamma)")]:
            ctx = RunContext.build(settings(environ, tmp_path / "s.sqlite"))
            with pytest.raises(MissingSetting) as raised:
                ctx.settings
            assert str(raised.value) == (f"{variable} is not set: the endpoint {endpoint} names serves "
                                         f"{shown}: set {variable} to one")
        (tmp_path / "notes.md").write_text("# Boiling\n\nWater boils at 100 °C.\n", encoding="utf-8")
        (tmp_path / "citations.json").write_text(json.dumps([{"id": "A1", "claim": "Water boils at 100 °C.",
                                                              "quote": "Water boils at 100 °C.",
                                                              "section": "Boiling"}]), encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": f"{server.url}/v1",
               "CITECHECK_CACHE": str(tmp_path / "cache.json"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
        done = subprocess.run([sys.executable, "-m", "citecheck", "check", "--source", "notes.md",
                               "--citations", "citations.json"], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("citecheck check: error: JUDGE_MODEL is not set: the endpoint OPENAI_BASE_URL "
                           "names serves 6 models (alpha, beta, gamma, delta, epsilon, …): set JUDGE_MODEL "
                           "to one\n")


def test_of_several_models_the_local_judges_is_kept_when_listed(tmp_path):
    with lists(("other", LOCAL_MODEL), ("other", LOCAL_MODEL)) as server:
        environ = {"OPENAI_BASE_URL": f"{server.url}/v1", "TYPESAFE_ENDPOINT": server.url}
        ctx = RunContext.build(settings(environ, tmp_path / "s.sqlite"))
        assert (ctx.settings.judge_model, ctx.settings.typesafe_model) == (LOCAL_MODEL, LOCAL_MODEL)
        assert len(server.requests) == 2


@pytest.mark.parametrize("named", [
    {"OPENAI_BASE_URL": "/v1", "JUDGE_MODEL": "my-judge"},
    {"TYPESAFE_ENDPOINT": "", "TYPESAFE_MODEL": "my-jev"},
    {"OPENAI_BASE_URL": "/v1", "TYPESAFE_ENDPOINT": "", "TYPESAFE_MODEL": "my-jev",
     "JUDGE_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-standin-0001"},
], ids=["openai", "jev", "jev-and-another-json-provider"])
def test_a_named_model_asks_for_no_list(named, tmp_path):
    with lists((MODEL,), (JEV_MODEL,)) as server:
        environ = {name: server.url + value if name.endswith(("_URL", "_ENDPOINT")) else value
                   for name, value in named.items()}
        ctx = RunContext.build(settings(environ, tmp_path / "s.sqlite"))
        assert ctx.settings.discover == () and server.requests == []
        assert named.get("JUDGE_MODEL", named.get("TYPESAFE_MODEL")) in (ctx.settings.judge_model,
                                                                          ctx.settings.typesafe_model)


def test_no_endpoint_asks_for_no_list_and_hosted_openai_keeps_its_model():
    assert Settings.from_env({}).discover == ()
    hosted = Settings.from_env({"OPENAI_API_KEY": "sk-standin-0001"})
    assert hosted.discover == () and hosted.judge_model == HOSTED_OPENAI_MODEL
    hosted_jev = Settings.from_env({"TYPESAFE_API_KEY": "ts-standin-0001"})
    assert hosted_jev.discover == () and hosted_jev.typesafe_model == "jev-latest"


@pytest.mark.parametrize("status", [500, 404])
def test_an_error_answer_keeps_the_default_and_is_never_cached(status, tmp_path):
    with lists((MODEL,), status=status) as server:
        ctx = RunContext.build(settings({"OPENAI_BASE_URL": f"{server.url}/v1"}, tmp_path / "s.sqlite"))
        assert ctx.settings.judge_model == LOCAL_MODEL and len(server.requests) == 1
    assert not [e for e in models_used(ctx.cache) if e["function"].startswith("judge.models/")]


def test_an_unreachable_endpoint_keeps_the_default_and_the_judge_call_reports_it(tmp_path):
    with lists((MODEL,)) as server:
        url = server.url
    ctx = RunContext.build(settings({"OPENAI_BASE_URL": f"{url}/v1", "JUDGE_METHOD": "json",
                                     "JUDGE_RETRIES": "0"}, tmp_path / "s.sqlite"))
    assert ctx.settings.judge_model == LOCAL_MODEL
    with pytest.raises(judges.JudgeUnavailable, match="endpoint OPENAI_BASE_URL names could not be reached"):
        judges.json_judge("A claim nobody recorded.", ["A page nobody recorded."], ctx)


def test_offline_with_no_recorded_list_keeps_the_default_and_so_the_recordings_keys(tmp_path):
    """The cookbook's own replays: an endpoint whose list was never recorded resolves to the default offline,
    so every key the recordings hold still replays."""
    ctx = RunContext.build(Settings.from_env({"CITECHECK_OFFLINE": "1", "CITECHECK_CACHE": COMMITTED,
                                              "CITECHECK_CACHE_STORE": "off", "JUDGE_METHOD": "one_pass",
                                              "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                                              "TYPESAFE_ENDPOINT": "http://127.0.0.1:9"}, defaults_in=ROOT))
    assert (ctx.settings.judge_model, ctx.settings.typesafe_model) == (LOCAL_MODEL, LOCAL_MODEL)
    assert verified(ctx)[1] == LOCAL_MODEL
