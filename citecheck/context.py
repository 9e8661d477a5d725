"""The run context: the settings of one run and the cache they open, built once by an entry point.

Rules:
- The CLI, the API, the notebook set-up cell and `record` each build one RunContext (from the
  environment, through `config.Settings.from_env`) and pass it down; no stage looks settings up.
- The cache is opened on first use with the run's path and offline flag (a command that never calls
  out, such as `judge-server`, never reads it); a changed context (a dry run: offline, the fixture
  site allowed) is a new context with its own cache handle on the same file.
- Tests build contexts directly: `RunContext.build(Settings(...))`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .cache import Cache
from .config import Settings


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
            self._cache.append(Cache(self.settings.cache_path, offline=self.settings.offline))
        return self._cache[0]

    def replace(self, **changes) -> "RunContext":
        """A context whose settings differ; the cache is shared unless its path or offline flag changed."""
        settings = self.settings.replace(**changes)
        same = (settings.cache_path, settings.offline) == (self.settings.cache_path, self.settings.offline)
        return RunContext.build(settings, self.cache if same and self._cache else None)

    def allowing(self, host: str, port: int) -> "RunContext":
        """The direct fetcher may also reach host:port (the fixture site)."""
        return RunContext.build(self.settings.allowing(host, port), self._cache[0] if self._cache else None)
