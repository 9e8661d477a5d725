"""Every capability target's benchmark in one run: each target, its measured value, met or missed.

    flock /tmp/citecheck-notebook.lock .venv/bin/python benchmarks/targets.py         # every target, short
    flock /tmp/citecheck-notebook.lock .venv/bin/python benchmarks/targets.py --full  # benchmarks' defaults
    .venv/bin/python benchmarks/targets.py near_miss_cutoff                           # the targets named

A script that prints numbers, not a timed test. Each benchmark prints its own lines (indented) as it runs;
the closing table gives every target, its bound, the measured value and `met` / `missed` (a benchmark
that fails is `missed` with its one-line error). The run imports this checkout (its root goes first on
sys.path and PYTHONPATH, so subprocesses do too). Some benchmarks bind the fixture site's port (8731):
run it under the notebook lock. Exit status 0 when every target named was met, else 1.

Adding a target is one `Target(...)` entry in TARGETS: its name, what is measured, the bound, whether the
value must be at most (`<=`) or at least (`>=`) it, the unit, and `measure(short, show) -> float`, which
runs the benchmark (in this process, or as a subprocess: `script_value`) in its short mode when `short`
is true, passes each printed line to `show`, and returns the measured value.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
sys.path[:0] = [str(ROOT), str(BENCHMARKS)]
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)

Show = Callable[[str], None]


@dataclass(frozen=True)
class Target:
    name: str
    says: str                                  # what is measured, one line
    bound: float
    at_most: bool                              # met when value <= bound (else value >= bound)
    unit: str
    measure: Callable[[bool, Show], float]     # (short, show) -> the measured value

    def met(self, value: float) -> bool:
        return value <= self.bound if self.at_most else value >= self.bound

    def wanted(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.bound:g} {self.unit}"


def script_value(script: str, args: list[str], pattern: str, show: Show, pick=max) -> float:
    """Run benchmarks/`script` with `args` in a subprocess (this checkout's code), show its output, and
    return `pick` of the numbers `pattern`'s first group matches in it (one line that fails: an error)."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=ROOT, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for line in done.stdout.splitlines():
        show(line)
    if done.returncode:
        raise RuntimeError(f"{script} exited with {done.returncode}")
    found = [float(m.group(1)) for m in re.finditer(pattern, done.stdout)]
    if not found:
        raise RuntimeError(f"{script} printed nothing matching {pattern!r}")
    return pick(found)


# ---------------------------------------------------------------- the benchmarks behind the targets

_API_RUNS: dict[bool, dict[str, float]] = {}


def _api_medians(short: bool, show: Show) -> dict[str, float]:
    """bench_api's medians, measured once per run for the targets it serves."""
    import bench_api
    if short not in _API_RUNS:
        _API_RUNS[short] = bench_api.measure(rounds=1 if short else 3, requests=500 if short else 1000,
                                             show=show)
    return _API_RUNS[short]


def verify_ratio(short: bool, show: Show) -> float:
    """/verify's CPU per request (serve --dry-run, the replay benchmark) over a bare FastAPI endpoint's."""
    import bench_api
    medians = _api_medians(short, show)
    return medians[bench_api.DRY_RUN] / medians[bench_api.BARE]


def api_layer_ratio(short: bool, show: Show) -> float:
    """The API layer's CPU per request (no pipeline) over a bare FastAPI endpoint's."""
    import bench_api
    medians = _api_medians(short, show)
    return medians[bench_api.LAYER] / medians[bench_api.BARE]


def near_miss_cutoff(short: bool, show: Show) -> float:
    """The near-miss search's speed-up from its cutoff (every result the same, else it fails)."""
    import bench_matching
    return bench_matching.cutoff_ratio(copies=30 if short else 100, rounds=1 if short else 3, show=show)


def worker_cpu(short: bool, show: Show) -> float:
    """A local:1 cluster worker's own CPU ms per citation (http, bm25)."""
    from bench_batch import worker_cpu_per_citation
    return worker_cpu_per_citation()


def redact_ratio(short: bool, show: Show) -> float:
    """A 10k-citation batch's CPU with the secrets read per cell (as before) over once per row."""
    from bench_redact import ratio
    return ratio()[2]


def extract_peak(short: bool, show: Show) -> float:
    """`extract`'s peak memory over the interpreter, divided by its 4 MiB one-paragraph input."""
    from bench_extract_memory import peak_ratio
    return peak_ratio()


def replay_worst(short: bool, show: Show) -> float:
    """The worst notebook's warm replay CPU over its floor (the set-up cell alone, same driver)."""
    import bench_replay
    return bench_replay.worst_ratio(repeats=1)


TARGETS = [
    Target("verify_ratio", "/verify (serve --dry-run replay) CPU per request / a bare FastAPI endpoint's",
           8, True, "x", verify_ratio),
    Target("api_layer_ratio", "the API layer alone (no pipeline) CPU per request / a bare endpoint's",
           2, True, "x", api_layer_ratio),
    Target("near_miss_cutoff", "the near-miss search on RFC 7519 x100 (short: x30) without / with its cutoff,"
           " every result the same",
           1.5, False, "x faster", near_miss_cutoff),
    Target("replay_floor", "the worst notebook's warm replay CPU / its floor", 2, True, "x", replay_worst),
    Target("worker_cpu", "a local:1 cluster worker's CPU per citation (http, bm25, 100 citations)",
           20, True, "ms", worker_cpu),
    Target("redact_ratio", "a 10k-citation batch: secrets read per cell / once per row, CPU", 1.1, False, "x",
           redact_ratio),
    Target("extract_peak", "extract's peak over the interpreter / its 4 MiB one-paragraph input", 10, True, "x",
           extract_peak),
]


# ---------------------------------------------------------------- the run

def run(targets: list[Target], short: bool) -> list[tuple[Target, float | None, str]]:
    """Measure each target in turn: (target, value or None, 'met' / 'missed' / 'missed: <error>')."""
    out = []
    for target in targets:
        print(f"== {target.name}: {target.says} ({target.wanted()})", flush=True)
        started = time.monotonic()
        try:
            value = target.measure(short, lambda line: print(f"   {line}", flush=True))
        except (Exception, SystemExit) as exc:          # noqa: BLE001 - one benchmark's failure is its row
            out.append((target, None, f"missed: {type(exc).__name__}: {exc}"))
            continue
        out.append((target, value, "met" if target.met(value) else "missed"))
        print(f"   {value:.2f} {target.unit} in {time.monotonic() - started:.0f} s", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="TARGET", help="targets to run (default: every one)")
    parser.add_argument("--full", action="store_true", help="the benchmarks' own defaults, not short mode")
    args = parser.parse_args(argv)
    known = {t.name: t for t in TARGETS}
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.error(f"no target {', '.join(unknown)} (targets: {', '.join(known)})")
    results = run([known[n] for n in args.names] if args.names else TARGETS, short=not args.full)
    width = max(len(t.name) for t, _, _ in results)
    print(f"\n{'full' if args.full else 'short'} mode, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for target, value, verdict in results:
        measured = "-" if value is None else f"{value:.2f} {target.unit}"
        print(f"{target.name:{width}}  target {target.wanted():16}  measured {measured:14}  {verdict}")
    return 0 if all(verdict == "met" for _, _, verdict in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
