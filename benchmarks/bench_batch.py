"""Batch throughput at several concurrency levels against stand-ins with injected latency.

A script that prints numbers, not a timed test:

    .venv/bin/python benchmarks/bench_batch.py                 # both modes, 200 citations, 1 2 4 8
    .venv/bin/python benchmarks/bench_batch.py --mode sleep --citations 400
    .venv/bin/python benchmarks/bench_batch.py --workers 0 1 2 4 --levels 4     # threads, then clusters
    .venv/bin/python benchmarks/bench_batch.py --mode http --levels 4 --encoder joint --pages distinct
    .venv/bin/python benchmarks/bench_batch.py --mode http --levels 4 --retrieval minilm bm25   # both rankings

Modes:
- sleep: each citation sleeps crawl-ms then judge-ms in place of the pipeline, so the table measures
  the batch machinery alone (thread pool, journal writes, ordering).
- http:  the real pipeline (`verify.verify_citation`: crawlbase SDK -> Crawling-API stand-in, passages,
  retrieval (`--retrieval`: minilm unless asked, the encoder being what costs CPU; bm25 is the shipped
  default), httpx -> OpenAI-compatible judge stand-in (JUDGE_METHOD=one_pass: the JSON judge it scripts),
  guard), each stand-in on 127.0.0.1
  answering after its injected latency. A fresh cache and audit DB per level, so nothing is replayed.

Ideal throughput = concurrency / (crawl + judge latency): what the batch would reach if the only cost
were waiting. The CPU column is the batch process's own CPU time per citation (the stand-ins' threads
run in the same process but do almost nothing: each page is converted once), plus, with --workers N
(cluster mode: a `--cluster` batch on N local worker processes; 0 = the thread pool), its workers' CPU,
which has a column of its own (the worker processes' CPU from /proc: the cluster target is the one
worker of `--workers 1`, `worker_cpu_per_citation`, against the threads' CPU column). The cluster is
started, the pipeline imported and MiniLM loaded on every worker before the clock starts (the pipeline is
imported in the driver too); that start-up has its own column.
Each level runs in its own process so the peak RSS column is that level's alone.

Pages (http mode): `same` serves one article under every URL (a page cited by many claims: encoded once
per process), `distinct` marks every paragraph of every copy differently
(nothing to reuse). Each run salts every paragraph, so vectors remembered on disk by an earlier run
never hit. `--encoder joint` times
the encoding before that step (claim and page passages encoded together on every citation).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def write_claims(path: Path, citations: int, base_url: str) -> None:
    """One citation per claim, every claim and URL distinct, so neither a crawl nor a judge call is
    answered from the cache (an identical prompt would be)."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(citations):
            claim = f"At sea level, pure water boils at 100 °C (claim {i})."
            url = f"{base_url}/articles/boiling-point?copy={i}"
            handle.write(json.dumps({"id": f"b{i}", "claim": claim, "urls": [url]}) + "\n")


class SleepVerify:
    """Sleeps crawl-s then judge-s, each under the cluster-wide lease when it runs on a cluster."""

    def __init__(self, crawl: float, judge: float):
        self.crawl, self.judge = crawl, judge

    def __call__(self, claim: str, url: str) -> dict:
        from citecheck.batch.cluster import limited
        for seconds in (self.crawl, self.judge):
            with limited():
                time.sleep(seconds)
        return {"url": url, "label": "supported", "confidence": 0.9, "evidence_quote": "boils at 100 °C"}


