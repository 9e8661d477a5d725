"""The batch on a Dask distributed cluster: `--cluster local:N` or `--cluster tls://HOST:PORT`.

Rules:
- Trust: a scheduler and its workers run code we give them and can return anything (Dask results are
  pickles: unpickling one can run code on the driver). So every link is mutual TLS: `local:N` starts a
  cluster on tls://127.0.0.1 with temporary credentials held in memory (no other local process can join
  or read it) on free ports, with no HTTP server on any node (`batch.nodes`), and `tls://HOST:PORT`
  uses a running scheduler with the PEM files CLUSTER_TLS_CA, CLUSTER_TLS_CERT and CLUSTER_TLS_KEY.
  Plain `tcp://` (no authentication) is refused.
- A scheduler that does not finish the handshake within CLUSTER_CONNECT_TIMEOUT seconds, or answers
  anything else, is one error naming the address.
- Workers get only the secrets a check uses: a local:N worker process starts with no secret in its
  environment (`batch.nodes`), then gets the check's keys, `config.SERVICE_SECRETS` blank (a tls://
  cluster's workers read their own environment).
- A task is one citation, checked and gated by `check_one` on a worker in a context built there from
  the settings. Settings pickle with their secrets as "read them from the environment where I land", so no
  task holds a key. MiniLM (and the passage vectors it has made) load once per worker process, and so do
  a run's clients (HTTP pools, TLS contexts, robots.txt answers, the cluster-wide host limit): one set per
  run, settings and secrets' values (the WORKER_RUNS most recent are kept), closed when the worker shuts
  down.
- A task returns JSON text; the driver takes it as untrusted data (`accepted`): the row's keys, label,
  reason, confidence (finite in [0, 1]; None only for a label no judge gave) and types as the row
  contract says, its `model` one this run asks or one a cache entry is stamped with, and each cache entry
  stamped, for a known function, on its judge's (or the fetcher's) contract and holding no secret.
  Anything else is not_found / worker_result_invalid and nothing of that result is written. The driver
  gates every row itself (a worker's `auto` is dropped).
- A cache entry comes with the request the worker says it made (`Asked`); the driver keeps it only when
  its key is that request's digest and the request is this citation's (`asked_here`): a page fetch of its
  URL, or a judge request holding its claim or a text a generation step of this same result answered (a
  decomposed fact, a generated question: that text whole, or after "label: "). So a worker cannot file
  answers under keys its citation never asks; a result with any other entry is worker_result_invalid.
  What a task's own answers steer (its page, its facts) the driver cannot check without asking again.
- The driver is the only writer, of the audit DB and of the cache store alike. Workers read the store
  and the export at the run's paths (one machine, or a shared filesystem) and write neither: what a task
  records comes back with its row, and the driver stores it before it writes the audit row, so a crash
  between the two re-checks that citation from the cache instead of calling out again. A worker also
  remembers what its own tasks recorded (the last WORKER_MEMORY entries), so a page two claims cite is
  fetched once per worker even before the driver has stored it.
- At most BATCH_CONCURRENCY outside calls (crawls and judge calls: every compute the cache makes) are in
  flight across the cluster: each holds a lease of one Dask Semaphore (`limited()`).
- The per-host limit is cluster-wide too (`ClusterHostLimit`): each request to an origin holds one of
  HOST_CONCURRENCY leases of that origin's Dask Semaphore (one per run), for at least HOST_CONCURRENCY /
  HOST_RATE seconds, so the origin sees at most HOST_CONCURRENCY in flight and HOST_RATE a second from
  the whole cluster. A page replayed from the cache takes no lease.
- A worker that dies mid-citation: the scheduler runs that task again on another worker (up to its
  allowed-failures); a citation whose workers kept dying becomes not_found / worker_lost, which is
  transient, so a resumed batch checks it again. No citation is lost, none is written twice.
- Rows are yielded as tasks finish; at most 2 x the cluster's threads are submitted ahead.
"""
from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import re
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from .. import config
from ..cache import FIELDS, OFF, PAGES, Cache, CacheError, HoldsSecret, checked, request_key
from ..config import Settings
from ..context import Clients, RunContext, open_cache
from ..matching.spans import is_span
from ..verdict.review import Gate, gated
from ..web.fetch import HOST_LIMIT
from ..web.fetch.deadline import Budget
from ..web.fetch.hosts import HostBusy, Slots
from ..web.robots import origin
from ..vocabulary import (CONTRADICTED, LABELS, NOT_FOUND, STATUSES, SUPPORTED, WORKER_LOST,
                          WORKER_RESULT_INVALID, CitationRow, known_reason)
