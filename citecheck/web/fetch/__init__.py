"""fetch: load a cited page and say whether the page itself settles the citation.

Rules:
- Backend: Crawlbase (`fetch.crawlbase`, the crawlbase SDK) when CRAWLBASE_TOKEN is set, else a
  direct httpx fetch (`fetch.direct`, over the run's one connection pool). Both return the same
  FetchResult, cached whole under `fetch.crawlbase` / `fetch.direct` with the URL and options as the
  request: never a token, never a storage URL (it embeds the token).
- A URL that is not http(s) with a host, or that is not text (a lone surrogate) -> unreachable /
  invalid_url, not fetched. A `.pdf` URL is downloaded directly whatever the backend and read by
  `fetch.pdf` (cached under `fetch.pdf`): the Crawling API does not return a PDF's text.
- The page rules (refusals, 4xx, homepage redirects, soft 404s, thin and empty pages) are `fetch.pages`.
- Each fetch ends within FETCH_DEADLINE seconds (`fetch.deadline`), its robots.txt read included.
- Politeness (`citecheck.web.robots`, `fetch.hosts`): a page fetched live (the cache's compute, either
  backend, a PDF too) is first checked against its origin's robots.txt, read directly under the same
  deadline unless CITECHECK_IGNORE_ROBOTS is set; disallowed -> unreachable / robots_disallowed (a
  robots.txt that could not be read: robots_unreachable, transient), not fetched, not judged, and not
  recorded in the page cache (the run's `robots.Robots` keeps the decision
  ROBOTS_MAX_AGE), so a changed robots.txt or CITECHECK_IGNORE_ROBOTS=1 takes effect. A replayed page
  stands as recorded: replay never reads robots.txt. Every request holds a slot of the run's host limit.
  Through Crawlbase, a robots.txt this machine may not reach (netguard: no DNS answer here, a private
  address) is not ours to read: Crawlbase is asked.
- A transient result (crawl_failed, rate_limited, bot_challenge, dns_failure, blocked_address, …: see
  citecheck.vocabulary) is returned but NOT cached: a passing outage must not become a permanent
  verdict, so a live run tries again (offline, it is a cache miss).
- Any other exception a backend raises is a labelled row (unreachable / fetch_error, logged with its
  type), never a traceback; only the operator's problems propagate: a missing or rejected setting
  (MissingSetting, CrawlbaseRejected) and the cache's own errors; so does the caller's Cancelled.
"""
from __future__ import annotations

import logging
import time
from typing import Callable
from urllib.parse import urlsplit

from ... import cancellation, config
from ...context import RunContext
from ...vocabulary import FETCH_ERROR, INVALID_URL, ROBOTS_DISALLOWED, ROBOTS_UNREACHABLE, is_transient
from .. import netguard, robots
from . import crawlbase, direct, pdf
from .crawlbase import CrawlbaseRejected
from .deadline import Budget
from .hosts import HostLimit, Slots
from .pages import FetchResult, Uncached, failed, is_soft_404, non_space, settle

__all__ = ["FetchResult", "CrawlbaseRejected", "backend", "fetch", "is_soft_404", "non_space", "settle"]

log = logging.getLogger("citecheck.web.fetch")


def backend(ctx: RunContext) -> str:
    """'crawlbase' when CRAWLBASE_TOKEN is set, else 'direct'."""
    return crawlbase.NAME if ctx.settings.secrets.has("CRAWLBASE_TOKEN") else direct.NAME


def _valid(url: str) -> bool:
    try:
        url.encode("utf-8")                   # a lone surrogate is not text
        parts = urlsplit(url)
        parts.port                            # raises ValueError on a non-numeric port
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except (ValueError, UnicodeError):        # e.g. an unclosed [IPv6 or a non-numeric port
        return False


