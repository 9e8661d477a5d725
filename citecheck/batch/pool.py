"""The batch's worker pool: at most `concurrency` citations in flight, in threads.

Rules:
- The crawl and judge SDKs are synchronous, so each citation runs in a worker thread; as many are
  queued as run, and rows are yielded to the calling thread as they finish (it alone writes them).
- When the batch stops early (an error, a closed generator), queued citations are cancelled and the
  running ones are waited for (each is bounded by its deadlines; the interpreter would join them at exit
  anyway), so none runs on into interpreter shutdown and reports a spurious failure.
"""
from __future__ import annotations

import concurrent.futures as cf
from typing import Callable


def run_pool(check: Callable, todo: list, concurrency: int):
    """Yield (item, check(item)) as items finish; `concurrency` run at once, as many queued."""
    pool = cf.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="citecheck-batch")
    in_flight: dict[cf.Future, tuple] = {}
    try:
        for item in todo:
            in_flight[pool.submit(check, item)] = item
            if len(in_flight) >= 2 * concurrency:
                done, _ = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    yield in_flight.pop(future), future.result()
        for future in cf.as_completed(list(in_flight)):
            yield in_flight.pop(future), future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