from .citation import check_one, setting_errors

WORKER_MEMORY = 1000
"""Entries a worker remembers from its own tasks until the driver has stored them."""
WORKER_RUNS = 4
"""Sets of clients a worker process keeps open, one per run settings (the most recently used)."""
TLS_FILES = ("CLUSTER_TLS_CA", "CLUSTER_TLS_CERT", "CLUSTER_TLS_KEY")
USAGE = ("--cluster must be local:N (N worker processes on this machine) or tls://HOST:PORT (a running "
         f"scheduler; {', '.join(TLS_FILES)} name its PEM files)")
TCP_REFUSED = ("--cluster tcp:// is refused: plain TCP has no authentication, so whoever answers at that "
               "address can run code on this machine and write your rows; run the scheduler with TLS and use "
               f"tls://HOST:PORT with {', '.join(TLS_FILES)} set")
log = logging.getLogger("citecheck.batch")


class ClusterUnreachable(OSError):
    """No scheduler finished the handshake at the address."""


@dataclass(frozen=True)
class Spec:
    workers: int = 0            # local:N
    address: str = ""           # tls://HOST:PORT


def parse(spec: str) -> Spec:
    """'local:N' or 'tls://HOST:PORT' -> Spec; tcp:// is refused (TCP_REFUSED); anything else is a
    ValueError saying what is accepted."""
    text = spec.strip()
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if count.isdigit() and int(count) >= 1:
            return Spec(workers=int(count))
    elif text.startswith("tcp://"):
        raise ValueError(TCP_REFUSED)
    elif text.startswith("tls://"):
        try:
            parts = urlsplit(text)
            if parts.hostname and parts.port and parts.path in ("", "/"):
                return Spec(address=f"tls://{parts.netloc}")
        except ValueError:
            pass
    raise ValueError(f"{USAGE}; got {spec!r}")


def ready(spec: str, settings: Settings) -> Spec:
    """The parsed spec, its certificate files checked before any work (a ValueError naming the variables)."""
    where = parse(spec)
    if where.address:
        tls = settings.cluster
        files = dict(zip(TLS_FILES, (tls.tls_ca, tls.tls_cert, tls.tls_key)))
        if missing := [name for name, path in files.items() if not path]:
            raise ValueError(f"--cluster {where.address} needs {', '.join(missing)} set: the PEM files of "
                             "the CA that signed the scheduler's and workers' certificates, and this client's "
                             "certificate and key")
        if unreadable := [name for name, path in files.items() if not Path(path).is_file()]:
            raise ValueError(f"--cluster {where.address}: {', '.join(unreadable)} is not a readable file")
    return where


def security(where: Spec, settings: Settings):
    """Mutual TLS: temporary in-memory credentials for local:N, the CLUSTER_TLS_* files for tls://."""
    from distributed.security import Security
    if where.workers:
        return Security.temporary()
    tls = settings.cluster
    return Security(tls_ca_file=tls.tls_ca, tls_client_cert=tls.tls_cert, tls_client_key=tls.tls_key,
                    require_encryption=True)


def credentials_in(folder: Path) -> tuple[Any, config.ClusterSettings]:
    """Temporary mutual-TLS credentials written to `folder` as PEM files (owner-only): the Security to
    start a LocalCluster with and the ClusterSettings a driver joins it with (benchmarks, notebooks)."""
    from distributed.security import Security
    made = Security.temporary()
    paths = {}
    for part, text in (("ca", made.tls_ca_file), ("cert", made.tls_client_cert), ("key", made.tls_client_key)):
        path = Path(folder) / f"cluster-{part}.pem"
        path.touch(mode=0o600)
        path.write_text(text, encoding="utf-8")
        paths[f"tls_{part}"] = str(path)
    return made, config.ClusterSettings(**paths)


