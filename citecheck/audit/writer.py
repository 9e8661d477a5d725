"""One writer thread for a server's audit DB: every write of the process goes through it, in order.

Rules:
- The thread owns the only writing connection (opened, and so migrated, in the thread before `Writer`
  returns: a DB that cannot be opened fails the server's start, not its first request).
- `submit(fn)` queues `fn(conn)` and returns a Future of its result; the queue is unbounded, so a
  request never waits for the disk and no submitted write is dropped. `close()` runs what is queued,
  then stops the thread (a server's shutdown).
- A write that raises fails its own Future only; the thread goes on. A ValueError is a refusal its caller
  reports (a review of a row reviewed meanwhile); anything else is also logged.
"""
from __future__ import annotations

import concurrent.futures
import logging
import queue
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable

from .. import config

log = logging.getLogger("citecheck.audit")
_STOP = object()


class Writer:
    """A thread that applies queued writes to one audit DB (see module rules)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        opened: concurrent.futures.Future = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(opened,), name="audit-writer", daemon=True)
        self._thread.start()
        opened.result()

    def _run(self, opened: concurrent.futures.Future) -> None:
        from . import connect
        try:
            conn = connect(self.path)
        except BaseException as exc:          # noqa: BLE001 - reported to the constructor
            opened.set_exception(exc)
            return
        opened.set_result(None)
        try:
            while (job := self._jobs.get()) is not _STOP:
                fn, done = job
                if not done.set_running_or_notify_cancel():
                    continue
                try:
                    done.set_result(fn(conn))
                except BaseException as exc:  # noqa: BLE001 - one write's failure is its own
                    if not isinstance(exc, ValueError):
                        log.error("audit write to %s failed: %s", self.path,
                                  config.redact(f"{type(exc).__name__}: {exc}"))
                    done.set_exception(exc)
        finally:
            conn.close()

    def submit(self, fn: Callable[[sqlite3.Connection], Any]) -> concurrent.futures.Future:
        """Queue `fn(conn)`; the Future holds its result (or its exception)."""
        if not self._thread.is_alive():
            raise RuntimeError(f"the audit writer for {self.path} has stopped")
        done: concurrent.futures.Future = concurrent.futures.Future()
        self._jobs.put((fn, done))
        return done

    def close(self) -> None:
        """Run every queued write, then stop the thread."""
        if self._thread.is_alive():
            self._jobs.put(_STOP)
            self._thread.join()
