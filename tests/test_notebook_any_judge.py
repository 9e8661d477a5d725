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


NAMING = ("judge naming: a custom OPENAI_BASE_URL is still named with the local model's name in settings "
          "(fixed in citecheck/judge by another change)")


@pytest.mark.xfail(strict=False, reason=NAMING)
def test_every_verdict_is_named_with_the_stand_ins_model(run):
    """The set-up line and the gate's notes name the model that answered (the stand-in's), not the local
    one."""
    executed, _, _ = run
    assert MODEL in printed(executed, "39f95401")
    assert "qwen" not in printed(executed, "ee73b1f3") + printed(executed, "9f330b67")
