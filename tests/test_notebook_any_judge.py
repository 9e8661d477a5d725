"""Run All with a judge re-tells notebook 01 with that judge: executed live against the capable stand-in
(tests/standins/capable.py, on 127.0.0.1, reached through the real OpenAI-compatible client) with only
OPENAI_BASE_URL configured and CITECHECK_OFFLINE unset, every judge call goes to the stand-in (none replays
the local model's recordings, though the committed export is read), and every sentence the notebook prints
about its verdicts is true of that run's tables."""
from __future__ import annotations

import json
import re
import sqlite3

import nbformat
import pytest
from standins.capable import capable_standin
from standins.judge import MODEL

import levels as L
from citecheck import notebook

NB01 = notebook.NOTEBOOKS / "01_source_document.ipynb"
OWN = json.loads((notebook.ROOT / "data" / "own" / "citations.json").read_text("utf-8"))
OWN_STORIES = [{"claim": c["claim"], "support": [c["quote"]] if c["expected"] == "verified" else [],
                "against": [c["quote"]] if c["expected"] == "contradicted" else []} for c in OWN]


def printed(nb, cell_id: str) -> str:
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    return "".join(out.get("text", "") + "".join(out.get("data", {}).get("text/plain", ""))
                   for out in cell.get("outputs", []))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Notebook 01 executed live against the capable stand-in: (executed notebook, the store's entries, the
    stand-in's request count)."""
    folder = tmp_path_factory.mktemp("any-judge")
    with pytest.MonkeyPatch.context() as mp, capable_standin([*L.check_rows(), *OWN_STORIES]) as server:
        mp.delenv("JUDGE_METHOD", raising=False)                       # the reader's default method
        mp.setenv("CITECHECK_CACHE", str(notebook.ROOT / "json_cache.json"))   # the committed recordings
        env = {"OPENAI_BASE_URL": f"{server.url}/v1", "CITECHECK_CACHE_STORE": str(folder / "store.sqlite")}
        executed = notebook.execute(NB01, offline=False, env=env, timeout=600)
        with sqlite3.connect(folder / "store.sqlite") as db:
            entries = [json.loads(entry) for (entry,) in db.execute("SELECT entry FROM entries")]
        return executed, entries, len(server.requests)


def test_every_judge_call_went_to_the_configured_judge(run):
    executed, entries, asked = run
    judged = [e for e in entries if e.get("function", "").startswith(("judge.", "typesafe."))]
    assert asked and len(judged) == asked, "each stand-in answer is recorded once, nothing else was judged"
    assert {e["model"] for e in judged} == {MODEL}
    assert not any(e["function"] == "typesafe.system_one" for e in judged), "no cell forces the Choice API"
    setup_line = printed(executed, "39f95401")
    assert "asked live" in setup_line and "/v1" in setup_line and "recorded 20" not in setup_line, setup_line
    # the capable judge puts 0.90-0.99 on its answer; a replayed local-model answer would not
    one = printed(executed, "0f8a9ac6")
    assert max(json.loads(re.search(r"probabilities: (\{.*\})", one)[1].replace("'", '"')).values()) >= 0.9


def test_the_printed_sentences_are_true_of_that_run(run):
    executed, _, _ = run
    table = next(c for c in executed.cells if c.get("id") == "66dde2c7")
    rows = [line.split() for line in "".join(table.outputs[0]["data"]["text/plain"]).splitlines()[1:]]
    agrees = {r[1]: r[-2] == "True" for r in rows}
    judged = {r[1]: r[-2] == "True" for r in rows if r[2] != "missing"}
    counts = printed(executed, "7465d6fb")
    assert f"agreement with expected: {sum(agrees.values())}/{len(agrees)}" in counts
    agreed = sum(judged.values())
    assert f"judged by the model: {len(judged)}, of which agree: {agreed}/{len(judged)}" in counts
    wrong = re.search(r"^wrong: (.*)$", counts, re.M)[1]
    assert re.findall(r"\b(C\d)\b", wrong) == [cid for cid, ok in judged.items() if not ok]
    assert sum(agrees.values()) == 9, "the capable judge gets every citation of notebook 01 right"
    one = printed(executed, "0f8a9ac6")
    assert re.search(r"^contradicts wins \(0\.9\d\), \w+ next \(0\.0\d\); right", one, re.M), one
    pooled = printed(executed, "6838ddca")
    assert "verdict : contradicted" in pooled and "rests on: the judge's own no" in pooled, pooled
    own = printed(executed, "ee73b1f3")
    assert "M1: verified at 0.9" in own and "M2: contradicted at 0.9" in own, own


def test_every_verdict_is_named_with_the_stand_ins_model(run):
    """The set-up line and the gate's notes name the model that answered (the stand-in's), not the local
    one."""
    executed, _, _ = run
    assert MODEL in printed(executed, "39f95401")
    assert "qwen" not in printed(executed, "ee73b1f3") + printed(executed, "9f330b67")


# ------------------------------------------------------------- the set-up cell and the opt-in, unit by unit

def context(environ: dict):
    from citecheck.context import RunContext
    return RunContext.build(notebook.notebook_settings(environ))


def test_the_set_up_line_names_the_recordings_offline_and_the_configured_judge_live(capsys):
    committed = str(notebook.ROOT / "json_cache.json")
    offline = context({"CITECHECK_OFFLINE": "1", "CITECHECK_CACHE": committed})
    notebook.judge_line(offline, "choice", "json")
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in printed] == ["judge.json/openai", "typesafe.system_one"]
    assert all(re.search(r"answers by \S+, recorded 20\d\d-\d\d-\d\d", line) for line in printed)
    live = context({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "JUDGE_MODEL": "my-model"})
    notebook.judge_line(live, "choice", "json")
    assert capsys.readouterr().out.splitlines() == [
        f"{f}: answers by my-model at http://127.0.0.1:9/v1 (openai), asked live; an answer already cached "
        "for that model replays" for f in ("judge.choice/openai", "judge.json/openai")]


