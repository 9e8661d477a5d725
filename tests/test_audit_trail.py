"""Every decided citation is audited: /verify through the app's one writer thread (no row lost under its
concurrency limit, a 504 still audited), `verify` and `check` when AUDIT_DB is set, nothing when it is not."""
from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time

import httpx
import pytest

from citecheck import audit, cli
from citecheck.config import Settings
from citecheck.paths import ROOT
from citecheck.serve.api import Limits, create_app

PASSAGES = ["First passage, quoted here.", "Second passage."]


def answered(claim, urls):
    """A stand-in verify: every URL supported with a quote, the passages it read attached."""
    time.sleep(0.01)
    return {"claim": claim, "overall": "supported",
            "citations": [{"url": u, "label": "supported", "evidence_quote": "quoted here", "confidence": 0.9,
                           "final_url": u, "original_status": 200, "rid": None, "reason": None,
                           "passages": PASSAGES} for u in urls]}


async def _post_all(app, bodies):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=60) as client:
        return await asyncio.gather(*(client.post("/verify", json=body) for body in bodies))


def post_all(app, bodies):
    return asyncio.run(_post_all(app, bodies))


def rows_in(db):
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute("SELECT * FROM citations ORDER BY id, url")]


def test_verify_api_audits_every_answer_through_one_writer_and_loses_none(make_ctx, tmp_path):
    lock, running, most = threading.Lock(), [0], [0]

    def verify(claim, urls):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return answered(claim, urls)
        finally:
            with lock:
                running[0] -= 1
    app = create_app(make_ctx(auto_accept=0.8), verify, limits=Limits(concurrency=4, queue_timeout=60))
    bodies = [{"claim": f"claim {i}", "urls": [f"https://example.org/{i}/a", f"https://example.org/{i}/b"]}
              for i in range(60)]
    responses = post_all(app, bodies)
    app.state.audit_writer.close()                       # what the app's shutdown does: drain, then stop
    assert [r.status_code for r in responses] == [200] * 60
    assert all("passages" not in c for r in responses for c in r.json()["citations"])   # audit only
    assert all(c["auto"] is True for r in responses for c in r.json()["citations"])
    rows = rows_in(tmp_path / "audit.db")
    assert len(rows) == 120 and {r["batch"] for r in rows} == {"api"}
    assert {r["id"] for r in rows} == {audit.claim_id(f"claim {i}") for i in range(60)}
    assert all(json.loads(r["passages"]) == PASSAGES and r["auto"] == 1 for r in rows)
    assert 1 <= most[0] <= 4                             # API_CONCURRENCY verifications at most at once


def test_the_api_audits_the_model_and_method_that_answered_each_citation(make_ctx, tmp_path):
    """The audit's model is verify's `model` (the one that answered), not JUDGE_MODEL; `method` is the row's;
    the answer shows `method`, never `model`."""
    def pooled_answer(claim, urls):
        result = answered(claim, urls)
        for citation, model in zip(result["citations"], ("choice-m", None)):
            citation.update(model=model, method="pooled" if model else None)
        return result
    app = create_app(make_ctx(judge_model="json-m"), pooled_answer)
    [response] = post_all(app, [{"claim": "c", "urls": ["https://example.org/a", "https://example.org/b"]}])
    app.state.audit_writer.close()
    shown = [(c["method"], "model" in c) for c in response.json()["citations"]]
    assert shown == [("pooled", False), (None, False)]
    audited = [(r["model"], r["method"]) for r in rows_in(tmp_path / "audit.db")]
    assert audited == [("choice-m", "pooled"), ("", None)]


def test_a_verification_that_overran_the_deadline_is_still_audited(make_ctx, tmp_path):
    def slow(claim, urls):
        time.sleep(0.6)
        return answered(claim, urls)
    app = create_app(make_ctx(), slow, limits=Limits(deadline=0.1))
    [response] = post_all(app, [{"claim": "slow claim", "urls": ["https://example.org/slow"]}])
    assert response.status_code == 504
    time.sleep(0.8)
    app.state.audit_writer.close()
    assert [r["url"] for r in rows_in(tmp_path / "audit.db")] == ["https://example.org/slow"]


