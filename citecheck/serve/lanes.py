"""lanes: where the API's slow requests run — request slots, the parse lane, the deadline.

Rules:
- At most API_CONCURRENCY requests (a /verify, a /check-answer, an answer page) hold a slot at once; a
  request waits up to API_QUEUE_TIMEOUT for one (else 429 with Retry-After), so the slowest answer takes
  API_QUEUE_TIMEOUT + API_DEADLINE. At the deadline (504) the slot is released and the work cancelled
  (`cancellation`): it stops at its next check and its result is discarded.
- A sandboxed parse (a page's HTML or PDF, bounded by EXTRACT_MAX_SECONDS / PDF_MAX_SECONDS) runs in the
  parse lane (`cancellation.heavy`): it waits for one of 2 x API_CONCURRENCY parse slots, then hands its
  request slot to the next request, so up to 2 x API_CONCURRENCY slow pages cannot starve cheap requests
  (theirs parse beside them). The worker pool has four times API_CONCURRENCY threads (parsing, holding a
  slot, finishing after a 504), so cancelled work finishing its current step (one fetch, bounded by
  FETCH_DEADLINE; one judge call and its retries, by JUDGE_TIMEOUT and JUDGE_RETRIES) never blocks new work.
- A refusal is `Refused` (status, one line, headers): a missing or rejected setting is 503 naming the
  variable, anything else the work raises is 500 pointing at the server log (the error text redacted).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import threading
from typing import Callable, TypeVar

from .. import cancellation, config
from ..config import ApiLimits

log = logging.getLogger("citecheck.serve.api")
T = TypeVar("T")


class Refused(Exception):
    """A request the API answers with `status` and the one line `detail` (`headers`: e.g. Retry-After)."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, headers or {}


class Lanes:
    """The slots, the parse lane and the worker pool of one app (module rules)."""

    def __init__(self, limits: ApiLimits):
        self.limits = limits
        self.workers = concurrent.futures.ThreadPoolExecutor(max_workers=4 * limits.concurrency,
                                                             thread_name_prefix="verify")
        self.slots = asyncio.Semaphore(limits.concurrency)
        self.parsing = threading.BoundedSemaphore(limits.parse_slots)

    async def run(self, work: Callable[[], T], what: str = "verification") -> T:
        """work() in a worker thread, holding a slot, under API_DEADLINE; Refused when it cannot be
        answered (module rules). `what` names the work in the 429 and 504 lines."""
        limits, loop = self.limits, asyncio.get_running_loop()
        try:
            await asyncio.wait_for(self.slots.acquire(), timeout=limits.queue_timeout)
        except TimeoutError:
            wait = str(max(1, math.ceil(limits.queue_timeout)))
            raise Refused(429, f"busy: {limits.concurrency} requests are running; retry later "
                               "(API_CONCURRENCY)", {"Retry-After": wait}) from None
        cancel, released = threading.Event(), []

        def release(_=None) -> None:
            if not released:                     # once: at the deadline, a parse or the work's end
                released.append(True)
                self.slots.release()

        parse_lane = cancellation.lane(self.parsing, lambda: loop.call_soon_threadsafe(release))

        def run() -> T:
            with cancellation.cancellable(cancel, heavy=parse_lane):
                return work()
        try:
            job = loop.run_in_executor(self.workers, run)
        except BaseException:
            release()
            raise
        job.add_done_callback(lambda done: (release(), done.cancelled() or done.exception()))
        try:
            return await asyncio.wait_for(asyncio.shield(job), timeout=limits.deadline)
        except TimeoutError:
            cancel.set()                         # the work stops at its next check; its result is discarded
            release()
            raise Refused(504, f"{what} took longer than {limits.deadline:g} s (API_DEADLINE)") from None
        except Refused:
            raise
        except config.MissingSetting as exc:
            log.warning("503: %s", config.redact(str(exc)))
            raise Refused(503, config.redact(str(exc))) from None
        except Exception as exc:
            log.error("%s failed: %s: %s", what, type(exc).__name__, config.redact(str(exc)))
            raise Refused(500, f"internal error ({type(exc).__name__}); see the server log") from None
