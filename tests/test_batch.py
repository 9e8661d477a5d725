"""batch: precision arithmetic, malformed lines, failing citations, bounded concurrency, kill-and-resume."""
from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from killing import kill_mid_batch
from standins.crawlbase import NORMAL_TOKEN, CrawlingStandIn
from standins.crawlbase_storage import Storage, crawlbase_standin
from standins.jev import jev_standin
from standins.judge import judge_standin, verdict_json

from citecheck import batch
from citecheck.cache import CacheMiss
from citecheck.config import MissingSetting
from citecheck.judge import methods
from citecheck.verdict import review
from citecheck.web.fetch import CrawlbaseRejected

ROOT = Path(__file__).resolve().parent.parent


def fake_verify(claim: str, url: str) -> dict:
    """Labels by URL path, the way a page would settle them: /yes supported, /no contradicted, /dead 404."""
    if "/dead" in url:
        return {"url": url, "label": "unreachable", "reason": "http_404", "evidence_quote": None,
                "confidence": None, "final_url": url, "original_status": 404, "rid": None}
    label = "supported" if "/yes" in url else "contradicted" if "/no" in url else "not_found"
    return {"url": url, "label": label, "reason": None, "evidence_quote": f"quote for {claim}",
            "confidence": 0.9, "final_url": url, "original_status": 200, "rid": f"rid-{len(url)}"}


def write_jsonl(path: Path, items: list) -> Path:
    path.write_text("".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items),
                    encoding="utf-8")
    return path


def rows_of(labels: list[str]) -> list[dict]:
    return [{"label": label} for label in labels]


# ---------------------------------------------------------------- precision arithmetic

def test_precision_is_supported_over_all_and_over_reachable():
    rows = rows_of(["supported"] * 2 + ["unreachable"] * 3 + ["not_found"] * 3 + ["contradicted"])
    assert batch.precision_lines(rows) == ["citation_precision=0.2222 (2/9)",
                                           "reachable_precision=0.3333 (2/6)"]


def test_reachable_precision_is_na_when_nothing_was_reachable():
    assert batch.precision_lines(rows_of(["unreachable"] * 4)) == [
        "citation_precision=0.0000 (0/4)", "reachable_precision=n/a (0/0)"]
    assert batch.precision_lines([]) == ["citation_precision=n/a (0/0)", "reachable_precision=n/a (0/0)"]


def test_precision_rounds_to_four_places():
    rows = rows_of(["supported"] * 2 + ["not_found"])
    assert batch.precision_lines(rows) == ["citation_precision=0.6667 (2/3)",
                                           "reachable_precision=0.6667 (2/3)"]


# ---------------------------------------------------------------- reading

def test_malformed_lines_are_reported_by_number_and_the_rest_kept():
    lines = [b'{"id": "a", "claim": "A", "urls": ["http://x/yes"]}',
             b'{"id": "b", "claim": "B", "urls": ["http://x/no"]',          # truncated JSON
             b"",                                                           # blank: skipped silently
             b'["not", "an", "object"]',
             b'{"id": "c", "claim": "", "urls": []}',
             b'{"id": "d", "claim": "D", "urls": "http://x/yes"}',
             b'{"id": "a", "claim": "again", "urls": ["http://x/no"]}',
             b'{"id": "e", "claim": "caf\xe9", "urls": []}',                # latin-1, not UTF-8
             b'{"id": 7, "claim": "seven", "urls": ["http://x/yes", "http://x/yes"]}']
    parsed = batch.parse_lines(lines)
    assert [c.id for c in parsed.claims] == ["a", "7"]
    assert parsed.claims[1].urls == ("http://x/yes",)
    assert [p.split(":")[0] for p in parsed.problems] == [f"line {n}" for n in (2, 4, 5, 6, 7, 8)]
    assert "duplicate id 'a' (first on line 1)" in parsed.problems[4]
    assert parsed.notes == ["line 9: a URL is listed twice; it is checked once"]


