"""audit: one row per decided citation, no secrets, migrations; `replay RID` through the real crawlbase SDK."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from audit_dbs import at_version
from standins.crawlbase_storage import Storage, storage_standin

from citecheck import audit, config
from citecheck.audit import migrations
from citecheck.audit.writer import Writer
from citecheck.config import Secrets, Settings
from citecheck.web.fetch import storage as storage_api

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "tok-FAKE-9f3c1e77d2"
PAGE = "<html><body><h1>Boiling</h1><p>At sea level, pure water boils at 100 °C.</p></body></html>"


def citation(**overrides) -> dict:
    row = {"url": "http://site/a", "label": "supported", "reason": None, "evidence_quote": "boils at 100 °C",
           "confidence": 0.93, "final_url": "http://site/a", "original_status": 200, "rid": "r1"}
    return {**row, **overrides}


def test_every_decided_citation_has_one_row_with_utc_time(tmp_path):
    conn = audit.connect(tmp_path / "a.db")
    audit.write_citation(conn, "b", "c1", "claim", citation(), "model-x")
    audit.write_citation(conn, "b", "c1", "claim", citation(url="http://site/x.pdf", label="not_found",
                                                   reason="pdf_unsupported", rid=None, confidence=None))
    audit.write_citation(conn, "b", "c1", "claim", citation(label="contradicted"), "model-x")   # same key again
    rows = audit.decided(conn, "b")
    assert sorted(rows) == [("c1", "http://site/a"), ("c1", "http://site/x.pdf")]
    assert rows[("c1", "http://site/a")]["label"] == "contradicted"
    pdf = rows[("c1", "http://site/x.pdf")]
    assert (pdf["rid"], pdf["reason"], pdf["confidence"]) == ("", "pdf_unsupported", None)
    assert pdf["decided_at"].endswith("Z") and pdf["decided_at"][10] == "T"
    assert audit.decided(conn, "other") == {}


def test_secrets_are_redacted_before_they_reach_the_database(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAWLBASE_TOKEN", TOKEN)
    conn = audit.connect(tmp_path / "a.db")
    audit.write_citation(conn, "b", "c1", "claim", citation(reason="crawl_failed", evidence_quote=f"?token={TOKEN}"))
    conn.close()
    assert TOKEN.encode() not in (tmp_path / "a.db").read_bytes()
    row = audit.decided(audit.connect(tmp_path / "a.db"), "b")[("c1", "http://site/a")]
    assert row["evidence_quote"] == "?token=<CRAWLBASE_TOKEN>"


def env_reads(monkeypatch) -> list:
    """One item per reading of the secret variables (`config.Secrets.from_env`) from now on."""
    from citecheck import config
    reads, from_env = [], config.Secrets.from_env
    counted = classmethod(lambda cls, environ=None: reads.append(1) or from_env(environ))
    monkeypatch.setattr(config.Secrets, "from_env", counted)
    return reads


def test_a_secret_in_any_text_field_is_redacted_reading_the_environment_once_per_row(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAWLBASE_TOKEN", TOKEN)
    reads = env_reads(monkeypatch)
    conn = audit.connect(tmp_path / "a.db")
    texts = {key: f"{key} {TOKEN}" for key in ("url", "evidence_quote", "final_url", "rid", "method", "diff")}
    row = audit.write_citation(conn, f"b {TOKEN}", f"c1 {TOKEN}", f"claim {TOKEN}",
                               citation(**texts, passages=[f"passage {TOKEN}"]), model=f"m {TOKEN}")
    conn.close()
    assert TOKEN.encode() not in (tmp_path / "a.db").read_bytes() and len(reads) == 1
    assert all(TOKEN not in value and "<CRAWLBASE_TOKEN>" in value for key, value in row.items()
               if key in (*texts, "batch", "id", "claim", "passages", "model"))


def test_an_unopenable_database_names_its_path(tmp_path):
    with pytest.raises(OSError, match="no/such/dir/audit.db"):
        audit.connect(tmp_path / "no/such/dir/audit.db")


# ---------------------------------------------------------------- replay

def settings(storage=None, **secrets) -> Settings:
    """Settings pointing the SDK at the Storage stand-in, with these secrets."""
    return Settings(crawlbase_api_url=storage.url if storage else "", secrets=Secrets(secrets))


def replay(rid, storage=None, **secrets) -> str:
    return storage_api.replay(rid, settings(storage, **secrets))


@pytest.fixture
def storage():
    store = Storage(tokens=(TOKEN, "js-" + TOKEN))
    store.store("http://site/a", PAGE, rid="a1B2c3D4e5F6")
    with storage_standin(store) as server:
        yield server


def test_replay_prints_the_stored_page(storage):
    assert replay("a1B2c3D4e5F6", storage, CRAWLBASE_TOKEN=TOKEN) == PAGE
    assert storage.requests[-1].path.startswith("/storage?token=")


def test_the_javascript_token_works_too(storage):
    assert replay("a1B2c3D4e5F6", storage, CRAWLBASE_JS_TOKEN="js-" + TOKEN) == PAGE


def test_an_unknown_rid_or_a_bad_token_is_a_clear_error(storage):
    with pytest.raises(LookupError, match="no stored page for rid nope"):
        replay("nope", storage, CRAWLBASE_TOKEN=TOKEN)
    with pytest.raises(OSError, match="HTTP 401") as err:
        replay("a1B2c3D4e5F6", storage, CRAWLBASE_TOKEN="wrong-token-value")
    assert "wrong-token-value" not in str(err.value)


def test_a_missing_token_names_the_variable_before_any_request(storage):
    with pytest.raises(config.MissingSetting, match="CRAWLBASE_TOKEN is not set.*CRAWLBASE_JS_TOKEN"):
        replay("a1B2c3D4e5F6", storage)
    assert storage.requests == []


@pytest.mark.parametrize("rid", ["", "  ", "https://api.crawlbase.com/storage?rid=x", "two words"])
def test_something_that_is_not_a_rid_is_refused(rid):
    with pytest.raises(ValueError, match="not a rid"):
        replay(rid, CRAWLBASE_TOKEN=TOKEN)


def test_an_unreachable_storage_api_is_one_line_without_the_token():
    dead = Settings(crawlbase_api_url="http://127.0.0.1:9",         # discard port: connection refused
                    secrets=Secrets({"CRAWLBASE_TOKEN": TOKEN}))
    with pytest.raises(OSError, match="Storage API unreachable") as err:
        storage_api.replay("a1B2c3D4e5F6", dead)
    assert TOKEN not in str(err.value)


def replay_cli(rid, env):
    clean = {k: v for k, v in os.environ.items() if k not in config.SECRETS}
    return subprocess.run([sys.executable, "-m", "citecheck", "replay", rid], capture_output=True, text=True,
                          cwd=ROOT, env={**clean, **env}, timeout=60)


def test_replay_cli_prints_the_page_or_one_line_naming_the_variable(storage):
    done = replay_cli("a1B2c3D4e5F6", {"CRAWLBASE_TOKEN": TOKEN, "CRAWLBASE_API_URL": storage.url})
    assert (done.returncode, done.stdout, done.stderr) == (0, PAGE + "\n", "")
    missing = replay_cli("a1B2c3D4e5F6", {"CRAWLBASE_API_URL": storage.url})
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.splitlines() == ["citecheck replay: error: CRAWLBASE_TOKEN is not set: set it (or "
                                           "CRAWLBASE_JS_TOKEN) to read stored pages through the Crawlbase "
                                           "Storage API"]
    unknown = replay_cli("gone", {"CRAWLBASE_TOKEN": TOKEN, "CRAWLBASE_API_URL": storage.url})
    assert unknown.returncode == 1 and TOKEN not in unknown.stderr
    assert unknown.stderr.splitlines() == ["citecheck replay: error: no stored page for rid gone "
                                           "(never stored, expired or deleted)"]


# ---------------------------------------------------------------- migrations

OLD_DB = ROOT / "tests" / "data" / "audit_v0.db"
"""An audit DB written by the release before migrations existed (4 rows in `citations`)."""


def test_a_pre_migration_db_is_adopted_in_place_losing_nothing(tmp_path):
    path = tmp_path / "old.db"
    shutil.copy(OLD_DB, path)
    before = sqlite3.connect(path).execute("SELECT * FROM citations ORDER BY batch, id, url").fetchall()
    conn = audit.connect(path)
    assert migrations.applied(conn) == list(range(1, migrations.LATEST + 1))
    after = [tuple(r) for r in conn.execute("SELECT * FROM citations ORDER BY batch, id, url")]
    old = len(before[0])
    assert [row[:old] for row in after] == before and len(after) == 4
    assert {row[old:] for row in after} == {(None, "web", None, None, None, None, None, None, None)}  # auto: a person
    assert [c for c, in conn.execute("SELECT name FROM pragma_table_info('citations')")] == list(audit.COLUMNS)


def test_a_db_of_the_previous_version_gains_method_keeping_its_rows(tmp_path):
    """A DB at migration 3 (the release before `method`) is migrated in place: every row and review kept,
    `method` NULL on them; a row written afterwards records its method."""
    path = tmp_path / "v3.db"
    raw = at_version(path, 3)
    columns = [c for c, in raw.execute("SELECT name FROM pragma_table_info('citations')")]
    assert "method" not in columns
    raw.execute(f"INSERT INTO citations ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                ["b", "c1", "claim", "http://site/a", "supported", None, 0.9, "q", None, 200, "r1", "m",
                 "2026-01-01T00:00:00.000000Z", 1, "web", None, None, None, '["p"]'])
    raw.commit()
    raw.close()
    conn = audit.connect(path)
    assert migrations.applied(conn) == [1, 2, 3, 4, 5] == list(range(1, migrations.LATEST + 1))
    kept = audit.decided(conn, "b")[("c1", "http://site/a")]
    assert (kept["label"], kept["model"], kept["auto"], kept["passages"], kept["method"]) == (
        "supported", "m", True, '["p"]', None)
    new = audit.write_citation(conn, "b", "c2", "claim", {**citation(), "model": "m2", "method": "pooled"})
    assert (new["model"], new["method"]) == ("m2", "pooled") == tuple(audit.decided(conn, "b")[
        ("c2", "http://site/a")][k] for k in ("model", "method"))


def test_migrations_are_idempotent(tmp_path):
    path = tmp_path / "a.db"
    conn = audit.connect(path)
    audit.write_citation(conn, "b", "c1", "claim", citation())
    conn.close()
    conn = audit.connect(path)
    assert migrations.migrate(conn) == []
    assert len(audit.decided(conn, "b")) == 1


def test_a_db_from_a_newer_citecheck_is_refused_naming_file_and_version(tmp_path):
    path = tmp_path / "new.db"
    audit.connect(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO citecheck_migrations VALUES (?, 'from the future', 'x')", (migrations.LATEST + 1,))
    with pytest.raises(OSError, match=rf"new.db is at schema version {migrations.LATEST + 1}"):
        audit.connect(path)


def test_a_failing_migration_leaves_the_schema_as_it_was(tmp_path, monkeypatch):
    def broken(conn):
        conn.execute("CREATE TABLE half (x)")
        raise sqlite3.OperationalError("disk I/O error")
    path = tmp_path / "a.db"
    audit.connect(path).close()
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, (99, "broken", broken)])
    monkeypatch.setattr(migrations, "LATEST", 99)
    with pytest.raises(OSError, match="disk I/O error"):
        audit.connect(path)
    tables = {n for n, in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half" not in tables and 99 not in migrations.applied(sqlite3.connect(path))


def test_the_old_db_is_upgraded_to_the_gate_and_reviews_tables_and_can_be_reviewed(tmp_path):
    from citecheck.audit import reviews
    from citecheck.serve.review_app import queue
    path = tmp_path / "old.db"
    shutil.copy(OLD_DB, path)
    conn = audit.connect(path)
    names = [n for n, in conn.execute("SELECT name FROM citecheck_migrations ORDER BY version")]
    assert names == ["citations: one row per (batch, id, url) decided",
                     "citations: the gate's decision and what the judge read; source-document rows",
                     "reviews: a person's decisions on citations, every one kept",
                     "citations: the judge method that answered "
                     "(NULL: no model asked, or decided before this)",
                     "citations: where the evidence quote stands in the text the row names "
                     "(NULL: none, or before this)"]
    old = conn.execute("SELECT * FROM citations ORDER BY batch, id, url").fetchone()
    assert old["auto"] is None and old["flow"] == "web" and old["passages"] is None
    assert len(queue.ordered_keys(conn, queue.Filters())) == 4             # an unknown gate goes to a person
    saved = reviews.record(conn, reviews.Decision(old["batch"], old["id"], old["url"], old["decided_at"], None,
                                                  "confirm", None, "checked by hand", "Ann"), audit.utc_now())
    assert (saved["label"], saved["judged_label"], saved["reviewer"], saved["note"]) == (
        old["label"], old["label"], "Ann", "checked by hand")
    assert len(queue.ordered_keys(conn, queue.Filters())) == 3
    conn.close()
    assert migrations.migrate(sqlite3.connect(path)) == []                  # opened again: nothing to do


def decision(row, seen=None, action="confirm", label=None, who="Ann", note=""):
    from citecheck.audit.reviews import Decision
    return Decision(row["batch"], row["id"], row["url"], row["decided_at"], seen, action, label, note, who)


def test_reviews_keep_history_and_refuse_what_would_overwrite(tmp_path):
    from citecheck.audit import reviews
    conn = audit.connect(tmp_path / "a.db")
    row = audit.write_citation(conn, "b", "c1", "claim", citation(), "m")
    first = reviews.record(conn, decision(row), "t1")
    with pytest.raises(reviews.ReviewRefused, match="reviewed meanwhile by Ann at t1 .confirm: supported.") as late:
        reviews.record(conn, decision(row, who="Bob", action="correct", label="not_found"), "t2")
    assert late.value.kind == "reviewed"
    second = reviews.record(conn, decision(row, seen=first["review_id"], who="Bob", action="correct",
                                           label="not_found", note="the page says nothing"), "t3")
    assert second["replaces"] == first["review_id"]
    assert [(h["reviewer"], h["action"], h["label"]) for h in reviews.history(conn, "b", "c1", row["url"])] == [
        ("Ann", "confirm", "supported"), ("Bob", "correct", "not_found")]
    assert reviews.current(conn, "b", "c1", row["url"])["review_id"] == second["review_id"]
    with pytest.raises(reviews.ReviewRefused, match="no citation c9") as missing:
        reviews.record(conn, decision({**row, "id": "c9"}), "t4")
    assert missing.value.kind == "missing"
    with pytest.raises(reviews.ReviewRefused, match="already says supported"):
        reviews.record(conn, decision(row, seen=second["review_id"], action="correct", label="supported"), "t5")
    with pytest.raises(reviews.ReviewRefused, match="needs one of the labels"):
        reviews.record(conn, decision(row, seen=second["review_id"], action="correct", label="verified"), "t5")
    again = audit.write_citation(conn, "b", "c1", "claim", citation(label="contradicted"), "m2")  # re-decided
    with pytest.raises(reviews.ReviewRefused, match="decided again") as stale:
        reviews.record(conn, decision({**row, "decided_at": "2000-01-01T00:00:00Z"}, seen=second["review_id"]), "t6")
    assert stale.value.kind == "stale"
    assert reviews.current(conn, "b", "c1", row["url"]) is None             # the new verdict awaits a person
    assert len(reviews.history(conn, "b", "c1", row["url"])) == 2           # nothing lost
    assert again["label"] == "contradicted"


def test_the_writer_thread_loses_no_write_and_reports_each_failure_to_its_caller(tmp_path):
    writer = Writer(tmp_path / "a.db")
    futures = [writer.submit(lambda conn, i=i: audit.write_citation(conn, "b", f"c{i}", "claim", citation()))
               for i in range(200)]
    failing = writer.submit(lambda conn: conn.execute("SELECT * FROM no_such_table"))
    writer.close()
    assert all(f.done() and f.exception() is None for f in futures)
    with pytest.raises(sqlite3.OperationalError):
        failing.result()
    assert len(audit.decided(audit.connect(tmp_path / "a.db"), "b")) == 200
    with pytest.raises(RuntimeError, match="has stopped"):
        writer.submit(lambda conn: None)


def test_a_writer_on_an_unopenable_path_fails_at_once_naming_it(tmp_path):
    with pytest.raises(OSError, match="no/such/dir/a.db"):
        Writer(tmp_path / "no/such/dir/a.db")


def test_check_audits_source_document_rows_with_the_section_and_the_misquote(tmp_path, monkeypatch):
    from citecheck import check
    from citecheck.audit.source import write_check
    from citecheck.source import sources
    doc = sources.load("data/rfc7519.txt")
    cites, _ = sources.load_citations("data/citations.json", doc)
    rows = check.check_citations(doc, cites, RunContext_(), threshold=0.8,
                                 judge=lambda claim, source: {"relation": "supports", "confidence": 0.9,
                                                              "model": "judge-m", "method": "pooled"})
    conn = audit.connect(tmp_path / "a.db")
    write_check(conn, "data/citations.json", "data/rfc7519.txt", doc, cites, rows)
    written = audit.decided(conn, "check:citations.json")
    misquote = written[("C9", "data/rfc7519.txt")]
    assert (misquote["flow"], misquote["status"], misquote["section"], misquote["auto"]) == (
        "source", "misquoted", "4.1.3", False)
    assert misquote["quote"] != misquote["evidence_quote"] and misquote["evidence_quote"] in \
        " ".join(doc.sections["4.1.3"].text.split())
    fabricated = written[("C5", "data/rfc7519.txt")]
    assert (fabricated["label"], fabricated["passages"], fabricated["confidence"]) == ("fabricated", None, None)
    assert (fabricated["model"], fabricated["method"]) == ("", None)                # no model was asked
    found = written[("C1", "data/rfc7519.txt")]
    assert (found["model"], found["method"]) == ("judge-m", "pooled")               # the model that answered
    assert json.loads(found["passages"]) == [doc.sections[found["section"]].text]


def RunContext_():
    from citecheck.context import RunContext
    return RunContext.build(Settings())


def _schema_and_rows(path):
    raw = sqlite3.connect(path)
    try:
        return (raw.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall(),
                raw.execute("SELECT * FROM citations").fetchall())
    finally:
        raw.close()


@pytest.mark.parametrize("ddl", [
    # another tool's table called citations (L1's shape): refused, not given columns and tables
    ["CREATE TABLE citations (id INTEGER PRIMARY KEY, doi TEXT, title TEXT)",
     "INSERT INTO citations (doi, title) VALUES ('10.1/x', 'A paper')"],
    # migration 1's citations plus a table of someone else's
    [f"CREATE TABLE citations ({', '.join(f'{c} TEXT' for c in ('batch', 'id', 'claim'))})",
     "CREATE TABLE notes (x)", "INSERT INTO citations VALUES ('b', 'i', 'c')"],
])
def test_a_foreign_sqlite_db_is_refused_by_name_and_left_unchanged(tmp_path, ddl):
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as raw:
        for statement in ddl:
            raw.execute(statement)
    before = _schema_and_rows(path)
    with pytest.raises(migrations.ForeignDatabase, match=r"theirs\.db is a SQLite database but not a "
                                                         r"citecheck audit DB"):
        audit.connect(path)
    assert _schema_and_rows(path) == before


def test_a_pre_migration_db_with_other_columns_is_foreign_and_the_real_one_is_adopted(tmp_path):
    path = tmp_path / "old.db"
    shutil.copy(OLD_DB, path)
    assert migrations.foreign(sqlite3.connect(path)) is None
    with sqlite3.connect(path) as raw:
        raw.execute("ALTER TABLE citations ADD COLUMN theirs TEXT")
    with pytest.raises(migrations.ForeignDatabase, match="other columns"):
        audit.connect(path)
    assert "citecheck_migrations" not in {n for n, in sqlite3.connect(path).execute(
        "SELECT name FROM sqlite_master")}


def test_the_cli_names_a_foreign_db_in_one_line(tmp_path):
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE citations (id INTEGER PRIMARY KEY, doi TEXT)")
    result = subprocess.run([sys.executable, "-m", "citecheck", "calibrate", "--audit-db", str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "theirs.db is a SQLite database but not a citecheck audit DB" in result.stderr
