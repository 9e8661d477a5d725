"""The direct backend: httpx + trafilatura, every hop vetted by netguard and connected to the vetted address.

Rules:
- http(s) only; every hop is vetted by `netguard.vet` before it is requested (a refused address ->
  unreachable / blocked_address; a host that does not resolve -> dns_failure) and the connection goes
  to the address vetted, never to a second DNS answer (`fetch.transport`); at most MAX_REDIRECTS hops.
- Bounded: FETCH_TIMEOUT seconds per connect / read, FETCH_DEADLINE seconds in all (connect, every
  read, every retry and redirect: `fetch.deadline`); decoded bytes beyond FETCH_MAX_BYTES dropped, counted
  as they inflate (`fetch.inflate`: a compressed bomb stops at the cap); a PDF: PDF_MAX_BYTES, and over
  it the PDF is refused, not cut. A Content-Encoding it cannot undo -> not_found / unsupported_content;
  a body its encoding cannot read -> crawl_failed (retried, uncached).
- A PDF (application/pdf, or a body starting %PDF-) is read by `fetch.pdf`; a content type that is
  neither HTML, text nor PDF -> not_found / unsupported_content; the page rules (`pages.settled`:
  refusals, 4xx, homepage redirects, soft 404s) decide the rest, with the raw HTML for the markup signs.
- Readable text: `fetch.html_text.extract` (a child process, EXTRACT_MAX_SECONDS; past it or over its
  memory cap: not_found / page_too_complex, uncached). Timeouts, connection errors, 429 and 5xx are retried, then
  crawl_failed (429: rate_limited; a 5xx that is a robot check: bot_challenge) — transient, uncached.
"""
from __future__ import annotations

import contextlib
import email.utils
import time
from typing import Callable
from urllib.parse import urljoin

from ...config import Settings
from ...context import RunContext
from ...vocabulary import (
    BLOCKED_ADDRESS,
    CRAWL_FAILED,
    DNS_FAILURE,
    INVALID_URL,
    PAGE_TOO_COMPLEX,
    RATE_LIMITED,
    TOO_MANY_REDIRECTS,
    UNSUPPORTED_CONTENT,
    http_reason,
)
from .. import netguard, robots
from ..robots import USER_AGENT
from . import inflate, pdf
from .deadline import Budget
from .hosts import HostBusy, Slots
from .html_text import TooComplex, decode, extract
from .pages import THIN_CHARS, FetchResult, Uncached, failed, final, retrying, settled
from .refusals import refusal

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ASKS_TO_WAIT = frozenset({429, 503})
"""Answers whose Retry-After is honoured: waited for, then one more attempt, when the deadline leaves time."""
NAME = "direct"
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
HTML_TYPES = frozenset({"", "text/html", "application/xhtml+xml"})
_GUARD_REASONS = {"dns": DNS_FAILURE, "bad_url": INVALID_URL, "scheme": INVALID_URL}


class _Transient:
    """A retryable failure of one direct attempt; `reason` is its label when the retries run out."""

    def __init__(self, final_url: str, status: int | None, reason: str = CRAWL_FAILED,
                 retry_after: float | None = None):
        self.final_url, self.status, self.reason = final_url, status, reason
        self.retry_after = retry_after


def retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a Retry-After header asks for (delta-seconds or an HTTP date; past: 0), None if unreadable."""
    value = (value or "").strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now()) if when.tzinfo is not None else None


def _declared_length(response) -> int | None:
    value = response.headers.get("content-length", "")
    return int(value) if value.isdigit() else None


def _body(url: str, current: str, response, settings: Settings):
    """Read one non-redirect answer: a FetchResult (a PDF, or too large) or (kind, raw bytes, charset)."""
    status = response.status_code
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    may_be_pdf = kind in pdf.TYPES or kind == "application/octet-stream" or pdf.is_pdf_url(current)
    cap = max(settings.fetch_max_bytes, settings.pdf.max_bytes) if may_be_pdf else settings.fetch_max_bytes
    if kind in pdf.TYPES and (_declared_length(response) or 0) > settings.pdf.max_bytes:
        return pdf.too_large(url, current, status, NAME,
                             f"Content-Length {_declared_length(response):,} bytes, "
                             f"over PDF_MAX_BYTES ({settings.pdf.max_bytes:,})")
    try:
        raw, more = inflate.read_capped(response.iter_raw(), response.headers.get("content-encoding"), cap)
    except inflate.UnknownEncoding as exc:
        return failed(url, current, status, NAME, UNSUPPORTED_CONTENT, detail=str(exc))
    if status < 300 and pdf.is_pdf(kind, raw[:1024]):
        if more or len(raw) > settings.pdf.max_bytes:
            return pdf.too_large(url, current, status, NAME,
                                 f"over PDF_MAX_BYTES ({settings.pdf.max_bytes:,})")
        return pdf.read(url, current, status, raw, settings, NAME)
    return kind, raw[:settings.fetch_max_bytes], response.charset_encoding


def _page(url: str, current: str, seconds: float, status: int, kind: str, raw: bytes,
          charset: str | None, wait: float | None = None) -> FetchResult | _Transient:
    """An answer's text (extracted within `seconds`) and what it says about the citation (module rules)."""
    markup = markdown = None
    if kind in HTML_TYPES:
        markup = decode(raw, charset)
        try:
            markdown = extract(markup, current, seconds)
        except TooComplex as exc:
            return failed(url, current, status, NAME, PAGE_TOO_COMPLEX, detail=str(exc))
    elif kind in TEXT_TYPES:
        markdown = decode(raw, charset).strip()
    if status == 429 or status >= 500:
        said = refusal(url, current, status, markdown or "", markup)
        wait = wait if status in ASKS_TO_WAIT else None
        return _Transient(current, status, said or (RATE_LIMITED if wait is not None else CRAWL_FAILED), wait)
    if 300 <= status < 400:
        return failed(url, current, status, NAME, http_reason(status))
    if markdown is None and status < 400:
        return failed(url, current, status, NAME, UNSUPPORTED_CONTENT)
    return final(settled(url, current, status, markdown or "", None, NAME, markup))


def _follow(url: str, client, backend, settings: Settings, limit: Slots | None, budget: Budget,
            read: Callable, hops: int = MAX_REDIRECTS, at: list | None = None):
    """Request `url`, following up to `hops` redirects by hand, each vetted (and pinned) first and sent
    in a slot of its origin (`hosts`); `read(current, response)` reads the final answer, or returns None
    after the hops (httpx errors and netguard.BlockedURL propagate). `at[0]`: the hop being requested."""
    current, at = url, at if at is not None else [url]
    for _hop in range(hops + 1):
        at[0] = current
        addresses = netguard.vet(current, allow_private=settings.allow_private, allowed=settings.allow_hosts)
        backend.pin(current, addresses)
        with limit.slot(current, budget) if limit else contextlib.nullcontext():
            with client.stream("GET", current) as response:
                status, location = response.status_code, response.headers.get("location")
                if status in REDIRECT_STATUSES and location:
                    current = urljoin(current, location)
                    continue
                return read(current, response)
    return None


def _attempt(url: str, client, backend, settings: Settings, limit: Slots | None = None,
             budget: Budget | None = None) -> FetchResult | _Transient:
    """One attempt: follow up to MAX_REDIRECTS hops by hand, each vetted (and pinned) first."""
    import httpx
    last = [url, None]

    def read(current: str, response):
        last[:] = [current, response.status_code]
        body = _body(url, current, response, settings)
        if isinstance(body, FetchResult):
            return body
        return _page(url, current, settings.extract_max_seconds, response.status_code, *body,
                     wait=retry_after(response.headers.get("retry-after")))
    try:
        outcome = _follow(url, client, backend, settings, limit, budget or Budget(settings.fetch_deadline),
                          read, at=last)
    except httpx.InvalidURL:
        return failed(url, last[0], None, NAME, INVALID_URL)
    except httpx.RequestError:            # timeouts (the deadline's too), refused / reset connections
        return _Transient(last[0], None)
    except inflate.BadEncoding:           # corrupt or cut short: what a broken connection leaves
        return _Transient(*last)
    except HostBusy as exc:               # no slot of the host's limit before the deadline: not retried
        return _Transient(last[0], None, RATE_LIMITED if exc.deferred else CRAWL_FAILED, exc.seconds)
    return failed(url, last[0], None, NAME, TOO_MANY_REDIRECTS) if outcome is None else outcome