def test_a_bom_does_not_cost_line_1(tmp_path):
    path = write_jsonl(tmp_path / "claims.jsonl", CLAIMS[:2])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    parsed = batch.read_claims(path)
    assert [c.id for c in parsed.claims] == ["c1", "c2"] and not parsed.problems


def test_text_that_is_not_text_and_empty_urls_are_reported_per_line(tmp_path, ctx):
    lines = ['{"id": "s1", "claim": "x\\ud800", "urls": ["http://x/yes"]}',
             '{"id": "s2", "claim": "ok", "urls": ["http://x/yes/\\udc00"]}',
             '{"id": "\\ud83d", "claim": "ok", "urls": ["http://x/yes"]}',
             '{"id": "e", "claim": "nothing cited", "urls": []}',
             '{"id": "good", "claim": "fine", "urls": ["http://x/yes/9"]}']
    path = write_jsonl(tmp_path / "claims.jsonl", lines)
    parsed = batch.read_claims(path)
    assert [c.id for c in parsed.claims] == ["good"]
    assert parsed.problems == [
        'line 1: "claim" is not text (a lone surrogate \\ud800 at character 2)',
        'line 2: "urls" is not text (a lone surrogate \\udc00 at character 14)',
        'line 3: "id" is not text (a lone surrogate \\ud83d at character 1)',
        'line 4: "urls" is empty: the claim cites nothing to check']
    result = batch.run_batch(path, ctx, verify=fake_verify)          # the batch runs the rest
    assert [r["id"] for r in result.rows] == ["good"] and result.problems == parsed.problems
    batch.write_csv(result.rows, tmp_path / "report.csv")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        batch.read_claims(tmp_path / "nope.jsonl")


# ---------------------------------------------------------------- running

CLAIMS = [{"id": "c1", "claim": "one", "urls": ["http://x/yes/1", "http://x/dead/1"]},
          {"id": "c2", "claim": "two", "urls": ["http://x/no/2", "http://x/yes/2"]},
          {"id": "c3", "claim": "three", "urls": ["http://x/dead/3"]},
          {"id": "c4", "claim": "four", "urls": ["http://x/maybe/4"]}]


def test_rows_come_back_in_input_order_with_overall(tmp_path, ctx):
    path = write_jsonl(tmp_path / "claims.jsonl", CLAIMS)
    result = batch.run_batch(path, ctx, verify=fake_verify, concurrency=3)
    assert [(r["id"], r["url"].rsplit("/", 2)[-2], r["overall"]) for r in result.rows] == [
        ("c1", "yes", "supported"), ("c1", "dead", "supported"),
        ("c2", "no", "contradicted"), ("c2", "yes", "contradicted"),
        ("c3", "dead", "unreachable"), ("c4", "maybe", "not_found")]
    assert (result.decided, result.reused) == (6, 0)
    assert batch.precision_lines(result.rows) == ["citation_precision=0.3333 (2/6)",
                                                  "reachable_precision=0.5000 (2/4)"]


def test_a_failing_citation_becomes_a_labelled_row(tmp_path, caplog, ctx):
    def flaky(claim, url):
        if "/no/" in url:
            raise ConnectionResetError("peer went away")
        if "/maybe/" in url:
            return {"url": url, "label": "probably"}
        return fake_verify(claim, url)
    result = batch.run_batch(write_jsonl(tmp_path / "b.jsonl", CLAIMS), ctx, verify=flaky)
    failed = [r for r in result.rows if "/no/" in r["url"] or "/maybe/" in r["url"]]
    assert [(r["label"], r["reason"], r["evidence_quote"]) for r in failed] == [
        ("not_found", "check_failed", None)] * 2
    assert "http://x/no/2: check failed: ConnectionResetError: peer went away" in caplog.text
    assert "label 'probably' is not one of" in caplog.text
    assert len(result.rows) == 6


@pytest.mark.parametrize("error", [CacheMiss("judge call is not in json_cache.json"), MissingSetting("OPENAI_API_KEY"),
                                   CrawlbaseRejected("CRAWLBASE_TOKEN was rejected")])
