"""The judge is named by what answered: with one judge configured and no TYPESAFE_MODEL / JUDGE_MODEL, every
row, note, gate lookup and `cache stats` line names the model the server reported (its cache entry's stamp),
never the local judge's name for another endpoint; a model the reader names is the name rows give. The
capable stand-in answers under its own names ("oracle-jev" on the Jev envelope, "standin-judge-1" on the
OpenAI, Anthropic and Ollama ones), behind the unmodified SDKs; contexts read from a mapping as an entry
point reads the environment."""
import json
import subprocess
import sys

import pytest
from standins.capable import capable_standin
from standins.judge import MODEL

from citecheck import check, verify
from citecheck.cache import models_used
from citecheck.config import LOCAL_MODEL, Settings
from citecheck.context import RunContext
from citecheck.paths import ROOT
from citecheck.source import sources
from citecheck.verdict.review import Gate

CLAIM = "Water boils at 100 °C at sea level."
SUPPORTING = "At sea level, pure water boils at 100 °C."
PAGE = f"# Boiling\n\n{SUPPORTING} Salt barely changes that. The kettle clicks off.\n"
STORIES = [{"claim": CLAIM, "support": [SUPPORTING]}]
ENVELOPES = {"openai": MODEL, "anthropic": MODEL, "ollama": MODEL, "jev": "oracle-jev"}


def only(envelope: str, url: str) -> dict:
    """The environment of a reader with this one judge and nothing else (no model named)."""
    return {"openai": {"OPENAI_BASE_URL": url + "/v1"},
            "anthropic": {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-standin-0001"},
            "ollama": {"OLLAMA_HOST": url},
            "jev": {"TYPESAFE_ENDPOINT": url}}[envelope]


@pytest.fixture
def capable():
    with capable_standin(STORIES) as server:
        yield server


def run(tmp_path, environ: dict, method: str, table: dict) -> tuple[RunContext, dict, dict]:
    """(context, the check row, the verify row) under a calibration table `table`."""
    (tmp_path / "gate.json").write_text(json.dumps(table), encoding="utf-8")
    (tmp_path / "notes.md").write_text(PAGE, encoding="utf-8")
    settings = Settings.from_env({**environ, "JUDGE_METHOD": method,
                                  "AUTO_ACCEPT_TABLE": str(tmp_path / "gate.json"),
                                  "CITECHECK_CACHE": str(tmp_path / f"{method}.json")})
    ctx, gate = RunContext.build(settings), Gate.of(settings)
    citation = {"id": "A1", "claim": CLAIM, "quote": SUPPORTING, "section": "Boiling"}
    document = sources.load(tmp_path / "notes.md", "markdown")
    (row,) = check.check_citations(document, [citation], ctx, threshold=gate)
    trace = verify.trace_text(CLAIM, PAGE, ctx, threshold=gate)
    web = {**trace.row, "model": verify.answered_by(trace)}
    return ctx, row, web


@pytest.mark.parametrize("method", ["pooled", "one_pass"])
@pytest.mark.parametrize("envelope", list(ENVELOPES))
def test_rows_notes_and_cache_stats_name_the_model_that_answered(envelope, method, capable, tmp_path):
    answered = ENVELOPES[envelope]
    ctx, row, web = run(tmp_path, only(envelope, capable.url), method, {})
    assert row["model"] == web["model"] == answered
    assert (row["verdict"], web["label"]) == ("verified", "supported")
    for note in (row["auto_note"], web["auto_note"]):                   # uncalibrated: says for which model
        assert note.startswith(f"uncalibrated: no AUTO_ACCEPT for {answered} in ") and LOCAL_MODEL not in note
    assert {entry["model"] for entry in models_used(ctx.cache)} == {answered}


@pytest.mark.parametrize("envelope", list(ENVELOPES))
def test_the_gate_looks_up_the_threshold_of_the_model_that_answered(envelope, capable, tmp_path):
    table = {ENVELOPES[envelope]: {"threshold": 0.5}, LOCAL_MODEL: {"threshold": 1.0}}
    _ctx, row, web = run(tmp_path, only(envelope, capable.url), "pooled", table)
    assert (row["auto"], row["auto_note"]) == (True, None)
    assert (web["auto"], web["auto_note"]) == (True, None)


def test_a_model_the_reader_names_is_the_name_rows_give(capable, tmp_path):
    environ = {**only("openai", capable.url), "JUDGE_MODEL": "my-judge"}
    ctx, row, web = run(tmp_path, environ, "one_pass", {"my-judge": {"threshold": 0.5}})
    assert (row["model"], web["model"], row["auto"], web["auto"]) == ("my-judge", "my-judge", True, True)
    assert [r.json()["model"] for r in capable.requests] == ["my-judge"] * len(capable.requests)
    assert {entry["model"] for entry in models_used(ctx.cache)} == {MODEL}         # as the server reported


def test_check_and_cache_stats_on_the_command_line_agree(capable, tmp_path):
    """A reader with only OPENAI_BASE_URL: the stderr note, the audit DB's model and `cache stats` all name
    the model the endpoint reported."""
    import sqlite3
    (tmp_path / "notes.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "citations.json").write_text(json.dumps(
        [{"id": "A1", "claim": CLAIM, "quote": SUPPORTING, "section": "Boiling"}]), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": capable.url + "/v1",
           "CITECHECK_CACHE": str(tmp_path / "cache.json"), "AUDIT_DB": str(tmp_path / "audit.db"),
           "AUTO_ACCEPT_TABLE": str(tmp_path / "gate.json"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "citecheck", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
    done = cli("check", "--source", "notes.md", "--citations", "citations.json")
    assert done.returncode == 0, done.stderr
    assert f"no AUTO_ACCEPT for {MODEL} in " in done.stderr and LOCAL_MODEL not in done.stderr
    with sqlite3.connect(tmp_path / "audit.db") as conn:
        assert conn.execute("SELECT DISTINCT model FROM citations").fetchall() == [(MODEL,)]
    stats = cli("cache", "stats")
    assert stats.returncode == 0 and MODEL in stats.stdout and LOCAL_MODEL not in stats.stdout


def test_a_resumed_batch_keeps_rows_a_judge_answered_under_its_own_name(capable, tmp_path):
    """A new run (its cache has not named the answering model yet) re-derives those rows from the cache
    and, the verdicts unchanged, keeps their journal rows: decided_at, hence the reviews, stay."""
    from citecheck import audit, batch
    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps({"id": f"c{i}", "claim": CLAIM, "urls": [f"http://page/{i}"]}) + "\n"
                              for i in range(3)), encoding="utf-8")
    environ = {**only("ollama", capable.url), "CITECHECK_CACHE": str(tmp_path / "cache.json")}

    def once():
        ctx = RunContext.build(Settings.from_env(environ))

        def judged(claim, url):
            trace = verify.trace_text(claim, PAGE, ctx, url=url)
            return {**trace.row, "model": verify.answered_by(trace), "passages": trace.shown or None}
        return batch.run_batch(claims, ctx, db=tmp_path / "audit.db", verify=judged), len(capable.requests)

    first, asked = once()
    conn = audit.connect(tmp_path / "audit.db")
    before = {key: row["decided_at"] for key, row in audit.decided(conn, "claims").items()}
    conn.close()
    again, asked_again = once()
    conn = audit.connect(tmp_path / "audit.db")
    after = audit.decided(conn, "claims")
    conn.close()
    assert {(row["model"], row["label"]) for row in after.values()} == {(MODEL, "supported")}
    assert (first.decided, again.reused, again.decided) == (3, 3, 0) and asked_again == asked     # replayed
    assert {key: row["decided_at"] for key, row in after.items()} == before
    assert again.model == MODEL


