"""fetch: load a cited page and say whether the page itself settles the citation.

Rules:
- Backend: Crawlbase (`fetch.crawlbase`, the crawlbase SDK) when CRAWLBASE_TOKEN is set, else a
  direct httpx fetch (`fetch.direct`). Both return the same FetchResult, cached whole under
  `fetch.crawlbase` / `fetch.direct` with the URL and options as the request: never a token, never a
  storage URL (it embeds the token).
- A URL that is not http(s) with a host -> unreachable / invalid_url; a `.pdf` URL -> not_found /
  pdf_unsupported. Neither is crawled.
- The page rules (4xx, homepage redirects, soft 404s, thin and empty pages) are `fetch.pages`.
- A transient failure (crawl_failed, dns_failure, blocked_address: see citecheck.vocabulary) is
  returned but NOT cached: a passing outage must not become a permanent verdict, so a live run tries
  again (offline, it is a cache miss).
"""
from __future__ import annotations

import time
from typing import Callable
from urllib.parse import urlsplit

from ..context import RunContext
from ..vocabulary import NOT_FOUND
from . import crawlbase, direct
from .crawlbase import CrawlbaseRejected
from .pages import FetchResult, Uncached, failed, is_soft_404, non_space, settle

__all__ = ["FetchResult", "CrawlbaseRejected", "backend", "fetch", "is_soft_404", "non_space", "settle"]


def backend(ctx: RunContext) -> str:
    """'crawlbase' when CRAWLBASE_TOKEN is set, else 'direct'."""
    return crawlbase.NAME if ctx.settings.secrets.has("CRAWLBASE_TOKEN") else direct.NAME


def _valid(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port                            # raises ValueError on a non-numeric port
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:                        # e.g. an unclosed [IPv6 or a non-numeric port
        return False


def fetch(url: str, ctx: RunContext, *, sleep: Callable[[float], None] = time.sleep) -> FetchResult:
    """Crawlbase when CRAWLBASE_TOKEN is set, else direct; cached in ctx.cache (module rules).

    `sleep` waits between retries (tests pass a no-op).
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError("url must be a non-empty string")
    url = url.strip()
    chosen, settings = backend(ctx), ctx.settings
    if not _valid(url):
        return failed(url, None, None, chosen, "invalid_url")
    if urlsplit(url).path.lower().endswith(".pdf"):
        return failed(url, None, None, chosen, "pdf_unsupported", NOT_FOUND)
    if chosen == crawlbase.NAME:
        request = crawlbase.cache_request(url, settings)
        def compute():
            return crawlbase.fetch_crawlbase(url, settings, sleep).to_dict(), None, crawlbase.ANSWERED_BY
    else:
        request = direct.cache_request(url)
        def compute():
            return direct.fetch_direct(url, settings, sleep).to_dict(), None, direct.answered_by()
    try:
        answer = ctx.cache.call(
            f"fetch.{chosen}", chosen, request, compute,
            how_to_run_live="let it reach the page (set CRAWLBASE_TOKEN to crawl through Crawlbase)")
    except Uncached as exc:
        return exc.result
    return FetchResult.from_dict(answer)
