"""Quiet, correct defaults of the notebooks: the executor's kernel is not on TCP (so it has no unencrypted-TCP
warning), and no output of any notebook holds an absolute path."""
import nbformat
from machine_paths import leaks

from citecheck import notebook
from citecheck.paths import ROOT


def test_the_executor_kernel_runs_over_ipc_and_warns_of_nothing(tmp_path, capfd):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os\nprint(os.getcwd() == os.environ['CITECHECK_FOLDER_SEEN'])")]
    path = tmp_path / "t.ipynb"
    nbformat.write(nb, path)
    executed = notebook.execute(path, env={"CITECHECK_FOLDER_SEEN": str(tmp_path)})
    assert executed.cells[0].outputs[0]["text"] == "True\n"       # it ran in the notebook's folder, as in Jupyter
    captured = capfd.readouterr()
    assert "without encryption" not in captured.err and "WARNING" not in captured.err, captured.err
    assert notebook.kernel_transport("/x")["KernelManager"]["transport"] == "ipc"
    assert not list(ROOT.glob("kernel-ipc*")) and not list(tmp_path.glob("kernel-ipc*"))


def output_text(cell) -> str:
    """Every text a code cell shows: streams, text/plain and text/html, error tracebacks."""
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts += [out.get("data", {}).get(kind, "") for kind in ("text/plain", "text/html", "text/markdown")]
        parts += out.get("traceback", [])
    return "\n".join(part if isinstance(part, str) else "".join(part) for part in parts)


def test_no_notebook_output_holds_an_absolute_path():
    """The committed outputs are what every re-execution must reproduce (tests/test_notebooks.py)."""
    leaked = {}
    for path in notebook.notebook_paths():
        for n, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "code" and leaks(output_text(cell)):
                leaked[f"{path.name} cell {n}"] = leaks(output_text(cell))
    assert not leaked, leaked
