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
- A judge endpoint configured by URL whose model the reader did not name (`Settings.discover`:
  TYPESAFE_ENDPOINT without TYPESAFE_MODEL, OPENAI_BASE_URL without JUDGE_MODEL) is asked for its model list
  once per run, the first time the settings are read (`ctx.settings`; `ctx.as_read`: as read): a cached call
  ('judge.models/<judge>', keyed by the endpoint's URL), so a replay resolves the same name offline. The
  listed model when it names one; of several, the default when it is among them, else MissingSetting naming
  the variable to set. Unreachable, an error answer, an empty list, or offline with nothing recorded: the
  default, and the first judge call reports the endpoint (a failure is never cached). Derived contexts
  (`replace`, `allowing`, a pickle) carry the resolved settings.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

from .cache import Cache, CacheCorrupted, CacheMiss, HoldsSecret
from .config import ENDPOINT_VARIABLE, MODEL_FIELD, MODEL_VARIABLE, MissingSetting, Settings, printable


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


# ---------------------------------------------------------------- the endpoint's model (module rules)

MODELS_LISTED = 1000
"""The most model names kept from an endpoint's list; a name longer than MODEL_NAME_CHARS is left out."""
MODEL_NAME_CHARS = 256
NAMES_SHOWN = 5
"""Names a message (and the list's cache stamp) shows before '…'."""


class _NoList(Exception):
    """The endpoint gave no usable model list (unreachable, an error, not a list, empty): nothing cached."""


def typesafe_client(settings: Settings, *, retries: int = 2):
    """A new typesafe-sdk client for the settings' endpoint (the hosted API when unset), model, timeout and
    key (a local server needs none)."""
    from typesafe_sdk import RetryPolicy, TypeSafeClient
    endpoint = settings.typesafe_endpoint
    key = settings.secrets.get("TYPESAFE_API_KEY") or "local"
    return TypeSafeClient(api_key=key, base_url=endpoint or None, model=settings.typesafe_model,
                          timeout=settings.judge_timeout, compression=False if endpoint else None,
                          retry=RetryPolicy(max_retries=retries))


def _names(listed: Any, key: str) -> list[str]:
    """The distinct names (`item[key]`) of a list's items, bounded (MODELS_LISTED, MODEL_NAME_CHARS)."""
    if not isinstance(listed, list):
        raise _NoList
    names = [item[key] for item in listed if isinstance(item, dict) and isinstance(item.get(key), str)]
    return list(dict.fromkeys(n for n in names if 0 < len(n) <= MODEL_NAME_CHARS))[:MODELS_LISTED]


def _typesafe_names(settings: Settings, clients: Clients) -> list[str]:
    """GET /v1/models through typesafe-sdk (`client.models.list()`)."""
    from typesafe_sdk import TypeSafeError
    try:
        with typesafe_client(settings, retries=0) as client:
            return _names([{"name": model.name} for model in client.models.list().models], "name")
    except (TypeSafeError, ValueError):
        raise _NoList from None


def _openai_names(settings: Settings, clients: Clients) -> list[str]:
    """GET {OPENAI_BASE_URL}/models with the run's HTTP client for the provider, at most FETCH_MAX_BYTES."""
    import httpx
    key = settings.secrets.get("OPENAI_API_KEY") or "local"
    client = clients.get(("judge", "openai"), httpx.Client)
    body, url = bytearray(), f"{settings.openai_base_url.rstrip('/')}/models"
    try:
        with client.stream("GET", url, timeout=settings.judge_timeout,
                           headers={"Authorization": f"Bearer {key}"}) as response:
            if response.status_code != 200:
                raise _NoList
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > settings.fetch_max_bytes:
                    raise _NoList
        listed = json.loads(bytes(body))
    except (httpx.HTTPError, ValueError, RecursionError):
        raise _NoList from None
    return _names(listed.get("data") if isinstance(listed, dict) else None, "id")


LISTS = {"typesafe": _typesafe_names, "openai": _openai_names}
"""judge -> how its endpoint's model list is asked for: (settings, clients) -> names (_NoList when none)."""


def shown_names(names: list[str]) -> str:
    """The first NAMES_SHOWN names, then '…' when there are more (each made printable)."""
    more = ", …" if len(names) > NAMES_SHOWN else ""
    return ", ".join(printable(name) for name in names[:NAMES_SHOWN]) + more


def listed_models(judge: str, settings: Settings, cache: Cache, clients: Clients) -> list[str] | None:
    """The model names the judge's endpoint lists, replayed or asked ('judge.models/<judge>', keyed by the
    endpoint's URL); None when it gave none, or offline with none recorded."""
    endpoint = settings.typesafe_endpoint if judge == "typesafe" else settings.openai_base_url.rstrip("/")
    function = f"judge.models/{judge}"

    def compute() -> tuple[list[str], None, str]:
        names = LISTS[judge](settings, clients)
        if not names:
            raise _NoList
        return names, None, shown_names(names)
    try:
        names = cache.call(function, None, {"endpoint": endpoint}, compute)
    except (_NoList, CacheMiss, HoldsSecret):
        return None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise CacheCorrupted(f"{cache.path.name}: the {function} entry for {ENDPOINT_VARIABLE[judge]} is not "
                             "a list of model names; delete that entry to ask the endpoint again")
    return names


def chosen_model(judge: str, names: list[str], default: str) -> str:
    """The listed model when there is one; of several, `default` when listed, else MissingSetting naming the
    variable to set."""
    if len(names) == 1 or default in names:
        return names[0] if len(names) == 1 else default
    variable, endpoint = MODEL_VARIABLE[judge], ENDPOINT_VARIABLE[judge]
    raise MissingSetting(variable, f"the endpoint {endpoint} names serves {len(names)} models "
                                   f"({shown_names(names)}): set {variable} to one")


def resolve_models(settings: Settings, cache: Callable[[], Cache], clients: Clients) -> Settings:
    """`settings` with the model of each judge in `settings.discover` resolved from its endpoint's list
    (module rules); `cache()` opens the run's cache."""
    if not settings.discover:
        return settings
    changes = {}
    for judge in settings.discover:
        names = listed_models(judge, settings, cache(), clients)
        if names:
            changes[MODEL_FIELD[judge]] = chosen_model(judge, names, getattr(settings, MODEL_FIELD[judge]))
    return settings.replace(discover=(), **changes)


@dataclass(frozen=True)
class RunContext:
    as_read: Settings
    _cache: list = field(default_factory=list, repr=False, compare=False)
    _clients: Clients = field(default_factory=Clients, repr=False, compare=False)
    _settings: list = field(default_factory=list, repr=False, compare=False)
    _lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)

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
    def settings(self) -> Settings:
        """The run's settings: as read, each judge model the reader left unnamed resolved from its endpoint's
        list the first time (module rules)."""
        if not self._settings:
            with self._lock:
                if not self._settings:
                    self._settings.append(resolve_models(self.as_read, lambda: self.cache, self._clients))
        return self._settings[0]

    @property
    def cache(self) -> Cache:
        if not self._cache:
            self._cache.append(open_cache(self.as_read))
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
