"""The audit DB's crash guarantee: every row whose write was acknowledged survives kill -9 (WAL mode)."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from killing import kill_mid_batch

from citecheck import audit

ROOT = Path(__file__).resolve().parent.parent

WRITER = """
import os, sys
from citecheck import audit
conn = audit.connect(sys.argv[1])
acks = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
for n in range(1_000_000):
    audit.write_citation(conn, "crash", f"c{n}", "claim " * 20, {"url": f"http://x/{n}", "label": "supported",
                         "evidence_quote": "quote " * 40, "confidence": 0.5, "passages": ["passage " * 200]})
    os.write(acks, f"c{n}\\n".encode())      # acknowledged: write_citation returned
"""


def test_every_acknowledged_row_survives_a_kill_in_the_middle_of_writing(tmp_path):
    db, acks = tmp_path / "audit.db", tmp_path / "acks.txt"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(acks)], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    seen = kill_mid_batch(proc, db, 300)
    acknowledged = acks.read_text().split()
    wal = db.with_name(db.name + "-wal")
    assert len(acknowledged) >= 300 and wal.exists() and wal.stat().st_size > 0, \
        "the kill should land while rows are in the write-ahead log, not yet checkpointed"
    conn = audit.connect(db)                        # a new process's open: recovers the WAL
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    kept = {row["id"] for row in conn.execute("SELECT id FROM citations WHERE batch = 'crash'")}
    assert set(acknowledged) <= kept
    assert len(kept) - len(acknowledged) <= 1      # at most the one in flight, committed but not yet acknowledged
    assert {key.split()[0] for key in seen} <= kept
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_an_old_rollback_journal_db_is_switched_to_wal_keeping_its_rows(tmp_path):
    db = tmp_path / "old.db"
    conn = audit.connect(db)
    audit.write_citation(conn, "b", "c1", "claim", {"url": "http://x", "label": "supported"})
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    with sqlite3.connect(db) as plain:
        assert plain.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn = audit.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1          # NORMAL
    assert list(audit.decided(conn, "b")) == [("c1", "http://x")]


def test_processes_opening_a_new_db_at_once_all_get_it_in_wal_mode(tmp_path):
    db = tmp_path / "new.db"
    opener = ("import sys; from citecheck import audit; c = audit.connect(sys.argv[1]); "
              "audit.write_citation(c, 'b', sys.argv[2], 'claim', {'url': 'http://x', 'label': 'supported'})")
    procs = [subprocess.Popen([sys.executable, "-c", opener, str(db), f"c{n}"], stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for n in range(6)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, errors
    conn = audit.connect(db)
    assert sorted(i for i, _ in audit.decided(conn, "b")) == [f"c{n}" for n in range(6)]


def test_a_review_commits_with_a_full_sync_and_leaves_the_connection_as_it_was(tmp_path, monkeypatch):
    from citecheck.audit import reviews
    conn = audit.connect(tmp_path / "a.db")
    row = audit.write_citation(conn, "b", "c1", "claim", {"url": "http://x", "label": "supported"})
    seen = []
    insert = reviews._record
    monkeypatch.setattr(reviews, "_record", lambda c, d, now: seen.append(
        c.execute("PRAGMA synchronous").fetchone()[0]) or insert(c, d, now))
    reviews.record(conn, reviews.Decision("b", "c1", "http://x", row["decided_at"], None, "confirm", None, "",
                                          "Ann"), audit.utc_now())
    assert seen == [2] and conn.execute("PRAGMA synchronous").fetchone()[0] == 1    # FULL, then NORMAL again