def test_no_audit_db_set_means_no_writer_and_no_file(make_ctx, tmp_path):
    app = create_app(make_ctx(audit_db=None), answered)
    assert app.state.audit_writer is None
    [response] = post_all(app, [{"claim": "c", "urls": ["https://example.org/x"]}])
    assert response.status_code == 200 and not (tmp_path / "audit.db").exists()
    assert Settings.from_env({}).audit_db is None and Settings.from_env({}).journal.name == "audit.db"


@pytest.mark.parametrize("audit_db_set", [True, False])
def test_check_audits_when_audit_db_is_set(audit_db_set, monkeypatch, tmp_path, capsys):
    from standins.jev import jev_standin
    if not audit_db_set:
        monkeypatch.delenv("AUDIT_DB")
        monkeypatch.chdir(tmp_path)
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as server:
        monkeypatch.setenv("TYPESAFE_ENDPOINT", server.url)
        monkeypatch.setenv("TYPESAFE_MODEL", "choice-m")
        monkeypatch.setenv("JUDGE_MODEL", "json-m")
        assert cli.main(["check", "--source", str(ROOT / "data/rfc7519.txt"),
                         "--citations", str(ROOT / "data/citations.json"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    if not audit_db_set:
        assert not (tmp_path / "audit.db").exists()
        return
    rows = {r["id"]: r for r in rows_in(tmp_path / "audit.db")}
    assert sorted(rows) == sorted(r["id"] for r in printed)
    assert {r["batch"] for r in rows.values()} == {"check:citations.json"}
    assert [bool(rows[r["id"]]["auto"]) for r in printed] == [r["auto"] for r in printed]
    assert rows["C9"]["status"] == "misquoted" and rows["C9"]["flow"] == "source"
    assert rows["C9"]["url"] == str(ROOT / "data/rfc7519.txt")
    fabricated = {r["id"] for r in printed if r["verdict"] == "fabricated"}          # no model asked
    answered = [(rows[r["id"]]["model"], rows[r["id"]]["method"], r["method"]) for r in printed]
    assert fabricated and answered == [
        ("", None, None) if r["id"] in fabricated else ("choice-m", "choice", "choice") for r in printed]


@pytest.mark.parametrize("audit_db_set", [True, False])
def test_verify_cli_audits_with_the_passages_the_judge_read(audit_db_set, monkeypatch, tmp_path, capsys):
    from standins.judge import judge_standin, verdict_json

    from citecheck.web import fixture_site as site
    if not audit_db_set:
        monkeypatch.delenv("AUDIT_DB")
        monkeypatch.chdir(tmp_path)
    with site.start(port=0) as fixture, judge_standin() as judge:
        judge.script.content = lambda body: verdict_json("supported", "At sea level, pure water boils at 100 °C "
                                                                      "(212 °F).", 0.95)
        monkeypatch.setenv("CITECHECK_ALLOW_PRIVATE", "1")
        monkeypatch.setenv("OPENAI_BASE_URL", judge.url + "/v1")
        monkeypatch.setenv("AUTO_ACCEPT", "0.8")                  # written under the 0.8 default
        urls = [fixture.url("/articles/boiling-point"), fixture.url("/articles/boiling-point-table-2019")]
        assert cli.main(["verify", "--claim", "Water boils at 100 °C.", *[a for u in urls for a in ("--url", u)]]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [c["auto"] for c in printed["citations"]] == [True, True]
    assert all("passages" not in c for c in printed["citations"])
    if not audit_db_set:
        assert not (tmp_path / "audit.db").exists()
        return
    rows = rows_in(tmp_path / "audit.db")
    assert [(r["batch"], r["label"], r["auto"]) for r in rows] == [("verify", "supported", 1),
                                                                 ("verify", "unreachable", 1)]
    shown = json.loads(rows[0]["passages"])
    assert 1 <= len(shown) <= 3 and any("boils at 100 °C" in p for p in shown)
    assert rows[1]["passages"] is None                   # the 404 settled it: no model asked
