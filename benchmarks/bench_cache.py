"""Cost of one cache write as the cache grows, of the export, and of a process start: a script that prints numbers.

    .venv/bin/python benchmarks/bench_cache.py                       # 1,000 / 10,000 / 100,000 entries
    .venv/bin/python benchmarks/bench_cache.py --sizes 1000 10000 --entry-kb 3 --writes 200
    .venv/bin/python benchmarks/bench_cache.py --start-only          # process start at 1,000 / 100,000 entries

Writes: for each size the store is filled to that many entries (bulk, not timed), then `--writes` entries are
recorded one at a time through `Cache.put` (each its own transaction, as a live run does) and the
median and 95th percentile of one write are printed; the ratio compares the last size with the first.
The export of the largest store into an empty json_cache.json is timed once. `--old N` also times the
design this replaced (re-read and rewrite the whole JSON file under a lock, fsynced) at N entries.
Entries are `--entry-kb` KB of page-like text, like a small fetched page.

Process start (`--start-sizes`, default 1,000 and 100,000 entries): a json_cache.json of that many entries,
and a fresh Python process that opens it as a replay does (offline, the export alone) and looks up ten
of its entries; beside it the same process on a 10-entry file (what any start costs) and one that parses
the whole file first (the design this replaced). CPU ms (user + system) and peak memory of each process,
the medians of `--starts` interleaved runs, all in this one run; the cache's share is the difference with
the 10-entry start.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck.cache import Cache, request_key, today  # noqa: E402
from citecheck.cache import export as export_file  # noqa: E402


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


START = """
import sys, time
from pathlib import Path
from citecheck.cache import Cache, export
path, keys, whole = Path(sys.argv[1]), sys.argv[2].split(","), sys.argv[3] == "whole"
if whole:
    export.read_export(path)
cache = Cache(path, offline=True, store="off")
assert all(cache.lookup(key) is not None for key in keys)
"""
"""A replay's start: open the cache, look up ten entries (`whole`: parse the whole file first, as before)."""


def write_export(path: Path, size: int, kb: int) -> list[str]:
    """A json_cache.json of `size` entries, written one entry at a time (`render`'s bytes); ten of its keys."""
    keys = sorted(request_key("fetch.direct", "bench", {"n": n}) for n in range(size))
    with open(path, "wb") as out:
        out.write(b"{\n")
        for n, key in enumerate(keys):
            out.write((b",\n" if n else b"") + export_file.render({key: entry(n, kb)})[2:-3])
        out.write(b"\n}\n")
    return keys[::max(size // 10, 1)][:10]


def cpu_ms(*args: str) -> tuple[float, float]:
    """(CPU ms (user + system), peak resident MiB) of one child process running START."""
    child = subprocess.Popen([sys.executable, "-c", START, *args], env={**os.environ, "PYTHONPATH": str(ROOT)})
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"the start process failed ({child.returncode})")
    return (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024


def starts(work: Path, sizes: list[int], kb: int, repeats: int) -> None:
    files = {size: work / f"start-{size}.json" for size in [10, *sizes]}
    keys = {size: ",".join(write_export(path, size, kb)) for size, path in files.items()}
    runs: dict[tuple, list[tuple[float, float]]] = {}
    for _ in range(repeats):
        for size, path in files.items():
            runs.setdefault((size, "lookups"), []).append(cpu_ms(str(path), keys[size], "lookups"))
            if size != 10:
                runs.setdefault((size, "whole"), []).append(cpu_ms(str(path), keys[size], "whole"))
    def median(size, kind, n):
        return statistics.median(run[n] for run in runs[size, kind])
    base = median(10, "lookups", 0)
    print(f"\nprocess start: open the export offline and look up 10 entries; CPU ms (peak MiB), medians of "
          f"{repeats}; a start on a 10-entry file: {base:.0f} ms ({median(10, 'lookups', 1):.0f} MiB)\n")
    print("| entries | file MB | start ms | cache's share ms | parsing the whole file first (replaced) ms | its share ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        lazy, whole = median(size, "lookups", 0), median(size, "whole", 0)
        print(f"| {size:,} | {files[size].stat().st_size / 1e6:.0f} | {lazy:.0f} ({median(size, 'lookups', 1):.0f} MiB) "
              f"| {lazy - base:.0f} | {whole:.0f} ({median(size, 'whole', 1):.0f} MiB) | {whole - base:.0f} |", flush=True)
    lookup_s, parse_s = lookup_and_parse(files[max(sizes)], files[min(sizes)])
    bytes_per_lookup = lookup_s * files[min(sizes)].stat().st_size / parse_s
    print(f"\none lookup in {max(sizes):,} entries: {lookup_s * 1e6:.0f} us; parsing {min(sizes):,} entries whole: "
          f"{parse_s * 1000:.0f} ms, so a lookup costs what parsing {bytes_per_lookup / 1024:.1f} KB does "
          f"(the cache counts {export_file.LOOKUP_BYTES / 1024:.0f} KB)")


def lookup_and_parse(big: Path, small: Path, lookups: int = 2000) -> tuple[float, float]:
    """Seconds of one lookup in `big` (this process, every line read from the file) and of parsing `small` whole."""
    reader = export_file.Export(big)
    reader._budget = float("inf")
    keys = [request_key("fetch.direct", "bench", {"n": n}) for n in range(lookups)]
    began = time.process_time()
    assert all(reader.get(key) is not None for key in keys)
    lookup = (time.process_time() - began) / lookups
    began = time.process_time()
    for _ in range(5):
        export_file.read_export(small)
    return lookup, (time.process_time() - began) / 5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--entry-kb", type=int, default=3)
    parser.add_argument("--old", type=int, nargs="*", default=[], help="also time the replaced design at N entries")
    parser.add_argument("--start-sizes", type=int, nargs="*", default=[1000, 100_000])
    parser.add_argument("--starts", type=int, default=5, help="process starts per size (medians printed)")
    parser.add_argument("--start-only", action="store_true", help="only the process-start table")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    print(f"{args.entry_kb} KB entries; {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; scratch {work}")
    if not args.start_only:
        writes(work, args)
    if args.start_sizes:
        starts(work, args.start_sizes, args.entry_kb, args.starts)
    print(f"(scratch files are in {work}; delete them when done)")
    return 0


def writes(work: Path, args: argparse.Namespace) -> None:
    print(f"\n{args.writes} timed writes per size\n")
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


if __name__ == "__main__":
    raise SystemExit(main())
