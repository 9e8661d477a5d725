"""The product speaks of itself only: no issue numbers (work tracking) in code, tests, docs, notebooks,
scripts or requirements. Data files are other people's text and are not read."""
import re
import subprocess

from citecheck.paths import ROOT

TRACKING = re.compile(r"\bissues? ?#?\d+|\bissue-\d+", re.IGNORECASE)
SKIPPED = ("data/", "tests/data/", "json_cache.json")


def test_no_file_refers_to_an_issue_number():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    found = []
    for name in tracked:
        if name.startswith(SKIPPED) or not name.endswith((".py", ".md", ".ipynb", ".txt", ".json", ".sh", ".toml",
                                                          ".html", ".css")):
            continue
        path = ROOT / name
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if TRACKING.search(line):
                found.append(f"{name}:{number}: {line.strip()[:80]}")
    assert not found, "work tracking in the product:\n" + "\n".join(found[:20])