def cpu_seconds() -> float:
    """This process's CPU and that of its finished children (a LocalCluster's workers)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def joint_encoding() -> None:
    """Retrieval as before step 3: claim and passages encoded together on every call, nothing remembered."""
    from citecheck.web import retrieval
    from citecheck.web.vectors import model

    def similarities(query: str, passages: list[str]) -> list[float]:
        vectors = model().encode([query, *passages], convert_to_tensor=True,
                                           normalize_embeddings=True,
                                           show_progress_bar=False)
        return [float(x) for x in (vectors[1:] @ vectors[0]).tolist()]
    retrieval.similarities = similarities


def process_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes have used so far, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def pipeline_imported() -> bool:
    """The pipeline's modules imported: start-up (in the driver and on each worker), not a citation's cost."""
    import citecheck.verify  # noqa: F401
    return True


@contextlib.contextmanager
def warm_cluster(workers: int, concurrency: int, settings, load_model: bool):
    """A LocalCluster started, the pipeline imported (with `load_model`, MiniLM loaded) on its workers before
    the clock starts:
    yields (the address to pass as --cluster, the worker pids, seconds it took to get there, the
    CLUSTER_TLS_* settings to join it with); None without workers."""
    if not workers:
        yield None, [], 0.0, None
        return
    from distributed import Client

    from citecheck.batch.cluster import credentials_in, local_cluster
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as folder:           # tcp:// is refused
        security, tls = credentials_in(Path(folder))
        with local_cluster(workers, concurrency, security, settings) as local, \
                Client(local, security=security) as client:
            client.run(pipeline_imported)
            if load_model:
                from citecheck.web import vectors
                client.run(lambda: vectors.model() is not None)
            pids = list(client.run(os.getpid).values())
            yield local.scheduler_address, pids, time.perf_counter() - started, tls


def joining(ctx, tls):
    """`ctx` with the CLUSTER_TLS_* settings of a warm cluster (unchanged without one)."""
    from citecheck.context import RunContext
    return ctx if tls is None else RunContext.build(ctx.settings.replace(cluster=tls), ctx.cache)


def measure(run, pids: list[int]) -> tuple:
    """(run's result, seconds, CPU seconds of this process and the workers, the workers' alone)."""
    started, cpu, workers_cpu = time.perf_counter(), cpu_seconds(), process_cpu(pids)
    result = run()
    on_workers = process_cpu(pids) - workers_cpu
    return result, time.perf_counter() - started, cpu_seconds() - cpu + on_workers, on_workers


def run_level(*args, **kwargs) -> dict:
    """`level_in` a temporary folder, removed after."""
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as folder:
        return level_in(Path(folder), *args, **kwargs)


def level_in(work: Path, mode: str, concurrency: int, citations: int, crawl: float, judge: float,
             workers: int = 0, pages: str = "same", encoder: str = "memo", ranking: str = "minilm") -> dict:
    """One batch in this process with its files in `work`, on `workers` warm local worker processes when
    > 0 (their start-up and model load are timed apart); returns the measurements."""
    from citecheck import batch
    from citecheck.config import Settings
    from citecheck.context import RunContext
    pipeline_imported()
    ctx = RunContext.build(Settings(cache_path=work / "cache.json", audit_db=work / "audit.db", retrieval=ranking,
                                    judge_method="one_pass", ignore_robots=True,     # the stand-ins are ours:
                                    host_concurrency=1000, host_rate=1e6))          # bench_politeness paces
    if mode == "sleep":
        write_claims(work / "claims.jsonl", citations, "http://bench.invalid")
        with warm_cluster(workers, concurrency, ctx.settings, False) as (address, pids, startup, tls):
            result, seconds, cpu, on_workers = measure(lambda: batch.run_batch(
                work / "claims.jsonl", joining(ctx, tls), verify=SleepVerify(crawl, judge), concurrency=concurrency,
                cluster=address), pids)
        crawls = judged = len(result.rows)
    else:
        if encoder == "joint":
            joint_encoding()                     # this process only: use it with --workers 0
        with http_standins(crawl, judge, pages) as (site_url, crawling, model, pointed):
            ctx = RunContext.build(ctx.settings.replace(**pointed))
            write_claims(work / "claims.jsonl", citations, site_url)
            if ranking == "minilm":
                from citecheck.web import vectors
                vectors.model()
            with warm_cluster(workers, concurrency, ctx.settings, ranking == "minilm") as (address, pids, startup,
                                                                                           tls):
                result, seconds, cpu, on_workers = measure(lambda: batch.run_batch(
                    work / "claims.jsonl", joining(ctx, tls), concurrency=concurrency, cluster=address), pids)
            crawls, judged = len(crawling.calls), len(model.requests)
    labels = batch.counts(result.rows)
    return {"mode": mode, "concurrency": concurrency, "workers": workers, "citations": len(result.rows),
            "seconds": seconds, "cpu": cpu, "worker_cpu": on_workers, "startup": startup,
            "supported": labels["supported"], "crawls": crawls, "judge_calls": judged,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


@contextlib.contextmanager
def http_standins(crawl: float, judge: float, pages: str = "same"):
    """Fixture site, Crawling API (answers after `crawl` s) and judge (after `judge` s) on 127.0.0.1."""
    from dataclasses import replace

    from standins.crawlbase import NORMAL_TOKEN, CrawlingStandIn
    from standins.crawlbase_storage import Storage, crawlbase_standin
    from standins.judge import judge_standin, verdict_json

    from citecheck.config import Secrets
    from citecheck.web import fixture_site as site

    converted: dict[str, object] = {}
    salt = os.urandom(6).hex()

    def crawl_slowly(query: dict):
        """The page converted once per path and options (the copies differ only by query string), so
        the stand-in's own work does not eat the CPU the pipeline is being measured on; its text is
        salted per run (every paragraph), and per copy when pages are `distinct`."""
        key = (query["url"].split("?")[0], query.get("md_readability"))
        if key not in converted:
            converted[key] = CrawlingStandIn.from_origin(query)
        mark = f"[{salt} {query['url'].rsplit('=', 1)[-1]}]" if pages == "distinct" else f"[{salt}]"
        body = "\n\n".join(f"{paragraph} {mark}" for paragraph in converted[key].body.split("\n\n"))
        return replace(converted[key], delay=crawl, url=query["url"], body=body)

    quote = "At sea level, pure water boils at 100 °C (212 °F)."
    crawling = CrawlingStandIn(crawl_slowly)
    with site.start(port=0) as fixture, crawlbase_standin(crawling, Storage()) as api, \
            judge_standin() as model:
        model.script.delay = judge
        model.script.content = verdict_json("supported", quote, 0.9)
        pointed = {"crawlbase_api_url": api.url, "openai_base_url": model.url + "/v1",
                   "secrets": Secrets({"CRAWLBASE_TOKEN": NORMAL_TOKEN})}
        yield fixture.base_url, crawling, model, pointed


def in_child(mode: str, level: int, workers: int, citations: int, crawl_ms: int, judge_ms: int,
             pages: str = "same", encoder: str = "memo", ranking: str = "minilm") -> dict | str:
    """One level measured in its own process: its measurements, or the child's last error line."""
    child = subprocess.run([sys.executable, __file__, "--child", "--mode", mode, "--levels", str(level),
                            "--workers", str(workers), "--citations", str(citations),
                            "--crawl-ms", str(crawl_ms), "--judge-ms", str(judge_ms), "--pages", pages,
                            "--encoder", encoder, "--retrieval", ranking],
                           capture_output=True, text=True, cwd=ROOT)
    if child.returncode != 0:
        return " ".join(child.stderr.strip().splitlines()[-1:])
    return json.loads(child.stdout.strip().splitlines()[-1])


