"""The cache: keys, stamping, atomic and concurrent writes, corruption, offline misses."""
import json
import multiprocessing
import os
import threading

import pytest

from citecheck import cache as cache_module
from citecheck.cache import Cache, CacheCorrupted, CacheMiss, request_key


def answer(value):
    return lambda: ({"value": value}, {"input_tokens": 3}, "model-that-answered")


def test_key_digests_the_whole_request():
    base = request_key("judge", "m", {"prompt": "a"})
    assert base == request_key("judge", "m", {"prompt": "a"})
    assert base != request_key("judge", "m", {"prompt": "b"})
    assert base != request_key("judge", "m2", {"prompt": "a"})
    assert base != request_key("judge2", "m", {"prompt": "a"})


def test_records_once_then_replays_with_stamp(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    calls = []

    def compute():
        calls.append(1)
        return {"x": 1}, {"input_tokens": 5}, "real-model"
    assert c.call("f", "requested", {"q": 1}, compute) == {"x": 1}
    assert Cache(path).call("f", "requested", {"q": 1}, compute) == {"x": 1}
    assert len(calls) == 1
    entry = next(iter(json.loads(path.read_text()).values()))
    assert list(entry) == ["function", "model", "answer", "usage", "seconds", "recorded"]
    assert entry["model"] == "real-model" and entry["usage"] == {"input_tokens": 5}


def test_file_keys_are_sorted(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    for n in range(5):
        c.call("f", "m", {"n": n}, answer(n))
    keys = list(json.loads(path.read_text()))
    assert keys == sorted(keys)


def test_offline_miss_names_the_call_and_how_to_go_live(tmp_path):
    with pytest.raises(CacheMiss) as err:
        Cache(tmp_path / "c.json", offline=True).call("typesafe.system_one", "m", {"q": 1}, answer(1),
                                        how_to_run_live="set TYPESAFE_API_KEY")
    assert "typesafe.system_one" in str(err.value) and "TYPESAFE_API_KEY" in str(err.value)
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("content", ["{not json", "", "[1, 2]"])
def test_corrupted_file_is_reported_by_path_and_never_overwritten(tmp_path, content):
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(CacheCorrupted) as err:
        Cache(path)
    assert str(path) in str(err.value)
    assert path.read_text() == content


def test_corruption_appearing_later_is_not_overwritten(tmp_path):
    path = tmp_path / "c.json"
    c = Cache(path)
    c.call("f", "m", {"n": 1}, answer(1))
    path.write_text("{broken")
    with pytest.raises(CacheCorrupted):
        c.call("f", "m", {"n": 2}, answer(2))
    assert path.read_text() == "{broken"


def test_crash_mid_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    c = Cache(path)
    c.call("f", "m", {"n": 1}, answer(1))
    before = path.read_text()

    def explode(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(cache_module.json, "dump", explode)
    with pytest.raises(OSError):
        c.call("f", "m", {"n": 2}, answer(2))
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".c.json.")] == []


def test_concurrent_threads_lose_nothing(tmp_path):
    c = Cache(tmp_path / "c.json")
    threads = [threading.Thread(target=c.call, args=("f", "m", {"n": n}, answer(n))) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(json.loads((tmp_path / "c.json").read_text())) == 40


def _writer(path, start):
    c = Cache(path)
    for n in range(start, start + 15):
        c.call("f", "m", {"n": n}, answer(n))


def test_concurrent_processes_lose_nothing(tmp_path):
    path = str(tmp_path / "c.json")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, k * 100)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert len(json.loads(open(path).read())) == 45


def test_models_used_summarises_the_stamps(tmp_path):
    c = Cache(tmp_path / "c.json")
    c.call("f", "m", {"n": 1}, answer(1))
    c.call("f", "m", {"n": 2}, answer(2))
    [row] = cache_module.models_used(c)
    assert row["model"] == "model-that-answered" and row["calls"] == 2
    assert os.path.exists(tmp_path / "c.json")
