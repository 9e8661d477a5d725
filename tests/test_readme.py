"""The README's and docs/ pages' shell examples work when pasted: each block marked `<!-- readme-test: run -->`
runs as written, and what it prints is the block marked `readme-test: stdout` (and `stderr`, when shown) after it.

They run in bash in a copy of the repository's inputs (data/ and json_cache.json) with no keys, no
endpoint and no network. Two substitutions only: `.venv/bin/python` is this interpreter (importing
this checkout), and the API's port 8000 is a free port (the fixture site keeps 8731: the cached calls
are keyed on its URLs).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from machine_paths import leaks
from standins.judge import free_port

from citecheck import config
from citecheck.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"<!-- readme-test: (?P<kind>run|stdout|stderr) -->\n```[a-z]*\n(?P<body>.*?)\n```", re.S)


def examples() -> list[dict]:
    """[{'page', 'run': script, 'stdout': text, 'stderr': text | None}] in page order."""
    found: list[dict] = []
    for page in PAGES:
        for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
            if match["kind"] == "run":
                found.append({"page": page.name, "run": match["body"], "stdout": None, "stderr": None})
            else:
                assert found and found[-1][match["kind"]] is None, f"{page.name}: a {match['kind']} block with no run block before it"
                found[-1][match["kind"]] = match["body"]
    return found


def as_run_here(script: str, port: int) -> str:
    return (script.replace(".venv/bin/python", shlex.quote(sys.executable))
            .replace("serve --dry-run", f"serve --dry-run --port {port}")
            .replace("127.0.0.1:8000", f"127.0.0.1:{port}"))


def test_the_readme_is_a_front_door_and_its_links_lead_somewhere():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


def test_the_readme_marks_its_examples():
    found = examples()
    assert len(found) >= 2 and all(example["stdout"] is not None for example in found)
    assert any("citecheck check" in e["run"] for e in found) and any("serve" in e["run"] for e in found)


@pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None, reason="needs bash and curl")
@pytest.mark.parametrize("n", range(len(examples())))
def test_readme_example_runs_as_written(tmp_path, n):
    example = examples()[n]
    (tmp_path / "data").symlink_to(ROOT / "data")
    shutil.copy(ROOT / "json_cache.json", tmp_path / "json_cache.json")
    env = {k: v for k, v in os.environ.items() if k not in config.SECRETS and k not in config.DEFAULTS}
    env["PYTHONPATH"] = str(ROOT)     # no judge configured: a live call stops at the missing key, never sent
    done = subprocess.run(["bash", "-c", as_run_here(example["run"], free_port())], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == example["stdout"].strip(), done.stderr
    if example["stderr"] is not None:
        assert done.stderr.strip() == example["stderr"].strip()
    assert "Traceback" not in done.stderr
    logs = "".join(path.read_text() for path in sorted(tmp_path.glob("build/*.log")))
    assert "Traceback" not in logs
    leaked = leaks(done.stdout + done.stderr + logs)
    assert not leaked, f"absolute paths printed: {leaked}"
    assert (tmp_path / "json_cache.json").read_bytes() == (ROOT / "json_cache.json").read_bytes()
