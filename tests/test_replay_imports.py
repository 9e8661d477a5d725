"""A replay imports nothing it does not use: `python -m citecheck check` answered from json_cache.json loads
neither typesafe-sdk (cache keys are plain data), torch nor pandas."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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
