"""`batch --cluster` under hostile peers, at the default limits (a script that prints numbers).

    .venv/bin/python benchmarks/hostile_cluster.py

`bench_cluster(tmp)` is what bench_hostile.py can import as its `cluster` case:
- connect: `batch --cluster tls://...` against a closed port, a silent TCP listener, one sending garbage, and
  peers that finish TLS with the client's own credentials and then stay silent or send a 4 EiB frame; the
  default CLUSTER_CONNECT_TIMEOUT (10 s): seconds to the one error line, and the lines printed.
- start: a local:2 cluster on mutual TLS (temporary credentials) against the same on plain TCP, each twice
  (the first start warms imports): seconds to start and to run 200 trivial tasks.
- forged: 600 citations through local:2 whose worker task is `cluster_tasks.hostile` (every forged shape,
  entries for requests the citation does not make included, beside the honest ones): rows rejected, entries
  stored, entries planted for another citation's page or claim, seconds.
- exposure: a local:2 cluster started with a canary REVIEW_TOKEN in the environment: the ports its processes
  listen on against its TLS comm ports, whether its scheduler runs an HTTP server, and in how many worker
  processes' start environment (/proc/PID/environ) the canary sits.
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
         "unsure", "surrogate", "tuple", "honest-entry", "misfiled", "other-page", "other-claim", "fed-facts")
HONEST = ("honest", "auto", "honest-entry", "fed-facts")
"""The kinds a real worker could return (`auto`: a row the driver gates itself)."""


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
    forged = count - sum(r["url"].split("/")[3] in HONEST for r in result.rows)
    auto_supported = sum(r["label"] == "supported" and r["auto"] and r["url"].split("/")[3] not in HONEST
                         for r in result.rows)
    stored = Cache(tmp / "json_cache.json", offline=True).stored()
    planted = sum("victim" in repr(entry) for entry in stored.values())
    print(f"forged: {count} citations on local:2, {forged} forged: {rejected} rejected as worker_result_invalid, "
          f"{auto_supported} forged rows auto-accepted as supported, {len(stored)} cache entries stored "
          f"(from honest results), {planted} planted for another citation, {took:.1f} s")


def bench_exposure(tmp: Path) -> None:
    from test_cluster import listening_ports

    from citecheck.batch import cluster
    from citecheck.config import Settings
    canary = "rvw-Bench-Canary-4Hq9Zt2Lm8Xp5Rw1"
    os.environ["REVIEW_TOKEN"] = canary
    before = listening_ports([os.getpid()])
    with cluster.connect(cluster.Spec(workers=2), Settings.from_env(), 2) as client:
        info = client.scheduler_info()
        comm = {client.scheduler.address, *info["workers"], *(w["nanny"] for w in info["workers"].values())}
        pids = list(client.run(os.getpid).values())
        ports = listening_ports([os.getpid(), *pids]) - before
        services = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.services))
        held = sum(canary.encode() in Path(f"/proc/{pid}/environ").read_bytes() for pid in pids)
    os.environ.pop("REVIEW_TOKEN")
    print(f"exposure local:2: {len(ports)} listening ports, {len(comm)} of them TLS comm ports "
          f"({len(ports - {int(a.rsplit(':', 1)[1]) for a in comm})} others); scheduler services {services}; "
          f"canary REVIEW_TOKEN in {held} of {len(pids)} worker start environments")


def bench_cluster(tmp: Path) -> None:
    """Every case above, one after another, in `tmp`."""
    bench_connect(tmp)
    bench_start(tmp)
    bench_forged(tmp)
    bench_exposure(tmp)


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        bench_cluster(Path(tmp))
