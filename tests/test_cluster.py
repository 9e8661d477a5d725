"""batch --cluster: a local Dask cluster gives the thread pool's rows; killed workers, leases, secrets."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import cloudpickle
import cluster_tasks
import pytest
from killing import kill_mid_batch
from standins.crawlbase import NORMAL_TOKEN, CrawlingStandIn
from standins.crawlbase_storage import Storage, crawlbase_standin
from standins.judge import free_port, judge_standin
from test_batch import scripted_model, write_jsonl

from citecheck import audit, batch, cli
from citecheck.batch import cluster

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::DeprecationWarning")


class StableRids(CrawlingStandIn):
    """A Crawling-API stand-in whose rid is a digest of the crawled URL, so two runs of one batch get
    the same rids whatever order their crawls arrive in."""
    _lock = threading.Lock()

    def handle(self, request):
        url = parse_qs(urlsplit(request.path).query).get("url", [""])[0]
        with self._lock:
            self._rids = iter([int(hashlib.sha256(url.encode()).hexdigest()[:4], 16)])
            return super().handle(request)


@pytest.fixture
def standins(fixture_site, monkeypatch):
    with crawlbase_standin(StableRids(), Storage()) as api, judge_standin() as judge:
        judge.script.content = scripted_model
        monkeypatch.setenv("CRAWLBASE_TOKEN", NORMAL_TOKEN)
        monkeypatch.setenv("CRAWLBASE_API_URL", api.url)
        monkeypatch.setenv("OPENAI_BASE_URL", judge.url + "/v1")
        yield judge


def audit_rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        columns = [c[1] for c in conn.execute("PRAGMA table_info(citations)") if c[1] != "decided_at"]
        return conn.execute(f"SELECT {', '.join(columns)} FROM citations ORDER BY batch, id, url").fetchall()


def test_a_two_worker_cluster_batch_matches_the_thread_pool_row_for_row(standins, fixture_site, tmp_path,
                                                                        monkeypatch, capsys):
    url = fixture_site.url
    path = write_jsonl(tmp_path / "claims.jsonl", [
        {"id": "h1", "claim": "At sea level, pure water boils at 100 °C.",
         "urls": [url("/articles/boiling-point"), url("/articles/boiling-point-table-2019")]},
        {"id": "h2", "claim": "Water boils at 50 °C at sea level.", "urls": [url("/articles/water-boiling-point")]},
        {"id": "h3", "claim": "An invented quote backs this claim.", "urls": [url("/articles/boiling-point")]},
        {"id": "h4", "claim": "Steam tables list 100 °C at sea level.",
         "urls": [url("/blog/2021/03/boiling-at-altitude"), url("/articles/steam-tables"), url("/")]}])
    runs = {}
    for name, extra in (("threads", []), ("cluster", ["--cluster", "local:2"])):
        monkeypatch.setenv("CITECHECK_CACHE", str(tmp_path / name / "json_cache.json"))
        monkeypatch.setenv("AUDIT_DB", str(tmp_path / name / "audit.db"))
        (tmp_path / name).mkdir()
        assert cli.main(["batch", str(path), "--out", str(tmp_path / name / "report.csv"), *extra]) == 0
        runs[name] = capsys.readouterr()
    assert runs["cluster"].out == runs["threads"].out
    assert runs["threads"].out.splitlines() == ["citation_precision=0.1429 (1/7)",
                                                "reachable_precision=0.2000 (1/5)"]
    assert (tmp_path / "cluster/report.csv").read_bytes() == (tmp_path / "threads/report.csv").read_bytes()
    assert audit_rows(tmp_path / "cluster/audit.db") == audit_rows(tmp_path / "threads/audit.db")
    assert len(audit_rows(tmp_path / "cluster/audit.db")) == 7
    # the workers recorded nothing themselves: the driver stored every crawl and judge answer
    from citecheck.cache import Cache
    stored = {name: Cache(tmp_path / name / "json_cache.json", offline=True).stored() for name in runs}
    assert stored["cluster"].keys() == stored["threads"].keys() and len(stored["cluster"]) >= 9


def items(tmp_path: Path, count: int, special: str = "", **query) -> Path:
    log = tmp_path / "calls.log"
    rows = [{"id": f"c{i}", "claim": f"claim {i}", "urls": [f"http://x/yes/{i}?log={log}"]} for i in range(count)]
    if special:
        extra = "&".join(f"{k}={v}" for k, v in {"log": log, **query}.items())
        rows[count // 2]["urls"].append(f"http://x/{special}/{count // 2}?{extra}")
    return write_jsonl(tmp_path / "claims.jsonl", rows)


def counting_writes(monkeypatch) -> list:
    written, write = [], audit.write_citation

    def counted(conn, name, item_id, claim, row, model=None):
        written.append((item_id, row["url"]))
        return write(conn, name, item_id, claim, row, model)
    monkeypatch.setattr(audit, "write_citation", counted)
    return written


def test_a_worker_killed_mid_citation_loses_and_doubles_nothing(tmp_path, ctx, monkeypatch):
    path = items(tmp_path, 20, "die-once", marker=tmp_path / "died")
    written = counting_writes(monkeypatch)
    result = batch.run_batch(path, ctx, verify=cluster_tasks.verify, cluster="local:2")
    assert (tmp_path / "died").exists(), "a worker should have been killed"
    assert len(result.rows) == 21 and result.decided == 21
    assert sorted(written) == sorted(set(written)) and len(written) == 21
    assert len(audit_rows(ctx.settings.audit_db)) == 21
    logged = (tmp_path / "calls.log").read_text().splitlines()
    assert {r["url"] for r in result.rows} == set(logged)
    assert {r["reason"] for r in result.rows} == {None}


def test_a_citation_whose_workers_keep_dying_is_reported_and_checked_again_on_resume(tmp_path, make_ctx):
    """One task per worker at a time (so no other citation shares the dying worker), no retries."""
    import dask
    import distributed  # noqa: F401 - its defaults must be in dask's config before it is changed
    path, ctx = items(tmp_path, 6, "always-die"), make_ctx(batch_concurrency=1)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "distributed.scheduler.worker-saturation": 1.0}):
        result = batch.run_batch(path, ctx, verify=cluster_tasks.verify, cluster="local:2")
    lost = [r for r in result.rows if r["reason"] == "worker_lost"]
    assert len(result.rows) == 7 and [r["url"].split("?")[0] for r in lost] == ["http://x/always-die/3"]
    assert lost[0]["label"] == "not_found"
    again = batch.run_batch(path, ctx, verify=lambda c, u: {"url": u, "label": "not_found"})
    assert (again.reused, again.decided) == (6, 1)


def test_outside_calls_are_limited_cluster_wide(tmp_path, make_ctx):
    log = tmp_path / "leases.log"
    rows = [{"id": f"c{i}", "claim": f"claim {i}", "urls": [f"http://x/leased/{i}?hold=0.4&log={log}"]}
            for i in range(10)]
    ctx = make_ctx(batch_concurrency=2)
    result = batch.run_batch(write_jsonl(tmp_path / "c.jsonl", rows), ctx, verify=cluster_tasks.verify,
                             cluster="local:2")
    assert len(result.rows) == 10
    running, peak = 0, 0
    for line in log.read_text().splitlines():
        running += {"+": 1, "-": -1}.get(line, 0)
        peak = max(peak, running)
    assert peak == 2                                   # 2 workers x 2 threads, but 2 leases


def test_secrets_reach_workers_by_environment_and_never_sit_in_a_task(tmp_path, make_ctx):
    secret = "cbFAKE-never-in-a-task-91X"
    ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": secret})
    settings = cluster.shippable(ctx.settings)
    task = (cluster.check_on_worker, settings, None, cluster_tasks.verify, "claim", "http://x/yes/1", 0.8)
    assert secret.encode() not in cloudpickle.dumps(task) and secret.encode() not in pickle.dumps(task[1])
    with cluster.connect(cluster.Spec(workers=1), settings, 2) as client:
        seen = client.submit(cluster_tasks.holds_secret, settings, "CRAWLBASE_TOKEN", hashlib.sha256(
            secret.encode()).hexdigest(), 2.0, pure=False)
        time.sleep(1.0)
        specs = client.run_on_scheduler(cluster_tasks.pickled_run_specs)
        assert specs and not any(secret.encode() in spec for spec in specs)
        assert seen.result() is True                   # the worker read it from its own environment


def test_a_forged_worker_result_is_a_labelled_row_and_nothing_of_it_is_written(tmp_path, make_ctx, monkeypatch):
    """A hostile worker returns forged rows and cache entries: each is worker_result_invalid, the honest
    ones are kept, no forged entry reaches the cache store, and the driver gates every row itself. An entry
    is stored only under the digest of its request, and only for a request its citation makes: its own
    page, a judge question about its claim (or about a fact its own facts step answered)."""
    kinds = ["honest", "label", "confidence", "nan", "key", "reason", "other-url", "entry", "function", "auto",
             "unsure", "surrogate", "tuple", "secret", "honest-entry", "misfiled", "other-page",
             "other-claim", "fed-facts"]
    kept = {"honest", "auto", "honest-entry", "fed-facts"}
    path = write_jsonl(tmp_path / "claims.jsonl", [{"id": k, "claim": f"claim {k}", "urls": [f"http://x/{k}/1"]}
                                                   for k in kinds])
    monkeypatch.setattr(cluster, "check_on_worker", cluster_tasks.hostile)
    ctx = make_ctx(secrets={"OPENAI_API_KEY": cluster_tasks.CANARY})
    result = batch.run_batch(path, ctx, cluster="local:1", threshold=0.8)
    rows = {r["id"]: r for r in result.rows}
    assert (rows["honest"]["label"], rows["honest"]["confidence"], rows["honest"]["auto"]) == ("supported", 0.9,
                                                                                              True)
    assert (rows["auto"]["label"], rows["auto"]["auto"]) == ("supported", False)      # gated here, not there
    for kind in set(kinds) - kept:
        assert (rows[kind]["label"], rows[kind]["reason"], rows[kind]["confidence"]) == (
            "not_found", "worker_result_invalid", None), kind
    from citecheck.cache import Cache
    stored = Cache(ctx.settings.cache_path, offline=True).stored()
    assert sorted(entry["function"] for entry in stored.values()) == [
        "fetch.direct", "judge.facts/openai", "judge.json/openai", "judge.json/openai"]
    assert not any("victim" in repr(entry) for entry in stored.values())
    written = repr(audit_rows(ctx.settings.audit_db))
    assert len(audit_rows(ctx.settings.audit_db)) == len(kinds)
    assert "DROP TABLE" not in written and "supported_for_sure" not in written and "elsewhere" not in written
    assert cluster_tasks.CANARY not in written
    again = batch.run_batch(path, ctx, verify=lambda c, u: {"url": u, "label": "not_found"})
    assert (again.reused, again.decided) == (len(kept), len(kinds) - len(kept))   # transient: checked again


def test_a_second_client_without_the_run_s_credentials_cannot_join_a_local_cluster(ctx):
    from distributed import Client
    from distributed.security import Security
    with cluster.connect(cluster.Spec(workers=1), ctx.settings, 1) as client:
        address = client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        assert client.submit(pow, 2, 3).result() == 8
        for attempt, security in ((address, Security.temporary()), (address.replace("tls://", "tcp://"), None)):
            with pytest.raises((OSError, TimeoutError, ValueError)):
                Client(attempt, security=security, timeout=2)       # other credentials; no TLS at all
        import socket
        import ssl
        anyone = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)            # TLS with no certificate of its own
        anyone.check_hostname, anyone.verify_mode = False, ssl.CERT_NONE
        host, port = address.removeprefix("tls://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            with pytest.raises((ssl.SSLError, ConnectionError)):
                with anyone.wrap_socket(raw) as conn:
                    conn.sendall(b"\0" * 64)
                    assert conn.recv(1) == b"", "a client without a certificate was answered"
                    raise ConnectionError("closed without a word")


def listening_ports(pids) -> set[int]:
    """The TCP ports the processes `pids` listen on (their socket inodes in /proc/net/tcp{,6})."""
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if (target := os.readlink(fd)).startswith("socket:["):
                    inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_local_workers_start_without_secrets_and_hold_no_service_secret(tmp_path, make_ctx, monkeypatch):
    """A worker process inherits the driver's environment at its start and keeps it in /proc/PID/environ:
    no secret's value is there; REVIEW_TOKEN and JUDGE_SERVER_KEY are blank; the crawl key still arrives."""
    secrets = {"REVIEW_TOKEN": "rvw-Canary-8hQ2xLp0Zt7mK4vB9nWc3eRy",
               "JUDGE_SERVER_KEY": "jsk-Canary-5Tq1Vz8Lm3Xp0Rw7", "CRAWLBASE_TOKEN": "crawl-canary-X93"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    ctx = make_ctx(secrets=secrets)
    with cluster.connect(cluster.Spec(workers=1), ctx.settings, 1) as client:
        seen = list(client.run(cluster_tasks.service_secrets).values())
        started = list(client.run(cluster_tasks.started_with, list(secrets.values())).values())
        crawl = client.submit(cluster_tasks.holds_secret, ctx.settings, "CRAWLBASE_TOKEN", hashlib.sha256(
            secrets["CRAWLBASE_TOKEN"].encode()).hexdigest(), 0.0, pure=False).result()
    assert seen == [{"JUDGE_SERVER_KEY": False, "REVIEW_TOKEN": False}]
    assert started == [[]]                               # no value in the environment the worker started with
    assert crawl is True                                 # what a check uses still arrives
    assert all(os.environ[name] == value for name, value in secrets.items())     # the driver's is restored


def test_a_local_cluster_listens_on_its_tls_ports_only(ctx):
    """No HTTP server (Dask's info pages and dashboard) on the scheduler or a worker, even with 8787 free:
    the driver and worker processes listen on the scheduler's, workers' and nannies' TLS ports alone."""
    import socket
    before = listening_ports([os.getpid()])
    with contextlib.suppress(OSError), socket.socket() as probe:
        probe.bind(("127.0.0.1", 8787))                # 8787 free for Dask if nobody else holds it
    with cluster.connect(cluster.Spec(workers=2), ctx.settings, 1) as client:
        info = client.scheduler_info()
        comm = {client.scheduler.address, *info["workers"], *(w["nanny"] for w in info["workers"].values())}
        pids = list(client.run(os.getpid).values())
        ports = listening_ports([os.getpid(), *pids]) - before
        services = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.services))
    assert all(address.startswith("tls://127.0.0.1:") for address in comm)
    assert ports == {int(address.rsplit(":", 1)[1]) for address in comm}
    assert services == []


