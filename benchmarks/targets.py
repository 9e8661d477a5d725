"""Every benchmark target in one run: `.venv/bin/python benchmarks/targets.py [NAME ...]` runs each target's
benchmark and prints the target with its measured ratio, met or missed.

TARGETS: name -> (the command that prints the figure in full, the target: the ratio at most, a function that
runs the benchmark and returns the ratio). A benchmark adds its target with one entry here.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]


def replay_worst() -> float:
    import bench_replay
    return bench_replay.worst_ratio(repeats=1)


TARGETS = {
    "notebook replay, warm / floor (worst notebook)": (
        ".venv/bin/python benchmarks/bench_replay.py --repeats 1", 2.0, replay_worst),
}


def main(names=()) -> int:
    """Run the named targets (all by default); print one line each; exit 1 when one is missed."""
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        print(f"no such target: {', '.join(unknown)} (targets: {', '.join(TARGETS)})")
        return 2
    missed = 0
    print(f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
    for name, (command, target, run) in TARGETS.items():
        if names and name not in names:
            continue
        ratio = run()
        missed += ratio > target
        print(f"{name}: {ratio:.2f} (target <= {target:g}: {'met' if ratio <= target else 'MISSED'}); "
              f"in full: {command}", flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