def _labelled(url: str, name: str, answered_by: Callable[[], str], compute: Callable[[], FetchResult]):
    """The cache's compute(): a transient result is raised (Uncached: returned, not recorded), and any
    unexpected exception becomes unreachable / fetch_error (module rules)."""
    def run():
        try:
            result = compute()
        except (Uncached, config.MissingSetting, CrawlbaseRejected, cancellation.Cancelled):
            raise
        except Exception as exc:          # noqa: BLE001 - the outside world must not become a traceback
            log.warning("%s", config.redact(f"{url}: fetch failed: {type(exc).__name__}: {exc}"))
            raise Uncached(failed(url, None, None, name, FETCH_ERROR, detail=type(exc).__name__)) from None
        if is_transient(result.reason):
            raise Uncached(result)
        return result.to_dict(), None, answered_by()
    return run


def fetch(url: str, ctx: RunContext, *, sleep: Callable[[float], None] = time.sleep) -> FetchResult:
    """Crawlbase when CRAWLBASE_TOKEN is set, else direct (a PDF: always direct); cached in ctx.cache.

    `sleep` waits between retries (tests pass a no-op).
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError("url must be a non-empty string")
    url = url.strip()
    chosen, settings = backend(ctx), ctx.settings
    if not _valid(url):
        return failed(url, None, None, chosen, INVALID_URL)
    if pdf.is_pdf_url(url):
        function, name, answered_by = pdf.FUNCTION, direct.NAME, pdf.answered_by
        request = pdf.cache_request(url, settings)
    elif chosen == crawlbase.NAME:
        function, name, answered_by = f"fetch.{chosen}", chosen, lambda: crawlbase.ANSWERED_BY
        request = crawlbase.cache_request(url, settings)
    else:
        function, name, answered_by = f"fetch.{chosen}", chosen, direct.answered_by
        request = direct.cache_request(url)
    limit = host_limit(ctx)

    def run() -> FetchResult:
        budget = Budget(settings.fetch_deadline)
        refused = robots_refusal(url, ctx, budget, name)
        if refused is not None:
            raise Uncached(refused)
        if name == crawlbase.NAME:
            return crawlbase.fetch_crawlbase(url, settings, sleep, limit, budget)
        return direct.fetch_direct(url, settings, sleep, direct.connections(ctx), limit, budget)
    try:
        answer = ctx.cache.call(
            function, name, request, _labelled(url, name, answered_by, run),
            how_to_run_live="let it reach the page (set CRAWLBASE_TOKEN to crawl through Crawlbase)")
    except Uncached as exc:
        return exc.result
    return FetchResult.from_dict(answer)


HOST_LIMIT = "hosts"
"""The name of the run's host limit among its clients (a cluster worker puts its cluster-wide one there)."""


def host_limit(ctx: RunContext) -> Slots:
    """The run's per-host limit (HOST_CONCURRENCY, HOST_RATE), shared by every thread using `ctx`."""
    settings = ctx.settings
    return ctx.client((HOST_LIMIT, settings.host_concurrency, settings.host_rate),
                      lambda: HostLimit(settings.host_concurrency, settings.host_rate))


def robots_refusal(url: str, ctx: RunContext, budget: Budget, name: str) -> FetchResult | None:
    """unreachable / robots_disallowed when `url`'s robots.txt keeps us out (module rules), else None.
    A robots.txt the guard refuses (a host that does not resolve here, a private address): fetched
    directly, the page would be refused the same way, so that is its row (dns_failure, blocked_address,
    ...); through Crawlbase, which reaches what this machine may not, Crawlbase is asked."""
    settings = ctx.settings
    if settings.ignore_robots:
        return None
    kept = ctx.client(("robots", settings.robots_max_age), lambda: robots.Robots(settings.robots_max_age))

    def read(robots_url: str) -> robots.RobotsFile:
        return direct.get_robots(robots_url, settings, direct.connections(ctx), host_limit(ctx), budget)
    try:
        verdict = kept.verdict(url, read, budget.remaining())
    except netguard.BlockedURL as exc:
        return None if name == crawlbase.NAME else direct.blocked(url, exc)
    if verdict.allowed:
        return None
    return failed(url, None, None, name, ROBOTS_DISALLOWED if verdict.read else ROBOTS_UNREACHABLE,
                  detail=verdict.detail)
