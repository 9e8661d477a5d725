"""Cost of one cache write as the cache grows, and of the export: a script that prints numbers.

    .venv/bin/python benchmarks/bench_cache.py                       # 1,000 / 10,000 / 100,000 entries
    .venv/bin/python benchmarks/bench_cache.py --sizes 1000 10000 --entry-kb 3 --writes 200

For each size the store is filled to that many entries (bulk, not timed), then `--writes` entries are
recorded one at a time through `Cache.put` (each its own transaction, as a live run does) and the
median and 95th percentile of one write are printed; the ratio compares the last size with the first.
The export of the largest store into an empty json_cache.json is timed once. `--old N` also times the
design this replaced (re-read and rewrite the whole JSON file under a lock, fsynced) at N entries.
Entries are `--entry-kb` KB of page-like text, like a small fetched page.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citecheck.cache import Cache, request_key, today  # noqa: E402


def entry(n: int, kb: int) -> dict:
    text = (f"Passage {n}: water boils at 100 degrees at sea level. " * (kb * 1024 // 52 + 1))[:kb * 1024]
    return {"function": "fetch.direct", "model": "bench", "answer": {"url": f"https://example.org/{n}",
            "markdown": text}, "usage": None, "seconds": 0.1, "recorded": today()}


def fill(cache: Cache, start: int, stop: int, kb: int, chunk: int = 2000) -> None:
    for first in range(start, stop, chunk):
        cache.put_many((request_key("fetch.direct", "bench", {"n": n}), entry(n, kb))
                       for n in range(first, min(first + chunk, stop)))


def time_writes(cache: Cache, start: int, writes: int, kb: int) -> list[float]:
    seconds = []
    for n in range(start, start + writes):
        key, value = request_key("fetch.direct", "bench", {"n": n}), entry(n, kb)
        began = time.perf_counter()
        cache.put(key, value)
        seconds.append(time.perf_counter() - began)
    return seconds


def old_design(path: Path, size: int, writes: int, kb: int) -> list[float]:
    """The replaced cache's put: lock, re-read the whole file, add one entry, rewrite it fsynced."""
    import fcntl
    data = {request_key("f", "bench", {"n": n}): entry(n, kb) for n in range(size)}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    seconds = []
    for n in range(size, size + writes):
        began = time.perf_counter()
        with open(str(path) + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            on_disk = json.loads(path.read_text())
            on_disk[request_key("f", "bench", {"n": n})] = entry(n, kb)
            tmp = path.with_name(".tmp")
            with open(tmp, "w") as handle:
                json.dump({k: on_disk[k] for k in sorted(on_disk)}, handle, indent=1, ensure_ascii=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        seconds.append(time.perf_counter() - began)
    return seconds


def describe(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1000, ordered[int(0.95 * (len(ordered) - 1))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--entry-kb", type=int, default=3)
    parser.add_argument("--old", type=int, nargs="*", default=[], help="also time the replaced design at N entries")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    print(f"{args.entry_kb} KB entries, {args.writes} timed writes per size; {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; scratch {work}\n")
    print("| design | entries before the writes | median ms / write | p95 ms / write |")
    print("|---|---:|---:|---:|")
    cache = Cache(work / "json_cache.json")
    filled, medians = 0, []
    for size in sorted(args.sizes):
        fill(cache, filled, size, args.entry_kb)
        filled = size
        median, p95 = describe(time_writes(cache, 10**9 + size, args.writes, args.entry_kb))
        medians.append(median)
        print(f"| SQLite store (WAL) | {size:,} | {median:.2f} | {p95:.2f} |", flush=True)
    for size in args.old:
        median, p95 = describe(old_design(work / f"old-{size}.json", size, min(args.writes, 20), args.entry_kb))
        print(f"| whole-file JSON rewrite (replaced) | {size:,} | {median:.1f} | {p95:.1f} |", flush=True)
    print(f"\nratio of the median write at {max(args.sizes):,} to {min(args.sizes):,} entries: "
          f"{medians[-1] / medians[0]:.2f}")
    total = len(cache.store)
    began = time.perf_counter()
    done = cache.export()
    seconds = time.perf_counter() - began
    size_mb = (work / "json_cache.json").stat().st_size / 1e6
    print(f"export of {total:,} entries into an empty json_cache.json: {seconds:.1f} s "
          f"({done['entries']:,} entries, {size_mb:.0f} MB)")
    print(f"(scratch files are in {work}; delete them when done)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
