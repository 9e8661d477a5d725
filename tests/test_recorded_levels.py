"""Notebook 05's three levels are replayed from data/judge_levels.json only while the code the recorded run
imported and opened is unchanged and the reader did not ask to re-run; the committed record is current and is
what a real run over the stand-ins returns."""
import json

import pytest

import levels
from citecheck.evaluation import recorded_levels

FILE = "data/citations.json"


def record_at(tmp_path, code: dict, result="recorded") -> object:
    path = tmp_path / "levels.json"
    recorded_levels.save(result, code, path)
    return path


def runs():
    calls = []
    return calls, lambda: calls.append(1) or "computed"


def test_a_record_whose_code_matches_is_replayed(tmp_path):
    path = record_at(tmp_path, {FILE: recorded_levels.fingerprint(FILE),
                                "package pytest": recorded_levels.fingerprint("package pytest")})
    calls, run = runs()
    assert recorded_levels.replayed(run, path=path) == "recorded" and calls == []
    record = json.loads(path.read_text())
    assert record["command"] == recorded_levels.COMMAND and len(record["recorded"]) == 10


@pytest.mark.parametrize("code", [{FILE: "0" * 64}, {"data/no-such-file.json": "0" * 64},
                                  {"package pytest": "0.0.0"}, {}])
def test_a_changed_file_or_package_runs_it_again(tmp_path, code):
    calls, run = runs()
    assert recorded_levels.replayed(run, path=record_at(tmp_path, code)) == "computed" and calls == [1]


def test_live_runs_it_again_and_a_broken_record_is_run_not_read(tmp_path):
    path = record_at(tmp_path, {FILE: recorded_levels.fingerprint(FILE)})
    calls, run = runs()
    assert recorded_levels.replayed(run, live=True, path=path) == "computed"
    record = json.loads(path.read_text())
    record["result"] = "edited by hand"
    record["code"][FILE] = "0" * 64                   # the digest no longer matches the code map
    path.write_text(json.dumps(record))
    assert recorded_levels.changed(json.loads(path.read_text())) == ["the record"]
    path.write_text("{not json")
    assert recorded_levels.replayed(run, path=path) == "computed"
    assert recorded_levels.replayed(run, path=tmp_path / "missing.json") == "computed" and len(calls) == 3


def test_the_committed_record_matches_the_code():
    stale = recorded_levels.changed(recorded_levels.load())
    assert stale == [], f"re-record with `{recorded_levels.COMMAND}`: changed {stale[:5]}"


def test_the_committed_record_is_what_a_run_returns():
    assert levels.three_levels() == recorded_levels.load()["result"]
