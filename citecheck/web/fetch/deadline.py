"""The total deadline of one fetch (FETCH_DEADLINE): connect, TLS, every read, every retry and redirect.

Rules:
- A Budget starts when the fetch starts and never grows; `cap(timeout)` is the wait one step may use:
  its own timeout (FETCH_TIMEOUT, CRAWLBASE_TIMEOUT) or what is left, whichever is shorter.
- No step starts once the budget is spent, and no retry is waited for that would end past it.
- A fetch the deadline cut short is a transient failure (crawl_failed): it depends on the moment and
  the machine, so it is never cached.
"""
from __future__ import annotations

import time


class Budget:
    """Seconds left until a fixed moment (time.monotonic)."""

    def __init__(self, seconds: float, clock=time.monotonic):
        self.seconds, self._clock = seconds, clock
        self.ends = clock() + seconds

    def remaining(self) -> float:
        return max(0.0, self.ends - self._clock())

    @property
    def spent(self) -> bool:
        return self.remaining() <= 0.0

    def cap(self, timeout: float | None) -> float:
        """The wait a step may use: `timeout` (None = no timeout of its own) or what is left."""
        left = self.remaining()
        return left if timeout is None else min(timeout, left)

    def allows_wait(self, seconds: float) -> bool:
        """True when waiting `seconds` still leaves time for another attempt."""
        return seconds < self.remaining()
