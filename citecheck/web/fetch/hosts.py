"""The per-host limit: at most HOST_CONCURRENCY requests in flight to one origin, HOST_RATE started a second.

Rules:
- One `HostLimit` per run (`RunContext.client`), so every thread of a run shares it: the batch's pool,
  `check-answer`, and every request of the API (`serve` builds one context). An origin is (scheme, host,
  port): several ports of one address are several hosts.
- Every request to an origin takes a slot (`slot`): each redirect hop, each retry, robots.txt, a PDF,
  and each Crawlbase call (counted against the page's origin, which Crawlbase fetches for us). Starts
  are spaced 1 / HOST_RATE seconds apart; a slot is held until the answer is read.
- Waiting for a slot takes at most what the fetch's deadline leaves: a start that cannot come in time
  fails at once (`HostBusy`), without waiting. A `Retry-After` an origin sent (`defer`) moves that
  origin's next start: every fetch of it waits, or fails at once as rate_limited when it cannot.
- Origins with nothing in flight and no start pending are forgotten.
"""
from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from typing import Callable

from ..robots import origin as origin_of
from .deadline import Budget


class HostBusy(Exception):
    """No slot for the origin within the fetch's deadline; `seconds`: the wait it would have needed (0: a
    slot never freed), `deferred`: the origin asked for that wait."""

    def __init__(self, message: str, seconds: float = 0.0, deferred: bool = False):
        super().__init__(message)
        self.seconds, self.deferred = seconds, deferred


@dataclass
class _Origin:
    in_flight: int = 0
    next_start: float = 0.0
    deferred_until: float = 0.0


class Slots:
    """What the fetchers ask of a host limit: `acquire(url, budget)` -> its release, `defer`, `slot`."""

    def acquire(self, url: str, budget: Budget) -> Callable[[], None]:
        raise NotImplementedError

    def defer(self, url: str, seconds: float) -> None:
        """The origin asked (Retry-After) that nothing start for `seconds` (default: nothing kept)."""

    @contextlib.contextmanager
    def slot(self, url: str, budget: Budget):
        """`with limit.slot(url, budget):` one request to `url`'s origin (module rules)."""
        release = self.acquire(url, budget)
        try:
            yield
        finally:
            release()

    def close(self) -> None:
        """Nothing to release (a run's clients are closed together)."""


class HostLimit(Slots):
    """Slots per origin in this process (module rules)."""

    def __init__(self, concurrency: int, rate: float, clock: Callable[[], float] = time.monotonic):
        self.concurrency, self.interval, self._clock = concurrency, 1.0 / rate, clock
        self._cond = threading.Condition()
        self._origins: dict[tuple, _Origin] = {}

    def acquire(self, url: str, budget: Budget) -> Callable[[], None]:
        """Wait for a slot of `url`'s origin within `budget`; returns its release (call it once)."""
        key = origin_of(url)
        with self._cond:
            while True:
                state = self._origins.setdefault(key, _Origin())   # again: a released one may be gone
                now, left = self._clock(), budget.remaining()
                if state.in_flight < self.concurrency and state.next_start <= now:
                    state.in_flight += 1
                    state.next_start = max(now, state.next_start) + self.interval
                    break
                if state.next_start - now >= left:
                    deferred = state.deferred_until - now >= left
                    self._forget(key, state)
                    raise HostBusy(f"{key[1]}: no request slot before the fetch's deadline",
                                   state.next_start - now, deferred)
                if left <= 0:
                    raise HostBusy(f"{key[1]}: no request slot before the fetch's deadline")
                wait = state.next_start - now if state.in_flight < self.concurrency else left
                self._cond.wait(min(max(wait, 0.001), left))
        released = []

        def release() -> None:
            if released:
                return
            released.append(True)
            with self._cond:
                state.in_flight -= 1
                self._forget(key, state)
                self._cond.notify_all()
        return release

    def defer(self, url: str, seconds: float) -> None:
        """The origin asked (Retry-After) that nothing start for `seconds`."""
        key = origin_of(url)
        with self._cond:
            state = self._origins.setdefault(key, _Origin())
            until = self._clock() + max(seconds, 0.0)
            state.next_start = max(state.next_start, until)
            state.deferred_until = max(state.deferred_until, until)

    def _forget(self, key: tuple, state: _Origin) -> None:
        if state.in_flight == 0 and state.next_start <= self._clock() and self._origins.get(key) is state:
            del self._origins[key]