def worker_environment(settings: Settings) -> dict[str, str]:
    """A local worker's environment: the bundled models offline, no progress bars, the secrets a check
    uses; SERVICE_SECRETS blanked (a worker process starts with the driver's environment, then this)."""
    used = tuple(name for name in config.SECRETS if name not in config.SERVICE_SECRETS)
    return {**config.QUIET_ENV, **dict.fromkeys(config.SERVICE_SECRETS, ""), **settings.secrets.environ(used)}


def shippable(settings: Settings) -> Settings:
    """The settings with the cache's paths made absolute, so a worker finds the same files."""
    store = settings.cache_store
    if store and store.lower() != OFF:
        store = str(Path(store).resolve())
    return settings.replace(cache_path=settings.cache_path.resolve(), cache_store=store)


@contextlib.contextmanager
def local_cluster(workers: int, threads: int, secured, settings: Settings):
    """A cluster of `workers` processes on tls://127.0.0.1 (free ports) secured by `secured`, with no HTTP
    server on any node, no secret in a worker's start and no statistical profiler (`batch.nodes`); its
    scratch folder is removed when it closes. The notebooks start theirs here."""
    from distributed import SpecCluster
    from . import nodes
    with tempfile.TemporaryDirectory(prefix="citecheck-dask-") as scratch:
        common = {"host": "127.0.0.1", "protocol": "tls://", "security": secured, "dashboard_address": None,
                  "local_directory": scratch}
        worker = {"cls": nodes.CleanNanny, "options": {
            **common, "nthreads": threads, "worker_class": nodes.UnservedWorker,
            "env": worker_environment(settings), "config": nodes.worker_config(), "dashboard": False,
            "silence_logs": logging.CRITICAL}}
        scheduler = {"cls": nodes.UnservedScheduler, "options": {**common, "port": 0, "dashboard": False}}
        with SpecCluster(scheduler=scheduler, workers=dict.fromkeys(range(workers), worker), worker=worker,
                         security=secured, silence_logs=logging.CRITICAL) as cluster:
            yield cluster


@contextlib.contextmanager
def connect(spec: Spec, settings: Settings, threads: int):
    """A distributed Client on the cluster over mutual TLS: started (and closed after) for local:N."""
    logging.getLogger("distributed").setLevel(logging.ERROR)
    from distributed import Client
    secured = security(spec, settings)
    if spec.workers:
        with local_cluster(spec.workers, threads, secured, settings) as cluster, \
                Client(cluster, security=secured) as client:
            yield client
        return
    timeout = settings.cluster.connect_timeout
    connecting = lambda: Client(spec.address, security=secured, timeout=timeout)   # noqa: E731
    with _within(spec.address, timeout, connecting) as client:
        yield client


