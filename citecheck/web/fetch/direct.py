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
    TOO_MANY_REDIRECTS,
    UNSUPPORTED_CONTENT,
    http_reason,
)
from .. import netguard
from . import inflate, pdf
from .deadline import Budget
from .html_text import TooComplex, decode, extract
from .pages import THIN_CHARS, FetchResult, Uncached, failed, final, retrying, settled
from .refusals import refusal

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "citecheck/0.1 (citation checker; +https://github.com/citecheck)"
NAME = "direct"
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
HTML_TYPES = frozenset({"", "text/html", "application/xhtml+xml"})
_GUARD_REASONS = {"dns": DNS_FAILURE, "bad_url": INVALID_URL, "scheme": INVALID_URL}


class _Transient:
    """A retryable failure of one direct attempt; `reason` is its label when the retries run out."""

    def __init__(self, final_url: str, status: int | None, reason: str = CRAWL_FAILED):
        self.final_url, self.status, self.reason = final_url, status, reason


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
          charset: str | None) -> FetchResult | _Transient:
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
        return _Transient(current, status, said or CRAWL_FAILED)
    if 300 <= status < 400:
        return failed(url, current, status, NAME, http_reason(status))
    if markdown is None and status < 400:
        return failed(url, current, status, NAME, UNSUPPORTED_CONTENT)
    return final(settled(url, current, status, markdown or "", None, NAME, markup))


def _attempt(url: str, client, backend, settings: Settings) -> FetchResult | _Transient:
    """One attempt: follow up to MAX_REDIRECTS hops by hand, each vetted (and pinned) first."""
    import httpx
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        addresses = netguard.vet(current, allow_private=settings.allow_private, allowed=settings.allow_hosts)
        try:
            backend.pin(current, addresses)
            with client.stream("GET", current) as response:
                status, location = response.status_code, response.headers.get("location")
                if status in REDIRECT_STATUSES and location:
                    current = urljoin(current, location)
                    continue
                body = _body(url, current, response, settings)
        except httpx.InvalidURL:
            return failed(url, current, None, NAME, INVALID_URL)
        except httpx.RequestError:            # timeouts (the deadline's too), refused / reset connections
            return _Transient(current, None)
        except inflate.BadEncoding:           # corrupt or cut short: what a broken connection leaves
            return _Transient(current, status)
        return body if isinstance(body, FetchResult) else _page(url, current, settings.extract_max_seconds,
                                                                status, *body)
    return failed(url, current, None, NAME, TOO_MANY_REDIRECTS)


def connections(ctx: RunContext):
    """The run's direct-fetch pool (`transport.Connections`) for its CITECHECK_ALLOW_* rules and
    FETCH_TIMEOUT: one TLS context, kept-alive connections (opened on first use, closed with the run)."""
    from . import transport
    settings = ctx.settings
    return ctx.client(("fetch", NAME, settings.allow_private, settings.allow_hosts, settings.fetch_timeout),
                      lambda: transport.Connections(settings.fetch_timeout, {"User-Agent": USER_AGENT}))


def fetch_direct(url: str, settings: Settings, sleep: Callable[[float], None], pool) -> FetchResult:
    """One page, fetched directly over the run's `pool` (`connections`; module rules); transient failures
    raise Uncached."""
    budget = Budget(settings.fetch_deadline)
    client = pool.client()
    try:
        with pool.backend.fetching(budget):
            outcome = retrying(lambda: _attempt(url, client, pool.backend, settings),
                               lambda o: isinstance(o, _Transient), sleep, budget)
    except netguard.BlockedURL as exc:
        reason = _GUARD_REASONS.get(exc.reason, BLOCKED_ADDRESS)
        raise Uncached(failed(url, None, None, NAME, reason)) from None
    if isinstance(outcome, _Transient):
        raise Uncached(failed(url, outcome.final_url, outcome.status, NAME, outcome.reason))
    return outcome


def cache_request(url: str) -> dict:
    """What the direct fetch's cache key covers (unchanged since the first recording)."""
    return {"url": url, "extractor": "trafilatura markdown", "thin_chars": THIN_CHARS}


def answered_by() -> str:
    import trafilatura
    return f"httpx+trafilatura {trafilatura.__version__}"
