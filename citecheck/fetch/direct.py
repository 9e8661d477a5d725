"""The direct backend: httpx + trafilatura, every hop checked by netguard.

Rules:
- http(s) only; every hop is checked by `netguard.check_url` before it is requested (a refused
  address -> unreachable / blocked_address; a host that does not resolve -> dns_failure); at most
  MAX_REDIRECTS hops, `fetch_timeout` seconds per request, bytes beyond `fetch_max_bytes` dropped.
- A PDF -> not_found / pdf_unsupported; a content type that is neither HTML nor text ->
  not_found / unsupported_content; any other 3xx/4xx -> the page rules (`pages.settle`).
- Readable text is trafilatura's main-content Markdown; a thin answer falls back to the page's
  visible text. Timeouts, connection errors, 429 and 5xx are retried, then crawl_failed (uncached).
"""
from __future__ import annotations

import re
from typing import Callable
from urllib.parse import urljoin

from .. import netguard
from ..config import Settings
from ..vocabulary import NOT_FOUND, http_reason
from .pages import THIN_CHARS, FetchResult, Uncached, failed, final, non_space, retrying, settled

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "citecheck/0.1 (citation checker; +https://github.com/citecheck)"
NAME = "direct"

_BLOCK_TAGS = frozenset("p div section article header footer nav main aside li ul ol dl dt dd table tr "
                        "blockquote pre form figure figcaption h1 h2 h3 h4 h5 h6 br hr".split())


def visible_text(html: str) -> str:
    """The whole page's visible text (no head, script, style, noscript), one block per paragraph."""
    import lxml.html
    from lxml.etree import ParserError
    try:
        tree = lxml.html.fromstring(html)
    except (ParserError, ValueError):
        return ""
    for element in tree.xpath("//head|//script|//style|//noscript|//template"):
        element.drop_tree()
    for element in tree.iter():
        if isinstance(element.tag, str) and element.tag.lower() in _BLOCK_TAGS:
            element.text = "\n\n" + (element.text or "")
            element.tail = "\n\n" + (element.tail or "")
    paragraphs = (" ".join(block.split()) for block in re.split(r"\n\s*\n", tree.text_content()))
    return "\n\n".join(p for p in paragraphs if p)


def readable_markdown(html: str, url: str | None = None) -> str:
    """trafilatura's main-content Markdown; under THIN_CHARS, the whole page's visible text instead."""
    import trafilatura
    markdown = trafilatura.extract(html, url=url, output_format="markdown", include_comments=False,
                                   include_tables=True) or ""
    if non_space(markdown) < THIN_CHARS:
        return visible_text(html)          # what is actually on the page (a <noscript> note is not)
    return markdown.strip()


class _Transient:
    """A retryable failure of one direct attempt (timeout, connection error, 429, 5xx)."""

    def __init__(self, final_url: str, status: int | None):
        self.final_url, self.status = final_url, status


def _decode(raw: bytes, charset: str | None) -> str:
    if charset:
        try:
            return raw.decode(charset, errors="replace")
        except LookupError:
            pass
    from trafilatura.utils import decode_file
    return decode_file(raw)


def _read_capped(response, max_bytes: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= max_bytes:
            break
    return b"".join(chunks)[:max_bytes]


def _attempt(url: str, client, settings: Settings) -> FetchResult | _Transient:
    """One attempt: follow up to MAX_REDIRECTS hops by hand, each checked by netguard first."""
    import httpx
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        netguard.check_url(current, allow_private=settings.allow_private, allowed=settings.allow_hosts)
        try:
            with client.stream("GET", current) as response:
                status = response.status_code
                location = response.headers.get("location")
                if status in REDIRECT_STATUSES and location:
                    current = urljoin(current, location)
                    continue
                if status == 429 or status >= 500:
                    return _Transient(current, status)
                if status >= 300:
                    return failed(url, current, status, NAME, http_reason(status))
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "application/pdf":
                    return failed(url, current, status, NAME, "pdf_unsupported", NOT_FOUND)
                raw = _read_capped(response, settings.fetch_max_bytes)
                charset = response.charset_encoding
        except httpx.InvalidURL:
            return failed(url, current, None, NAME, "invalid_url")
        except httpx.RequestError:            # timeouts, refused / reset connections, bad bodies
            return _Transient(current, None)
        text = _decode(raw, charset)
        if kind in ("text/plain", "text/markdown"):
            markdown = text.strip()
        elif kind in ("", "text/html", "application/xhtml+xml"):
            markdown = readable_markdown(text, current)
        else:
            return failed(url, current, status, NAME, "unsupported_content", NOT_FOUND)
        return final(settled(url, current, status, markdown, None, NAME))
    return failed(url, current, None, NAME, "too_many_redirects")


def fetch_direct(url: str, settings: Settings, sleep: Callable[[float], None]) -> FetchResult:
    """One page, fetched directly (module rules); transient failures raise Uncached."""
    import httpx
    try:
        with httpx.Client(timeout=settings.fetch_timeout, follow_redirects=False,
                          headers={"User-Agent": USER_AGENT}) as client:
            outcome = retrying(lambda: _attempt(url, client, settings), lambda o: isinstance(o, _Transient), sleep)
    except netguard.BlockedURL as exc:
        reason = {"dns": "dns_failure", "bad_url": "invalid_url", "scheme": "invalid_url"}.get(
            exc.reason, "blocked_address")
        raise Uncached(failed(url, None, None, NAME, reason)) from None
    if isinstance(outcome, _Transient):
        raise Uncached(failed(url, outcome.final_url, outcome.status, NAME))
    return outcome


def cache_request(url: str) -> dict:
    """What the direct fetch's cache key covers (unchanged since the first recording)."""
    return {"url": url, "extractor": "trafilatura markdown", "thin_chars": THIN_CHARS}


def answered_by() -> str:
    import trafilatura
    return f"httpx+trafilatura {trafilatura.__version__}"