def _within(address: str, timeout: float, connecting: Callable):
    """`connecting()`'s client, or ClusterUnreachable when it raises or has not returned after `timeout`
    (Dask's own timeout does not cover a peer that finishes TLS and then says nothing): it runs in a daemon
    thread that is left behind."""
    box = {}

    def run() -> None:
        try:
            box["client"] = connecting()
        except BaseException as exc:    # noqa: BLE001 - refused, TLS refused, garbage: all one line
            box["error"] = exc
    thread = threading.Thread(target=run, name="citecheck-cluster-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if thread.is_alive() or "error" in box:
        why = type(box["error"]).__name__ if "error" in box else "no answer"
        raise ClusterUnreachable(f"no Dask scheduler finished the handshake at {address} ({why}; "
                                 f"CLUSTER_CONNECT_TIMEOUT={timeout:g} s)")
    return box["client"]


# ---------------------------------------------------------------- on a worker

_limit = threading.local()
_worker_caches: dict[tuple, tuple[Cache, collections.OrderedDict]] = {}
_worker_lock = threading.Lock()


class ClusterHostLimit(Slots):
    """The per-host limit across a cluster (module rules): leases of a Dask Semaphore per origin and run."""

    def __init__(self, run: str, concurrency: int, rate: float):
        self.run, self.concurrency, self.hold = run, concurrency, concurrency / rate
        self._semaphores: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _semaphore(self, url: str):
        from distributed import Semaphore
        scheme, host, port = origin(url)
        name = f"{self.run}-host-{scheme}://{host}:{port}"
        with self._lock:
            if name not in self._semaphores:
                self._semaphores[name] = Semaphore(max_leases=self.concurrency, name=name)
            return self._semaphores[name]

    def acquire(self, url: str, budget: Budget) -> Callable[[], None]:
        semaphore = self._semaphore(url)
        if budget.spent or not semaphore.acquire(timeout=budget.remaining()):
            raise HostBusy(f"{origin(url)[1]}: no request slot before the fetch's deadline")
        started = time.monotonic()

        def release() -> None:
            left = started + self.hold - time.monotonic()
            if left <= 0:
                semaphore.release()
                return
            timer = threading.Timer(left, semaphore.release)     # a start frees its lease after `hold`
            timer.daemon = True
            timer.start()
        return release


def limited():
    """The cluster-wide lease for one outside call, in code a cluster task runs; a no-op elsewhere."""
    semaphore = getattr(_limit, "semaphore", None)
    return semaphore if semaphore is not None else contextlib.nullcontext()


class TaskCache(Cache):
    """One task's view of its worker's cache: lookups read the worker's cache (and what tasks on this
    worker recorded); what this task records is kept for the driver, and each outside call is leased."""

    def __init__(self, base: Cache, recent: collections.OrderedDict):
        vars(self).update(vars(base))
        self.base, self.recent, self.recorded, self.asked = base, recent, {}, {}

    def answered(self, function: str, model: str, request: Any, compute: Callable, **hints) -> tuple:
        """The cache's answer (`call` and `answered` alike), remembering the request under its key (the
        driver checks the two agree)."""
        with _worker_lock:
            self.asked[request_key(function, model, request)] = {"function": function, "model": model,
                                                                 "request": request}
        return super().answered(function, model, request, compute, **hints)

    def lookup(self, key: str, function: str | None = None) -> dict | None:
        with _worker_lock:
            entry = self.recorded.get(key) or self.recent.get(key)
        return self.base.lookup(key, function) if entry is None else checked(key, entry, "this worker", function)

    def run(self, compute: Callable[[], tuple]) -> tuple:
        with limited():
            return compute()

    def put_many(self, items) -> None:
        for key, entry, _text in self.recordable(items):
            with _worker_lock:
                self.recorded[key] = self.recent[key] = entry
                while len(self.recent) > WORKER_MEMORY:
                    self.recent.popitem(last=False)


def _worker_cache(settings: Settings) -> tuple[Cache, collections.OrderedDict]:
    key = (settings.cache_path, settings.cache_store, settings.offline, settings.cache_max_age)
    with _worker_lock:
        if key not in _worker_caches:
            _worker_caches[key] = (open_cache(settings), collections.OrderedDict())
        return _worker_caches[key]


@dataclass
class _Run:
    """A worker process's clients for one run's settings, and how many of its tasks use them now."""
    clients: Clients
    users: int = 0
    retired: bool = False


_worker_runs: collections.OrderedDict[tuple, _Run] = collections.OrderedDict()


@contextlib.contextmanager
def _worker_clients(settings: Settings, run_name: str | None) -> Iterator[Clients]:
    """This worker process's clients for `settings` in the run `run_name` (module rules): one set per run,
    settings and secrets' values, its host limit the run's cluster-wide one; the WORKER_RUNS most recently
    used kept, an older set closed once no task uses it."""
    closing, key = [], (run_name, settings, settings.secrets)
    with _worker_lock:
        run = _worker_runs.pop(key, None) or _Run(Clients())
        _worker_runs[key] = run
        if run_name is not None:
            run.clients.get((HOST_LIMIT, settings.host_concurrency, settings.host_rate),
                            lambda: ClusterHostLimit(run_name, settings.host_concurrency, settings.host_rate))
        run.users += 1
        while len(_worker_runs) > WORKER_RUNS:
            old = _worker_runs.popitem(last=False)[1]
            old.retired = True
            closing += [old] if not old.users else []
    for old in closing:
        old.clients.close()
    try:
        yield run.clients
    finally:
        with _worker_lock:
            run.users -= 1
            done = run.retired and not run.users
        if done:
            run.clients.close()


def close_worker_clients() -> None:
    """Close every client this worker process holds (at its shutdown: `nodes.ClosingClients`)."""
    with _worker_lock:
        runs = list(_worker_runs.values())
        _worker_runs.clear()
    for run in runs:
        run.clients.close()


def check_on_worker(settings: Settings, semaphore, verify, claim: str, url: str, threshold: Gate,
                    quotes: tuple[str, ...] = ()) -> str:
    """One citation (`quotes`: the texts it carries) on a worker -> JSON text {"row": its row, "recorded":
    [[key, entry, the request asked], ...]}."""
    base, recent = _worker_cache(settings)
    cache = TaskCache(base, recent)

    def pipeline(claim: str, url: str) -> dict:
        from ..verify import verify_citation
        return verify_citation(claim, url, ctx, threshold, with_passages=True, quotes=quotes)
    _limit.semaphore = semaphore
    try:
        with _worker_clients(settings, semaphore.name if semaphore is not None else None) as clients:
            ctx = RunContext.build(settings, cache, clients)
            row = check_one(verify or pipeline, claim, url, threshold)
        recorded = [[key, entry, cache.asked.get(key)] for key, entry in cache.recorded.items()]
        return json.dumps({"row": row, "recorded": recorded}, ensure_ascii=False)
    finally:
        _limit.semaphore = None


# ---------------------------------------------------------------- on the driver

ROW_KEYS = frozenset((*CitationRow.field_names(), "passages", "model"))
"""What a worker's row may hold: CitationRow's fields, the passages the judge read and the model."""
_TEXT_KEYS = ("evidence_quote", "final_url", "method", "auto_note", "diff")
_KEY = re.compile(r"[0-9a-f]{64}")


class ResultInvalid(ValueError):
    """A worker's result off the row or cache contract; the message says which part."""


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _row(row: Any, url: str, models: set) -> dict:
    from ..judge.judge_contract import is_number as _number
    if not isinstance(row, dict):
        raise ResultInvalid("the row is not an object")
    if unknown := sorted(set(row) - ROW_KEYS):
        raise ResultInvalid(f"the row has unknown keys {unknown[:3]}")
    confidence, status, rid = row.get("confidence"), row.get("original_status"), row.get("rid")
    problems = {
        "url": row.get("url") != url,
        "label": row.get("label") not in LABELS,
        "reason": not (_text_or_none(row.get("reason")) and known_reason(row.get("reason"))),
        "confidence": (not (_number(confidence) and 0 <= confidence <= 1) if confidence is not None
                       else row.get("label") in (SUPPORTED, CONTRADICTED)),     # only a judge says those
        "original_status": status is not None and not (_number(status) and status == int(status)),
        "rid": rid is not None and not (isinstance(rid, str) or (_number(rid) and isinstance(rid, int))),
        "auto": not (row.get("auto") is None or isinstance(row.get("auto"), bool)),
        "status": row.get("status") not in (None, *STATUSES),
        "model": row.get("model") not in models,
        "passages": not (row.get("passages") is None or (isinstance(row["passages"], list) and all(
            isinstance(p, str) for p in row["passages"]))),
        **{key: not _text_or_none(row.get(key)) for key in _TEXT_KEYS},
        "span": not is_span(row.get("span_start"), row.get("span_end")),
    }
    if bad := [key for key, wrong in problems.items() if wrong]:
        raise ResultInvalid(f"the row's {', '.join(bad)} is off the row contract")
    return {key: value for key, value in row.items() if key not in ("auto", "auto_note")}


def answer_problem(function: str, answer: Any) -> None:
    """OffContract (or ResultInvalid) unless `answer` is what `function`'s judge or fetcher records."""
    from ..judge import judge_contract as contract
    from ..judge import judges
    from ..judge.choice_json import READOUTS
    from ..web.fetch.pages import FetchResult

    def choice(value: Any) -> None:
        if not isinstance(value, dict) or not isinstance(value.get("probabilities"), dict):
            raise contract.OffContract("a choice answer without probabilities")
        contract.check_choice(value, tuple(value["probabilities"]))

    if function.startswith("fetch."):
        if not isinstance(answer, dict) or set(answer) - set(FetchResult.__dataclass_fields__):
            raise ResultInvalid("a page entry that is not a fetch result")
        page = FetchResult.from_dict(answer)
        if not (isinstance(page.markdown, str) and known_reason(page.reason)
                and page.label in (None, *LABELS)):
            raise ResultInvalid("a page entry off the fetch contract")
    elif function.startswith("judge.json/"):
        judges._check_content(answer)
    elif function.startswith("judge.choice/"):
        choice(answer)
        if answer.get("readout") not in READOUTS:
            raise contract.OffContract("a choice answer without a known readout")
    elif function == "typesafe.system_one":
        if isinstance(answer, dict) and isinstance(answer.get("relation"), str):
            judges.check_relation(answer)
        elif isinstance(answer, dict) and answer:
            for value in answer.values():
                choice(value)
        else:
            raise contract.OffContract("a Choice answer that is not an object of answers")
    elif function.startswith("judge.") and "/" in function:
        if not isinstance(answer, dict) or not contract.is_text(answer.get("content")):
            raise contract.OffContract("a method step that is not {content: text}")
        contract.parsed_json(answer["content"])
    else:
        raise ResultInvalid(f"an entry for the unknown function {function[:40]!r}")


ASKED_KEYS = frozenset(("function", "model", "request"))
FEEDS = ("judge.facts/", "judge.question/")
"""Generation steps whose answers (facts, a question) a later step of the same citation asks about."""


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _fed(entry: dict) -> set[str]:
    """The texts a generation step in FEEDS answered (its content's strings, whitespace collapsed)."""
    from ..judge.judge_contract import OffContract, parsed_json
    if not entry["function"].startswith(FEEDS):
        return set()
    try:
        return {" ".join(text.split()) for text in _strings(parsed_json(entry["answer"]["content"]))
                if text.strip()}
    except (OffContract, KeyError, TypeError):
        return set()


def asked_here(asked: dict, claim: str, url: str, fed: set[str]) -> bool:
    """Whether a request is one this citation's check makes (module rules): a page fetch of `url`, or a
    judge request holding `claim`, or holding a `fed` text whole (or after "label: ")."""
    request = asked["request"]
    if asked["function"].startswith(PAGES):
        return isinstance(request, dict) and request.get("url") == url.strip()
    texts = [" ".join(text.split()) for text in _strings(request)]
    wanted = " ".join(claim.split())
    return (bool(wanted) and any(wanted in text for text in texts)) or any(
        text in fed or text.rpartition(": ")[2] in fed for text in texts)


def _entry(item: Any) -> tuple[str, dict, dict]:
    """[key, entry, asked] checked against the cache contract, the function's contract and the key."""
    from ..judge.judge_contract import OffContract
    if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)
            and _KEY.fullmatch(item[0])):
        raise ResultInvalid("a recorded entry is not [sha256 key, entry, request]")
    key, entry, asked = item
    try:
        checked(key, entry, "a worker's result")
        if set(entry) != set(FIELDS):
            raise ResultInvalid(f"entry {key[:12]} has keys other than {', '.join(FIELDS)}")
        answer_problem(entry["function"], entry["answer"])
    except (CacheError, OffContract) as exc:
        raise ResultInvalid(f"entry {key[:12]}: {exc}") from None
    if not (isinstance(asked, dict) and set(asked) == ASKED_KEYS and asked["function"] == entry["function"]
            and isinstance(asked["model"], str)
            and request_key(asked["function"], asked["model"], asked["request"]) == key):
        raise ResultInvalid(f"entry {key[:12]} is not filed under the digest of the request it answers")
    return key, entry, asked


