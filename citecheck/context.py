"""The run context: the settings of one run and the cache they open, built once by an entry point.

Rules:
- The CLI, the API, the notebook set-up cell and `record` each build one RunContext (from the
  environment, through `config.Settings.from_env`) and pass it down; no stage looks settings up.
- The cache is opened on first use with the run's path and offline flag (a command that never calls
  out, such as `judge-server`, never reads it); a changed context (a dry run: offline, the fixture
  site allowed) is a new context with its own cache handle on the same file.
- Tests build contexts directly: `RunContext.build(Settings(...))`.
- A context pickles as its settings (a cluster's worker, another process): the cache handle is
  reopened where it lands, and the secrets are read from that machine's environment.
- The run's long-lived clients (a judge provider's HTTP client, the direct fetcher's connection pool:
  one TLS context, kept-alive connections) are opened on first use under a name that says what they
  were built from (`ctx.client(name, make)`), shared by the contexts derived from this one
  (`replace`, `allowing`), and closed by the entry point when the run ends (`with ctx:` or
  `ctx.close()`); a use after that opens them again. Nothing secret is shown: they have no repr.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

from .cache import Cache
from .config import Settings


def open_cache(settings: Settings) -> Cache:
    """The cache the settings name: export path, store, offline flag, page age limit, secrets to refuse."""
    return Cache(settings.cache_path, offline=settings.offline, store=settings.cache_store,
                 page_max_age=settings.cache_max_age, secrets=settings.secrets)


def _cache_settings(settings: Settings) -> tuple:
    return settings.cache_path, settings.cache_store, settings.offline, settings.cache_max_age, settings.secrets


class Clients:
    """A run's long-lived clients, one per name, opened on first use (thread-safe), closed together."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open: dict[Hashable, Any] = {}

    def get(self, name: Hashable, make: Callable[[], Any]) -> Any:
        """The client opened under `name`, made by `make()` the first time."""
        with self._lock:
            if name not in self._open:
                self._open[name] = make()
            return self._open[name]

    def close(self) -> None:
        """Close every client opened so far (each has `close()`)."""
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for client in opened:
            client.close()

    def __repr__(self) -> str:
        return f"Clients({len(self._open)} open)"


@dataclass(frozen=True)
class RunContext:
    settings: Settings
    _cache: list = field(default_factory=list, repr=False, compare=False)
    _clients: Clients = field(default_factory=Clients, repr=False, compare=False)

    @classmethod
    def build(cls, settings: Settings | None = None, cache: Cache | None = None,
              clients: Clients | None = None) -> "RunContext":
        """A context over `settings` (default: read from the environment); `cache` opens on first use;
        `clients` are shared with the context that passes them (default: this run's own)."""
        ctx = cls(settings if settings is not None else Settings.from_env(), _clients=clients or Clients())
        if cache is not None:
            ctx._cache.append(cache)
        return ctx

    @classmethod
    def from_env(cls) -> "RunContext":
        """The context of an entry point: every setting read from the environment, once."""
        return cls.build(Settings.from_env())

    @property
    def cache(self) -> Cache:
        if not self._cache:
            self._cache.append(open_cache(self.settings))
        return self._cache[0]

    def client(self, name: Hashable, make: Callable[[], Any]) -> Any:
        """The run's client under `name` (which names what it was built from), opened by `make()` once."""
        return self._clients.get(name, make)

    def close(self) -> None:
        """Close the run's clients (the entry point, when the run ends)."""
        self._clients.close()

    def __enter__(self) -> "RunContext":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __reduce__(self):
        return (RunContext.build, (self.settings,))

    def replace(self, **changes) -> "RunContext":
        """A context whose settings differ; the cache is shared unless a cache setting changed; the
        clients are shared (each is named by what it was built from)."""
        settings = self.settings.replace(**changes)
        same = _cache_settings(settings) == _cache_settings(self.settings)
        return RunContext.build(settings, self.cache if same and self._cache else None, self._clients)

    def allowing(self, host: str, port: int) -> "RunContext":
        """The direct fetcher may also reach host:port (the fixture site)."""
        return RunContext.build(self.settings.allowing(host, port), self._cache[0] if self._cache else None,
                                self._clients)
