"""Cancellation: the caller that started some work can stop it once nobody waits for its answer.

Rules:
- `with cancellable(event):` marks the work this thread runs inside the block; `check()` raises
  Cancelled once `event` is set. The API sets it when a request's deadline passes (its 504), and the
  verification stops at its next check (before each URL, and between a page's fetch and its judging);
  its result is never used.
- Outside `cancellable` (the CLI, a batch, the notebooks) `check()` never raises.
- `with heavy():` marks work that may run for a parser's whole deadline (a sandboxed parse). Inside
  `cancellable(event, heavy=lane)` it runs inside `lane()` instead (the API's parse lane: wait for a parse
  slot, then hand the request's slot to the next request; the MCP server's: wait for a parse slot);
  elsewhere it is a no-op. `lane(slots)` builds one: a parse waits (stopping when cancelled) for one
  of `slots`.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable

_event: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("citecheck_cancel",
                                                                               default=None)
_lane: contextvars.ContextVar[Callable[[], contextlib.AbstractContextManager] | None] = \
    contextvars.ContextVar("citecheck_heavy_lane", default=None)


class Cancelled(Exception):
    """The work was cancelled by its caller (nobody waits for its result any more)."""


@contextlib.contextmanager
def cancellable(event: threading.Event, *, heavy: Callable[[], contextlib.AbstractContextManager] | None = None):
    token, lane = _event.set(event), _lane.set(heavy)
    try:
        yield
    finally:
        _lane.reset(lane)
        _event.reset(token)


@contextlib.contextmanager
def heavy():
    """Run the block in the caller's heavy lane, if it gave one (module rules)."""
    lane = _lane.get()
    if lane is None:
        yield
        return
    with lane():
        yield


def lane(slots: threading.Semaphore, entered: Callable[[], None] | None = None):
    """A heavy lane over `slots`: wait for a free one (raising Cancelled if the caller cancels meanwhile),
    call `entered()` once holding it, give it back when the block ends."""
    @contextlib.contextmanager
    def held():
        while not slots.acquire(timeout=0.25):
            check()
        try:
            if entered is not None:
                entered()
            yield
        finally:
            slots.release()
    return held


def check() -> None:
    """Raise Cancelled when the current work's caller has cancelled it."""
    event = _event.get()
    if event is not None and event.is_set():
        raise Cancelled("cancelled by the caller (its deadline passed)")
