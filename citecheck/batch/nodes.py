"""The Dask nodes a `local:N` cluster runs: no HTTP server anywhere, no secret in a worker's start.

Rules:
- Dask starts an HTTP server on every scheduler (port 8787, another when that is taken, with a warning)
  and worker (a free port) even with the dashboard off: unauthenticated pages naming tasks and workers.
  These nodes listen on their mutual-TLS comm ports only.
- A worker process starts with the environment its nanny's process has at that moment and keeps it
  (/proc/PID/environ) whatever it sets later, so every `config.SECRETS` is out of the driver's
  environment while a worker starts; the check's keys reach it through the nanny's `env`.
- Workers run without Dask's statistical profiler (it samples every thread 100 times a second for a
  dashboard nobody serves): `worker_config`.
- A worker closes the run clients its tasks opened when it shuts down (`ClosingClients`, which a cluster
  batch registers on any cluster, local or tls://).

Imports distributed: loaded only when a cluster starts.
"""
from __future__ import annotations

from typing import Callable

import dask.config
from distributed import Nanny, Scheduler, Worker
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.http.routing import RoutingApplication

from .. import config


def worker_config() -> dict:
    """The Dask configuration a local worker process runs with: this process's, the profiler off (a
    nanny replaces whole top-level sections, so the `distributed` section is given whole)."""
    return {"distributed": dask.config.merge(dask.config.get("distributed"),
                                             {"worker": {"profile": {"enabled": False}}})}


class _Unserved:
    def start_http_server(self, routes, dashboard_address, default_port=0, ssl_options=None) -> None:
        """The routes Dask's code reads, and no server listening for them."""
        self.http_application = RoutingApplication(routes)


class UnservedScheduler(_Unserved, Scheduler):
    """A scheduler without its HTTP server."""


class UnservedWorker(_Unserved, Worker):
    """A worker without its HTTP server."""


class CleanNanny(Nanny):
    """A nanny whose worker processes (the first and every restart) start with no secret inherited."""

    async def instantiate(self):
        with config.starting_children_without(config.SECRETS):
            return await super().instantiate()


class ClosingClients(WorkerPlugin):
    """Runs `close` (`cluster.close_worker_clients`: a worker process's run clients) when the worker shuts
    down; registered once per cluster (idempotent: a second driver does not replace it)."""
    name = "citecheck-closing-clients"
    idempotent = True

    def __init__(self, close: Callable[[], None]):
        self.close = close

    def teardown(self, worker) -> None:
        self.close()