def _entries(recorded: Any, claim: str, url: str) -> list[tuple[str, dict]]:
    """The result's cache entries, each on its contract and asked by this citation (`asked_here`)."""
    if not isinstance(recorded, list):
        raise ResultInvalid("the recorded entries are not a list")
    items = [_entry(item) for item in recorded]
    fed = set().union(*(_fed(entry) for _key, entry, asked in items if asked_here(asked, claim, url, set())))
    if stray := [key for key, _entry, asked in items if not asked_here(asked, claim, url, fed)]:
        raise ResultInvalid(f"entry {stray[0][:12]} answers a request this citation does not make")
    return [(key, entry) for key, entry, _asked in items]


def accepted(result: Any, claim: str, url: str, ctx: RunContext, threshold: Gate) -> tuple[dict, list]:
    """A task's JSON text -> (the row gated here, its cache entries); ResultInvalid when any part is off
    contract (module rules)."""
    if not isinstance(result, str):
        raise ResultInvalid(f"the result is a {type(result).__name__}, not JSON text")
    try:
        data = json.loads(result)
    except (ValueError, RecursionError):
        raise ResultInvalid("the result is not JSON") from None
    if not isinstance(data, dict) or set(data) != {"row", "recorded"}:
        raise ResultInvalid('the result is not {"row", "recorded"}')
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ResultInvalid("the result holds a lone surrogate (text that is not UTF-8)") from None
    settings = ctx.settings
    entries = _entries(data["recorded"], claim, url)
    models = {None, "", settings.judge_model, settings.choice_model, settings.typesafe_model,
              *(entry["model"] for _key, entry in entries)}
    if isinstance(data["row"], dict) and data["row"].get("model") not in models:
        models |= ctx.cache.models()                # a name the cache records as having answered
    row = _row(data["row"], url, models)
    gated_row = gated(CitationRow.from_dict(row).to_dict(), threshold, row.get("model"))
    return {**gated_row, "passages": row.get("passages"), "model": row.get("model")}, entries


