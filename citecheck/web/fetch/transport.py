"""The direct fetcher's connections: to the address netguard vetted, inside the fetch's deadline.

Rules:
- `pin(url, addresses)` records, for the URL's (host, port), the addresses `netguard.vet` returned for
  this hop of the fetch running in this thread; `connect_tcp` connects to those addresses, in order, and
  never resolves the name again, so a DNS answer that changes between the check and the connection (DNS
  rebinding) reaches nothing the guard did not vet. A host it was not told about is refused
  (ConnectError); a host whose check was lifted (CITECHECK_ALLOW_PRIVATE, CITECHECK_ALLOW_HOSTS:
  `addresses` None) is connected to by name.
- TLS keeps the URL's host for SNI and certificate checks, and the Host header is the URL's: only the
  address the socket connects to is pinned.
- Every connect, TLS handshake, read and write waits at most `budget.cap(its timeout)` of the fetch
  running in its thread; once that budget is spent each raises a timeout, so a slow origin (a drip, a
  stall) cannot hold a fetch past it. No wait happens outside a fetch (it is refused).
- One `Connections` per run and allowance (`RunContext.client`): one TLS context and one pool, so a
  kept-alive connection serves the next fetch of the same origin, and only after that fetch vetted the
  origin again under the same CITECHECK_ALLOW_* rules. Each fetch has its own client over that pool
  (its own cookies, as when every fetch had its own client).
- No proxy is read from the environment: the guard must see the address the fetcher connects to.
"""
from __future__ import annotations

import contextlib
import threading
import typing
from dataclasses import dataclass, field

import httpcore
import httpx

from .deadline import Budget


def origin(url: str) -> tuple[str, int]:
    """(host, port) as httpx will hand it to the network backend (lower case, IDNA-encoded)."""
    parsed = httpx.URL(url)
    return parsed.raw_host.decode("ascii"), parsed.port or (443 if parsed.scheme == "https" else 80)


@dataclass
class _Fetch:
    """The fetch running in a thread: its deadline and the addresses vetted for its hops."""
    budget: Budget
    pins: dict[tuple[str, int], list[str] | None] = field(default_factory=dict)


class _BoundedStream(httpcore.NetworkStream):
    """A network stream whose every wait is capped by the budget of the fetch using it."""

    def __init__(self, stream: httpcore.NetworkStream, backend: "PinnedBackend"):
        self._stream, self._backend = stream, backend

    def _wait(self, timeout: float | None, error: type[Exception]) -> float:
        return self._backend.wait(timeout, error)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._wait(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._wait(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        wait = self._wait(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(self._stream.start_tls(ssl_context, server_hostname, wait), self._backend)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


class PinnedBackend(httpcore.SyncBackend):
    """Connects only to addresses vetted for the fetch running in the calling thread (module rules)."""

    def __init__(self):
        self._local = threading.local()

    @contextlib.contextmanager
    def fetching(self, budget: Budget):
        """Run one fetch in this thread: its pins and every wait under `budget`."""
        self._local.fetch = _Fetch(budget)
        try:
            yield
        finally:
            self._local.fetch = None

    def _fetch(self, error: type[Exception]) -> _Fetch:
        fetch = getattr(self._local, "fetch", None)
        if fetch is None:
            raise error("no fetch is running in this thread (no deadline to wait under)")
        return fetch

    def wait(self, timeout: float | None, error: type[Exception]) -> float:
        """The wait one step may use under the running fetch's budget; `error` once it is spent."""
        wait = self._fetch(error).budget.cap(timeout)
        if wait <= 0:
            raise error("the fetch's deadline (FETCH_DEADLINE) has passed")
        return wait

    def pin(self, url: str, addresses: list[str] | None) -> None:
        self._fetch(httpcore.ConnectError).pins[origin(url)] = addresses

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options=None) -> httpcore.NetworkStream:
        key, pins = (host, port), self._fetch(httpcore.ConnectError).pins
        if key not in pins:
            raise httpcore.ConnectError(f"{host}:{port} was not vetted by netguard")
        addresses = pins[key] or [host]                   # None: the check was lifted, connect by name
        error: Exception = httpcore.ConnectError(f"{host}:{port}: no address")
        for address in addresses:
            wait = self.wait(timeout, httpcore.ConnectTimeout)
            try:
                stream = super().connect_tcp(address, port, wait, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
                continue
            return _BoundedStream(stream, self)
        raise error


class PinnedTransport(httpx.HTTPTransport):
    """httpx's transport over a connection pool whose network backend is `backend` (one TLS context)."""

    def __init__(self, backend: PinnedBackend):
        ssl_context = httpx.create_ssl_context(trust_env=False)
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = httpcore.ConnectionPool(ssl_context=ssl_context, network_backend=backend)


class Connections:
    """The direct fetcher's pool for a run (module rules): `client()` per fetch, `close()` at the end."""

    def __init__(self, timeout: float, headers: dict):
        self.backend = PinnedBackend()
        self._transport = PinnedTransport(self.backend)
        self._timeout, self._headers = timeout, headers

    def client(self) -> httpx.Client:
        """A client for one fetch over the shared pool: no redirects followed, no environment proxies, its
        own cookies. Not closed by the fetch (that would close the pool)."""
        return httpx.Client(transport=self._transport, timeout=self._timeout, follow_redirects=False,
                            headers=self._headers, trust_env=False)

    def close(self) -> None:
        self._transport.close()
