"""Each notebook's offline replay, cold and warm, next to its floor: a script that prints ratios measured in one run.

    .venv/bin/python benchmarks/bench_replay.py                        # every notebook, medians of 3
    .venv/bin/python benchmarks/bench_replay.py --notebooks 02 04 --repeats 1

Replay = `citecheck.notebook.execute` (a fresh kernel, offline, from json_cache.json alone), the way
`setup.sh` and the reproduction test run it.
- cold: as on a fresh clone, nothing a replay leaves on disk (the passage vectors remembered under
  .models/, `citecheck.web.vectors.store_path`) is there: it is deleted first;
- warm: the same notebook replayed right after, reading what the cold run left;
- floor: a fresh kernel running only the notebook's first code cell (the set-up cell: its imports), what
  no replay of it can avoid.
For each repetition every notebook runs cold, warm, floor back to back, then the next notebook. Time is CPU
seconds (user + system) of this process and its children (the kernel), from getrusage, so other work on a
shared machine moves it far less than wall time; wall seconds are printed beside it. Medians of the
repetitions; ratios cold / warm and warm / floor (targets: <= 1.5 and <= 1.3).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import notebook  # noqa: E402
from citecheck.web import vectors  # noqa: E402

KINDS = ("cold", "warm", "floor")


def floor_notebook(path: Path):
    """The notebook's set-up cell alone, in a notebook of its own."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook
    first = next(c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code")
    return new_notebook(cells=[new_code_cell(first.source)],
                        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})


def forget_vectors() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{vectors.store_path()}{suffix}").unlink(missing_ok=True)


def cpu_seconds() -> float:
    """User + system CPU of this process and of its children that have ended (each kernel)."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def timed(path: Path, failed: dict) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one replay of `path`; a replay that fails is noted in `failed`."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    try:
        notebook.execute(path)
    except Exception as exc:  # noqa: BLE001 - a failing notebook is a labelled row; the others still run
        reason = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip().splitlines()[-1]      # without terminal colours
        failed.setdefault(path.name.removeprefix("floor-"), reason[:120])
    return cpu_seconds() - cpu, time.perf_counter() - wall


def main() -> int:
    import nbformat
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", default=[], help="prefixes such as 02 04 (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    paths = [p for p in notebook.notebook_paths() if not args.notebooks or p.name[:2] in args.notebooks]
    floors = {}
    for path in paths:
        floors[path] = ROOT / "build" / f"floor-{path.name}"
        floors[path].parent.mkdir(exist_ok=True)
        nbformat.write(floor_notebook(path), str(floors[path]))
    runs: dict[tuple[Path, str], list[tuple[float, float]]] = {(p, k): [] for p in paths for k in KINDS}
    failed: dict[str, str] = {}
    for _ in range(args.repeats):
        for path in paths:
            forget_vectors()
            runs[path, "cold"].append(timed(path, failed))
            runs[path, "warm"].append(timed(path, failed))
            runs[path, "floor"].append(timed(floors[path], failed))
            print(f"{path.stem}: " + ", ".join(f"{k} {runs[path, k][-1][0]:.1f} s CPU" for k in KINDS),
                  file=sys.stderr, flush=True)
    print(f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end; "
          f"medians of {args.repeats}; CPU s (wall s)\n")
    print("| notebook | cold | warm | floor | cold / warm | warm / floor |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = dict.fromkeys(KINDS, 0.0)
    for path in paths:
        if path.name in failed:
            print(f"| {path.stem} | failed: {failed[path.name]} | | | | |")
            continue
        cpu = {k: statistics.median(c for c, _ in runs[path, k]) for k in KINDS}
        wall = {k: statistics.median(w for _, w in runs[path, k]) for k in KINDS}
        for k in KINDS:
            totals[k] += cpu[k]
        print(f"| {path.stem} | " + " | ".join(f"{cpu[k]:.1f} ({wall[k]:.1f})" for k in KINDS)
              + f" | {cpu['cold'] / cpu['warm']:.2f} | {cpu['warm'] / cpu['floor']:.2f} |")
    print(f"| all{' that ran' if failed else ''} | " + " | ".join(f"{totals[k]:.1f}" for k in KINDS)
          + f" | {totals['cold'] / totals['warm']:.2f} | {totals['warm'] / totals['floor']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
