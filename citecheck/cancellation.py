"""Cancellation: the caller that started some work can stop it once nobody waits for its answer.

Rules:
- `with cancellable(event):` marks the work this thread runs inside the block; `check()` raises
  Cancelled once `event` is set. The API sets it when a request's deadline passes (its 504), and the
  verification stops at its next check (before each URL, and between a page's fetch and its judging);
  its result is never used.
- Outside `cancellable` (the CLI, a batch, the notebooks) `check()` never raises.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading

_event: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("citecheck_cancel",
                                                                               default=None)


class Cancelled(Exception):
    """The work was cancelled by its caller (nobody waits for its result any more)."""


@contextlib.contextmanager
def cancellable(event: threading.Event):
    token = _event.set(event)
    try:
        yield
    finally:
        _event.reset(token)


def check() -> None:
    """Raise Cancelled when the current work's caller has cancelled it."""
    event = _event.get()
    if event is not None and event.is_set():
        raise Cancelled("cancelled by the caller (its deadline passed)")
