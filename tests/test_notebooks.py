"""Notebook reproduction: every notebook re-executes offline (no key, no network) to its committed outputs,
with Dask's usual port 8787 taken and nothing left in its temporary folder; what differs is named by cell and
line, in `python -m citecheck.notebook` and in setup.sh's last lines."""
import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from citecheck import notebook

PATHS = notebook.notebook_paths()


@contextlib.contextmanager
def port_8787_held():
    """127.0.0.1:8787 listened on here (if nobody else holds it already): a notebook must not need it."""
    with socket.socket() as holder:
        with contextlib.suppress(OSError):
            holder.bind(("127.0.0.1", 8787))
            holder.listen()
        yield


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_notebook_reproduces_its_committed_outputs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("CITECHECK_CACHE", str(notebook.ROOT / "json_cache.json"))
    monkeypatch.delenv("JUDGE_METHOD", raising=False)  # the reader's default
    committed = nbformat.read(str(path), as_version=4)
    assert any(c.get("outputs") for c in committed.cells if c.cell_type == "code"), "committed without outputs"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with port_8787_held():
        executed = notebook.execute(path, offline=True, env={"TMPDIR": str(scratch)})
    assert notebook.differences(executed, committed) == []
    assert sorted(p.name for p in scratch.iterdir()) == [], "left in the kernel's temporary folder"


def test_there_are_notebooks():
    assert [p.name[:3] for p in PATHS][:1] == ["01_"]


def test_no_notebook_makes_a_temporary_folder_it_does_not_remove():
    for path in PATHS:
        cells = nbformat.read(str(path), as_version=4).cells
        code = "\n".join(c.source for c in cells if c.cell_type == "code")
        assert "mkdtemp(" not in code, path.name


def printed(*texts, tags=()):
    cell = new_code_cell("print(x)", metadata={"tags": list(tags)})
    cell.outputs = [new_output("stream", name="stdout", text=t) for t in texts]
    return cell


def test_stream_chunking_is_not_a_difference_but_text_is():
    def nb(*texts):
        return new_notebook(cells=[printed(*texts)])
    assert notebook.differences(nb("a\n", "b\n"), nb("a\nb\n")) == []
    assert notebook.differences(nb("a\n", "c\n"), nb("a\nb\n")) == [
        "code cell 1: outputs differ (text); first at line 2: committed stdout: b / now stdout: c"]


def test_a_difference_names_the_first_differing_cell_and_line():
    figure = new_output("display_data", data={"text/plain": "a figure", "image/png": "iVBORw0KGgo="})
    changed = new_output("display_data", data={"text/plain": "a figure", "image/png": "iVBORw0KGgoAAAA="})
    same, other = new_code_cell("1"), new_code_cell("2")
    same.outputs, other.outputs = [figure], [changed]
    committed = new_notebook(cells=[printed("x\n"), same, printed("one\ntwo\nthree\n")])
    executed = new_notebook(cells=[printed("x\n"), other, printed("one\n\x1b[2J" + "w" * 300 + "\n")])
    found = notebook.differences(executed, committed)
    assert found[0] == ("code cell 2: outputs differ (image/png, text/plain); first at line 1: committed "
                        "image/png: iVBORw0KGgo= / now image/png: iVBORw0KGgoAAAA=")
    assert found[1].startswith("code cell 3: outputs differ (text); first at line 2: committed stdout: two / "
                               "now stdout: \\x1b[2Jwww")          # printable: no terminal control
    assert found[1].endswith("w…") and len(found[1]) < 200
    shorter = new_notebook(cells=[printed("x\n"), same, printed("one\n")])
    assert notebook.differences(shorter, committed)[0].endswith(
        "line 2: committed stdout: two / now (no more output)")


def test_a_measured_cell_may_differ_in_its_numbers_only():
    def nb(text, tags=("measured",)):
        return new_notebook(cells=[printed(text, tags=tags)])
    assert notebook.differences(nb("2 workers: 41.7 citations/s\n"), nb("2 workers: 38.25 citations/s\n")) == []
    assert notebook.differences(nb("2 workers: 41.7 citations/s\n"), nb("2 workers: 41.7 claims/s\n")) != []
    assert notebook.differences(nb("2 workers: 41.7/s\n", ()), nb("2 workers: 38.2/s\n", ())) != []


def test_help_says_what_the_command_does_and_replays_nothing():
    done = subprocess.run([sys.executable, "-m", "citecheck.notebook", "--help"], capture_output=True,
                          text=True, cwd=notebook.ROOT, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(notebook.ROOT)})
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m citecheck.notebook")
    assert "replaying" not in done.stdout + done.stderr


DIFFERS = ("07_at_scale.ipynb: DIFFERS: code cell 6: outputs differ (text); first at line 1: "
           "committed a / now b")
FAKE_PYTHON = """#!/usr/bin/env bash
# stands in for .venv/bin/python: the notebook replay finds one notebook that differs
if [ "$2" = citecheck.notebook ]; then
  echo "07_at_scale.ipynb: replaying..."
  mkdir -p build/notebooks
  echo "$DIFFERS" > build/notebooks/problems.txt
  exit 1
fi
echo "ran $*"
"""


def test_setup_names_a_notebook_that_differs_in_its_last_lines(tmp_path):
    for name in ("setup.sh", "requirements.txt", "pyproject.toml"):
        shutil.copy(notebook.ROOT / name, tmp_path / name)
    (tmp_path / "data").mkdir()
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "etc" / "jupyter").mkdir(parents=True)
    (tmp_path / ".venv" / "etc" / "jupyter" / "jupyter_server_config.json").write_text("{}")
    python = tmp_path / ".venv" / "bin" / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    files = (tmp_path / "requirements.txt", tmp_path / "pyproject.toml")
    want = hashlib.sha256(b"".join(path.read_bytes() for path in files))
    (tmp_path / ".venv" / ".citecheck-requirements").write_text(want.hexdigest() + "\n")
    done = subprocess.run(["bash", "setup.sh"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, "DIFFERS": DIFFERS})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-3:] == [
        "setup.sh: FAILED (exit 1):",
        f"  {DIFFERS}",
        "  exit 1 from: .venv/bin/python -m citecheck.notebook"]