@pytest.fixture
def tls_files(tmp_path, monkeypatch):
    """Client credentials in CLUSTER_TLS_* files (one self-signed pair, as Security.temporary makes)."""
    from distributed.security import Security
    made = Security.temporary()
    for name, text in (("CA", made.tls_ca_file), ("CERT", made.tls_client_cert), ("KEY", made.tls_client_key)):
        (tmp_path / f"{name}.pem").write_text(text)
        monkeypatch.setenv(f"CLUSTER_TLS_{name}", str(tmp_path / f"{name}.pem"))
    monkeypatch.setenv("CLUSTER_CONNECT_TIMEOUT", "1")
    return tmp_path


def test_a_batch_runs_on_a_tls_scheduler_holding_the_same_ca(tmp_path, tls_files, make_ctx, monkeypatch):
    """The tls:// path end to end: a scheduler and worker started with the CLUSTER_TLS_* files' pair."""
    from distributed.security import Security

    from citecheck.config import Settings
    monkeypatch.setenv("CLUSTER_CONNECT_TIMEOUT", "30")
    pem = {name: str(tls_files / f"{name}.pem") for name in ("CA", "CERT", "KEY")}
    served = Security(tls_ca_file=pem["CA"], require_encryption=True,
                      **{f"tls_{role}_{part.lower()}": pem[part] for role in ("scheduler", "worker", "client")
                         for part in ("CERT", "KEY")})
    settings = make_ctx().settings
    with cluster.local_cluster(1, 2, served, settings) as running:
        ctx = settings.replace(cluster=Settings.from_env().cluster)
        from citecheck.context import RunContext
        result = batch.run_batch(items(tmp_path, 4), RunContext.build(ctx), verify=cluster_tasks.verify,
                                 cluster=running.scheduler_address)
    assert [r["label"] for r in result.rows] == ["supported"] * 4 and result.decided == 4