def test_a_setting_problem_stops_the_batch_but_keeps_what_was_decided(tmp_path, error, ctx):
    def offline(claim, url):
        if "/maybe/" in url:
            raise error
        return fake_verify(claim, url)
    path = write_jsonl(tmp_path / "b.jsonl", CLAIMS)
    with pytest.raises(type(error)):
        batch.run_batch(path, ctx, verify=offline, concurrency=1)
    again = batch.run_batch(path, ctx, verify=fake_verify)
    assert (again.reused, again.decided) == (5, 1)


def test_a_citation_that_finished_with_the_failing_one_is_yielded_before_the_error():
    import concurrent.futures as cf

    from citecheck.batch.pool import _finished
    ok, bad, running = cf.Future(), cf.Future(), cf.Future()
    ok.set_result("row a")
    bad.set_exception(MissingSetting("OPENAI_API_KEY"))
    running.set_running_or_notify_cancel()
    threading.Timer(0.05, running.set_result, ["row c"]).start()       # still running when the error is seen
    in_flight, got = {bad: "b", ok: "a", running: "c"}, []
    with pytest.raises(MissingSetting):
        for pair in _finished({bad, ok}, in_flight):
            got.append(pair)
    assert sorted(got) == [("a", "row a"), ("c", "row c")] and list(in_flight) == [bad]


def test_no_more_than_batch_concurrency_citations_run_at_once(tmp_path, make_ctx):
    ctx = make_ctx(batch_concurrency=3)
    lock, running, peak = threading.Lock(), [0], [0]

    def slow(claim, url):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return fake_verify(claim, url)
    items = [{"id": f"c{i}", "claim": f"claim {i}", "urls": [f"http://x/yes/{i}", f"http://x/maybe/{i}"]}
             for i in range(15)]
    result = batch.run_batch(write_jsonl(tmp_path / "many.jsonl", items), ctx, verify=slow)
    assert len(result.rows) == 30
    assert peak[0] == 3


def test_a_rerun_reads_finished_rows_back_and_retries_passing_failures(tmp_path, ctx):
    path = write_jsonl(tmp_path / "claims.jsonl", CLAIMS)
    calls = []

    def first(claim, url):
        calls.append(url)
        if "/maybe/" in url:
            return {"url": url, "label": "unreachable", "reason": "crawl_failed"}
        return fake_verify(claim, url)
    batch.run_batch(path, ctx, verify=first)
    calls.clear()
    second = batch.run_batch(path, ctx, verify=lambda c, u: calls.append(u) or fake_verify(c, u))
    assert calls == ["http://x/maybe/4"]
    assert (second.reused, second.decided) == (5, 1)
    with sqlite3.connect(os.environ["AUDIT_DB"]) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT id || url) FROM citations").fetchone() == (6, 6)
        assert conn.execute("SELECT reason FROM citations WHERE id = 'c4'").fetchone() == (None,)


def test_an_edited_claim_is_checked_again_and_its_row_replaced(tmp_path, ctx):
    path = write_jsonl(tmp_path / "claims.jsonl", CLAIMS)
    batch.run_batch(path, ctx, verify=fake_verify)
    edited = [dict(CLAIMS[0], claim="one, reworded"), *CLAIMS[1:]]
    result = batch.run_batch(write_jsonl(path, edited), ctx, verify=fake_verify)
    assert (result.reused, result.decided) == (4, 2)
    assert result.rows[0]["claim"] == "one, reworded"
    with sqlite3.connect(os.environ["AUDIT_DB"]) as conn:
        assert conn.execute("SELECT count(*) FROM citations").fetchone() == (6,)


