"""`citecheck evaluate`: a judge earns its AUTO_ACCEPT gate with one command (offline, no keys).

- The capable stand-in (tests/standins/capable.py, through the real OpenAI SDK on 127.0.0.1): --write-gate
  writes a threshold for the model that answered (never the local model's name), and the flows then
  auto-accept what that entry allows.
- The committed recordings of the local model (CITECHECK_OFFLINE=1): no threshold reached; the entry says
  so and every verdict still goes to a person.
- A judge that fails after N calls: the run stops with one line; the next run replays those N.
- A labels file's bad lines: one line each, by number, the rest evaluated; the cost line and --max-calls;
  --write-gate on too few rows.
"""
from __future__ import annotations

import json
import re

import pytest
from standins.capable import capable_standin

import levels as L
from citecheck import cli, verify
from citecheck.config import LOCAL_MODEL, Settings
from citecheck.context import RunContext
from citecheck.evaluation import evaluate
from citecheck.paths import ROOT
from citecheck.verdict import review

STANDIN_MODEL = "standin-judge-1"


@pytest.fixture(scope="module")
def capable():
    with capable_standin(L.stories()) as server:
        yield server


def judge_env(monkeypatch, tmp_path, url: str, **extra: str) -> None:
    """A user whose judge is the stand-in behind OpenAI's SDK, with a private cache and gate table."""
    env = {**L.environment("openai", url), "JUDGE_METHOD": "pooled", "JUDGE_RETRIES": "0",
           "AUTO_ACCEPT_TABLE": str(tmp_path / "gate.json"), **extra}
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(["evaluate", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_capable_judge_earns_a_threshold_and_the_flows_then_auto_accept_by_it(capable, monkeypatch,
                                                                                tmp_path, capsys):
    judge_env(monkeypatch, tmp_path, capable.url)
    status, out, err = run(capsys, "--sets", "rfc,citations", "--write-gate", "--report",
                           str(tmp_path / "r.html"), "--out", str(tmp_path / "r.json"))
    assert status == 0, err
    table = json.loads((tmp_path / "gate.json").read_text())
    assert list(table) == [STANDIN_MODEL] and LOCAL_MODEL not in table       # the model that answered
    entry = table[STANDIN_MODEL]
    assert 0 < entry["threshold"] < 1 and entry["batch"] == "evaluate:rfc,citations"
    assert entry["precision"] >= 0.9 and entry["n"] == 44 and entry["method"] == "pooled"
    assert entry["command"] == "citecheck evaluate --sets rfc,citations --target 0.9 --write-gate"
    assert set(review.ENTRY_KEYS) <= set(entry)
    assert f"AUTO_ACCEPT: {entry['threshold']:g} (chosen on tune)" in out
    assert f"wrote {tmp_path / 'gate.json'}: {STANDIN_MODEL} AUTO_ACCEPT={entry['threshold']:g}" in out
    assert "the verdicts name" not in err and "JUDGE_MODEL" not in err      # asked for the model it serves
    page = (tmp_path / "r.html").read_text()
    assert page.count('src="data:image/png;base64,') == 2 and 'alt="Reliability of the judge' in page
    assert json.loads((tmp_path / "r.json").read_text())["gate"]["threshold"] == entry["threshold"]

    settings = Settings.from_env()                               # the next run reads the written table
    gate = review.Gate.of(settings)
    with RunContext.build(settings) as ctx:
        rows = [verify.trace_text(r["claim"], r["text"], ctx, threshold=gate).row for r in L.rfc_rows()[:12]]
    assert all(r["auto"] == (r["confidence"] >= entry["threshold"]) for r in rows), rows
    assert sum(r["auto"] for r in rows) >= 6 and all(r["auto_note"] is None for r in rows)
    assert not any(review.gated(r, gate, LOCAL_MODEL)["auto"] for r in rows)    # never the local model's


def test_with_the_recordings_in_reach_a_reader_s_endpoint_is_asked_every_row(monkeypatch, tmp_path, capsys):
    """From the repository root (the committed recordings of the local model in reach) with only
    OPENAI_BASE_URL: the endpoint's model is asked for, so no row replays the local model's answers."""
    with capable_standin(L.stories()) as judge:
        judge_env(monkeypatch, tmp_path, judge.url, CITECHECK_CACHE=str(ROOT / "json_cache.json"),
                  CITECHECK_CACHE_STORE=str(tmp_path / "store.sqlite"), JUDGE_METHOD="one_pass")
        monkeypatch.chdir(ROOT)
        status, out, err = run(capsys, "--sets", "rfc", "--json")
    assert status == 0, err
    rows = len(L.rfc_rows())
    assert f"{rows} rows (rfc {rows}): 0 replayed from the cache, {rows} to ask" in err    # all recorded
    records = json.loads(out)["records"]
    assert len(records) == rows and {r["model"] for r in records} == {STANDIN_MODEL}
    assert len(judge.posts) >= rows and {r.json()["model"] for r in judge.posts} == {STANDIN_MODEL}
    assert "the verdicts name" not in err


def test_the_local_recordings_reach_no_threshold_and_everything_goes_to_a_person(monkeypatch, tmp_path,
                                                                                 capsys):
    for name, value in {"CITECHECK_OFFLINE": "1", "CITECHECK_CACHE": str(ROOT / "json_cache.json"),
                        "CITECHECK_CACHE_STORE": "off", "JUDGE_METHOD": "pooled",
                        "AUTO_ACCEPT_TABLE": str(tmp_path / "gate.json")}.items():
        monkeypatch.setenv(name, value)
    status, out, err = run(capsys, "--write-gate")
    assert status == 0, err
    assert "194 replayed from the cache, 0 to ask" in err
    assert "AUTO_ACCEPT: none reached on tune" in out and "every verdict goes to a person" in out
    table = json.loads((tmp_path / "gate.json").read_text())
    assert list(table) == [LOCAL_MODEL]
    entry = table[LOCAL_MODEL]
    assert entry["threshold"] == 1.0 and entry["precision"] is None and entry["n"] == 194
    assert f"wrote {tmp_path / 'gate.json'}: {LOCAL_MODEL} no threshold reached" in out
    gate = review.Gate.of(Settings.from_env())
    assert gate.threshold(LOCAL_MODEL) is None
    routed = review.gated({"label": "supported", "confidence": 0.99}, gate, LOCAL_MODEL)
    assert routed["auto"] is False and routed["auto_note"].startswith("calibrated: no AUTO_ACCEPT reaches")


def test_a_judge_failing_mid_run_keeps_what_it_answered_and_the_rerun_resumes(monkeypatch, tmp_path, capsys):
    with capable_standin(L.stories()) as fresh:
        judge_env(monkeypatch, tmp_path / "first", fresh.url, CITECHECK_CACHE=str(tmp_path / "first.json"))
        assert run(capsys, "--sets", "citations")[0] == 0
        total = len(fresh.requests)
    assert total > 8
    with capable_standin(L.stories()) as flaky:
        answer, served = flaky.handler, []

        def fail_after_five(request):
            if len(served) >= 5:
                return 500, {}, {"error": {"message": "overloaded"}}
            served.append(request)
            return answer(request)
        flaky.handler = fail_after_five
        judge_env(monkeypatch, tmp_path, flaky.url, CITECHECK_CACHE=str(tmp_path / "second.json"))
        status, out, err = run(capsys, "--sets", "citations")
        assert status == 1 and out == "", (out, err)
        stopped = [line for line in err.splitlines() if "stopped answering" in line]
        assert len(stopped) == 1 and "run the same command again to resume" in stopped[0], err
        asked = len(flaky.requests)
        flaky.handler = answer
        status, out, err = run(capsys, "--sets", "citations")
        assert status == 0, err
        assert len(flaky.requests) - asked == total - 5          # the five answered calls replayed
        assert re.search(r": \d+ replayed from the cache, \d+ to ask", err)


def test_a_labels_file_reports_each_bad_line_and_evaluates_the_rest(capable, monkeypatch, tmp_path, capsys):
    rfc = L.rfc_rows()
    good = [{"id": f"g{i}", "claim": r["claim"], "text": r["text"], "label": r["gold"]}
            for i, r in enumerate(rfc[:3])]
    lines = [json.dumps(good[0]), "{not json", json.dumps({**good[1], "label": "probably"}),
             json.dumps(good[1]), json.dumps({**good[2], "id": "g0"}), "[1, 2]",
             json.dumps({"id": "n", "claim": "c", "label": "supported"}), json.dumps(good[2])]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n")
    judge_env(monkeypatch, tmp_path, capable.url)
    status, out, err = run(capsys, "--sets", "none", "--labels", str(labels), "--json")
    assert status == 1
    problems = [line for line in err.splitlines() if "labels.jsonl: line" in line]
    assert [re.search(r"line (\d+):", p).group(1) for p in problems] == ["2", "3", "5", "6", "7"], err
    assert "unknown label 'probably' (one of supported, contradicted, not_found)" in problems[1]
    assert "id 'g0' repeats line 1" in problems[2] and "neither text nor url" in problems[4]
    records = json.loads(out)["records"]
    assert sorted(r["id"] for r in records) == ["g0", "g1", "g2"]
    assert all(r["set"] == "labels" and r["split"] in ("tune", "report") for r in records)


def test_the_cost_is_said_before_the_first_call_and_max_calls_refuses_more(capable, monkeypatch, tmp_path,
                                                                          capsys):
    judge_env(monkeypatch, tmp_path, capable.url)
    before = len(capable.posts)
    status, out, err = run(capsys, "--sets", "citations", "--max-calls", "10")
    assert status == 1 and out == "" and len(capable.posts) == before           # nothing asked
    assert "8 rows (citations 8): 0 replayed from the cache, 8 to ask with JUDGE_METHOD=pooled: at most 32 " \
           "model calls, about" in err and "tokens (estimated)" in err
    assert err.strip().splitlines()[-1] == ("citecheck evaluate: error: at most 32 model calls needed, over "
                                            "--max-calls 10: nothing asked; raise --max-calls or pick fewer "
                                            "--sets")
    assert run(capsys, "--sets", "citations", "--max-calls", "32")[0] == 0
    status, out, err = run(capsys, "--sets", "citations", "--max-calls", "0")       # a second run replays
    assert status == 0 and "8 replayed from the cache, 0 to ask" in err and "0 rows asked this run" in out


def test_write_gate_on_too_few_rows_refuses_before_any_call(capable, monkeypatch, tmp_path, capsys):
    judge_env(monkeypatch, tmp_path, capable.url)
    before = len(capable.requests)
    status, out, err = run(capsys, "--sets", "citations", "--write-gate")
    assert status == 1 and len(capable.requests) == before and not (tmp_path / "gate.json").exists()
    assert err.strip() == ("citecheck evaluate: error: --write-gate needs at least 20 labelled rows with a "
                           "model confidence, 10 in each half; there are only 8 (4 tune, 4 report): add "
                           "--sets or --labels rows")


def test_the_rows_of_each_shipped_set():
    rows = {name: evaluate.SHIPPED[name]() for name in evaluate.SETS}
    assert {n: len(r) for n, r in rows.items()} == {"wice": 150, "rfc": 36, "citations": 8}
    assert {r["gold"] for r in rows["rfc"] + rows["citations"]} == {"supported", "contradicted", "not_found"}
    assert all(r["binary"] for r in rows["wice"]) and not any(r["binary"] for r in rows["rfc"])
    wice = rows["wice"][0]
    assert evaluate.correct(wice, "contradicted") == (wice["gold"] != "supported")


def test_every_method_has_a_most_calls_bound_capped_by_the_budget():
    from citecheck import config
    assert set(evaluate.MOST_CALLS) == set(config.JUDGE_METHODS)
    rows = [{"claim": "c" * 40, "text": "t" * 10_000}]
    settings = Settings(judge_method="decompose", judge_call_budget=3)
    assert evaluate.estimate(rows, RunContext.build(settings)) == {
        "rows": 1, "calls": 3, "tokens": 3 * (evaluate.TOKENS_A_CALL + (40 + evaluate.SHOWN_CHARS) // 4)}