def listener(kind: str, files: Path):
    """A loopback server that is no scheduler: it accepts and stays silent, or sends garbage; `tls-` ones
    first finish the TLS handshake with the client's own credentials (a peer holding them)."""
    import socket
    import ssl
    import struct
    server = socket.create_server(("127.0.0.1", 0))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(files / "CERT.pem", files / "KEY.pem")
    held = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
                if kind.startswith("tls-"):
                    conn = tls.wrap_socket(conn, server_side=True)
                held.append(conn)
                if kind.endswith("garbage"):
                    conn.sendall(struct.pack("<Q", 2**62) + b"\xff" * 4096)     # a 4 EiB frame
            except OSError:
                return
    threading.Thread(target=serve, daemon=True).start()
    return server


@pytest.mark.parametrize("kind", ["closed", "silent", "garbage", "tls-silent", "tls-garbage"])
def test_a_scheduler_that_does_not_answer_is_one_line_naming_the_address(tmp_path, tls_files, capsys, kind):
    server = None if kind == "closed" else listener(kind, tls_files)
    address = f"tls://127.0.0.1:{server.getsockname()[1] if server else free_port()}"
    try:
        assert cli.main(["batch", str(items(tmp_path, 2)), "--cluster", address]) == 1
    finally:
        if server:
            server.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"citecheck batch: error: no Dask scheduler finished the handshake at {address} ("), err
    assert err[0].endswith("CLUSTER_CONNECT_TIMEOUT=1 s)")
    assert not audit_rows(Path(os.environ["AUDIT_DB"]))