def test_a_many_call_notebook_replays_unless_the_reader_opts_in(capsys):
    keyed = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "JUDGE_MODEL": "my-model"}
    replay = notebook.replay_unless_opted_in(context(keyed))
    assert "CITECHECK_NOTEBOOK_LIVE=1" in capsys.readouterr().out
    assert replay.settings.offline and replay.settings.choice_via == "typesafe"
    assert not notebook.asks_live(replay.settings) and replay.settings.judge_model != "my-model"
    opted = context({**keyed, "CITECHECK_NOTEBOOK_LIVE": "1"})
    assert opted.settings.notebook_live and notebook.replay_unless_opted_in(opted) is opted
    plain = context({})
    assert notebook.replay_unless_opted_in(plain) is plain and capsys.readouterr().out == ""
    cost = notebook.live_cost([{"calls": 4, "prompt_tokens": 1200, "output_tokens": 4},
                               {"calls": 1, "prompt_tokens": 300, "output_tokens": 40}])
    assert cost == "5 judge calls, 1,500 prompt and 44 output tokens"


PINS = ("typesafe.system_one", "typesafe_model", "who_answered(", "judges.choice_judge(",
        "models_used(ctx.cache))\nrecorded[recorded.function")


@pytest.mark.parametrize("path", [p for p in notebook.notebook_paths() if p.name[:2] <= "06"],
                         ids=lambda p: p.name)
def test_no_notebook_cell_pins_the_local_recordings(path):
    """Every judge call goes where the settings send it: no cell names the Choice API's cache function or
    model, asks `judges.choice_judge` directly, or reports the cache's models in place of the judge."""
    cells = [c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]
    pinned = [(c.id, pin) for c in cells for pin in PINS if pin in c.source]
    assert pinned == []
    assert "judge_line(ctx" in cells[0].source, "the set-up cell says who answers"
    if path.name[:2] in ("04", "05"):
        assert "replay_unless_opted_in(setup())" in cells[0].source
        assert any("live_cost(" in c.source for c in cells), "it prints what opting in costs"


# ------------------------------------------------------------- Run All with a judge, notebook by notebook

LIVE = [p for p in notebook.notebook_paths() if p.name[:2] in ("01", "02", "03", "06")]
"""The notebooks that ask a configured judge by default (04 and 05 replay unless the reader opts in)."""


def live_run(path, export: str, folder) -> tuple:
    """`path` run against a fresh capable stand-in over `export`: (notebook, stand-in requests, store)."""
    with pytest.MonkeyPatch.context() as mp, capable_standin([*L.stories(), *OWN_STORIES]) as server:
        mp.delenv("JUDGE_METHOD", raising=False)
        mp.setenv("CITECHECK_CACHE", export)
        env = {"OPENAI_BASE_URL": f"{server.url}/v1", "CITECHECK_CACHE_STORE": str(folder / "store.sqlite")}
        executed = notebook.execute(path, offline=False, env=env, timeout=600)
        with sqlite3.connect(folder / "store.sqlite") as db:
            entries = [json.loads(entry) for (entry,) in db.execute("SELECT entry FROM entries")]
        return executed, len(server.requests), entries


@pytest.mark.parametrize("path", LIVE, ids=lambda p: p.name)
def test_run_all_with_a_judge_asks_that_judge_every_call(path, tmp_path):
    """With the committed recordings in reach, the notebook asks the stand-in exactly as many questions as
    with no recordings at all: no judge call replays the local model's answers (each asks for the model the
    endpoint lists, not the local judge's)."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    executed, asked, entries = live_run(path, str(notebook.ROOT / "json_cache.json"), tmp_path / "a")
    first = next(c for c in executed.cells if c.cell_type == "code")
    assert "asked live" in printed(executed, first.id) and "recorded 20" not in printed(executed, first.id)
    judged = [e for e in entries if e["function"].startswith(("judge.", "typesafe."))]
    assert asked and len(judged) == asked and {e["model"] for e in judged} == {MODEL}
    _, asked_fresh, _ = live_run(path, str(tmp_path / "b" / "empty.json"), tmp_path / "b")
    assert asked == asked_fresh, f"{asked_fresh - asked} judge call(s) replayed the recordings"
