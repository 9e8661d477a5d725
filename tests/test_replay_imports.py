"""A replay imports nothing it does not use: `python -m citecheck check` answered from json_cache.json loads
neither typesafe-sdk (cache keys are plain data), torch nor pandas; the notebook replay driver
(`notebook.execute`) loads none of the optional modules jsonschema's format checker would import (nbformat
makes no format check), and each stays importable (blocked for nbformat's import alone)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from citecheck.paths import ROOT

UNUSED_ON_REPLAY = ("typesafe_sdk", "torch", "pandas")


def imported(stderr: str) -> set[str]:
    """Top-level packages `python -X importtime` reported importing."""
    return {line.split("|")[-1].strip().split(".")[0] for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize("method", ["pooled", "one_pass"])
def test_check_replaying_the_cache_imports_no_sdk_torch_or_pandas(method):
    env = {**os.environ, "CITECHECK_OFFLINE": "1", "CITECHECK_CACHE": str(ROOT / "json_cache.json"),
           "CITECHECK_CACHE_STORE": "off", "JUDGE_METHOD": method}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "citecheck", "check",
                           "--source", "data/rfc7519.txt", "--citations", "data/citations.json", "--json"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)
    judged = [row for row in rows if row["relation"] is not None]
    answered_by = "pooled" if method == "pooled" else "choice"          # one_pass's baseline in check
    assert len(judged) >= 8 and {row["method"] for row in judged} == {answered_by}
    found = imported(done.stderr)
    assert "citecheck" in found and "rapidfuzz" in found              # the parser sees what was imported
    assert found.isdisjoint(UNUSED_ON_REPLAY), sorted(found & set(UNUSED_ON_REPLAY))


DRIVER = """
import json, sys
from citecheck import notebook
nb = notebook.execute(sys.argv[1])
print(json.dumps({"loaded": sorted(m for m in notebook.FORMAT_CHECKER_EXTRAS + ("lark",) if m in sys.modules),
                  "blocked": sorted(m for m in sys.modules if sys.modules[m] is None
                                    and m in notebook.FORMAT_CHECKER_EXTRAS),
                  "printed": nb.cells[0].outputs[0]["text"]}))
"""


def test_a_notebook_replay_loads_no_format_checker_module(tmp_path):
    path = tmp_path / "tiny.ipynb"
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    nbformat.write(new_notebook(cells=[new_code_cell("print(6 * 7)")], metadata=kernel), str(path))
    done = subprocess.run([sys.executable, "-c", DRIVER, str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"loaded": [], "blocked": [], "printed": "42\n"}
