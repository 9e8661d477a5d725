"""Reading the export: one entry looked up without parsing the file, the same answer as parsing it whole."""
import json

import pytest

from citecheck.cache import Cache, CacheCorrupted, request_key
from citecheck.cache import export as export_file
from citecheck.paths import ROOT


def stamped(value, page=""):
    answer = {"value": value, "page": page} if page else {"value": value}
    return {"function": "f", "model": "m", "answer": answer, "usage": None, "seconds": 0.1, "recorded": "2026-01-02"}


def written(path, entries: dict):
    path.write_bytes(export_file.render(entries))
    return path


def whole_reads(monkeypatch) -> list:
    """Each time the export is parsed whole, its path is appended."""
    reads, real = [], export_file.read_export
    monkeypatch.setattr(export_file, "read_export", lambda path: reads.append(path) or real(path))
    return reads


def test_every_committed_entry_reads_as_the_whole_parse_gives_it(monkeypatch):
    committed = ROOT / "json_cache.json"
    whole = json.loads(committed.read_bytes())
    reads = whole_reads(monkeypatch)
    reader = export_file.Export(committed)
    reader._budget = float("inf")                             # every entry one at a time, never the whole
    assert all(reader.get(key) == entry for key, entry in whole.items())
    assert reader.get(request_key("f", "m", {"never": "recorded"})) is None and reads == []


def test_a_lookup_reads_its_entry_only_and_a_whole_read_still_reports_the_rest(tmp_path):
    keys = [request_key("f", "m", {"n": n}) for n in range(50)]
    page = "a crawled page. " * 200
    path = written(tmp_path / "c.json", {key: stamped(n, page) for n, key in enumerate(keys)})
    broken = path.read_text().replace('"value": 7', '"value": 7,,', 1)
    path.write_text(broken)
    bad = keys[7]
    cache = Cache(path, offline=True, store="off")
    assert cache.call("f", "m", {"n": 3}, None) == {"value": 3, "page": page}   # no whole parse at open
    with pytest.raises(CacheCorrupted) as err:
        cache.call("f", "m", {"n": 7}, None)
    assert bad in str(err.value) and str(path) in str(err.value)
    with pytest.raises(CacheCorrupted, match=str(path)):
        cache.exported()
    assert path.read_text() == broken                                          # never repaired or emptied


def test_a_file_whose_keys_are_out_of_order_is_read_whole_and_finds_everything(tmp_path, monkeypatch):
    entries = {request_key("f", "m", {"n": n}): stamped(n) for n in range(40)}
    blocks = [export_file.render({key: entries[key]}).decode()[2:-3] for key in sorted(entries)]
    blocks[3], blocks[30] = blocks[30], blocks[3]                              # a hand-resolved merge
    path = tmp_path / "c.json"
    path.write_text("{\n" + ",\n".join(blocks) + "\n}\n")
    assert json.loads(path.read_text()) == entries
    reads = whole_reads(monkeypatch)
    cache = Cache(path, offline=True, store="off")
    assert all(cache.call("f", "m", {"n": n}, None) == {"value": n} for n in range(40))
    assert reads == [path]


def test_a_key_written_twice_reads_as_json_reads_it(tmp_path):
    key = request_key("f", "m", {"n": 1})
    once = [export_file.render({key: stamped(value)}).decode()[2:-3] for value in (1, 2)]
    path = tmp_path / "c.json"
    path.write_text("{\n" + ",\n".join(once) + "\n}\n")                  # a merge that kept both sides
    assert json.loads(path.read_text())[key] == stamped(2)
    assert Cache(path, offline=True, store="off").lookup(key) == stamped(2)


@pytest.mark.parametrize("keys", [["a\"b", "é", "z\\", "\u2028", "tab\there", "A", "😀"], [f"{n:064x}" for n in range(300)]])
def test_any_key_the_export_can_hold_is_found(tmp_path, keys):
    path = written(tmp_path / "c.json", {key: stamped(n) for n, key in enumerate(keys)})
    reader = export_file.Export(path)
    assert reader._whole is None                                               # read by lookups
    reader._budget = float("inf")
    assert [reader.get(key) for key in keys] == [stamped(n) for n in range(len(keys))]
    assert reader.get("not there") is None and reader.get("") is None


def test_a_file_not_in_the_export_format_is_parsed_whole_at_open(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"k": stamped(1)}))
    reads = whole_reads(monkeypatch)
    assert export_file.Export(path).get("k") == stamped(1) and reads == [path]
    path.write_bytes(export_file.render({"k": stamped(1)})[:-10])             # cut short: not the format either
    with pytest.raises(CacheCorrupted, match=str(path)):
        export_file.Export(path)


def test_a_line_that_is_not_a_key_is_reported_by_path(tmp_path):
    keys = [f"{n:064x}" for n in range(20)]
    path = written(tmp_path / "c.json", {key: stamped(n) for n, key in enumerate(keys)})
    path.write_text(path.read_text().replace(f' "{keys[10]}": {{', ' "unterminated: {', 1))
    reader = export_file.Export(path)
    with pytest.raises(CacheCorrupted, match=str(path)):
        for key in keys:
            reader.get(key)


def test_lookups_that_cost_a_whole_parse_switch_to_it(tmp_path, monkeypatch):
    entries = {f"{n:064x}": stamped(n) for n in range(200)}
    path = written(tmp_path / "c.json", entries)
    reads = whole_reads(monkeypatch)
    reader = export_file.Export(path)
    lookups = path.stat().st_size // export_file.LOOKUP_BYTES
    assert all(reader.get(f"{n:064x}") == stamped(n) for n in range(lookups)) and reads == []
    assert all(reader.get(key) == entry for key, entry in entries.items()) and reads == [path]


def test_an_export_replaces_what_the_cache_reads(tmp_path):
    path = tmp_path / "c.json"
    live = Cache(path)
    live.call("f", "m", {"n": 1}, lambda: ({"value": 1}, None, "m"))
    live.export()
    reader = Cache(path, offline=True, store="off")
    live.call("f", "m", {"n": 2}, lambda: ({"value": 2}, None, "m"))
    live.export()
    assert reader.call("f", "m", {"n": 1}, None) == {"value": 1}             # the file it opened, as it was
    assert Cache(path, offline=True, store="off").call("f", "m", {"n": 2}, None) == {"value": 2}
    assert live.lookup(request_key("f", "m", {"n": 2}))["answer"] == {"value": 2}
