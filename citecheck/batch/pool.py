"""The batch's worker pool: at most `concurrency` citations in flight, in threads.

Rules:
- The crawl and judge SDKs are synchronous, so each citation runs in a worker thread; as many are
  queued as run, and rows are yielded to the calling thread as they finish (it alone writes them).
- When the batch stops early (an error, a closed generator), queued citations are cancelled and the
  running ones are waited for (each is bounded by its deadlines; the interpreter would join them at exit
  anyway), so none runs on into interpreter shutdown and reports a spurious failure.
- An error is raised only after every citation that finished, or was running, has been yielded: a
  citation that finished together with the failing one is never lost.
- Politeness (`web.fetch.hosts`): the per-host limit is the run's, shared by every thread, so the pool
  never has more than HOST_CONCURRENCY requests in flight to one origin whatever its own concurrency.
  `interleaved` submits citations round-robin over their origins, so threads are not all held waiting on
  one host's slots while another host's citations queue behind them.
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
from typing import Callable

from ..web.robots import origin


def run_pool(check: Callable, todo: list, concurrency: int):
    """Yield (item, check(item)) as items finish; `concurrency` run at once, as many queued."""
    pool = cf.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="citecheck-batch")
    in_flight: dict[cf.Future, tuple] = {}
    try:
        for item in todo:
            in_flight[pool.submit(check, item)] = item
            if len(in_flight) >= 2 * concurrency:
                yield from _finished(cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)[0], in_flight)
        while in_flight:
            yield from _finished(cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)[0], in_flight)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def interleaved(todo: list, url_of: Callable = lambda item: item[1]) -> list:
    """`todo` round-robin over the origins of its URLs (each origin's items keep their order)."""
    queues: dict[tuple, list] = {}
    for item in todo:
        queues.setdefault(origin(url_of(item)), []).append(item)
    rounds = itertools.zip_longest(*queues.values(), fillvalue=_NONE)
    return [item for one_round in rounds for item in one_round if item is not _NONE]


_NONE = object()


def _finished(done: set, in_flight: dict):
    """Yield the done futures' (item, result); on a failure, cancel what has not started, wait for what
    runs, yield every success, then raise the first failure."""
    failed = [f for f in done if f.exception() is not None]
    for future in [f for f in done if f not in failed]:
        yield in_flight.pop(future), future.result()
    if failed:
        for future in in_flight:
            future.cancel()
        cf.wait(in_flight)
        for future in [f for f in in_flight if not f.cancelled() and f.exception() is None]:
            yield in_flight.pop(future), future.result()
        raise failed[0].exception()
