"""The cache: keys, stamping, the store and the export, concurrent writers, corruption, modes, misses."""
import datetime as dt
import json
import multiprocessing
import os
import pickle
import sqlite3
import stat
import threading

import pytest

from citecheck import cache as cache_module
from citecheck.cache import (
    Cache,
    CacheCorrupted,
    CacheError,
    CacheLocked,
    CacheMiss,
    CacheReadOnly,
    request_key,
)
from citecheck.cache import export as export_file
from citecheck.config import Secrets, Settings
from citecheck.context import RunContext
from citecheck.paths import ROOT


def answer(value):
    return lambda: ({"value": value}, {"input_tokens": 3}, "model-that-answered")


def stamped(function="f", recorded=None, value=1):
    return {"function": function, "model": "m", "answer": {"value": value}, "usage": None, "seconds": 0.1,
            "recorded": recorded or cache_module.today()}


def days_ago(n: int) -> str:
    return (dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=n)).isoformat()


def store_rows(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM entries").fetchone()[0]


def test_key_digests_the_whole_request():
    base = request_key("judge", "m", {"prompt": "a"})
    assert base == request_key("judge", "m", {"prompt": "a"})
    assert base != request_key("judge", "m", {"prompt": "b"})
    assert base != request_key("judge", "m2", {"prompt": "a"})
    assert base != request_key("judge2", "m", {"prompt": "a"})


def test_live_calls_record_in_the_store_and_replay_with_their_stamp(tmp_path):
    path = tmp_path / "c.json"
    calls = []

    def compute():
        calls.append(1)
        return {"x": 1}, {"input_tokens": 5}, "real-model"
    assert Cache(path).call("f", "requested", {"q": 1}, compute) == {"x": 1}
    assert Cache(path).call("f", "requested", {"q": 1}, compute) == {"x": 1}
    assert Cache(path, offline=True).call("f", "requested", {"q": 1}, compute) == {"x": 1}
    assert len(calls) == 1
    assert not path.exists() and store_rows(tmp_path / "c.sqlite") == 1     # the export is written on demand
    assert Cache(path).export() == {"entries": 1, "added": 1, "changed": 0, "written": True}
    entry = next(iter(json.loads(path.read_text()).values()))
    assert list(entry) == list(cache_module.FIELDS)
    assert entry["model"] == "real-model" and entry["usage"] == {"input_tokens": 5}


def test_the_export_is_sorted_and_unchanged_entries_are_not_rewritten(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    for n in range(5):
        c.call("f", "m", {"n": n}, answer(n))
    c.export()
    keys = list(json.loads(path.read_text()))
    assert keys == sorted(keys)
    before = path.stat().st_mtime_ns
    assert c.export()["written"] is False and path.stat().st_mtime_ns == before


def test_the_committed_export_round_trips_byte_for_byte(tmp_path):
    """Exporting the committed file through an empty store, or through a store holding all of it, gives
    the same bytes: `git diff` of the export stays empty until an entry really changes."""
    committed = (ROOT / "json_cache.json").read_bytes()
    (tmp_path / "a.json").write_bytes(committed)
    assert Cache(tmp_path / "a.json").export()["written"] is False
    assert (tmp_path / "a.json").read_bytes() == committed
    store_only = Cache(tmp_path / "b.json", store=tmp_path / "all.sqlite")
    store_only.put_many(json.loads(committed).items())
    assert store_only.export()["added"] == len(json.loads(committed))
    assert (tmp_path / "b.json").read_bytes() == committed


def test_a_changed_entry_changes_only_its_own_lines_in_the_export(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    for n in range(3):
        c.put(f"{n:064x}", stamped(value=n))
    c.export()
    before = path.read_text().splitlines()
    c.put(f"{1:064x}", stamped(value=99))
    assert c.export()["changed"] == 1
    after = path.read_text().splitlines()
    assert len(before) == len(after) and [a for a, b in zip(after, before) if a != b] == ['   "value": 99']


def test_offline_miss_names_the_call_and_how_to_go_live(tmp_path):
    with pytest.raises(CacheMiss) as err:
        Cache(tmp_path / "c.json", offline=True).call("typesafe.system_one", "m", {"q": 1}, answer(1),
                                                      how_to_run_live="set TYPESAFE_API_KEY")
    assert "typesafe.system_one" in str(err.value) and "TYPESAFE_API_KEY" in str(err.value)
    assert list(tmp_path.iterdir()) == []                   # offline never creates a file


def test_store_off_replays_the_export_alone_and_only_offline(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    live = Cache(path)
    live.call("f", "m", {"n": 1}, answer(1))
    live.export()
    live.call("f", "m", {"n": 2}, answer(2))                   # in the store only
    export_only = Cache(path, offline=True, store="off")
    assert export_only.call("f", "m", {"n": 1}, answer(1)) == {"value": 1}
    with pytest.raises(CacheMiss):
        export_only.call("f", "m", {"n": 2}, answer(2))
    assert Cache(path, offline=True).call("f", "m", {"n": 2}, answer(2)) == {"value": 2}
    with pytest.raises(ValueError, match="CITECHECK_OFFLINE=1"):
        Cache(path, store="off")
    monkeypatch.setenv("CITECHECK_CACHE_STORE", "off")
    with pytest.raises(ValueError, match="CITECHECK_CACHE_STORE"):
        Settings.from_env()


@pytest.mark.parametrize("content", [b"{not json", b"", b"[1, 2]", b"\xff\xfe{}"])
def test_a_corrupted_export_is_reported_by_path_and_never_overwritten(tmp_path, content):
    path = tmp_path / "c.json"
    path.write_bytes(content)
    with pytest.raises(CacheCorrupted) as err:
        Cache(path)
    assert str(path) in str(err.value)
    assert path.read_bytes() == content


def test_corruption_appearing_later_stops_the_export_and_is_not_overwritten(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    c.call("f", "m", {"n": 1}, answer(1))
    path.write_text("{broken")
    c.call("f", "m", {"n": 2}, answer(2))                      # recording goes on, into the store
    with pytest.raises(CacheCorrupted, match=str(path)):
        c.export()
    assert path.read_text() == "{broken" and store_rows(tmp_path / "c.sqlite") == 2


@pytest.mark.parametrize("entry, says", [
    (["not", "an", "object"], "is a JSON list"),
    ({"function": "f", "model": "m", "usage": None, "seconds": 1, "recorded": "2025-01-01"}, "has no answer"),
    ({**stamped(), "recorded": "last tuesday"}, "not YYYY-MM-DD"),
    ({**stamped(), "model": 3}, "not text"),
    (stamped(function="judge.json/openai"), "recorded for 'judge.json/openai', not 'f'"),
])
def test_a_malformed_entry_is_a_corruption_error_naming_key_and_file(tmp_path, entry, says):
    path = tmp_path / "c.json"
    key = request_key("f", "m", {"n": 1})
    path.write_text(json.dumps({key: entry}))
    with pytest.raises(CacheCorrupted) as err:
        Cache(path).call("f", "m", {"n": 1}, answer(1))
    assert key in str(err.value) and str(path) in str(err.value) and says in str(err.value)
    if "recorded for" not in says:                           # a key does not say its function: lookups check that
        with pytest.raises(CacheCorrupted, match=key):
            Cache(path).export()
    assert json.loads(path.read_text()) == {key: entry}


def test_a_malformed_store_row_names_key_and_store(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    key = request_key("f", "m", {"n": 1})
    c.put(key, stamped())
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:
        conn.execute("UPDATE entries SET entry = '{half' WHERE key = ?", (key,))
    with pytest.raises(CacheCorrupted) as err:
        Cache(path).call("f", "m", {"n": 1}, answer(1))
    assert key in str(err.value) and "c.sqlite" in str(err.value)


def test_a_store_that_is_not_a_database_is_reported_and_left_alone(tmp_path):
    (tmp_path / "c.sqlite").write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(CacheCorrupted, match="c.sqlite"):
        Cache(tmp_path / "c.json").call("f", "m", {"n": 1}, answer(1))
    assert (tmp_path / "c.sqlite").read_bytes() == b"this is not SQLite" * 100


def test_a_database_that_is_not_a_store_is_refused_untouched(tmp_path):
    other = tmp_path / "audit.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE citations (id TEXT)")
    with pytest.raises(CacheCorrupted, match="not a citecheck cache store"):
        Cache(tmp_path / "c.json", store=other).call("f", "m", {"n": 1}, answer(1))
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["citations"]


def test_a_store_from_a_newer_citecheck_is_refused(tmp_path):
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:
        conn.execute("PRAGMA user_version=9")
    with pytest.raises(CacheCorrupted, match="schema version 9"):
        Cache(tmp_path / "c.json").put("k" * 64, stamped())


def test_a_locked_store_is_a_clear_error_naming_it(tmp_path):
    c = Cache(tmp_path / "c.json", busy_timeout=0.2)
    c.put("a" * 64, stamped())
    holder = sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CacheLocked, match="c.sqlite.*locked"):
            c.put("b" * 64, stamped())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    c.put("b" * 64, stamped())
    assert store_rows(tmp_path / "c.sqlite") == 2


def test_a_read_only_store_is_refused_for_recording_and_read_for_replay(tmp_path):
    path, store = tmp_path / "c.json", tmp_path / "c.sqlite"
    Cache(path).call("f", "m", {"n": 1}, answer(1))
    store.chmod(0o444)
    with pytest.raises(CacheReadOnly, match="c.sqlite"):
        Cache(path).call("f", "m", {"n": 2}, answer(2))
    assert Cache(path, offline=True).call("f", "m", {"n": 1}, answer(1)) == {"value": 1}
    assert stat.S_IMODE(store.stat().st_mode) == 0o444


def test_the_export_keeps_its_mode_and_a_read_only_export_is_refused(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    c.call("f", "m", {"n": 1}, answer(1))
    c.export()
    path.chmod(0o640)
    c.call("f", "m", {"n": 2}, answer(2))
    c.export()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and len(json.loads(path.read_text())) == 2
    path.chmod(0o444)
    before = path.read_bytes()
    c.call("f", "m", {"n": 3}, answer(3))
    with pytest.raises(CacheReadOnly, match="read-only"):
        c.export()
    assert path.read_bytes() == before and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_orphan_temp_files_are_removed_at_start_unless_an_export_holds_the_lock(tmp_path):
    path = tmp_path / "c.json"
    orphan = tmp_path / ".c.json.k9x2ab_Q"
    unrelated = tmp_path / ".c.json.notes.txt"
    orphan.write_text("x" * 1000)
    unrelated.write_text("mine")
    Cache(path, offline=True)
    assert orphan.exists()                                  # replay changes nothing
    with export_file.file_lock(path):
        worker = threading.Thread(target=Cache, args=(path,))
        worker.start()
        worker.join()
        assert orphan.exists()                               # it may be the running export's own
    Cache(path)
    assert not orphan.exists() and unrelated.exists()


def test_a_crash_mid_export_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    c = Cache(path)
    c.call("f", "m", {"n": 1}, answer(1))
    c.export()
    before = path.read_text()

    def explode(entries):
        raise OSError("disk full")
    monkeypatch.setattr(export_file, "render", explode)
    c.call("f", "m", {"n": 2}, answer(2))
    with pytest.raises(OSError):
        c.export()
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".c.json.")] == []


def test_concurrent_threads_lose_nothing(tmp_path):
    c = Cache(tmp_path / "c.json")
    threads = [threading.Thread(target=c.call, args=("f", "m", {"n": n}, answer(n))) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store_rows(tmp_path / "c.sqlite") == 40
    c.export()
    assert len(json.loads((tmp_path / "c.json").read_text())) == 40


def _writer(c, start):
    for n in range(start, start + 50):
        c.call("f", "m", {"n": n}, answer(n))


def test_concurrent_processes_lose_nothing_even_sharing_a_forked_handle(tmp_path):
    path = tmp_path / "c.json"
    shared = Cache(path)
    shared.call("f", "m", {"n": -1}, answer(-1))             # the parent's connection is open
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(shared, k * 100)) for k in range(4)]
    for p in procs:
        p.start()
    _writer(shared, 1000)
    for p in procs:
        p.join()
    assert [p.exitcode for p in procs] == [0] * 4
    assert store_rows(tmp_path / "c.sqlite") == 1 + 5 * 50


def test_crawled_pages_older_than_cache_max_age_are_fetched_again_in_live_runs_only(tmp_path):
    path = tmp_path / "c.json"
    page_key, judge_key = request_key("fetch.direct", "direct", {"u": 1}), request_key("judge", "m", {"q": 1})
    path.write_text(json.dumps({page_key: stamped("fetch.direct", days_ago(40), "old page"),
                                judge_key: stamped("judge", days_ago(400), "old answer")}))
    assert Cache(path, offline=True, page_max_age=30).call("fetch.direct", "direct", {"u": 1}, answer("new")) \
        == {"value": "old page"}                             # replay ignores the age
    assert Cache(path, page_max_age=0).call("fetch.direct", "direct", {"u": 1}, answer("new")) \
        == {"value": "old page"}                             # 0: no limit
    live = Cache(path, page_max_age=30)
    assert live.call("judge", "m", {"q": 1}, answer("new")) == {"value": "old answer"}   # not a page
    assert live.call("fetch.direct", "direct", {"u": 1}, answer("new")) == {"value": "new"}
    assert live.lookup(page_key)["recorded"] == cache_module.today()
    assert live.export()["changed"] == 1
    assert Cache(path, page_max_age=30).call("fetch.direct", "direct", {"u": 1}, answer("newer")) == {"value": "new"}


def test_an_entry_holding_a_secret_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAWLBASE_TOKEN", "cb-secret-token-123")
    c = Cache(tmp_path / "c.json")
    with pytest.raises(CacheError, match="CRAWLBASE_TOKEN") as err:
        c.call("fetch.crawlbase", "crawlbase", {"u": 1}, lambda: ("page cb-secret-token-123", None, "m"))
    assert "cb-secret-token-123" not in str(err.value)
    monkeypatch.delenv("CRAWLBASE_TOKEN")
    held = Cache(tmp_path / "c.json", secrets=Secrets({"OPENAI_API_KEY": "sk-held-in-settings"}))
    with pytest.raises(CacheError, match="OPENAI_API_KEY"):
        held.call("judge", "m", {"q": 1}, lambda: ("echo sk-held-in-settings", None, "m"))
    assert len(held) == 0


def test_models_used_summarises_the_stamps(tmp_path):
    c = Cache(tmp_path / "c.json")
    c.call("f", "m", {"n": 1}, answer(1))
    c.call("f", "m", {"n": 2}, answer(2))
    [row] = cache_module.models_used(c)
    assert row["model"] == "model-that-answered" and row["calls"] == 2


def test_a_context_pickles_as_its_settings_and_reopens_its_cache(tmp_path):
    settings = Settings(cache_path=tmp_path / "c.json", secrets=Secrets({"OPENAI_API_KEY": "sk-never-pickled"}))
    ctx = RunContext.build(settings)
    ctx.cache.call("f", "m", {"n": 1}, answer(1))
    blob = pickle.dumps(ctx)
    assert b"sk-never-pickled" not in blob
    landed = pickle.loads(blob)
    assert landed.cache is not ctx.cache and landed.cache.call("f", "m", {"n": 1}, answer(2)) == {"value": 1}
    assert not landed.settings.secrets.has("OPENAI_API_KEY")   # read from this environment, which has none
    assert os.environ.get("OPENAI_API_KEY") is None


def test_the_cache_command_exports_checks_and_counts(tmp_path, monkeypatch, capsys):
    from citecheck import cli
    path = tmp_path / "json_cache.json"
    monkeypatch.setenv("CITECHECK_CACHE", str(path))
    Cache(path).call("fetch.direct", "direct", {"u": 1}, answer(1))
    assert cli.main(["cache", "export", "--check"]) == 1
    assert "behind the store (1 added, 0 changed" in capsys.readouterr().out and not path.exists()
    assert cli.main(["cache", "export"]) == 0
    assert "1 entries (1 added, 0 changed" in capsys.readouterr().out
    assert cli.main(["cache", "export", "--check"]) == 0
    assert cli.main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "json_cache.json: 1 entries" in out and "json_cache.sqlite: 1 entries, 0 not in the export" in out
    assert "fetch.direct" in out and "model-that-answered" in out
    path.write_text("{}")
    path.chmod(0o444)
    assert cli.main(["cache", "export"]) == 1
    assert "read-only" in capsys.readouterr().err


def test_record_exports_what_the_live_pass_recorded_before_its_offline_pass(monkeypatch, tmp_path, ctx):
    from standins.http import StandIn

    from citecheck import notebook, record
    seen = []

    def fake_execute_all(*, offline=True, save=True, env=None):
        if not offline:                                      # a kernel of the live pass records a call
            Cache(ctx.settings.cache_path).call("judge.json/openai", "m", {"q": 1}, answer(1))
        else:
            seen.append(json.loads(ctx.settings.cache_path.read_text()))
        return []
    monkeypatch.setattr(notebook, "execute_all", fake_execute_all)
    with StandIn(lambda request: (200, {}, {"model": "local"})) as judge:
        record.record(ctx, judge.url, log=lambda m: None)
    [exported] = seen
    assert [e["function"] for e in exported.values()] == ["judge.json/openai"]


def test_an_offline_notebook_run_replays_the_export_alone(monkeypatch):
    import nbclient

    from citecheck import notebook
    envs = []
    monkeypatch.setattr(nbclient.NotebookClient, "execute", lambda self, env=None: envs.append(env))
    notebook.execute(notebook.notebook_paths()[0])
    notebook.execute(notebook.notebook_paths()[0], offline=False)
    assert (envs[0]["CITECHECK_OFFLINE"], envs[0]["CITECHECK_CACHE_STORE"]) == ("1", "off")
    assert envs[1]["CITECHECK_OFFLINE"] == "0" and "CITECHECK_CACHE_STORE" not in envs[1]


def _open_new_store(path: str, start: float) -> str:
    """Open a store at `start` (a shared instant) and read once; the error's class when it failed."""
    import time

    from citecheck.cache.store import Store
    while time.time() < start:
        pass
    try:
        Store(path, busy_timeout=5).get("any key")
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the test reports what failed
        return type(exc).__name__


def test_processes_opening_a_new_store_at_once_all_get_it(tmp_path):
    """SQLite answers a second process switching a new file to WAL "locked" at once (no busy wait): before
    the store retried, 4 workers opening a fresh store together failed 13 times in 30 (a Dask batch's
    workers do exactly this)."""
    import time
    context = multiprocessing.get_context("fork")
    with context.Pool(4) as pool:
        for trial in range(10):
            path = str(tmp_path / f"store{trial}.sqlite")
            start = time.time() + 0.3
            assert pool.starmap(_open_new_store, [(path, start)] * 4) == ["ok"] * 4
