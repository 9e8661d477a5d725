"""Notebook 05's three levels of judge, recorded from a real run, so a replay does not run five judge methods
against the stand-in servers again.

Rules:
- data/judge_levels.json (committed) holds one real run of `three_levels` (tests/levels.py, over the stand-ins
  of tests/standins/): {"recorded": its UTC date, "command": how to re-record, "digest": sha256 of "code",
  "code": {repository file: its sha256, for every file the run imported or opened; "package NAME": the
  installed version, for every distribution it imported}, "result": what the run returned}.
- `replayed(run, live=)` returns the recorded result unless the reader asks to re-run (`live`:
  CITECHECK_NOTEBOOK_LIVE=1) or the code no longer matches its record (a file changed or gone, another
  package version, an unreadable record); then it runs `run()`. The stand-ins answer deterministically, so
  the result is the same either way, and a replay prints the same.
- Re-recording (`python scripts/record_judge_levels.py`) runs it in a fresh process and rewrites the file.
"""
from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timezone
from pathlib import Path

from ..files import replace_file
from ..paths import ROOT

PATH = ROOT / "data" / "judge_levels.json"
COMMAND = "python scripts/record_judge_levels.py"
PACKAGE = "package "
"""The prefix of a "code" entry naming an installed distribution (its value: the version)."""
log = logging.getLogger(__name__)


def fingerprint(name: str) -> str | None:
    """A "code" entry's current value: the file's sha256, or the distribution's version; None when gone."""
    if name.startswith(PACKAGE):
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version(name.removeprefix(PACKAGE))
        except PackageNotFoundError:
            return None
    try:
        return hashlib.sha256((ROOT / name).read_bytes()).hexdigest()
    except OSError:
        return None


def digest(code: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(code, sort_keys=True).encode()).hexdigest()


def changed(record: dict) -> list[str]:
    """The "code" entries that no longer match (all of them when the record is not one)."""
    code = record.get("code") if isinstance(record, dict) else None
    if not isinstance(code, dict) or not code or record.get("digest") != digest(code) \
            or "result" not in record:
        return ["the record"]
    return [name for name, value in code.items() if fingerprint(name) != value]


def load(path: Path = PATH) -> dict | None:
    """The record at `path`, or None when it is missing or unreadable (said in the log)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("recorded levels ignored (%s): %s", path.name, exc)
        return None


def replayed(run, *, live: bool = False, path: Path = PATH):
    """The recorded result while the record matches the code and `live` is off; else `run()`."""
    record = None if live else load(path)
    if record is not None and not (stale := changed(record)):
        return record["result"]
    if record is not None:
        log.info("recorded levels are stale (%s changed): running them", ", ".join(stale[:3]))
    return run()


def save(result, code: dict[str, str], path: Path = PATH) -> None:
    """Write the record of a run: `result` and the `code` it ran ({file or "package NAME": fingerprint})."""
    code = dict(sorted(code.items()))
    record = {"recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "command": COMMAND,
              "digest": digest(code), "code": code, "result": result}
    text = json.dumps(record, indent=1, ensure_ascii=False) + "\n"
    replace_file(path, lambda handle: handle.write(text))
