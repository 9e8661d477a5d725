"""How much CPU `citecheck check` takes on a ready virtualenv, next to its import floor.

Floor = a bare interpreter start plus exactly the modules the command imported (read from one
`python -X importtime` run of it), imported and nothing else run: what the check itself adds is the
ratio's excess. Runs are interleaved so all see the same machine load; each run's CPU is the child's user
+ system time (getrusage). Prints the medians and their ratio. Replays from json_cache.json, offline,
the committed export only (CITECHECK_CACHE_STORE=off).
Usage: .venv/bin/python benchmarks/bench_check.py [runs]
"""
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
CHECK = [sys.executable, "-m", "citecheck", "check", "--source", "data/rfc7519.txt",
         "--citations", "data/citations.json"]
BARE = [sys.executable, "-c", "pass"]
ENV = {**os.environ, "CITECHECK_OFFLINE": "1", "CITECHECK_CACHE_STORE": "off"}


def imported_by(command: list[str]) -> list[str]:
    """Every module `command` (a `python ...` command) imported or tried, in import order (-X importtime)."""
    done = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, check=True)
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")][1:]   # [0]: header
    names = [line.split("|")[-1].strip() for line in lines]
    return [name for name in names if name not in ("__main__", "citecheck.__main__")]


def cpu_seconds(command: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
                   cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    modules = imported_by(CHECK)
    floor = [sys.executable, "-c", "import importlib\n"         # importtime lists failed tries too (nt)
             f"for name in {modules!r}:\n"
             "    try: importlib.import_module(name)\n    except ImportError: pass"]
    heavy = sorted({m.split(".")[0] for m in modules} & {"typesafe_sdk", "torch", "pandas", "httpx"})
    print(f"check imports {len(modules)} modules; of typesafe_sdk, torch, pandas, httpx: {heavy or 'none'}")
    times = {"check": [], "floor (start + its imports)": [], "bare interpreter": []}
    for _ in range(RUNS):
        for name, cmd in zip(times, (CHECK, floor, BARE)):
            times[name].append(cpu_seconds(cmd))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:28} median of {RUNS}: {value * 1000:.0f} ms CPU")
    print(f"check / floor = {medians['check'] / medians['floor (start + its imports)']:.2f} (target <= 1.1)")


if __name__ == "__main__":
    main()
