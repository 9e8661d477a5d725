"""The batch on a Dask distributed cluster: `--cluster local:N` or `--cluster tcp://HOST:PORT`.

Rules:
- `local:N` starts a LocalCluster of N worker processes on this machine, each with BATCH_CONCURRENCY
  threads and the run's secrets in its environment; `tcp://HOST:PORT` uses a running scheduler, whose
  workers must have the secrets in their own environment. A scheduler that does not answer within
  CONNECT_TIMEOUT seconds is one error naming the address.
- A task is one citation, checked and gated by `check_one` on a worker in a context rebuilt there from
  the settings. Settings pickle with their secrets as "read them from the environment where I land", so no
  task holds a key. MiniLM (and the passage vectors it has made) load once per worker process.
- The driver is the only writer, of the audit DB and of the cache store alike. Workers read the store
  and the export at the run's paths (one machine, or a shared filesystem) and write neither: what a task
  records comes back with its row, and the driver stores it before it writes the audit row, so a crash
  between the two re-checks that citation from the cache instead of calling out again. A worker also
  remembers what its own tasks recorded (the last WORKER_MEMORY entries), so a page two claims cite is
  fetched once per worker even before the driver has stored it.
- At most BATCH_CONCURRENCY outside calls (crawls and judge calls: every compute the cache makes) are in
  flight across the cluster: each holds a lease of one Dask Semaphore (`limited()`).
- A worker that dies mid-citation: the scheduler runs that task again on another worker (up to its
  allowed-failures); a citation whose workers kept dying becomes not_found / worker_lost, which is
  transient, so a resumed batch checks it again. No citation is lost, none is written twice.
- Rows are yielded as tasks finish; at most 2 x the cluster's threads are submitted ahead.
"""
from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import urlsplit

from .. import config
from ..cache import OFF, Cache, checked
from ..config import Settings
from ..context import RunContext, open_cache
from ..verdict.review import Gate, gated
from ..vocabulary import NOT_FOUND, WORKER_LOST, CitationRow
from .citation import check_one

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a scheduler at a tcp:// address."""
WORKER_MEMORY = 1000
"""Entries a worker remembers from its own tasks until the driver has stored them."""
USAGE = "--cluster must be local:N (N worker processes on this machine) or tcp://HOST:PORT (a running scheduler)"


class ClusterUnreachable(OSError):
    """No scheduler answered at the address."""


@dataclass(frozen=True)
class Spec:
    workers: int = 0            # local:N
    address: str = ""           # tcp://HOST:PORT


def parse(spec: str) -> Spec:
    """'local:N' or 'tcp://HOST:PORT' -> Spec; anything else is a ValueError saying what is accepted."""
    text = spec.strip()
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if count.isdigit() and int(count) >= 1:
            return Spec(workers=int(count))
    elif text.startswith("tcp://"):
        try:
            parts = urlsplit(text)
            if parts.hostname and parts.port and parts.path in ("", "/"):
                return Spec(address=f"tcp://{parts.netloc}")
        except ValueError:
            pass
    raise ValueError(f"{USAGE}; got {spec!r}")


def worker_environment(settings: Settings) -> dict[str, str]:
    """A local worker's environment: the bundled models offline, no progress bars, the run's secrets."""
    return {**config.QUIET_ENV, **settings.secrets.environ()}


def shippable(settings: Settings) -> Settings:
    """The settings with the cache's paths made absolute, so a worker finds the same files."""
    store = settings.cache_store
    if store and store.lower() != OFF:
        store = str(Path(store).resolve())
    return settings.replace(cache_path=settings.cache_path.resolve(), cache_store=store)


@contextlib.contextmanager
def connect(spec: Spec, settings: Settings, threads: int):
    """A distributed Client on the cluster: started (and closed after) for local:N."""
    logging.getLogger("distributed").setLevel(logging.ERROR)
    from distributed import Client, LocalCluster
    if spec.workers:
        with LocalCluster(n_workers=spec.workers, threads_per_worker=threads, processes=True,
                          dashboard_address="127.0.0.1:0", env=worker_environment(settings),
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(spec.address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ClusterUnreachable(f"no Dask scheduler answered at {spec.address} within {CONNECT_TIMEOUT:g} s "
                                 f"({type(exc).__name__})") from None
    with client:
        yield client


# ---------------------------------------------------------------- on a worker

_limit = threading.local()
_worker_caches: dict[tuple, tuple[Cache, collections.OrderedDict]] = {}
_worker_lock = threading.Lock()


def limited():
    """The cluster-wide lease for one outside call, in code a cluster task runs; a no-op elsewhere."""
    semaphore = getattr(_limit, "semaphore", None)
    return semaphore if semaphore is not None else contextlib.nullcontext()


class TaskCache(Cache):
    """One task's view of its worker's cache: lookups read the worker's cache (and what tasks on this
    worker recorded); what this task records is kept for the driver, and each outside call is leased."""

    def __init__(self, base: Cache, recent: collections.OrderedDict):
        vars(self).update(vars(base))
        self.base, self.recent, self.recorded = base, recent, {}

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


def check_on_worker(settings: Settings, semaphore, verify, claim: str, url: str,
                    threshold: Gate) -> tuple[dict, list]:
    """One citation on a worker -> (its row, the cache entries it recorded)."""
    base, recent = _worker_cache(settings)
    cache = TaskCache(base, recent)
    ctx = RunContext.build(settings, cache)

    def pipeline(claim: str, url: str) -> dict:
        from ..verify import verify_citation
        return verify_citation(claim, url, ctx, threshold, with_passages=True)
    _limit.semaphore = semaphore
    try:
        return check_one(verify or pipeline, claim, url, threshold), list(cache.recorded.items())
    finally:
        _limit.semaphore = None


# ---------------------------------------------------------------- on the driver

def worker_lost(url: str, threshold: Gate) -> dict:
    """The row of a citation whose workers kept dying (transient: a resumed batch checks it again)."""
    return {**gated(CitationRow(url=url, label=NOT_FOUND, reason=WORKER_LOST).to_dict(), threshold),
            "passages": None}


def run_cluster(todo: list, ctx: RunContext, spec: str, concurrency: int, threshold: Gate,
                verify: Callable | None = None) -> Iterator[tuple]:
    """Yield (item, row) for each (claim, url) item as the cluster finishes it (module rules); the
    entries each task recorded are written to ctx.cache first."""
    from distributed import Semaphore, as_completed
    from distributed.scheduler import KilledWorker
    where = parse(spec)
    settings = shippable(ctx.settings)
    with connect(where, settings, concurrency) as client:
        semaphore = Semaphore(max_leases=concurrency, name=f"citecheck-calls-{uuid.uuid4().hex}")
        ahead = 2 * max(sum(client.nthreads().values()), 1)
        queue, futures, finished = iter(todo), {}, as_completed()

        def submit(item) -> None:
            future = client.submit(check_on_worker, settings, semaphore, verify, item[0].claim, item[1],
                                   threshold, pure=False, key=f"citation-{uuid.uuid4().hex}")
            futures[future] = item
            finished.add(future)
        for item in itertools.islice(queue, ahead):
            submit(item)
        for future in finished:
            item = futures.pop(future)
            try:
                row, recorded = future.result()
            except KilledWorker:
                row, recorded = worker_lost(item[1], threshold), []
            future.release()
            ctx.cache.put_many(recorded)
            yield item, row
            for following in itertools.islice(queue, 1):
                submit(following)
