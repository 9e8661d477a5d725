"""The API's CPU per request next to a bare FastAPI endpoint's, measured side by side in one run.

A script that prints numbers, not a timed test:

    .venv/bin/python benchmarks/bench_api.py                   # 3 rounds of 300 requests, 4 at a time
    .venv/bin/python benchmarks/bench_api.py --rounds 5 --requests 500
    .venv/bin/python benchmarks/bench_api.py --profile api.prof   # the dry run under cProfile

Two servers run in their own processes on 127.0.0.1: `python -m citecheck serve --dry-run` (the real
/verify: offline replay of json_cache.json against the fixture site, the same bodies as
`load_api.py`) and a bare FastAPI app under plain uvicorn whose POST /verify parses the same body
model (a claim and a list of URLs) and returns the answer the real server gave for it (recorded
during the warm-up, so both send the same bytes). Rounds alternate between the two so both see the
same machine load; each round's CPU is the server process's user + system time (/proc, all its
threads) over the round. Prints each round, the medians in ms per request and their ratio.
The dry run binds the fixture site's port (8731): run it under the notebook lock,
`flock /tmp/citecheck-notebook.lock .venv/bin/python benchmarks/bench_api.py`.
"""
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_api import NOTEBOOK_02, ROOT, burst, free_port, wait_healthy  # noqa: E402


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) the process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bare_app(answers_file: Path):
    """A FastAPI app whose POST /verify validates {claim, urls} and returns the recorded answer."""
    from fastapi import FastAPI
    from pydantic import BaseModel

    recorded = {(a["claim"], tuple(a["urls"])): a["answer"]
                for a in json.loads(answers_file.read_text(encoding="utf-8"))}

    class Body(BaseModel):
        claim: str
        urls: list[str]

    app = FastAPI()

    @app.post("/verify")
    async def verify(body: Body) -> dict:
        return recorded[(body.claim, tuple(body.urls))]

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}
    return app


def start_bare(port: int, answers_file: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--bare-server", str(port), "--answers", str(answers_file)],
                            cwd=ROOT)


def start_api(port: int, profile: str | None) -> subprocess.Popen:
    command = ["-m", "citecheck", "serve", "--dry-run", "--port", str(port), "--log-level", "warning"]
    if profile:
        command = ["-m", "cProfile", "-o", profile, *command]
    return subprocess.Popen([sys.executable, *command], cwd=ROOT, env=os.environ.copy())


def record_answers(base_url: str, bodies: list[dict]) -> list[dict]:
    import httpx
    with httpx.Client(base_url=base_url, timeout=120) as client:
        out = []
        for body in bodies:
            response = client.post("/verify", json=body)
            response.raise_for_status()
            out.append({**body, "answer": response.json()})
    return out


def round_cpu(base_url: str, pid: int, requests: int, concurrency: int) -> tuple[float, dict]:
    """CPU ms per request of the server at `pid` over one burst, and the burst's statuses."""
    before = process_cpu(pid)
    _, statuses, _, misses = asyncio.run(burst(base_url, NOTEBOOK_02, requests, concurrency))
    if misses:
        raise SystemExit(f"cache misses: {misses}")
    return 1000 * (process_cpu(pid) - before) / requests, dict(statuses)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300, help="requests per round and server")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--profile", default=None, help="write the API server's cProfile stats here")
    parser.add_argument("--bare-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--answers", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        import uvicorn
        uvicorn.run(bare_app(args.answers), host="127.0.0.1", port=args.bare_server, log_level="warning")
        return 0

    api_url, bare_url = (f"http://127.0.0.1:{free_port()}" for _ in range(2))
    api = start_api(int(api_url.rsplit(":", 1)[1]), args.profile)
    bare = None
    try:
        wait_healthy(api_url, api)
        answers = Path(tempfile.mkdtemp(prefix="bench-api-")) / "answers.json"
        answers.write_text(json.dumps(record_answers(api_url, NOTEBOOK_02)), encoding="utf-8")
        bare = start_bare(int(bare_url.rsplit(":", 1)[1]), answers)
        wait_healthy(bare_url, bare)
        servers = {"serve --dry-run": (api_url, api.pid), "bare FastAPI": (bare_url, bare.pid)}
        for url, pid in servers.values():                  # warm both (imports, first-use caches)
            round_cpu(url, pid, 2 * len(NOTEBOOK_02), args.concurrency)
        per_request = {name: [] for name in servers}
        for number in range(1, args.rounds + 1):
            for name, (url, pid) in servers.items():
                ms, statuses = round_cpu(url, pid, args.requests, args.concurrency)
                if set(statuses) != {200}:
                    raise SystemExit(f"{name}: statuses {statuses}")
                per_request[name].append(ms)
                print(f"round {number}  {name:16} {ms:6.2f} CPU ms / request", flush=True)
    finally:
        for server in (api, bare):
            if server is not None:
                server.terminate()
                server.wait(timeout=60)
    medians = {name: statistics.median(values) for name, values in per_request.items()}
    print(f"\n{args.rounds} rounds x {args.requests} requests, {args.concurrency} concurrent, "
          f"{len(NOTEBOOK_02)} distinct bodies (1 to 6 URLs); {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, value in medians.items():
        print(f"{name:16} median {value:.2f} CPU ms / request")
    print(f"API / bare FastAPI = {medians['serve --dry-run'] / medians['bare FastAPI']:.2f} (target <= 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
