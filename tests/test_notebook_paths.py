"""Adapting a notebook needs no tricks: the set-up cell leaves the working directory alone (a reader's own files
resolve against it), the cookbook's default files are the repository's whatever the working directory, a
notebook's new live calls go to the reader's own store unless CITECHECK_CACHE_STORE names one, and
`record` names the cookbook's store explicitly."""
import os
from pathlib import Path

import pytest

from citecheck import config, notebook
from citecheck.cache import OFF
from citecheck.config import Settings
from citecheck.paths import DATA, ROOT


def test_default_files_live_in_defaults_in_and_a_path_the_reader_sets_is_theirs():
    assert Settings.from_env({}) == Settings()                             # the CLI: the current directory
    assert (Settings().cache_path, Settings().journal) == (Path("json_cache.json"), Path("audit.db"))
    rooted = Settings.from_env({}, defaults_in=ROOT)
    assert (rooted.cache_path, rooted.journal) == (ROOT / "json_cache.json", ROOT / "audit.db")
    mine = Settings.from_env({"CITECHECK_CACHE": "mine.json", "AUDIT_DB": "mine.db"}, defaults_in=ROOT)
    assert (mine.cache_path, mine.journal) == (Path("mine.json"), Path("mine.db"))


@pytest.mark.parametrize("environ, store", [
    ({}, str(notebook.MY_CALLS)),                                          # live, nothing said: the reader's own
    ({"CITECHECK_OFFLINE": "1"}, str(notebook.MY_CALLS)),                  # replays read it too
    ({"CITECHECK_CACHE_STORE": "json_cache.sqlite"}, "json_cache.sqlite"),  # asked for the cookbook's
    ({"CITECHECK_OFFLINE": "1", "CITECHECK_CACHE_STORE": "off"}, OFF),     # a reproduction: the export alone
])
def test_a_notebooks_new_live_calls_go_to_the_readers_own_store_unless_told(environ, store):
    settings = notebook.notebook_settings(environ)
    assert settings.cache_store == store and settings.cache_path == ROOT / "json_cache.json"
    assert notebook.MY_CALLS.is_relative_to(ROOT / "build")                # git-ignored


def test_setup_leaves_the_working_directory_alone(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "quiet_this_process", lambda: None)        # keep this process's environment
    for name in ("CITECHECK_CACHE", "CITECHECK_CACHE_STORE", "CITECHECK_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    ctx = notebook.setup()
    assert Path.cwd() == tmp_path
    assert ctx.cache.path == ROOT / "json_cache.json" and ctx.cache.store.path == notebook.MY_CALLS
    assert (DATA / "rfc7519.txt").is_file()


def test_cli_runs_here_with_the_notebooks_cache_and_passes_cookbook_files_relative_to_here(monkeypatch):
    seen = {}

    def run(command, **kwargs):
        seen.update(command=command, env=kwargs["env"])
        return notebook.subprocess.CompletedProcess(command, 0, "out\n", "")
    monkeypatch.setattr(notebook.subprocess, "run", run)
    monkeypatch.chdir(ROOT / "notebooks")
    ctx = notebook.RunContext.build(notebook.notebook_settings({"CITECHECK_OFFLINE": "1"}))
    assert notebook.cli(ctx, "check", "--source", DATA / "rfc7519.txt", "--citations", "coffee.json") is None
    assert seen["command"][3:] == ["check", "--source", "../data/rfc7519.txt", "--citations", "coffee.json"]
    assert "cwd" not in seen
    assert seen["env"]["CITECHECK_CACHE"] == str(ROOT / "json_cache.json")
    assert seen["env"]["CITECHECK_CACHE_STORE"] == str(notebook.MY_CALLS)


def test_record_records_into_the_cookbooks_store(monkeypatch, tmp_path):
    from standins.http import StandIn

    from citecheck import record
    from citecheck.context import RunContext
    envs = []
    monkeypatch.setattr(notebook, "execute_all", lambda *, offline=True, save=True, env=None: envs.append(env) or [])
    monkeypatch.chdir(tmp_path)
    ctx = RunContext.build(Settings.from_env({}))                         # `record` run here, as the CLI runs it
    with StandIn(lambda request: (200, {}, {"model": "local"})) as judge:
        record.record(ctx, judge.url, log=lambda m: None)
    live = envs[0]
    assert live["CITECHECK_CACHE"] == str(tmp_path / "json_cache.json")
    assert live["CITECHECK_CACHE_STORE"] == str(tmp_path / "json_cache.sqlite")   # never the reader's own
    assert os.path.isabs(live["CITECHECK_CACHE_STORE"])
