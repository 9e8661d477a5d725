"""The direct fetcher's connections: to the address netguard vetted, inside the fetch's deadline.

Rules:
- `pin(url, addresses)` records, for the URL's (host, port), the addresses `netguard.vet` returned for
  this hop; `connect_tcp` connects to those addresses, in order, and never resolves the name again, so a
  DNS answer that changes between the check and the connection (DNS rebinding) reaches nothing the
  guard did not vet. A host it was not told about is refused (ConnectError); a host whose check was
  lifted (CITECHECK_ALLOW_PRIVATE, CITECHECK_ALLOW_HOSTS: `addresses` None) is connected to by name.
- TLS keeps the URL's host for SNI and certificate checks, and the Host header is the URL's: only the
  address the socket connects to is pinned.
- Every connect, TLS handshake, read and write waits at most `budget.cap(its timeout)`; once the budget
  is spent each raises a timeout, so a slow origin (a drip, a stall) cannot hold a fetch past it.
- No proxy is read from the environment: the guard must see the address the fetcher connects to.
"""
from __future__ import annotations

import typing

import httpcore
import httpx

from .deadline import Budget


def origin(url: str) -> tuple[str, int]:
    """(host, port) as httpx will hand it to the network backend (lower case, IDNA-encoded)."""
    parsed = httpx.URL(url)
    return parsed.raw_host.decode("ascii"), parsed.port or (443 if parsed.scheme == "https" else 80)


class _BoundedStream(httpcore.NetworkStream):
    """A network stream whose every wait is capped by the fetch's budget."""

    def __init__(self, stream: httpcore.NetworkStream, budget: Budget):
        self._stream, self._budget = stream, budget

    def _wait(self, timeout: float | None, error: type[Exception]) -> float:
        wait = self._budget.cap(timeout)
        if wait <= 0:
            raise error("the fetch's deadline (FETCH_DEADLINE) has passed")
        return wait

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._wait(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._wait(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        wait = self._wait(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(self._stream.start_tls(ssl_context, server_hostname, wait), self._budget)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


class PinnedBackend(httpcore.SyncBackend):
    """Connects only to vetted addresses (module rules)."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self._pins: dict[tuple[str, int], list[str] | None] = {}

    def pin(self, url: str, addresses: list[str] | None) -> None:
        self._pins[origin(url)] = addresses

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options=None) -> httpcore.NetworkStream:
        key = (host, port)
        if key not in self._pins:
            raise httpcore.ConnectError(f"{host}:{port} was not vetted by netguard")
        addresses = self._pins[key] or [host]             # None: the check was lifted, connect by name
        error: Exception = httpcore.ConnectError(f"{host}:{port}: no address")
        for address in addresses:
            wait = self.budget.cap(timeout)
            if wait <= 0:
                raise httpcore.ConnectTimeout("the fetch's deadline (FETCH_DEADLINE) has passed")
            try:
                stream = super().connect_tcp(address, port, wait, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
                continue
            return _BoundedStream(stream, self.budget)
        raise error


class PinnedTransport(httpx.HTTPTransport):
    """httpx's transport over a connection pool whose network backend is `backend`."""

    def __init__(self, backend: PinnedBackend):
        super().__init__(trust_env=False)
        ssl_context = httpx.create_ssl_context(trust_env=False)
        self._pool = httpcore.ConnectionPool(ssl_context=ssl_context, network_backend=backend)


def client(budget: Budget, timeout: float, headers: dict) -> tuple[httpx.Client, PinnedBackend]:
    """An httpx client (no redirects followed, no environment proxies) and its pinning backend."""
    backend = PinnedBackend(budget)
    return httpx.Client(transport=PinnedTransport(backend), timeout=timeout, follow_redirects=False,
                        headers=headers, trust_env=False), backend
