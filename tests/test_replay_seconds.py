"""`python -m citecheck.notebook` (what setup.sh runs) says before each notebook how long it took last time."""
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from citecheck import notebook


@pytest.fixture
def two_notebooks(tmp_path, monkeypatch, capsys):
    """Two notebooks in tmp_path/notebooks whose replay is instant; `events` lists prints and replays in order."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb"):
        nbformat.write(new_notebook(cells=[new_code_cell("1")]), str(folder / name))
    events = []

    def replay(path, **kwargs):
        events.append(("printed before", capsys.readouterr().out))
        events.append(("replayed", path.name))
        return nbformat.read(str(path), as_version=4)
    monkeypatch.setattr(notebook, "ROOT", tmp_path)
    monkeypatch.setattr(notebook, "NOTEBOOKS", folder)
    monkeypatch.setattr(notebook, "execute", replay)
    return folder, events


def test_each_notebook_is_announced_with_its_committed_seconds_then_this_machines(two_notebooks, capsys):
    folder, events = two_notebooks
    (folder / notebook.SECONDS).write_text(json.dumps({"01_a.ipynb": 42}))
    assert notebook.main() == 0
    assert events[:2] == [("printed before", "01_a.ipynb: replaying (last time 42 s)...\n"), ("replayed", "01_a.ipynb")]
    assert events[2][1].startswith("01_a.ipynb:   0.0 s, identical") and events[2][1].endswith("02_b.ipynb: replaying...\n")
    kept = json.loads((folder.parent / "build" / "notebooks" / notebook.SECONDS).read_text())
    assert kept == {"01_a.ipynb": 0, "02_b.ipynb": 0}                       # this machine's, in build/
    assert json.loads((folder / notebook.SECONDS).read_text()) == {"01_a.ipynb": 42}      # committed: untouched
    events.clear()
    capsys.readouterr()
    notebook.main()
    assert events[0] == ("printed before", "01_a.ipynb: replaying (last time 0 s)...\n")


def test_saving_the_notebooks_records_their_replay_seconds(two_notebooks):
    folder, _ = two_notebooks
    (folder / notebook.SECONDS).write_text(json.dumps({"01_a.ipynb": 42, "09_gone.ipynb": 7}))
    notebook.execute_all(offline=False, save=True)                             # a live pass: not a replay
    assert json.loads((folder / notebook.SECONDS).read_text())["01_a.ipynb"] == 42
    notebook.execute_all(offline=True, save=True)
    assert json.loads((folder / notebook.SECONDS).read_text()) == {"01_a.ipynb": 0, "02_b.ipynb": 0,
                                                                    "09_gone.ipynb": 7}


def test_an_unreadable_seconds_file_is_only_a_missing_hint(two_notebooks, capsys):
    folder, events = two_notebooks
    (folder / notebook.SECONDS).write_text("{not json")
    assert notebook.main() == 0 and events[0] == ("printed before", "01_a.ipynb: replaying...\n")


def test_the_committed_seconds_name_every_notebook():
    seconds = notebook.replay_seconds(notebook.NOTEBOOKS)
    assert sorted(seconds) == [p.name for p in notebook.notebook_paths()]
    assert all(isinstance(s, int) and s >= 0 for s in seconds.values())
