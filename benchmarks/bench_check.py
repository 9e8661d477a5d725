"""How long `citecheck check` takes on a ready virtualenv, next to its floor.

Floor = a bare interpreter start plus the imports the command needs. Runs are interleaved so both
see the same machine load; prints the medians and their ratio. Replays from json_cache.json.
Usage: .venv/bin/python benchmarks/bench_check.py [runs]
"""
import os
import statistics
import subprocess
import sys
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
CHECK = [sys.executable, "-m", "citecheck", "check", "--source", "data/rfc7519.txt",
         "--citations", "data/citations.json"]
FLOOR = [sys.executable, "-c", "import citecheck.check, typesafe_sdk, rapidfuzz, httpx"]
BARE = [sys.executable, "-c", "pass"]


def seconds(cmd):
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "CITECHECK_OFFLINE": "1"})
    return time.perf_counter() - started


def main():
    times = {"check": [], "floor (start + imports)": [], "bare interpreter": []}
    for _ in range(RUNS):
        for name, cmd in zip(times, (CHECK, FLOOR, BARE)):
            times[name].append(seconds(cmd))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:24} median of {RUNS}: {value:.3f} s")
    print(f"check / floor = {medians['check'] / medians['floor (start + imports)']:.2f}")


if __name__ == "__main__":
    main()