def test_csv_has_one_row_per_citation_in_the_documented_columns(tmp_path, ctx):
    result = batch.run_batch(write_jsonl(tmp_path / "claims.jsonl", CLAIMS), ctx, verify=fake_verify)
    out = tmp_path / "report.csv"
    batch.write_csv(result.rows, out)
    with open(out, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    assert tuple(reader.fieldnames) == batch.CSV_COLUMNS
    assert [(r["id"], r["label"], r["overall"]) for r in rows] == [
        (r["id"], r["label"], r["overall"]) for r in result.rows]
    dead = rows[1]
    assert (dead["reason"], dead["original_status"], dead["rid"], dead["confidence"]) == (
        "http_404", "404", "", "")


def test_a_secret_in_any_csv_cell_is_redacted_reading_the_environment_once_per_row(tmp_path, monkeypatch):
    from test_audit import env_reads
    token = "tok-FAKE-every-cell-5Q"
    monkeypatch.setenv("OPENAI_API_KEY", token)
    reads = env_reads(monkeypatch)
    rows = [{column: f"{column} {token}!" for column in batch.CSV_COLUMNS} for _ in range(3)]
    batch.write_csv(rows, tmp_path / "report.csv")
    with open(tmp_path / "report.csv", newline="", encoding="utf-8") as handle:
        written = list(csv.DictReader(handle))
    assert token not in (tmp_path / "report.csv").read_text(encoding="utf-8")
    assert all(row[column] == f"{column} <OPENAI_API_KEY>!" for row in written
               for column in batch.CSV_COLUMNS)
    assert len(reads) == len(rows)


@pytest.mark.parametrize("text", ["=HYPERLINK(\"http://evil\")", "+1+2", "-2+3", "@SUM(A1)", "\tTab", "\rCR"])
def test_formula_cells_are_neutralised_by_owasps_rule(tmp_path, text):
    row = {**{column: None for column in batch.CSV_COLUMNS}, "id": "x", "claim": text, "url": "http://x/",
           "label": "supported", "evidence_quote": text, "confidence": 0.9, "original_status": 200,
           "overall": "supported"}
    out = tmp_path / "report.csv"
    batch.write_csv([row], out)
    with open(out, newline="", encoding="utf-8") as handle:
        [written] = list(csv.DictReader(handle))
    assert written["claim"] == written["evidence_quote"] == "'" + text
    assert (written["confidence"], written["original_status"], written["url"]) == ("0.9", "200", "http://x/")


# ---------------------------------------------------------------- kill and resume (a real process)

RUNNER = """
import sys, time
from citecheck import batch
def slow(claim, url):
    with open(sys.argv[2], "a") as log:
        log.write(url + "\\n")
    with open(sys.argv[2]) as log:
        started = len(log.read().split())
    time.sleep(0.05 if started <= 6 else 60)      # from the 7th on, wait for the kill: it lands mid-batch
    return {"url": url, "label": "supported" if url.endswith("0") else "not_found", "confidence": 0.7}
from citecheck.context import RunContext
batch.run_batch(sys.argv[1], RunContext.from_env(), verify=slow, concurrency=2)
"""


def test_a_killed_batch_resumes_without_redoing_or_duplicating(tmp_path, ctx):
    items = [{"id": f"c{i}", "claim": f"claim {i}", "urls": [f"http://x/{i}/{j}" for j in range(2)]}
             for i in range(20)]
    path = write_jsonl(tmp_path / "claims.jsonl", items)
    db, log = Path(os.environ["AUDIT_DB"]), tmp_path / "calls.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, str(path), str(log)], env=env, cwd=tmp_path)
    before = kill_mid_batch(proc, db, 6)
    assert 6 <= len(before) < 40, "the kill should land mid-batch"

    redone = []
    result = batch.run_batch(path, ctx, verify=lambda c, u: redone.append(u) or {"url": u, "label": "not_found"})
    assert len(result.rows) == 40
    assert not {f"{r['id']} {r['url']}" for r in result.rows if r["url"] in redone} & set(before)
    assert len(redone) == 40 - len(before)
    with sqlite3.connect(db) as conn:
        after = dict(conn.execute("SELECT id || ' ' || url, decided_at FROM citations").fetchall())
        assert conn.execute("SELECT count(*) FROM citations").fetchone() == (40,)
    assert {key: after[key] for key in before} == before


# ---------------------------------------------------------------- CLI

def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "citecheck", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})}, timeout=120)


