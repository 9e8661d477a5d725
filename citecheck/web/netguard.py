"""netguard: refuse a URL the direct fetcher must not reach (SSRF guard).

Rules:
- Only http and https, with a host. Anything else (file:, ftp:, gopher:, data:, no host) is refused.
- The host is resolved (getaddrinfo) and *every* address must be public: loopback, private
  (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), cloud metadata
  (169.254.169.254, fd00:ec2::254), unspecified, multicast, reserved and any other non-global
  address refuse the URL. An IPv4 address embedded in IPv6 (::ffff:a.b.c.d, 6to4, Teredo, NAT64) is
  judged as that IPv4 address.
- The fetcher calls `vet` before the first request and again on every redirect hop, so a public
  page cannot bounce the fetch into the private network, and connects to the addresses `vet` returned
  (never resolving the name a second time: a DNS answer that changes between the check and the
  connection, DNS rebinding, cannot reach a private address; see `fetch.transport`).
- `allow_private` (CITECHECK_ALLOW_PRIVATE=1) lifts the address check (the fixture site and tests run
  on 127.0.0.1); `allowed` (CITECHECK_ALLOW_HOSTS="host:port,...", parsed by config) lifts it for
  those exact origins only (the dry run allows the fixture site this way). Neither lifts the scheme check.

The resolver is module-level (`resolver`) so tests can swap in a fake DNS.

Offline said once: `vet` counts the name lookups this process made (`lookups`): answered (addresses, or a
DNS answer that the name does not exist: the resolver was reached) or not (no DNS server answered). A run
that read the count at its start (`tell_if_offline`) says in one line when none of its lookups was
answered: this machine looks offline (its rows stay unreachable / dns_failure, a transient reason: never
cached).
"""
from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from typing import Callable, Iterable
from urllib.parse import urlsplit

ALLOWED_SCHEMES = ("http", "https")
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",   # AWS, GCP, Azure, OpenStack
    "fd00:ec2::254",     # AWS over IPv6
    "100.100.100.200",   # Alibaba Cloud
))
NAT64 = ipaddress.ip_network("64:ff9b::/96")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedURL(ValueError):
    """The URL is refused; `reason` is a short machine-readable word, the message says why."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason, self.detail = reason, detail
        super().__init__(f"blocked ({reason})" + (f": {detail}" if detail else ""))


def _system_resolver(host: str, port: int) -> list[str]:
    """Every address getaddrinfo gives for host:port (both families)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


resolver: Callable[[str, int], Iterable[str]] = _system_resolver
"""Swap in tests for a fake DNS: (host, port) -> addresses as strings."""


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def why_refused(address: Address) -> str | None:
    """Why this address is off-limits ('loopback', 'private', ...), or None when it is public."""
    if address in METADATA_ADDRESSES:
        return "metadata"
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return why_refused(embedded)
        if address.scope_id:
            return "link_local"
    for word, test in (("unspecified", address.is_unspecified), ("loopback", address.is_loopback),
                       ("link_local", address.is_link_local), ("multicast", address.is_multicast),
                       ("reserved", address.is_reserved), ("private", address.is_private)):
        if test:
            return word
    if not address.is_global:
        return "not_global"
    return None


def check_url(url: str, *, allow_private: bool = False,
              allowed: frozenset[tuple[str, int]] = frozenset()) -> None:
    """Raise BlockedURL unless `url` is http(s) and every address its host resolves to is public
    (or the check is lifted: `allow_private`, or the URL's (host, port) is in `allowed`)."""
    vet(url, allow_private=allow_private, allowed=allowed)


def vet(url: str, *, allow_private: bool = False,
        allowed: frozenset[tuple[str, int]] = frozenset()) -> list[str] | None:
    """`check_url`, returning the vetted addresses (the ones to connect to), or None when the address
    check was lifted (the fetcher then connects by name)."""
    if not isinstance(url, str):
        raise BlockedURL("bad_url", "not a string")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise BlockedURL("bad_url", str(exc)) from None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise BlockedURL("scheme", f"only http and https are fetched, not {scheme or 'no scheme'!r}")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise BlockedURL("bad_url", "no host")
    port = port if port is not None else (443 if scheme == "https" else 80)
    if allow_private or (host.lower(), port) in allowed:
        return None
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        try:
            addresses = [ipaddress.ip_address(a.split("%")[0]) for a in resolver(host, port)]
        except (OSError, UnicodeError) as exc:
            _count(answered=isinstance(exc, socket.gaierror) and exc.errno in NO_SUCH_NAME)
            raise BlockedURL("dns", f"{host} does not resolve ({exc.__class__.__name__})") from None
        _count(answered=True)
        if not addresses:
            raise BlockedURL("dns", f"{host} does not resolve")
    for address in addresses:
        why = why_refused(address)
        if why is not None:
            via = "" if literal is not None else f" resolves to {address}, which"
            raise BlockedURL(why, f"{host}{via} is a {why.replace('_', '-')} address, not fetched "
                                  "(CITECHECK_ALLOW_PRIVATE=1 allows it)")
    return list(dict.fromkeys(str(address) for address in addresses))


NO_SUCH_NAME = frozenset(getattr(socket, name) for name in ("EAI_NONAME", "EAI_NODATA") if hasattr(socket, name))
"""getaddrinfo errors that are a DNS server's answer (no such name), not its silence (EAI_AGAIN: offline)."""
_lookups = [0, 0]                   # answered, unanswered: vet's name lookups in this process
_counting = threading.Lock()


def _count(*, answered: bool) -> None:
    with _counting:
        _lookups[0 if answered else 1] += 1


def lookups() -> tuple[int, int]:
    """(answered, unanswered): the name lookups `vet` made in this process so far."""
    with _counting:
        return _lookups[0], _lookups[1]


def tell_if_offline(command: str, before: tuple[int, int]) -> str | None:
    """Print (stderr) and return one line when no name lookup since `before` (a `lookups()` taken at the
    run's start) was answered; None when one was, or none was made (pages from the cache, the fixture site,
    a cluster's workers: their lookups are theirs)."""
    answered, unanswered = (now - then for now, then in zip(lookups(), before))
    if answered or not unanswered:
        return None
    line = (f"citecheck {command}: no DNS server answered in this run ({unanswered} host name "
            f"lookup{'s' * (unanswered != 1)}): this machine looks offline. Those citations are unreachable "
            "(dns_failure) and not cached; run again once it is online")
    print(line, file=sys.stderr)
    return line
