"""A cache home for the CLI: run outside the cookbook, `check` keeps its cache (json_cache.json, its store,
the store's -wal/-shm and the export's .lock) in the user cache directory, never in the folder it runs in; a
second run replays from there; CITECHECK_CACHE / CITECHECK_CACHE_STORE still say where; run from the
repository root, the cookbook's json_cache.json is the cache as before."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from standins.jev import jev_standin

from citecheck import cli, config
from citecheck.paths import ROOT, shown

DOC = "# Boiling\n\nWater boils at 100 °C at sea level.\n"
CITATIONS = [{"id": "A1", "claim": "Water boils at 100 °C.", "quote": "Water boils at 100 °C at sea level.",
              "section": "Boiling"}]
YES = {"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}


@pytest.fixture
def folders(tmp_path):
    """(an empty folder to run in, the user's cache home, the folder holding the inputs)."""
    here, home, inputs = tmp_path / "here", tmp_path / "xdg", tmp_path / "inputs"
    for folder in (here, home, inputs):
        folder.mkdir()
    (inputs / "notes.md").write_text(DOC, encoding="utf-8")
    (inputs / "citations.json").write_text(json.dumps(CITATIONS), encoding="utf-8")
    return here, home, inputs


def check_in(here: Path, inputs: Path, environ: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in config.SECRETS and k not in config.DEFAULTS}
    env.update({"PYTHONPATH": str(ROOT), "JUDGE_METHOD": "one_pass", **environ})
    return subprocess.run([sys.executable, "-m", "citecheck", "check", "--source", str(inputs / "notes.md"),
                           "--citations", str(inputs / "citations.json")],
                          cwd=here, env=env, capture_output=True, text=True, timeout=300)


def test_outside_the_cookbook_the_cli_caches_in_the_user_cache_directory(folders):
    here, home, inputs = folders
    with jev_standin(YES) as judge:
        first = check_in(here, inputs, {"TYPESAFE_ENDPOINT": judge.url, "XDG_CACHE_HOME": str(home)})
        asked = len(judge.requests)
        second = check_in(here, inputs, {"TYPESAFE_ENDPOINT": judge.url, "XDG_CACHE_HOME": str(home)})
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert "verified" in first.stdout and first.stdout == second.stdout
    assert len(judge.posts) == 1 and len(judge.requests) == asked               # the second run replayed
    assert list(here.iterdir()) == []                                           # nothing where it ran
    assert (home / "citecheck" / "json_cache.sqlite").is_file()
    offline = check_in(here, inputs, {"CITECHECK_OFFLINE": "1", "XDG_CACHE_HOME": str(home),  # the same judge
                                      "TYPESAFE_ENDPOINT": judge.url})                        # asked no more
    assert offline.returncode == 0 and offline.stdout == first.stdout, offline.stderr
    assert list(here.iterdir()) == []


def test_citecheck_cache_still_says_where(folders):
    here, home, inputs = folders
    with jev_standin(YES) as judge:
        done = check_in(here, inputs, {"TYPESAFE_ENDPOINT": judge.url, "XDG_CACHE_HOME": str(home),
                                       "CITECHECK_CACHE": "mine.json"})
    assert done.returncode == 0, done.stderr
    assert (here / "mine.sqlite").is_file() and not (home / "citecheck").exists()


def test_the_cookbook_s_own_commands_keep_its_json_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("CITECHECK_CACHE")
    monkeypatch.chdir(ROOT)
    assert cli.settings().cache_path == Path("json_cache.json")
    monkeypatch.chdir(tmp_path)
    in_user_cache = tmp_path / "user-cache" / "citecheck" / "json_cache.json"     # conftest's XDG_CACHE_HOME
    assert cli.settings().cache_path == in_user_cache


def test_a_path_in_the_home_directory_is_shown_from_it():
    in_home = Path.home() / ".cache" / "citecheck" / "json_cache.json"
    assert shown(in_home) == "~/.cache/citecheck/json_cache.json"
    assert shown(ROOT / "json_cache.json") == "json_cache.json"


def test_a_folder_holding_a_copy_of_the_cookbook_s_cache_replays_it(monkeypatch, tmp_path):
    monkeypatch.delenv("CITECHECK_CACHE")
    (tmp_path / "json_cache.json").write_text("{}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert cli.settings().cache_path == Path("json_cache.json")