def test_cli_reports_a_missing_file_in_one_line():
    done = cli("batch", "no/such/file.jsonl")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["citecheck batch: error: no/such/file.jsonl does not exist"]


def test_cli_rejects_a_file_with_no_valid_claim(tmp_path):
    done = cli("batch", str(write_jsonl(tmp_path / "bad.jsonl", ["{oops", '{"id": 1}'])))
    assert done.returncode == 1
    assert "line 1: not valid JSON" in done.stderr and 'line 2: missing "claim", "urls"' in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("no valid claims to check")


# ---------------------------------------------------------------- review threshold

def test_only_model_verdicts_below_the_threshold_go_to_a_person():
    rows = [{"label": "supported", "confidence": 0.95}, {"label": "contradicted", "confidence": 0.6},
            {"label": "not_found", "confidence": 0.0},           # guarded: the quote was not on the page
            {"label": "unreachable", "confidence": None}, {"label": "not_found", "confidence": None}]
    assert [review.needs_review(r, 0.8) for r in rows] == [False, True, True, False, False]
    assert review.review_share(rows, [0.0, 0.5, 0.8, 0.99, 1.0]) == [
        {"threshold": 0.0, "to_review": 0, "share": 0.0}, {"threshold": 0.5, "to_review": 1, "share": 0.2},
        {"threshold": 0.8, "to_review": 2, "share": 0.4}, {"threshold": 0.99, "to_review": 3, "share": 0.6},
        {"threshold": 1.0, "to_review": 5, "share": 1.0}]                 # AUTO_ACCEPT=1: everything
    assert review.review_share([], [0.8]) == [{"threshold": 0.8, "to_review": 0, "share": 0.0}]


def test_rows_are_gated_for_the_model_that_answered_and_gated_again_once_it_is_calibrated(tmp_path, make_ctx):
    """Uncalibrated (the default): every verdict with a confidence to a person, with its note, stored auto=0;
    no model asked (a 404) stays automatic. Once the model has an entry, a resumed batch re-gates its rows
    by it and records the new `auto` in the journal."""
    table, db = tmp_path / "gate.json", tmp_path / "journal.db"
    ctx = make_ctx(auto_accept_table=table)
    model = ctx.settings.judge_model                      # what the journal records as the deciding model
    path = write_jsonl(tmp_path / "claims.jsonl", CLAIMS)
    first = batch.run_batch(path, ctx, verify=lambda c, u: {**fake_verify(c, u), "model": model}, db=db)
    judged = [r for r in first.rows if r["confidence"] is not None]
    assert len(judged) == 4 and not any(r["auto"] for r in judged)
    assert {r["auto_note"] for r in judged} == {f"uncalibrated: no AUTO_ACCEPT for {model} in {table}: run "
                                                f"`calibrate --model {model} --write` or set AUTO_ACCEPT"}
    assert [(r["auto"], r["auto_note"]) for r in first.rows if r["confidence"] is None] == [(True, None)] * 2
    with sqlite3.connect(db) as conn:
        assert sorted(conn.execute("SELECT auto FROM citations").fetchall()) == [(0,)] * 4 + [(1,)] * 2
    table.write_text(json.dumps({model: {"threshold": 0.85}}))
    second = batch.run_batch(path, ctx, verify=lambda c, u: pytest.fail("nothing is checked again"), db=db)
    assert second.reused == 6 and all(r["auto"] and r["auto_note"] is None for r in second.rows)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT auto FROM citations").fetchall() == [(1,)] * 6


# ---------------------------------------------------------------- the real pipeline against stand-ins

SEA_LEVEL = "At sea level, pure water boils at 100 °C (212 °F)."
FAR_FROM_BOILING = ("Water at 50 °C is hot enough to scald skin if you hold a hand in it, "
                    "but it is far from boiling.")


