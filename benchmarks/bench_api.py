"""The API's CPU per request next to a bare FastAPI endpoint's, measured side by side in one run.

A script that prints numbers, not a timed test:

    flock /tmp/citecheck-notebook.lock .venv/bin/python benchmarks/bench_api.py  # 3 rounds of 1000, 4 at once
    flock /tmp/citecheck-notebook.lock .venv/bin/python benchmarks/bench_api.py --rounds 5 --requests 500

Three servers run in their own processes on 127.0.0.1:
- `serve --dry-run`: `python -m citecheck serve --dry-run`, the real /verify (offline replay of
  json_cache.json against the fixture site; the bodies of `load_api.py`, 1 to 6 URLs each);
- `API, no pipeline`: the same app (`api.create_app`: body guard, access log, validation, slots,
  deadline, gate; `serving`'s protocol) over a `verify` that returns the recorded answer at once: what
  serving a request costs, the pipeline's replay apart;
- `bare FastAPI`: plain uvicorn and a FastAPI POST /verify that parses the same body model (a claim and
  a list of URLs) and returns the recorded answer.
The answers are recorded from the real server during the warm-up, so all three send the same verdicts.
Rounds alternate between the servers so all see the same machine load; a round's CPU is the server
process's user + system time (/proc, all its threads) over the round. Prints each round, the medians
in ms per request and the ratios to the bare endpoint (targets: the API layer <= 2x, /verify with the
pipeline's replay <= 8x; `measure` is what benchmarks/targets.py calls). The dry run binds the fixture
site's port (8731): run it under the notebook lock.
"""
import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_api import NOTEBOOK_02, ROOT, burst, free_port, wait_healthy  # noqa: E402


DRY_RUN, LAYER, BARE = "serve --dry-run", "API, no pipeline", "bare FastAPI"


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


def serve_without_pipeline(port: int, answers_file: Path) -> None:
    """`serve`'s app and protocol over a `verify` returning the recorded answer (the app gates it again)."""
    import uvicorn

    from citecheck.context import RunContext
    from citecheck.serve import api, serving
    recorded = {(a["claim"], tuple(a["urls"])): a["answer"]
                for a in json.loads(answers_file.read_text(encoding="utf-8"))}

    def verify(claim: str, urls: list[str]) -> dict:
        answer = recorded[(claim, tuple(urls))]
        return {**answer, "citations": [{k: v for k, v in c.items() if k not in ("auto", "auto_note")}
                                        for c in answer["citations"]]}
    ctx = RunContext.from_env().replace(offline=True)
    app = api.create_app(ctx, verify)
    uvicorn.Server(serving.server_config(app, ctx.settings.api, "127.0.0.1", port, "warning")).run()


def start(mode: str, port: int, answers_file: Path) -> subprocess.Popen:
    command = [sys.executable, __file__, mode, str(port), "--answers", str(answers_file)]
    return subprocess.Popen(command, cwd=ROOT)


def start_api(port: int) -> subprocess.Popen:
    command = ["-m", "citecheck", "serve", "--dry-run", "--port", str(port), "--log-level", "warning"]
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


def measure(rounds: int = 3, requests: int = 1000, concurrency: int = 4, show=print) -> dict[str, float]:
    """Start the three servers, warm them, run `rounds` interleaved bursts of `requests` each; the median
    CPU ms per request of each server (DRY_RUN, LAYER, BARE), the servers stopped again."""
    urls = [f"http://127.0.0.1:{free_port()}" for _ in range(3)]
    processes = [start_api(int(urls[0].rsplit(":", 1)[1]))]
    answers_dir = Path(tempfile.mkdtemp(prefix="bench-api-"))
    try:
        wait_healthy(urls[0], processes[0])
        answers = answers_dir / "answers.json"
        answers.write_text(json.dumps(record_answers(urls[0], NOTEBOOK_02)), encoding="utf-8")
        for mode, url in (("--layer-server", urls[1]), ("--bare-server", urls[2])):
            processes.append(start(mode, int(url.rsplit(":", 1)[1]), answers))
            wait_healthy(url, processes[-1])
        servers = dict(zip((DRY_RUN, LAYER, BARE), zip(urls, (p.pid for p in processes))))
        for url, pid in servers.values():                  # warm all (imports, first-use caches)
            round_cpu(url, pid, 4 * len(NOTEBOOK_02), concurrency)
        per_request: dict[str, list[float]] = {name: [] for name in servers}
        for number in range(1, rounds + 1):
            for name, (url, pid) in servers.items():
                ms, statuses = round_cpu(url, pid, requests, concurrency)
                if set(statuses) != {200}:
                    raise SystemExit(f"{name}: statuses {statuses}")
                per_request[name].append(ms)
                show(f"round {number}  {name:18} {ms:6.2f} CPU ms / request")
    finally:
        for server in processes:
            server.terminate()
            server.wait(timeout=60)
        shutil.rmtree(answers_dir, ignore_errors=True)
    return {name: statistics.median(values) for name, values in per_request.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=1000,
                        help="requests per round and server (CPU is read in 10 ms ticks: enough to count)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--bare-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--layer-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--answers", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        import uvicorn
        uvicorn.run(bare_app(args.answers), host="127.0.0.1", port=args.bare_server, log_level="warning")
        return 0
    if args.layer_server:
        serve_without_pipeline(args.layer_server, args.answers)
        return 0
    medians = measure(args.rounds, args.requests, args.concurrency, show=lambda line: print(line, flush=True))
    print(f"\n{args.rounds} rounds x {args.requests} requests, {args.concurrency} concurrent, "
          f"{len(NOTEBOOK_02)} distinct bodies (1 to 6 URLs); {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, value in medians.items():
        print(f"{name:18} median {value:.2f} CPU ms / request   {value / medians[BARE]:.2f} x bare FastAPI")
    print(f"API overhead / bare FastAPI = {medians[LAYER] / medians[BARE]:.2f} (target <= 2); "
          f"with the pipeline's replay = {medians[DRY_RUN] / medians[BARE]:.2f} (target <= 8)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
