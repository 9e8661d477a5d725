"""Load check for the /verify service: a bounded burst of concurrent requests over loopback.

A script that prints numbers, not a timed test:

    .venv/bin/python benchmarks/load_api.py                        # 200 requests, 8 at a time
    .venv/bin/python benchmarks/load_api.py --requests 500 --concurrency 16
    .venv/bin/python benchmarks/load_api.py --url http://127.0.0.1:8000   # a server you started

Without --url it starts `python -m citecheck serve --dry-run` in a second process on a free
127.0.0.1 port (offline replay of json_cache.json against the fixture site: no keys, no network),
waits for /health, sends a few warm-up requests, then the measured burst, then stops that process.
This process is the client (httpx, one connection pool). Bodies cycle through --claims (JSONL lines
of {"claim", "urls"}); every answer is checked to be a 200 verdict, anything else is counted.
"""
import argparse
import asyncio
import collections
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SITE = "http://127.0.0.1:8731"
HUNDRED, FIFTY = "Water boils at 100 °C at sea level.", "Water boils at 50 °C at sea level."
ALTITUDE = "At 3,000 metres above sea level, water boils at roughly 90 °C."
PAGES = ["/", "/articles/boiling-point", "/articles/water-boiling-point", "/articles/boiling-point-table-2019",
         "/articles/kettle-scale-myths", "/blog/2021/03/boiling-at-altitude", "/articles/steam-tables",
         "/app/boiling-calculator", "/premium/pressure-cooking", "/reports/boiling-point-survey.pdf",
         "/guides/cooking-at-altitude"]
NOTEBOOK_02 = [   # claim-URL pairs notebook 02 recorded in json_cache.json, so the dry run replays them all
    {"claim": HUNDRED, "urls": [SITE + "/articles/boiling-point", SITE + "/articles/boiling-point-table-2019"]},
    {"claim": FIFTY, "urls": [SITE + "/articles/boiling-point"]},
    {"claim": ALTITUDE, "urls": [SITE + "/guides/cooking-at-altitude"]},
    {"claim": HUNDRED, "urls": [SITE + p for p in PAGES[:6]]},
    {"claim": HUNDRED, "urls": [SITE + p for p in PAGES[6:]]},
]


def load_bodies(path: Path | None) -> list[dict]:
    if path is None:
        return NOTEBOOK_02
    bodies = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if not isinstance(row.get("claim"), str) or not isinstance(row.get("urls"), list):
                raise SystemExit(f"{path}:{number}: each line needs a claim and a list of urls")
            bodies.append({"claim": row["claim"], "urls": row["urls"]})
    if not bodies:
        raise SystemExit(f"{path} holds no claims")
    return bodies


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "citecheck", "serve", "--dry-run", "--port", str(port), "--log-level", "warning"]
    return subprocess.Popen(command, cwd=ROOT, env=os.environ.copy())


def wait_healthy(base_url: str, server: subprocess.Popen | None, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server is not None and server.poll() is not None:
            raise SystemExit(f"the server exited with code {server.returncode} before it was ready")
        try:
            return httpx.get(base_url + "/health", timeout=2).json()
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit(f"{base_url}/health did not answer within {timeout:.0f} s")


async def burst(base_url: str, bodies: list[dict], requests: int, concurrency: int):
    """Send `requests` POSTs with at most `concurrency` in flight; (latencies, statuses, overall labels,
    URLs answered cache_miss)."""
    latencies, statuses, labels, misses = [], collections.Counter(), collections.Counter(), collections.Counter()
    queue = asyncio.Queue()
    for i in range(requests):
        queue.put_nowait(bodies[i % len(bodies)])
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=120) as client:
        async def worker():
            while not queue.empty():
                body = queue.get_nowait()
                started = time.perf_counter()
                try:
                    response = await client.post("/verify", json=body)
                    statuses[response.status_code] += 1
                    if response.status_code == 200:
                        labels[response.json()["overall"]] += 1
                        misses.update(c["url"] for c in response.json()["citations"]
                                      if c["reason"] == "cache_miss")
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1
                latencies.append(time.perf_counter() - started)
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, statuses, labels, misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=8, help="requests sent before the clock starts")
    parser.add_argument("--claims", type=Path, default=None,
                        help="JSONL of {claim, urls} to cycle through (default: the five claim-URL sets "
                             "notebook 02 recorded, 1 to 6 URLs each)")
    parser.add_argument("--url", default=None, help="an already running server (default: start a dry run)")
    args = parser.parse_args()
    if args.requests < 1 or args.concurrency < 1:
        raise SystemExit("--requests and --concurrency must be >= 1")
    bodies = load_bodies(args.claims)

    server = None
    base_url = args.url.rstrip("/") if args.url else f"http://127.0.0.1:{free_port()}"
    if args.url is None:
        server = start_server(int(base_url.rsplit(":", 1)[1]))
    try:
        health = wait_healthy(base_url, server)
        asyncio.run(burst(base_url, bodies, args.warmup, min(args.warmup, args.concurrency)))
        started = time.perf_counter()
        latencies, statuses, labels, misses = asyncio.run(burst(base_url, bodies, args.requests, args.concurrency))
        seconds = time.perf_counter() - started
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)

    cuts = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else latencies * 99
    print(f"server      {base_url} ({'dry run, started here' if server else 'given'}; "
          f"offline={health.get('offline')}, API_CONCURRENCY={health.get('limits', {}).get('concurrency')})")
    print(f"load        {args.requests} requests, {args.concurrency} concurrent, {len(bodies)} distinct bodies")
    print(f"statuses    {dict(sorted(statuses.items(), key=str))}"
          + (f"   cache misses {misses}" if misses else ""))
    print(f"overall     {dict(sorted(labels.items()))}")
    print(f"throughput  {args.requests / seconds:.1f} requests/s ({seconds:.2f} s)")
    print(f"latency     p50 {cuts[49] * 1000:.1f} ms   p95 {cuts[94] * 1000:.1f} ms   "
          f"max {max(latencies) * 1000:.1f} ms")
    return 0 if set(statuses) == {200} and not misses else 1


if __name__ == "__main__":
    raise SystemExit(main())