def scripted_model(body: dict) -> str:
    """The judge stand-in's 'model': quotes the page for 100 °C, contradicts 50 °C, invents a quote for
    'invented', and finds nothing otherwise."""
    claim, passages = body["messages"][1]["content"].split("\n\nPassages:\n", 1)
    flat = " ".join(passages.split())
    if "100 °C" in claim and SEA_LEVEL in flat:
        return verdict_json("supported", SEA_LEVEL, 0.95)
    if "50 °C" in claim and FAR_FROM_BOILING in flat:
        return verdict_json("contradicted", FAR_FROM_BOILING, 0.72)
    if "invented" in claim:
        return verdict_json("supported", "Water boils at 90 degrees in every kitchen.", 0.9)
    return verdict_json("not_found", None, 0.6)


@pytest.fixture
def crawlbase(fixture_site, monkeypatch):
    """Crawling + Storage API stand-ins on one base URL, the judge stand-in, a recognisable fake token."""
    from citecheck.web import fetch
    storage = Storage()
    with crawlbase_standin(CrawlingStandIn(), storage) as api, judge_standin() as judge:
        judge.script.content = scripted_model
        monkeypatch.setenv("CRAWLBASE_TOKEN", NORMAL_TOKEN)
        monkeypatch.setenv("CRAWLBASE_API_URL", api.url)
        monkeypatch.setenv("CITECHECK_ALLOW_HOSTS", f"{fixture_site.host}:{fixture_site.port}")   # the PDF: direct
        monkeypatch.setenv("OPENAI_BASE_URL", judge.url + "/v1")
        monkeypatch.setattr(fetch.pages, "BACKOFF", (0.0, 0.0))
        yield storage


def test_batch_through_crawlbase_and_the_judge_writes_csv_and_audit_rows_without_the_token(
        crawlbase, fixture_site, tmp_path, capsys):
    from standins.judge import free_port

    from citecheck import cli
    url = fixture_site.url
    path = write_jsonl(tmp_path / "claims.jsonl", [
        {"id": "h1", "claim": "At sea level, pure water boils at 100 °C.",
         "urls": [url("/articles/boiling-point"), url("/articles/boiling-point-table-2019")]},
        {"id": "h2", "claim": "Water boils at 50 °C at sea level.",
         "urls": [url("/articles/water-boiling-point")]},
        '{"id": "broken", "claim": "no closing brace"',
        {"id": "h3", "claim": "An invented quote backs this claim.",
         "urls": [url("/articles/boiling-point")]},
        {"id": "h4", "claim": "Steam tables list 100 °C at sea level.",
         "urls": [url("/reports/boiling-point-survey.pdf"), url("/blog/2021/03/boiling-at-altitude"),
                  url("/articles/steam-tables"), f"http://127.0.0.1:{free_port()}/down"]}])
    out = tmp_path / "report.csv"
    code = cli.main(["batch", str(path), "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 1                                   # a line was skipped, and said so
    assert printed.err.splitlines()[0] == f"citecheck batch: {path}: line 3: not valid JSON " \
                                           "(Expecting ',' delimiter at column 45)"
    assert printed.out.splitlines() == ["citation_precision=0.1250 (1/8)", "reachable_precision=0.2000 (1/5)"]
    told = [line for line in printed.err.splitlines() if "to a person" in line]  # once, not once per row
    assert len(told) == 1 and " in data/gate.json: run " in told[0]
    assert told[0].startswith("citecheck batch: 4 verdicts to a person, uncalibrated: no AUTO_ACCEPT for ")

    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["id"], r["label"], r["reason"], r["overall"]) for r in rows] == [
        ("h1", "supported", "", "supported"), ("h1", "unreachable", "http_404", "supported"),
        ("h2", "contradicted", "", "contradicted"),
        ("h3", "not_found", "evidence_quote_not_in_source", "not_found"),
        ("h4", "not_found", "", "not_found"),                  # the PDF, downloaded directly, read and judged
        ("h4", "not_found", "redirected_to_homepage", "not_found"),
        ("h4", "unreachable", "soft_404", "not_found"), ("h4", "unreachable", "crawl_failed", "not_found")]
    assert rows[0]["evidence_quote"] == SEA_LEVEL and rows[2]["final_url"] == url("/articles/boiling-point")

    with sqlite3.connect(os.environ["AUDIT_DB"]) as conn:
        audit_rows = conn.execute("SELECT id, url, label, rid, decided_at FROM citations").fetchall()
    assert len(audit_rows) == 8
    rids = {u.rsplit("/", 1)[-1]: rid for _, u, _, rid, _ in audit_rows}
    assert rids["boiling-point-survey.pdf"] == "" and rids["down"] == ""
    assert rids["boiling-point"].startswith("rid") and rids["boiling-point"] in crawlbase.pages

    # the stored page comes back by its rid through the Storage API
    assert cli.main(["replay", rids["boiling-point"]]) == 0
    assert "pure water boils at 100 °C" in capsys.readouterr().out

    # the token is nowhere: not in the CSV, the audit DB, the cache, nor anything printed
    assert NORMAL_TOKEN not in printed.out + printed.err
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"report.csv", "audit.db", "json_cache.sqlite"}
    assert [p.name for p in written if NORMAL_TOKEN.encode() in p.read_bytes()] == []


