"""Politeness under load: a batch over several hosts on 127.0.0.1, counted server-side.

A script that prints numbers, not a timed test:

    .venv/bin/python benchmarks/bench_politeness.py                     # 1,000 citations, 5 hosts, rate 20/s
    .venv/bin/python benchmarks/bench_politeness.py --rate 1                  # the shipped HOST_RATE (~200 s)
    .venv/bin/python benchmarks/bench_politeness.py --citations 200 --unlimited   # what the limit prevents

Each host is a stand-in origin on its own port of 127.0.0.1 (an origin is scheme, host and port), allowed
through CITECHECK_ALLOW_HOSTS (`Settings.allowing`), never CITECHECK_ALLOW_PRIVATE. Its robots.txt
disallows /private/ (every tenth citation of each host); every other page answers 404 after `--latency`
seconds, so the rows are settled by the fetch alone (no judge) and the run measures the fetch path:
robots.txt, the host limit, the batch's threads (`--batch-concurrency`). The real pipeline runs
(`batch.run_batch`, `verify.verify_citation`, the direct fetcher) over a fresh cache and audit DB.

Printed: per host, the most requests it ever had in flight at once (server-side) against HOST_CONCURRENCY,
the requests it saw, the shortest gap between two starts against 1 / HOST_RATE (the client spaces its
starts exactly; the server sees them with the network's and the GIL's jitter) and the most starts within
any one second against HOST_RATE; requests for
disallowed paths (must be 0); the wall time and citations a second. `--unlimited` lifts the limit
(HOST_CONCURRENCY 1000, HOST_RATE 1e6) to show the in-flight counts the batch reaches without it.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from standins.http import StandIn  # noqa: E402

from citecheck import batch  # noqa: E402
from citecheck.config import Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402

ROBOTS = "User-agent: *\nDisallow: /private/\n"


class Host:
    """A stand-in origin counting its requests in flight (peak), their starts and the disallowed ones."""

    def __init__(self, latency: float):
        self.latency, self.lock = latency, threading.Lock()
        self.now = self.peak = 0
        self.starts: list[float] = []
        self.private = 0
        self.server = StandIn(self.handle, keep_alive=True)
        self.port = int(self.server.url.rsplit(":", 1)[1])

    def handle(self, request):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.starts.append(time.monotonic())
            self.private += request.path.startswith("/private/")
        try:
            if request.path == "/robots.txt":
                return 200, {"Content-Type": "text/plain"}, ROBOTS
            time.sleep(self.latency)
            return 404, {"Content-Type": "text/html"}, "<p>not here</p>"
        finally:
            with self.lock:
                self.now -= 1

    def min_gap(self) -> float:
        return min((b - a for a, b in zip(self.starts, self.starts[1:])), default=float("nan"))

    def max_per_second(self) -> int:
        """The most requests that started within any one second (server-side)."""
        starts, most, first = sorted(self.starts), 0, 0
        for last, when in enumerate(starts):
            while when - starts[first] >= 1.0:
                first += 1
            most = max(most, last - first + 1)
        return most


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--citations", type=int, default=1000)
    parser.add_argument("--hosts", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=Settings().host_concurrency,
                        help="HOST_CONCURRENCY")
    parser.add_argument("--rate", type=float, default=20.0, help="HOST_RATE (shipped: 1)")
    parser.add_argument("--batch-concurrency", type=int, default=8, help="BATCH_CONCURRENCY")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds each page takes to answer")
    parser.add_argument("--unlimited", action="store_true", help="lift the host limit (the comparison)")
    args = parser.parse_args()
    concurrency, rate = (1000, 1e6) if args.unlimited else (args.concurrency, args.rate)
    hosts = [Host(args.latency) for _ in range(args.hosts)]
    for host in hosts:
        host.server.__enter__()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(cache_path=Path(tmp) / "json_cache.json", audit_db=Path(tmp) / "audit.db",
                                judge_method="one_pass", host_concurrency=concurrency, host_rate=rate,
                                batch_concurrency=args.batch_concurrency)
            for host in hosts:
                settings = settings.allowing("127.0.0.1", host.port)
            claims = Path(tmp) / "claims.jsonl"
            with claims.open("w", encoding="utf-8") as out:
                for i in range(args.citations):
                    host = hosts[i % len(hosts)]
                    path = f"/private/{i}" if (i // len(hosts)) % 10 == 9 else f"/article/{i}"
                    out.write(json.dumps({"id": f"c{i}", "claim": "Water boils at 100 degrees.",
                                          "urls": [f"http://127.0.0.1:{host.port}{path}"]}) + "\n")
            with RunContext.build(settings) as ctx:
                started = time.monotonic()
                result = batch.run_batch(claims, ctx)
                seconds = time.monotonic() - started
    finally:
        for host in hosts:
            host.server.__exit__(None, None, None)
    reasons = Counter(row["reason"] for row in result.rows)
    limit = "none (--unlimited)" if args.unlimited else f"HOST_CONCURRENCY={concurrency} HOST_RATE={rate:g}/s"
    print(f"{args.citations} citations over {args.hosts} hosts, BATCH_CONCURRENCY={args.batch_concurrency}, "
          f"latency {args.latency:g} s; limit: {limit}")
    print("host   max_in_flight  limit  requests  min_gap_s  1/rate_s  max_per_s  rate")
    for n, host in enumerate(hosts, 1):
        shown = "-" if args.unlimited else concurrency
        print(f"{n:<6} {host.peak:>13}  {shown:>5}  {len(host.starts):>8}  "
              f"{host.min_gap():>9.4f}  {1 / rate:>8.4f}  {host.max_per_second():>9}  {rate:>4g}")
    worst = max(host.peak for host in hosts)
    held = "yes" if worst <= concurrency else "NO"
    print(f"max_in_flight_any_host={worst} limit={concurrency} held={held}")
    print(f"requests_for_disallowed_paths={sum(host.private for host in hosts)}")
    print(f"rows: {dict(sorted(reasons.items(), key=lambda kv: str(kv[0])))}")
    print(f"seconds={seconds:.1f} citations_per_second={args.citations / seconds:.1f} "
          f"ceiling={args.hosts * rate:g}/s (hosts x HOST_RATE)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
