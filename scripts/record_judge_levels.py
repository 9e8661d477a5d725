"""Re-record data/judge_levels.json: `python scripts/record_judge_levels.py` (no key, no network).

Runs notebook 05's three levels (`levels.three_levels`: every method over the perfect and the capable
stand-ins on 127.0.0.1) in this fresh process, and records with the result every repository file the run
imported or opened (its sha256) and every installed distribution it imported (its version): the code a
replay checks before trusting the record (`citecheck.evaluation.recorded_levels`). Says whether the result
differs from the one recorded before; notebook 05 then replays to its committed outputs from the new record.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from citecheck.evaluation import recorded_levels  # noqa: E402

SKIPPED = ("build", ".models", ".git", ".venv", "__pycache__")
"""Caches and output folders: what they hold does not decide the result."""


def repository_file(name) -> str | None:
    """`name` (an opened or imported path) relative to the repository, or None when outside it or skipped."""
    if not isinstance(name, (str, bytes)) and not hasattr(name, "__fspath__"):
        return None
    try:
        path = Path(name if not isinstance(name, bytes) else name.decode(errors="replace")).resolve()
    except (OSError, ValueError):
        return None
    if not path.is_relative_to(ROOT) or not path.is_file() or path.suffix == ".pyc":
        return None
    relative = path.relative_to(ROOT)
    return None if any(part in SKIPPED for part in relative.parts) else relative.as_posix()


def main() -> int:
    from importlib.metadata import packages_distributions, version
    opened: set[str] = set()
    sys.addaudithook(lambda event, args: opened.add(args[0]) if event == "open" and args else None)
    import levels
    result = levels.three_levels()
    files = {repository_file(getattr(module, "__file__", None)) for module in list(sys.modules.values())}
    files |= {repository_file(name) for name in list(opened)}
    files.discard(repository_file(__file__))            # this script only starts the run
    code = {name: recorded_levels.fingerprint(name) for name in files if name}
    distributions = packages_distributions()
    for top in {name.split(".")[0] for name in list(sys.modules)}:
        for dist in distributions.get(top, ()):
            code[recorded_levels.PACKAGE + dist] = version(dist)
    before = recorded_levels.load()
    recorded_levels.save(result, code)
    compared = ("no record before" if before is None else "the result is the one recorded before"
                if before.get("result") == result else "the result DIFFERS from the one recorded before")
    print(f"wrote {recorded_levels.PATH.relative_to(ROOT)}: {len(files - {None})} files, "
          f"{sum(k.startswith(recorded_levels.PACKAGE) for k in code)} packages; {compared}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
