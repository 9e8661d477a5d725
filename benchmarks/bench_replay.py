"""Each notebook's offline replay time next to its floor: a script that prints numbers.

    .venv/bin/python benchmarks/bench_replay.py                        # every notebook, medians of 3
    .venv/bin/python benchmarks/bench_replay.py --notebooks 02 04 --repeats 1 --cold

Replay = `citecheck.notebook.execute` (a fresh kernel, offline, from json_cache.json alone), the way the
reproduction test runs it. Floor = a fresh kernel running only the notebook's first code cell (the
set-up cell: its imports) plus, for a notebook that ranks passages, loading MiniLM: what no replay of it
can avoid. Runs are interleaved (replay, floor, next notebook, ..., then the next repetition) and the
medians printed. `--cold` deletes the passage vectors remembered on disk (`citecheck.web.vectors`) before
each replay, so it encodes every page as a first run on a fresh clone does; without it the vectors the
first repetition leaves behind are reused, as on any machine that replayed before.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import notebook
from citecheck.web import vectors  # noqa: E402

USES_MINILM = {"01": False}
"""Notebooks that never rank passages (every other one loads MiniLM)."""


def floor_notebook(path: Path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook
    first = next(c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code")
    cells = [new_code_cell(first.source)]
    if USES_MINILM.get(path.name[:2], True):
        cells.append(new_code_cell("from citecheck.web import vectors\nvectors.model();"))
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})


def timed(path: Path) -> float:
    started = time.perf_counter()
    notebook.execute(path)
    return time.perf_counter() - started


def main() -> int:
    import nbformat
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", default=[], help="prefixes such as 02 04 (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="forget remembered passage vectors before each replay")
    args = parser.parse_args()
    paths = [p for p in notebook.notebook_paths() if not args.notebooks or p.name[:2] in args.notebooks]
    floors = {}
    for path in paths:
        floors[path] = ROOT / "build" / f"floor-{path.name}"
        floors[path].parent.mkdir(exist_ok=True)
        nbformat.write(floor_notebook(path), str(floors[path]))
    replay: dict[Path, list[float]] = {p: [] for p in paths}
    floor: dict[Path, list[float]] = {p: [] for p in paths}
    for _ in range(args.repeats):
        for path in paths:
            if args.cold:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{vectors.store_path()}{suffix}").unlink(missing_ok=True)
            replay[path].append(timed(path))
            floor[path].append(timed(floors[path]))
    print(f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end; "
          f"{'cold (vectors forgotten before each replay)' if args.cold else 'warm'}; medians of {args.repeats}\n")
    print("| notebook | replay s | floor s | replay / floor |")
    print("|---|---:|---:|---:|")
    for path in paths:
        r, f = statistics.median(replay[path]), statistics.median(floor[path])
        print(f"| {path.stem} | {r:.1f} | {f:.1f} | {r / f:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
