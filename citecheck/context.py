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
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .cache import Cache
from .config import Settings


def open_cache(settings: Settings) -> Cache:
    """The cache the settings name: export path, store, offline flag, page age limit, secrets to refuse."""
    return Cache(settings.cache_path, offline=settings.offline, store=settings.cache_store,
                 page_max_age=settings.cache_max_age, secrets=settings.secrets)


def _cache_settings(settings: Settings) -> tuple:
    return settings.cache_path, settings.cache_store, settings.offline, settings.cache_max_age, settings.secrets


@dataclass(frozen=True)
class RunContext:
    settings: Settings
    _cache: list = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def build(cls, settings: Settings | None = None, cache: Cache | None = None) -> "RunContext":
        """A context over `settings` (default: read from the environment); `cache` opens on first use."""
        ctx = cls(settings if settings is not None else Settings.from_env())
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

    def __reduce__(self):
        return (RunContext.build, (self.settings,))

    def replace(self, **changes) -> "RunContext":
        """A context whose settings differ; the cache is shared unless a cache setting changed."""
        settings = self.settings.replace(**changes)
        same = _cache_settings(settings) == _cache_settings(self.settings)
        return RunContext.build(settings, self.cache if same and self._cache else None)

    def allowing(self, host: str, port: int) -> "RunContext":
        """The direct fetcher may also reach host:port (the fixture site)."""
        return RunContext.build(self.settings.allowing(host, port), self._cache[0] if self._cache else None)
