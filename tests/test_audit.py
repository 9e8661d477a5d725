"""audit: one row per decided citation, no secrets, and `replay RID` through the real crawlbase SDK."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from citecheck import audit, config
from standins.crawlbase_storage import Storage, storage_standin

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "tok-FAKE-9f3c1e77d2"
PAGE = "<html><body><h1>Boiling</h1><p>At sea level, pure water boils at 100 °C.</p></body></html>"


def citation(**overrides) -> dict:
    row = {"url": "http://site/a", "label": "supported", "reason": None, "evidence_quote": "boils at 100 °C",
           "confidence": 0.93, "final_url": "http://site/a", "original_status": 200, "rid": "r1"}
    return {**row, **overrides}


def test_every_decided_citation_has_one_row_with_utc_time(tmp_path):
    conn = audit.connect(tmp_path / "a.db")
    audit.record(conn, "b", "c1", "claim", citation(), "model-x")
    audit.record(conn, "b", "c1", "claim", citation(url="http://site/x.pdf", label="not_found",
                                                   reason="pdf_unsupported", rid=None, confidence=None))
    audit.record(conn, "b", "c1", "claim", citation(label="contradicted"), "model-x")   # same key again
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
    audit.record(conn, "b", "c1", "claim", citation(reason="crawl_failed", evidence_quote=f"?token={TOKEN}"))
    conn.close()
    assert TOKEN.encode() not in (tmp_path / "a.db").read_bytes()
    row = audit.decided(audit.connect(tmp_path / "a.db"), "b")[("c1", "http://site/a")]
    assert row["evidence_quote"] == "?token=<CRAWLBASE_TOKEN>"


def test_an_unopenable_database_names_its_path(tmp_path):
    with pytest.raises(OSError, match="no/such/dir/audit.db"):
        audit.connect(tmp_path / "no/such/dir/audit.db")


# ---------------------------------------------------------------- replay

@pytest.fixture
def storage(monkeypatch):
    store = Storage(tokens=(TOKEN, "js-" + TOKEN))
    store.store("http://site/a", PAGE, rid="a1B2c3D4e5F6")
    with storage_standin(store) as server:
        monkeypatch.setenv("CRAWLBASE_API_URL", server.url)
        yield server


def test_replay_prints_the_stored_page(storage, monkeypatch):
    monkeypatch.setenv("CRAWLBASE_TOKEN", TOKEN)
    assert audit.replay("a1B2c3D4e5F6") == PAGE
    assert storage.requests[-1].path.startswith("/storage?token=")


def test_the_javascript_token_works_too(storage, monkeypatch):
    monkeypatch.setenv("CRAWLBASE_JS_TOKEN", "js-" + TOKEN)
    assert audit.replay("a1B2c3D4e5F6") == PAGE


def test_an_unknown_rid_or_a_bad_token_is_a_clear_error(storage, monkeypatch):
    monkeypatch.setenv("CRAWLBASE_TOKEN", TOKEN)
    with pytest.raises(LookupError, match="no stored page for rid nope"):
        audit.replay("nope")
    monkeypatch.setenv("CRAWLBASE_TOKEN", "wrong-token-value")
    with pytest.raises(OSError, match="HTTP 401") as err:
        audit.replay("a1B2c3D4e5F6")
    assert "wrong-token-value" not in str(err.value)


def test_a_missing_token_names_the_variable_before_any_request(storage):
    with pytest.raises(config.MissingSetting, match="CRAWLBASE_TOKEN is not set.*CRAWLBASE_JS_TOKEN"):
        audit.replay("a1B2c3D4e5F6")
    assert storage.requests == []


@pytest.mark.parametrize("rid", ["", "  ", "https://api.crawlbase.com/storage?rid=x", "two words"])
def test_something_that_is_not_a_rid_is_refused(rid, monkeypatch):
    monkeypatch.setenv("CRAWLBASE_TOKEN", TOKEN)
    with pytest.raises(ValueError, match="not a rid"):
        audit.replay(rid)


def test_an_unreachable_storage_api_is_one_line_without_the_token(monkeypatch):
    monkeypatch.setenv("CRAWLBASE_TOKEN", TOKEN)
    monkeypatch.setenv("CRAWLBASE_API_URL", "http://127.0.0.1:9")   # discard port: connection refused
    with pytest.raises(OSError, match="Storage API unreachable") as err:
        audit.replay("a1B2c3D4e5F6")
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
