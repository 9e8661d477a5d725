"""Every measured target in one run: each target's benchmark, its figure, and whether the target is met.

    .venv/bin/python benchmarks/targets.py                  # all of them
    .venv/bin/python benchmarks/targets.py redact extract   # those whose name holds a word given

`TARGETS` is the registry: name -> (the command that prints the full table, (comparison, value), a function
returning the measured figure). A benchmark adds its target with one entry. Figures are CPU or memory
ratios measured in this run (the machine is shared: state the load beside any figure you quote).
"""
from __future__ import annotations

import operator
import os
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]

COMPARE = {"<=": operator.le, ">=": operator.ge}


def _worker_cpu() -> float:
    from bench_batch import worker_cpu_per_citation
    return worker_cpu_per_citation()


def _redact_ratio() -> float:
    from bench_redact import ratio
    return ratio()[2]


def _extract_peak() -> float:
    from bench_extract_memory import peak_ratio
    return peak_ratio()


TARGETS: dict[str, tuple[str, tuple[str, float], Callable[[], float]]] = {
    "cluster worker CPU ms per citation (local:1, http, bm25)": (
        "benchmarks/bench_batch.py --mode http --workers 0 1 --levels 4 --citations 100 --retrieval bm25",
        ("<=", 20.0), _worker_cpu),
    "redact once per row: 10k-citation batch CPU, per cell / per row": (
        "benchmarks/bench_redact.py", (">=", 1.1), _redact_ratio),
    "extract peak over the interpreter / input (4 MiB one paragraph)": (
        "benchmarks/bench_extract_memory.py", ("<=", 10.0), _extract_peak),
}


def main(words: list[str]) -> int:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load} at the start\n")
    print("| target | measured | wanted | met | command |\n|---|---:|---|---|---|")
    missed = 0
    for name, (command, (comparison, value), measure) in TARGETS.items():
        if words and not any(word.lower() in name.lower() for word in words):
            continue
        try:
            figure = measure()
        except Exception as exc:        # noqa: BLE001 - one benchmark failing must not hide the others
            print(f"| {name} | failed: {type(exc).__name__}: {exc} | {comparison} {value:g} | no "
                  f"| {command} |")
            missed += 1
            continue
        met = COMPARE[comparison](figure, value)
        missed += not met
        print(f"| {name} | {figure:.2f} | {comparison} {value:g} | {'yes' if met else 'NO'} | {command} |",
              flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