def test_the_progress_bar_shows_on_a_terminal_only(monkeypatch):
    def shown(tty: bool, asked: bool) -> bool:
        monkeypatch.setattr(sys.stderr, "isatty", lambda: tty, raising=False)
        with batch._progress(3, asked) as bar:
            return not bar.disable
    assert [shown(True, True), shown(False, True), shown(True, False)] == [True, False, False]


@pytest.mark.parametrize("method", ["decompose", "pooled"])
def test_the_csv_and_the_journal_name_the_method_and_the_model_that_answered(method, fixture_site, tmp_path,
                                                                             capsys, monkeypatch):
    """Only a Choice judge: decompose falls back to pooled and every judged row says pooled (a pooled run
    too), a dead link null; the journal's model is TYPESAFE_MODEL's, which answered, not JUDGE_MODEL; a
    resumed batch reads the method back and asks nothing again."""
    from citecheck import cli
    from citecheck.web import fetch
    monkeypatch.setattr(methods, "_said", set())
    monkeypatch.setattr(fetch.pages, "BACKOFF", (0.0, 0.0))
    url = fixture_site.url
    path = write_jsonl(tmp_path / "claims.jsonl", [
        {"id": "h1", "claim": "At sea level, pure water boils at 100 °C.",
         "urls": [url("/articles/boiling-point"), url("/articles/boiling-point-table-2019")]}])
    with jev_standin({"yes": 0.9, "no": 0.05, "unknown": 0.05}) as jev:
        env = {"CITECHECK_ALLOW_PRIVATE": "1", "TYPESAFE_ENDPOINT": jev.url, "JUDGE_METHOD": method,
               "TYPESAFE_MODEL": "choice-m", "JUDGE_MODEL": "json-m"}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert cli.main(["batch", str(path), "--out", str(tmp_path / "first.csv")]) == 0
        asked = len(jev.requests)
        assert cli.main(["batch", str(path), "--out", str(tmp_path / "again.csv")]) == 0
        assert len(jev.requests) == asked > 0                        # resumed: nothing asked again
    assert ("the decompose method needs a JSON judge" in capsys.readouterr().err) is (method == "decompose")
    for name in ("first.csv", "again.csv"):
        with open(tmp_path / name, newline="", encoding="utf-8") as handle:
            assert [(r["label"], r["method"]) for r in csv.DictReader(handle)] == [
                ("supported", "pooled"), ("unreachable", "")]
    with sqlite3.connect(os.environ["AUDIT_DB"]) as conn:
        assert conn.execute("SELECT model, method FROM citations ORDER BY url").fetchall() == [
            ("choice-m", "pooled"), ("", None)]