def labelled(url: str, threshold: Gate, reason: str) -> dict:
    """The row of a citation the cluster could not give a trustworthy answer for (transient reasons: a
    resumed batch checks it again)."""
    return {**gated(CitationRow(url=url, label=NOT_FOUND, reason=reason).to_dict(), threshold),
            "passages": None}


def _taken(future, claim: str, url: str, ctx: RunContext, threshold: Gate) -> dict:
    """The finished task's row, its cache entries stored first: worker_lost when its workers kept dying,
    worker_result_invalid when its result is off contract or an entry holds a secret (logged, nothing
    of it written)."""
    from distributed.scheduler import KilledWorker
    try:
        row, entries = accepted(future.result(), claim, url, ctx, threshold)
        try:
            ctx.cache.put_many(entries)                   # refused whole if any entry holds a secret's value
        except HoldsSecret as exc:
            raise ResultInvalid(str(exc)) from None
        return row
    except KilledWorker:
        return labelled(url, threshold, WORKER_LOST)
    except setting_errors():
        raise
    except Exception as exc:        # noqa: BLE001 - a worker's answer is untrusted: any failure is one row
        log.warning("%s", config.redact(f"{url}: worker result rejected: {type(exc).__name__}: {exc}"[:300]))
        return labelled(url, threshold, WORKER_RESULT_INVALID)


