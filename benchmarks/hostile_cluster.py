"""`batch --cluster` under hostile peers, at the default limits (a script that prints numbers; issue 24 H1, H2, M1).

    .venv/bin/python benchmarks/hostile_cluster.py

`bench_cluster(tmp)` is what bench_hostile.py can import as its `cluster` case:
- connect: `batch --cluster tls://...` against a closed port, a silent TCP listener, one sending garbage, and
  peers that finish TLS with the client's own credentials and then stay silent or send a 4 EiB frame; the
  default CLUSTER_CONNECT_TIMEOUT (10 s): seconds to the one error line, and the lines printed.
- start: a local:2 cluster on mutual TLS (temporary credentials) against the same on plain TCP, each twice
  (the first start warms imports): seconds to start and to run 200 trivial tasks.
- forged: 600 citations through local:2 whose worker task is `cluster_tasks.hostile` (every forged shape
  but one honest and one auto): rows rejected, entries stored, seconds.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

KINDS = ("honest", "label", "confidence", "nan", "key", "reason", "other-url", "entry", "function", "auto",
         "unsure", "surrogate", "tuple")


def _credentials(tmp: Path) -> None:
    from distributed.security import Security
    made = Security.temporary()
    for name, text in (("CA", made.tls_ca_file), ("CERT", made.tls_client_cert), ("KEY", made.tls_client_key)):
        (tmp / f"{name}.pem").write_text(text)
        os.environ[f"CLUSTER_TLS_{name}"] = str(tmp / f"{name}.pem")


def bench_connect(tmp: Path) -> None:
    from standins.judge import free_port
    from test_batch import write_jsonl
    from test_cluster import listener

    from citecheck import cli
    _credentials(tmp)
    os.environ.pop("CLUSTER_CONNECT_TIMEOUT", None)
    os.environ["AUDIT_DB"] = str(tmp / "audit.db")
    path = write_jsonl(tmp / "claims.jsonl", [{"id": "c", "claim": "c", "urls": ["http://x/yes/1"]}])
    for kind in ("closed", "silent", "garbage", "tls-silent", "tls-garbage"):
        server = None if kind == "closed" else listener(kind, tmp)
        address = f"tls://127.0.0.1:{server.getsockname()[1] if server else free_port()}"
        err = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stderr(err):
            code = cli.main(["batch", str(path), "--cluster", address])
        took = time.perf_counter() - started
        if server:
            server.close()
        lines = err.getvalue().strip().splitlines()
        print(f"connect {kind:11s} (CLUSTER_CONNECT_TIMEOUT=10): exit {code} after {took:5.1f} s, "
              f"{len(lines)} line(s): {lines[-1][:110] if lines else ''}")


def bench_start(tmp: Path) -> None:
    from distributed import Client, LocalCluster

    from citecheck.batch import cluster
    from citecheck.config import Settings
    for name in ("tcp", "tls", "tcp ", "tls "):            # each twice: the first start warms imports
        started = time.perf_counter()
        if name.strip() == "tls":
            context = cluster.connect(cluster.Spec(workers=2), Settings(), 2)
        else:
            context = _plain(LocalCluster, Client)
        with context as client:
            up = time.perf_counter() - started
            started = time.perf_counter()
            assert sum(client.gather(client.map(abs, range(-200, 0)))) == sum(range(1, 201))
            ran = time.perf_counter() - started
        print(f"start local:2 on {name}: {up:4.1f} s to start, 200 tasks in {ran:4.2f} s")


@contextlib.contextmanager
def _plain(local_cluster, client_class):
    with local_cluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                       silence_logs=50) as plain, client_class(plain) as client:
        yield client


def bench_forged(tmp: Path, count: int = 600) -> None:
    import cluster_tasks
    from test_batch import write_jsonl

    from citecheck import batch
    from citecheck.batch import cluster
    from citecheck.cache import Cache
    from citecheck.config import Settings
    from citecheck.context import RunContext
    import logging
    logging.getLogger("citecheck.batch").setLevel(logging.ERROR)            # one warning per rejected row
    rows = [{"id": f"c{i}", "claim": f"claim {i}", "urls": [f"http://x/{KINDS[i % len(KINDS)]}/{i}"]}
            for i in range(count)]
    path = write_jsonl(tmp / "forged.jsonl", rows)
    ctx = RunContext.build(Settings(cache_path=tmp / "json_cache.json", audit_db=tmp / "forged.db"))
    real, cluster.check_on_worker = cluster.check_on_worker, cluster_tasks.hostile
    try:
        started = time.perf_counter()
        result = batch.run_batch(path, ctx, cluster="local:2", threshold=0.8)
        took = time.perf_counter() - started
    finally:
        cluster.check_on_worker = real
    rejected = sum(r["reason"] == "worker_result_invalid" for r in result.rows)
    forged = count - sum(r["url"].split("/")[3] in ("honest", "auto") for r in result.rows)
    auto_supported = sum(r["label"] == "supported" and r["auto"] and r["url"].split("/")[3] != "honest"
                         for r in result.rows)
    stored = len(Cache(tmp / "json_cache.json", offline=True).stored())
    print(f"forged: {count} citations on local:2, {forged} forged: {rejected} rejected as worker_result_invalid, "
          f"{auto_supported} forged rows auto-accepted as supported, {stored} cache entries stored, {took:.1f} s")


def bench_cluster(tmp: Path) -> None:
    """Every case above, one after another, in `tmp`."""
    bench_connect(tmp)
    bench_start(tmp)
    bench_forged(tmp)


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        bench_cluster(Path(tmp))