def worker_cpu_per_citation(citations: int = 100) -> float:
    """The target's measure: CPU ms per citation of the one worker process of a `local:1` cluster
    (http mode, bm25, concurrency 4, the stand-ins' latency as by default)."""
    m = in_child("http", 4, 1, citations, 200, 300, ranking="bm25")
    if isinstance(m, str):
        raise RuntimeError(m)
    return 1000 * m["worker_cpu"] / m["citations"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("sleep", "http", "both"), default="both")
    parser.add_argument("--citations", type=int, default=200)
    parser.add_argument("--crawl-ms", type=int, default=200)
    parser.add_argument("--judge-ms", type=int, default=300)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 8],
                        help="BATCH_CONCURRENCY values")
    parser.add_argument("--workers", type=int, nargs="+", default=[0],
                        help="local cluster sizes (--cluster local:N); 0 = the thread pool")
    parser.add_argument("--pages", choices=("same", "distinct"), default="same")
    parser.add_argument("--encoder", choices=("memo", "joint"), default="memo")
    parser.add_argument("--retrieval", choices=("minilm", "bm25"), nargs="+", default=["minilm"],
                        help="RETRIEVAL values to run (http mode)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    crawl, judge = args.crawl_ms / 1000, args.judge_ms / 1000
    if args.child:
        print(json.dumps(run_level(args.mode, args.levels[0], args.citations, crawl, judge, args.workers[0],
                                   args.pages, args.encoder, args.retrieval[0])))
        return 0
    modes = ("sleep", "http") if args.mode == "both" else (args.mode,)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.citations} citations, {args.crawl_ms} ms per crawl + {args.judge_ms} ms per judge call; "
          f"pages {args.pages}, encoder {args.encoder}; {os.cpu_count()} CPUs, "
          f"load average {load} at the start\n")
    print("| mode | ranking | workers | concurrency | crawls / judge calls | seconds | citations/s | ideal/s "
          "| % of ideal "
          "| CPU ms / citation | workers' CPU ms / citation | cluster start s | peak RSS MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs = [(mode, ranking) for mode in modes for ranking in (args.retrieval if mode == "http" else ["-"])]
    for mode, ranking in runs:
        for workers in args.workers:
            for level in args.levels:
                m = in_child(mode, level, workers, args.citations, args.crawl_ms, args.judge_ms, args.pages,
                             args.encoder, "minilm" if ranking == "-" else ranking)
                shown = workers or "threads"
                if isinstance(m, str):
                    print(f"| {mode} | {ranking} | {shown} | {level} | failed: {m} |")
                    continue
                rate, ideal = m["citations"] / m["seconds"], level / (crawl + judge)
                on_workers = f"{1000 * m['worker_cpu'] / m['citations']:.0f}" if workers else "-"
                print(f"| {mode} | {ranking} | {shown} | {level} | {m['crawls']} / {m['judge_calls']} "
                      f"| {m['seconds']:.1f} "
                      f"| {rate:.2f} | {ideal:.2f} | {100 * rate / ideal:.0f}% "
                      f"| {1000 * m['cpu'] / m['citations']:.0f} | {on_workers} | {m['startup']:.1f} "
                      f"| {m['peak_rss_mib']:.0f} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