def test_a_cluster_driver_accepts_a_row_named_by_a_cache_stamp_and_no_other_name(make_ctx):
    """A worker's row may name the model its recorded entries (or the driver's cache) are stamped with; a
    name no entry carries is still off the row contract."""
    from citecheck.batch import cluster
    from citecheck.cache import request_key
    ctx = make_ctx()
    gate = Gate.of(ctx.settings)
    row = {"url": "http://x/1", "label": "supported", "confidence": 0.9, "model": MODEL}
    entry = {"function": "judge.json/openai", "model": MODEL, "answer": {"content": json.dumps(
        {"label": "supported", "evidence_quote": None, "confidence": 0.9})}, "usage": None, "seconds": 0.1,
        "recorded": "2026-12-01"}
    claim = "Water boils at 100 °C."
    asked = {"function": "judge.json/openai", "model": LOCAL_MODEL, "request": {"claim": claim}}
    key = request_key(asked["function"], asked["model"], asked["request"])
    recorded = [[key, entry, asked]]

    def accepted(row: dict, recorded: list):
        return cluster.accepted(json.dumps({"row": row, "recorded": recorded}), claim, "http://x/1", ctx, gate)
    taken, entries = accepted(row, recorded)
    assert taken["model"] == MODEL and len(entries) == 1
    ctx.cache.put(key, entry)                                     # the driver stores it; a replay names it
    assert accepted(row, [])[0]["model"] == MODEL
    with pytest.raises(cluster.ResultInvalid, match="model"):
        accepted({**row, "model": "forged"}, [])
