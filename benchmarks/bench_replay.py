"""Each notebook's offline replay, cold and warm, next to its floor: ratios measured in one run.

    .venv/bin/python benchmarks/bench_replay.py                        # every notebook, medians of 3
    .venv/bin/python benchmarks/bench_replay.py --notebooks 05 07 --repeats 1
    .venv/bin/python benchmarks/bench_replay.py --against /tmp/before  # another checkout, interleaved

Replay = a fresh driver process running `citecheck.notebook.execute` (a fresh kernel, offline, from
json_cache.json alone), the way a reproduction run pays for it: the driver's imports, the kernel, the cells.
- cold: as on a fresh clone, nothing a replay leaves on disk (the passage vectors remembered under
  .models/, `citecheck.web.vectors.store_path`) is there: it is deleted first;
- warm: the same notebook replayed right after, reading what the cold run left;
- floor: the same driver replaying a notebook of the notebook's first code cell alone (the set-up cell: its
  imports), what no replay of it can avoid.
For each repetition every notebook runs cold, warm, floor back to back (with --against, in each checkout in
turn), then the next notebook. Time is CPU seconds (user + system) of the driver and its children (the
kernel, and what the kernel starts: Dask workers, the CLI), from getrusage, so other work on a shared machine
moves it far less than wall time; wall seconds are printed beside it. Medians of the repetitions; ratios
cold / warm and warm / floor (target: warm / floor <= TARGET for every notebook).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import notebook  # noqa: E402
from citecheck.web import vectors  # noqa: E402

KINDS = ("cold", "warm", "floor")
TARGET = 2.0
"""Every notebook's warm replay within this many times its floor."""
DRIVER = "import sys; from citecheck import notebook; notebook.execute(sys.argv[1])"


def floor_notebook(path: Path):
    """The notebook's set-up cell alone, in a notebook of its own."""
    nbformat, _ = notebook.jupyter_modules()
    from nbformat.v4 import new_code_cell, new_notebook
    first = next(c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code")
    return new_notebook(cells=[new_code_cell(first.source)],
                        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})


def forget_vectors(root: Path) -> None:
    """Delete `root`'s remembered passage vectors (a cold replay)."""
    stored = root / ".models" / vectors.store_path().name
    for suffix in ("", "-wal", "-shm"):
        Path(f"{stored}{suffix}").unlink(missing_ok=True)


def children_cpu() -> float:
    """User + system CPU of this process's children that have ended (each driver, with what it waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(path: Path, root: Path, failed: dict) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one replay of `path` by a fresh driver of the checkout `root`; a replay
    that fails is noted in `failed`."""
    env = {**os.environ, "PYTHONPATH": str(root), "CITECHECK_CACHE": str(root / "json_cache.json")}
    cpu, wall = children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-c", DRIVER, str(path)], cwd=root, env=env, capture_output=True,
                          text=True)
    if done.returncode:
        reason = re.sub(r"\x1b\[[0-9;]*m", "", done.stderr).strip().splitlines() or ["no output"]
        failed.setdefault((root, path.name.removeprefix("floor-")), reason[-1][:120])
    return children_cpu() - cpu, time.perf_counter() - wall


def measure(prefixes=(), repeats: int = 3, roots=(ROOT,), progress=None) -> dict:
    """{(root, notebook name): {kind: (median CPU s, median wall s)} or {"failed": reason}}, interleaved."""
    nbformat, _ = notebook.jupyter_modules()
    names = [p.name for p in notebook.notebook_paths() if not prefixes or p.name[:2] in prefixes]
    floors = {}
    for root in roots:
        for name in names:
            floors[root, name] = root / "build" / f"floor-{name}"
            floors[root, name].parent.mkdir(exist_ok=True)
            nbformat.write(floor_notebook(root / "notebooks" / name), str(floors[root, name]))
    runs: dict = {(r, n, k): [] for r in roots for n in names for k in KINDS}
    failed: dict = {}
    for _ in range(repeats):
        for name in names:
            for root in roots:
                path = root / "notebooks" / name
                forget_vectors(root)
                runs[root, name, "cold"].append(timed(path, root, failed))
                runs[root, name, "warm"].append(timed(path, root, failed))
                runs[root, name, "floor"].append(timed(floors[root, name], root, failed))
                if progress:
                    progress(f"{root.name}/{name}: " + ", ".join(
                        f"{k} {runs[root, name, k][-1][0]:.1f} s CPU" for k in KINDS))
    def medians(root: Path, name: str) -> dict:
        return {k: tuple(statistics.median(run[i] for run in runs[root, name, k]) for i in (0, 1))
                for k in KINDS}
    return {(root, name): {"failed": failed[root, name]} if (root, name) in failed else medians(root, name)
            for root in roots for name in names}


def worst_ratio(prefixes=(), repeats: int = 1) -> float:
    """The largest warm / floor over the notebooks (a failed replay: infinite), the target's figure."""
    rows = measure(prefixes, repeats).values()
    return max(float("inf") if "failed" in row else row["warm"][0] / row["floor"][0] for row in rows)


def table(results: dict, root: Path) -> list[str]:
    lines = ["| notebook | cold | warm | floor | cold / warm | warm / floor | target |",
             "|---|---:|---:|---:|---:|---:|---|"]
    totals = dict.fromkeys(KINDS, 0.0)
    for (where, name), row in results.items():
        if where != root:
            continue
        stem = name.removesuffix(".ipynb")
        if "failed" in row:
            lines.append(f"| {stem} | failed: {row['failed']} | | | | | missed |")
            continue
        for k in KINDS:
            totals[k] += row[k][0]
        ratio = row["warm"][0] / row["floor"][0]
        lines.append(f"| {stem} | " + " | ".join(f"{row[k][0]:.1f} ({row[k][1]:.1f})" for k in KINDS)
                     + f" | {row['cold'][0] / row['warm'][0]:.2f} | {ratio:.2f} | "
                     + f"{'met' if ratio <= TARGET else 'MISSED'} (<= {TARGET:g}) |")
    lines.append("| all | " + " | ".join(f"{totals[k]:.1f}" for k in KINDS)
                 + f" | {totals['cold'] / totals['warm']:.2f} | {totals['warm'] / totals['floor']:.2f} | |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", default=[], help="prefixes such as 02 04 (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout (e.g. of main), replayed interleaved")
    args = parser.parse_args()
    roots = (ROOT, args.against.resolve()) if args.against else (ROOT,)
    results = measure(args.notebooks, args.repeats, roots,
                      progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end; "
          f"medians of {args.repeats}; CPU s (wall s) of a fresh driver per replay")
    for root in roots:
        print(f"\n{root}:\n")
        print("\n".join(table(results, root)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
