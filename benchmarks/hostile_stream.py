"""Compressed bombs and stalled clients at the findings' full size; bench_hostile can import these.

    .venv/bin/python benchmarks/hostile_stream.py [bombs] [judge-server]

- bombs: a zstd body inflating 2 GiB and a `gzip, gzip` body inflating 8 GiB, fetched directly, and an
  8 GiB gzip answer from the Crawling API (default FETCH_MAX_BYTES): seconds, Python allocation peak
  (tracemalloc) and the page size kept; an uncompressed page at the cap is the control.
- judge-server: a zstd request body inflating 16 GiB (413 expected; allocation peak), then 300 stalled
  connections against the default limits (how many got 503, threads alive, seconds until the held ones
  are closed by HEADER_TIMEOUT / BODY_TIMEOUT), then the same 300 against a server in a subprocess,
  SIGTERM, seconds until it exits.
"""
from __future__ import annotations

import gzip
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from standins.slow_origin import SlowOrigin, raw, response  # noqa: E402

from citecheck.config import Secrets, Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402

MIB = 1024 * 1024
TEXT = b"At sea level, pure water boils at 100 degrees Celsius.\n" * 19065       # ~1 MiB of text


def zstd_bomb(mib: int) -> bytes:
    import zstandard
    compressor = zstandard.ZstdCompressor(level=3).compressobj()
    block = TEXT[:MIB].ljust(MIB, b"\n")
    return b"".join(compressor.compress(block) for _ in range(mib)) + compressor.flush()


def gzip_gzip_bomb(mib: int) -> bytes:
    """`gzip, gzip`: the inner body is `mib` gzip members of 1 MiB each (one body to a gzip reader)."""
    member = gzip.compress(TEXT[:MIB].ljust(MIB, b"\n"), 9, mtime=0)
    outer = gzip.compress(member * mib, 9, mtime=0)
    return outer


def measured(call):
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = call()
        return result, time.monotonic() - started, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def context(tmp: Path, **settings) -> RunContext:
    return RunContext.build(Settings(cache_path=tmp / "cache.json", audit_db=tmp / "audit.db",
                                     allow_private=True, ignore_robots=True,     # our own stand-ins: no
                                     host_concurrency=64, host_rate=1000.0).replace(**settings))  # politeness


def bench_bombs(tmp: Path) -> None:
    import crawlbase.base_api

    from citecheck.web import fetch
    plain = (TEXT * 5)[:5_000_000]                  # the control: an uncompressed page at the cap
    cases = [("identity", plain, 5_000_000 / 1024 / 1024), ("zstd", zstd_bomb(2048), 2048),
             ("gzip, gzip", gzip_gzip_bomb(8192), 8192)]
    for encoding, body, mib in cases:
        ctx = context(tmp)
        head = response(200, {"Content-Encoding": encoding}, len(body), "text/plain; charset=utf-8")
        with SlowOrigin(raw(head + body)) as origin:
            result, seconds, peak = measured(lambda: fetch.fetch(origin.url + f"/{len(body)}", ctx))
        print(f"direct, {len(body) / 1000:,.1f} KB `{encoding}` inflating {mib / 1024:.3g} GiB "
              f"(FETCH_MAX_BYTES={ctx.settings.fetch_max_bytes:,}): {seconds:.2f} s, peak {peak / MIB:.1f} MiB, "
              f"kept {len(result.markdown):,} chars -> {result.label} / {result.reason}")
    body = gzip_gzip_bomb(8192)
    body = gzip.decompress(body)                    # one gzip layer: 8 GiB from ~8 MB
    head = response(200, {"original_status": "200", "cb_status": "200", "Content-Encoding": "gzip"}, len(body),
                    "text/plain; charset=utf-8")
    with SlowOrigin(raw(head + body)) as api:
        ctx = context(tmp, crawlbase_api_url=api.url, secrets=Secrets({"CRAWLBASE_TOKEN": "cbFAKE-bench"}))
        result, seconds, peak = measured(lambda: fetch.fetch("https://kettle.example/bomb", ctx))
    crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"
    print(f"crawling API, {len(body) / 1e6:.1f} MB gzip inflating 8 GiB: {seconds:.2f} s, peak {peak / MIB:.1f} MiB, "
          f"kept {len(result.markdown):,} chars -> {result.label} / {result.reason}")


HELD_SERVER = """
import sys, threading
from citecheck.judge.local_judge import server as server_module
class Fake:
    name = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    lock = threading.Lock()
server = server_module.make_server(Fake(), "127.0.0.1", 0)
print(server.server_address[1], flush=True)
server_module.serve_until_signalled(server)
"""
HALF = [b"POST /v1/systemone HTTP/1.1\r\nHost: t\r\n",
        b"POST /v1/systemone HTTP/1.1\r\nHost: t\r\nContent-Length: 200\r\n\r\n{\"st"]


def hold(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(HALF[i % 2])
        sockets.append(sock)
    return sockets


def bench_judge_server(tmp: Path) -> None:
    import httpx

    from citecheck.judge.local_judge import server as server_module

    class Fake:
        name, lock = "fake", threading.Lock()
    server = server_module.make_server(Fake(), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    body = zstd_bomb(16384)
    answer, seconds, peak = measured(lambda: httpx.post(f"{server.url}/v1/systemone", content=body, timeout=600,
                                                        headers={"Content-Encoding": "zstd"}))
    print(f"judge-server, {len(body) / 1000:,.1f} KB zstd body inflating 16 GiB (MAX_BODY={server_module.MAX_BODY:,}):"
          f" HTTP {answer.status_code} in {seconds:.2f} s, peak {peak / MIB:.1f} MiB")
    started = time.monotonic()
    sockets = hold(server.server_address[1], 300)
    for sock in sockets:
        sock.settimeout(120)
    time.sleep(1)
    alive = threading.active_count()
    replies = [b""] * len(sockets)
    for i, sock in enumerate(sockets):
        try:
            while chunk := sock.recv(4096):
                replies[i] += chunk
        except OSError:
            pass
    last = time.monotonic() - started
    busy = sum(r.startswith(b"HTTP/1.1 503") for r in replies)
    timed_out = sum(r.startswith(b"HTTP/1.1 408") for r in replies)
    print(f"judge-server, 300 stalled connections (MAX_CONNECTIONS={server_module.MAX_CONNECTIONS}, "
          f"HEADER_TIMEOUT={server_module.HEADER_TIMEOUT:g}, BODY_TIMEOUT={server_module.BODY_TIMEOUT:g}): "
          f"{busy} answered 503, {timed_out} answered 408, {alive} threads alive while held, "
          f"all closed at {last:.1f} s")
    for sock in sockets:
        sock.close()
    server.shutdown()
    server.server_close()
    proc = subprocess.Popen([sys.executable, "-c", HELD_SERVER], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    port = int(proc.stdout.readline())
    sockets = hold(port, 300)
    time.sleep(1)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=120)
    print(f"judge-server subprocess, SIGTERM with 300 stalled connections held: exit {code} after "
          f"{time.monotonic() - started:.2f} s")
    for sock in sockets:
        sock.close()
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


BENCHES = {"bombs": bench_bombs, "judge-server": bench_judge_server}


def main(argv: list[str]) -> None:
    import tempfile
    for name in argv or list(BENCHES):
        with tempfile.TemporaryDirectory() as tmp:
            BENCHES[name](Path(tmp))


if __name__ == "__main__":
    main(sys.argv[1:])