def test_tls_without_its_files_and_plain_tcp_are_refused_before_any_work(tmp_path, capsys):
    path = items(tmp_path, 1)
    assert cli.main(["batch", str(path), "--cluster", "tls://127.0.0.1:8786"]) == 1
    assert cli.main(["batch", str(path), "--cluster", "tcp://127.0.0.1:8786"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["citecheck batch: error: --cluster tls://127.0.0.1:8786 needs CLUSTER_TLS_CA, CLUSTER_TLS_CERT, "
                   "CLUSTER_TLS_KEY set: the PEM files of the CA that signed the scheduler's and workers' "
                   "certificates, and this client's certificate and key",
                   f"citecheck batch: error: {cluster.TCP_REFUSED}"]


@pytest.mark.parametrize("spec", ["local:0", "local:two", "udp://host:1", "tls://host", "tls://h:8786/x"])
def test_a_bad_cluster_spec_is_one_line_before_any_work(tmp_path, capsys, spec):
    assert cli.main(["batch", str(items(tmp_path, 1)), "--cluster", spec]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"citecheck batch: error: {cluster.USAGE}; got {spec!r}"]


RUNNER = """
import sys
sys.path.insert(0, sys.argv[3])
import cluster_tasks
from citecheck import batch
from citecheck.context import RunContext
batch.run_batch(sys.argv[1], RunContext.from_env(), verify=cluster_tasks.verify, concurrency=2, cluster="local:2")
"""


def children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def test_a_killed_cluster_batch_resumes_without_redoing_and_leaves_no_worker(tmp_path, ctx):
    rows = [{"id": f"c{i}", "claim": f"claim {i}", "urls": [f"http://x/leased/{i}?hold=0.3&log={tmp_path}/l"]}
            for i in range(30)]
    path = write_jsonl(tmp_path / "claims.jsonl", rows)
    db = Path(os.environ["AUDIT_DB"])
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, str(path), "", str(ROOT / "tests")],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    before = kill_mid_batch(proc, db, 4, timeout=240, watch=lambda: workers.update(children(proc.pid)))
    assert 4 <= len(before) < 30, "the kill should land mid-batch"
    redone = []
    result = batch.run_batch(path, ctx, verify=lambda c, u: redone.append(u) or {"url": u, "label": "not_found"})
    assert len(result.rows) == 30 and len(redone) == 30 - len(before)
    assert not {f"{r['id']} {r['url']}" for r in result.rows if r["url"] in redone} & set(before)
    deadline = time.monotonic() + 60
    while workers and time.monotonic() < deadline:
        workers = {pid for pid in workers if Path(f"/proc/{pid}").exists()
                   and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"}
        time.sleep(0.5)
    assert workers == set(), "the killed driver's workers should exit on their own"


def test_a_worker_opens_its_run_clients_once_per_settings_and_closes_them_at_shutdown(standins, fixture_site,
                                                                                      tmp_path, monkeypatch):
    from citecheck.batch.nodes import ClosingClients
    from citecheck.config import Settings
    from citecheck.context import Clients
    from citecheck.verdict.review import gate_of
    made, closed, get, close = [], [], Clients.get, Clients.close

    def counted(self, name, make):
        return get(self, name, lambda: made.append(name) or make())
    monkeypatch.setattr(Clients, "get", counted)
    monkeypatch.setattr(Clients, "close", lambda self: closed.append(len(self._open)) or close(self))
    settings = cluster.shippable(Settings.from_env())
    rows = []
    for i, landed in enumerate([settings] * 3 + [settings.replace(judge_timeout=7.0)] * 2):
        landed = pickle.loads(pickle.dumps(landed))             # as a task's settings arrive on a worker
        page = fixture_site.url(f"/articles/boiling-point?n={i}")
        answer = cluster.check_on_worker(landed, None, None, f"Water boils at 100 °C ({i}).", page,
                                         gate_of(None, landed))
        rows.append(json.loads(answer)["row"])
    assert len(standins.posts) == 5 and all(row["model"] for row in rows)   # each judged
    judges = [name for name in made if name[0] == "judge"]
    assert judges == [("judge", "openai")] * 2                 # one client per settings, not one per task
    ClosingClients(cluster.close_worker_clients).teardown(worker=None)      # the worker shutting down
    assert closed == [2, 2] and not cluster._worker_runs           # each set: its judge client, its host limit


def test_a_worker_runs_the_closing_plugin_when_its_cluster_shuts_down(tmp_path, ctx):
    import functools

    from citecheck.batch.nodes import ClosingClients
    marker = tmp_path / "closed"
    with cluster.connect(cluster.Spec(workers=1), cluster.shippable(ctx.settings), 1) as client:
        client.register_plugin(ClosingClients(functools.partial(cluster_tasks.mark, str(marker))),
                               name=ClosingClients.name)
        pids = set(client.run(os.getpid).values())
        assert not marker.exists()
    assert marker.exists() and int(marker.read_text()) in pids