def run_cluster(todo: list, ctx: RunContext, spec: str, concurrency: int, threshold: Gate,
                verify: Callable | None = None) -> Iterator[tuple]:
    """Yield (item, row) for each (claim, url) item as the cluster finishes it (module rules); the
    entries each task recorded are written to ctx.cache first."""
    from distributed import Semaphore, as_completed
    where = ready(spec, ctx.settings)
    settings = shippable(ctx.settings)
    with connect(where, settings, concurrency) as client:
        from .nodes import ClosingClients
        client.register_plugin(ClosingClients(close_worker_clients), name=ClosingClients.name)
        semaphore = Semaphore(max_leases=concurrency, name=f"citecheck-calls-{uuid.uuid4().hex}")
        ahead = 2 * max(sum(client.nthreads().values()), 1)
        queue, futures, finished = iter(todo), {}, as_completed()

        def submit(item) -> None:
            future = client.submit(check_on_worker, settings, semaphore, verify, item[0].claim, item[1],
                                   threshold, item[0].carried(item[1]), pure=False,
                                   key=f"citation-{uuid.uuid4().hex}")
            futures[future] = item
            finished.add(future)
        for item in itertools.islice(queue, ahead):
            submit(item)
        for future in finished:
            item = futures.pop(future)
            row = _taken(future, item[0].claim, item[1], ctx, threshold)
            future.release()
            yield item, row
            for following in itertools.islice(queue, 1):
                submit(following)