def connections(ctx: RunContext):
    """The run's direct-fetch pool (`transport.Connections`) for its CITECHECK_ALLOW_* rules and
    FETCH_TIMEOUT: one TLS context, kept-alive connections (opened on first use, closed with the run)."""
    from . import transport
    settings = ctx.settings
    return ctx.client(("fetch", NAME, settings.allow_private, settings.allow_hosts, settings.fetch_timeout),
                      lambda: transport.Connections(settings.fetch_timeout, {"User-Agent": USER_AGENT}))


def fetch_direct(url: str, settings: Settings, sleep: Callable[[float], None], pool,
                 limit: Slots | None = None, budget: Budget | None = None) -> FetchResult:
    """One page, fetched directly over the run's `pool` (`connections`; module rules) in `limit`'s slots,
    within `budget` (default: FETCH_DEADLINE from now); transient failures raise Uncached. A Retry-After
    (429, 503) is waited for and tried once more when the deadline leaves time, else rate_limited."""
    budget = budget or Budget(settings.fetch_deadline)
    client = pool.client()

    def asked(outcome) -> float | None:
        if isinstance(outcome, _Transient) and outcome.retry_after is not None:
            if limit is not None and outcome.status in ASKS_TO_WAIT:      # the origin asked, not our limit
                limit.defer(outcome.final_url, outcome.retry_after)
            return outcome.retry_after
        return None
    try:
        with pool.backend.fetching(budget):
            outcome = retrying(lambda: _attempt(url, client, pool.backend, settings, limit, budget),
                               lambda o: isinstance(o, _Transient), sleep, budget, asked)
    except netguard.BlockedURL as exc:
        raise Uncached(blocked(url, exc)) from None
    if isinstance(outcome, _Transient):
        raise Uncached(failed(url, outcome.final_url, outcome.status, NAME, outcome.reason))
    return outcome


def blocked(url: str, exc: netguard.BlockedURL) -> FetchResult:
    """The row of a URL the guard refused (dns_failure, invalid_url, blocked_address)."""
    return failed(url, None, None, NAME, _GUARD_REASONS.get(exc.reason, BLOCKED_ADDRESS))


def get_robots(url: str, settings: Settings, pool, limit: Slots | None,
               budget: Budget) -> robots.RobotsFile:
    """`url`'s robots.txt read over the run's `pool` within `budget` (`robots` rules): the first
    MAX_BYTES, robots.MAX_REDIRECTS hops; the guard's refusal (netguard.BlockedURL) propagates."""
    import httpx
    client = pool.client()

    def read(current: str, response) -> robots.RobotsFile:
        raw, _more = inflate.read_capped(response.iter_raw(), response.headers.get("content-encoding"),
                                         robots.MAX_BYTES + 1)
        return robots.of_answer(response.status_code, raw)
    try:
        with pool.backend.fetching(budget):
            answer = _follow(url, client, pool.backend, settings, limit, budget, read, robots.MAX_REDIRECTS)
    except (httpx.InvalidURL, inflate.UnknownEncoding) as exc:
        return robots.unavailable(type(exc).__name__)
    except (httpx.RequestError, inflate.BadEncoding, HostBusy) as exc:
        return robots.unreachable(type(exc).__name__)
    return answer or robots.unavailable(f"more than {robots.MAX_REDIRECTS} redirects")


def cache_request(url: str) -> dict:
    """What the direct fetch's cache key covers (unchanged since the first recording)."""
    return {"url": url, "extractor": "trafilatura markdown", "thin_chars": THIN_CHARS}


def answered_by() -> str:
    import trafilatura
    return f"httpx+trafilatura {trafilatura.__version__}"
