"""fetch: load a cited page and say whether the page itself settles the citation.

Rules:
- Backend: Crawlbase (the crawlbase SDK) when CRAWLBASE_TOKEN is set, else a direct httpx fetch.
  Both return the same FetchResult, cached whole in the cache under `fetch.crawlbase` / `fetch.direct`
  with the URL and options as the request: never a token, never a storage URL (it embeds the token).
- A URL that is not http(s) with a host -> unreachable / invalid_url; a `.pdf` URL -> not_found /
  pdf_unsupported. Neither is crawled.
- The origin answered 404 or 410 (any 4xx) -> unreachable / http_<status>.
- A deep link whose final path is `/` -> not_found / redirected_to_homepage.
- Readable text under 800 non-space characters that reads like "page not found" -> unreachable /
  soft_404. A long article that mentions 404 is not a soft 404.
- Readable text under 200 non-space characters is thin: Crawlbase fetches again without readability,
  the direct fetcher falls back to the whole page's text. Crawlbase escalates to JavaScript rendering
  (CRAWLBASE_JS_TOKEN, else javascript=true) when the crawl failed (HTTP 520), the origin answered an
  empty page (cb_status/pc_status 207) or the page is still thin, and interprets the answer again;
  the rendered answer replaces a thin page only if it says at least as much or settles the page.
- No text at all after that -> not_found / empty_page (an app shell whose text needs JavaScript).
  A short page that has text (a paywall teaser) keeps it: the judge will find nothing in it.
- Timeouts, connection errors, 429 and 5xx are retried with backoff (BACKOFF), then unreachable /
  crawl_failed. Such a result is returned but NOT cached: a transient outage must not become a
  permanent verdict, so a live run tries again (offline, it is a cache miss). blocked_address and
  dns_failure are not cached either: they depend on the machine and its settings, not on the page.
- Direct only: http(s) only, every hop checked by netguard.check_url before it is requested (a
  refused address -> unreachable / blocked_address), at most MAX_REDIRECTS hops, FETCH_TIMEOUT
  seconds per request, bytes beyond FETCH_MAX_BYTES dropped.
- Crawlbase rejecting the token (401/402/403) is an error naming the variable, not a page verdict.
"""
from __future__ import annotations

import http.client
import re
import time
from dataclasses import asdict, dataclass
from typing import Callable
from urllib.parse import parse_qs, urljoin, urlsplit

from . import config, netguard
from .cache import default_cache

THIN_CHARS = 200
"""Readable text with fewer non-space characters than this is thin (retry / fall back / escalate)."""
SOFT_404_CHARS = 800
"""Only pages shorter than this (non-space characters) can be a soft 404."""
BACKOFF = (1.0, 3.0)
"""Seconds to wait before each retry of a timeout / 429 / 5xx: two retries, three attempts in all."""
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
CRAWLBASE_OPTIONS = {"format": "md", "md_readability": "true", "store": "true"}
"""What every first Crawlbase call sends; the thin-page retry drops md_readability."""
USER_AGENT = "citecheck/0.1 (citation checker; +https://github.com/citecheck)"

_SOFT_404 = re.compile(
    r"\b404\b|\bnot\s+(?:be\s+)?found\b|\b(?:does\s+not|doesn[’']t|do\s+not|don[’']t)\s+exist\b"
    r"|\b(?:cannot|can[’']t|could\s+not|couldn[’']t)\s+(?:be\s+found|find)\b"
    r"|\bno\s+longer\s+(?:exists|available)\b|\bnothing\s+(?:was\s+)?found\b",
    re.IGNORECASE)


class CrawlbaseRejected(ValueError):
    """Crawlbase refused the token (401 / 402 / 403): a setting to fix, not a verdict on the page."""


@dataclass(frozen=True)
class FetchResult:
    url: str                      # as cited
    final_url: str | None         # after redirects
    original_status: int | None   # the origin's HTTP status
    markdown: str                 # readable text ('' when none)
    rid: str | None               # Crawlbase storage rid (never the storage URL)
    label: str | None             # 'unreachable' / 'not_found' only when the page settles it
    reason: str | None            # http_404 / http_410 / soft_404 / redirected_to_homepage / ...
    backend: str                  # 'crawlbase' or 'direct'

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "FetchResult":
        return cls(**data)


class _Uncached(Exception):
    """Carries a result out of the cache's compute() so that it is returned but not recorded."""

    def __init__(self, result: FetchResult):
        super().__init__(result.reason)
        self.result = result


# --- shared classification -------------------------------------------------------------------

def non_space(text: str) -> int:
    """Characters that are not whitespace: the measure of how much a page says."""
    return len("".join(text.split()))


def is_soft_404(text: str) -> bool:
    """A short page (under SOFT_404_CHARS) whose text reads like a 'page not found' template."""
    return non_space(text) < SOFT_404_CHARS and bool(_SOFT_404.search(text))


def _is_deep(url: str) -> bool:
    return urlsplit(url).path not in ("", "/")


def _lands_on_homepage(url: str, final_url: str | None) -> bool:
    """A deep link that ended on some site's root path."""
    return bool(final_url) and _is_deep(url) and urlsplit(final_url).path in ("", "/")


def classify(url: str, final_url: str | None, status: int | None, text: str) -> tuple[str | None, str | None]:
    """(label, reason) when the page settles the citation, else (None, None)."""
    if status is not None and 400 <= status < 500:
        return "unreachable", f"http_{status}"
    if _lands_on_homepage(url, final_url):
        return "not_found", "redirected_to_homepage"
    if is_soft_404(text):
        return "unreachable", "soft_404"
    return None, None


def _classified(url: str, final_url: str | None, status: int | None, markdown: str, rid: str | None,
                backend: str) -> FetchResult:
    label, reason = classify(url, final_url, status, markdown)
    return FetchResult(url, final_url, status, markdown, rid, label, reason, backend)


def _final(result: FetchResult) -> FetchResult:
    """The last word on a page: no label and no text at all -> not_found / empty_page."""
    if result.label is None and non_space(result.markdown) == 0:
        return FetchResult(**{**result.to_dict(), "label": "not_found", "reason": "empty_page"})
    return result


def _failed(url: str, final_url: str | None, status: int | None, backend: str, reason: str = "crawl_failed",
            label: str = "unreachable") -> FetchResult:
    return FetchResult(url, final_url, status, "", None, label, reason, backend)


def _retrying(attempt: Callable[[], object], is_transient: Callable[[object], bool],
              sleep: Callable[[float], None]):
    """Call `attempt` until it is not transient or BACKOFF runs out; returns the last outcome."""
    outcome = attempt()
    for delay in BACKOFF:
        if not is_transient(outcome):
            break
        sleep(delay)
        outcome = attempt()
    return outcome


# --- direct backend: httpx + trafilatura ----------------------------------------------------

_BLOCK_TAGS = frozenset("p div section article header footer nav main aside li ul ol dl dt dd table tr "
                        "blockquote pre form figure figcaption h1 h2 h3 h4 h5 h6 br hr".split())


def page_text(html: str) -> str:
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
        return page_text(html)          # what is actually on the page (a <noscript> note is not)
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


def _direct_attempt(url: str, client, max_bytes: int) -> FetchResult | _Transient:
    """One attempt: follow up to MAX_REDIRECTS hops by hand, each checked by netguard first."""
    import httpx
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        netguard.check_url(current)
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
                    return _failed(url, current, status, "direct", f"http_{status}")
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "application/pdf":
                    return _failed(url, current, status, "direct", "pdf_unsupported", "not_found")
                raw = _read_capped(response, max_bytes)
                charset = response.charset_encoding
        except httpx.InvalidURL:
            return _failed(url, current, None, "direct", "invalid_url")
        except httpx.RequestError:            # timeouts, refused / reset connections, bad bodies
            return _Transient(current, None)
        text = _decode(raw, charset)
        if kind in ("text/plain", "text/markdown"):
            markdown = text.strip()
        elif kind in ("", "text/html", "application/xhtml+xml"):
            markdown = readable_markdown(text, current)
        else:
            return _failed(url, current, status, "direct", "unsupported_content", "not_found")
        return _final(_classified(url, current, status, markdown, None, "direct"))
    return _failed(url, current, None, "direct", "too_many_redirects")


def _fetch_direct(url: str, sleep: Callable[[float], None]) -> FetchResult:
    import httpx
    timeout = config.positive("FETCH_TIMEOUT")
    max_bytes = int(config.positive("FETCH_MAX_BYTES", integer=True))
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, headers={"User-Agent": USER_AGENT}) as client:
            outcome = _retrying(lambda: _direct_attempt(url, client, max_bytes),
                                lambda o: isinstance(o, _Transient), sleep)
    except netguard.BlockedURL as exc:
        reason = {"dns": "dns_failure", "bad_url": "invalid_url", "scheme": "invalid_url"}.get(
            exc.reason, "blocked_address")
        raise _Uncached(_failed(url, None, None, "direct", reason)) from None
    if isinstance(outcome, _Transient):
        raise _Uncached(_failed(url, outcome.final_url, outcome.status, "direct"))
    return outcome


# --- Crawlbase backend -----------------------------------------------------------------------

_SDK_DEFAULT_URL = "https://api.crawlbase.com/"


def _rid(headers) -> str | None:
    """The storage rid: the `rid` header, else the rid inside `storage_url` (whose token is dropped)."""
    rid = headers.get("rid")
    if rid:
        return str(rid)
    storage_url = headers.get("storage_url") or ""
    return (parse_qs(urlsplit(storage_url).query).get("rid") or [None])[0]


def point_sdk_at_api_url() -> None:
    """Point the crawlbase SDK (Crawling and Storage APIs) at CRAWLBASE_API_URL, or its default."""
    from crawlbase import base_api
    override = config.get("CRAWLBASE_API_URL")
    base_api.CRAWLBASE_API_URL = override.rstrip("/") + "/" if override else _SDK_DEFAULT_URL


def _crawling_api(token: str):
    """A CrawlingAPI that keeps the rid (the SDK drops the storage headers), pointed at CRAWLBASE_API_URL."""
    from crawlbase import CrawlingAPI

    class KeepRid(CrawlingAPI):
        def parseRegularResponse(self, handler):  # noqa: N802 (the SDK's name)
            super().parseRegularResponse(handler)
            self.response["headers"]["rid"] = _rid(handler.headers)

    point_sdk_at_api_url()
    return KeepRid({"token": token, "timeout": config.positive("CRAWLBASE_TIMEOUT")})


def _header(headers: dict, name: str) -> str | None:
    value = headers.get(name)
    return None if value in (None, "", "None") else str(value)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@dataclass
class _Crawl:
    """One Crawlbase answer, read: kind is page / failed (520) / empty (207) / down (retries spent)."""
    kind: str
    result: FetchResult | None = None

    @property
    def thin(self) -> bool:
        return self.kind == "page" and self.result.label is None and non_space(self.result.markdown) < THIN_CHARS


def _transient_api(response) -> bool:
    code = response["status_code"] if response else None
    return code is None or code == 429 or (code >= 500 and code != 520)


def _call(api, url: str, options: dict, sleep, token_name: str) -> _Crawl:
    """One Crawling-API call (a fresh options dict each time: the SDK mutates it), read into a _Crawl."""
    def attempt():
        try:
            return api.get(url, dict(options))
        except (OSError, http.client.HTTPException):   # timeouts, refused connections, bad answers
            return None
    response = _retrying(attempt, _transient_api, sleep)
    if _transient_api(response):
        return _Crawl("down", _failed(url, None, None, "crawlbase"))
    code, headers = response["status_code"], response["headers"]
    if code in (401, 402, 403):
        what = {401: "was rejected", 402: "has no credits left", 403: "may not use this product"}[code]
        hint = " (set CRAWLBASE_JS_TOKEN for JavaScript rendering)" if options.get("javascript") else ""
        raise CrawlbaseRejected(f"{token_name} {what} (Crawlbase HTTP {code}){hint}")
    if code == 422:
        return _Crawl("page", _failed(url, None, None, "crawlbase", "invalid_url"))
    cb_status = _int(_header(headers, "cb_status") or _header(headers, "pc_status"))
    if code != 200 or (cb_status is not None and cb_status >= 500):      # 520: the crawl failed
        return _Crawl("failed", _failed(url, _header(headers, "url"), _int(_header(headers, "original_status")),
                                        "crawlbase"))
    if cb_status == 207:
        return _Crawl("empty", FetchResult(url, _header(headers, "url"),
                                           _int(_header(headers, "original_status")), "", headers.get("rid"),
                                           "not_found", "empty_page", "crawlbase"))
    body = response["body"]
    markdown = (body.decode("utf-8", errors="replace") if isinstance(body, bytes) else str(body or "")).strip()
    status = _int(_header(headers, "original_status"))
    settle_status = status if status is not None else cb_status
    result = _classified(url, _header(headers, "url") or url, settle_status, markdown, headers.get("rid"),
                         "crawlbase")
    return _Crawl("page", FetchResult(**{**result.to_dict(), "original_status": status}))


def _crawl_pass(api, url: str, extra: dict, sleep, token_name: str) -> _Crawl:
    """Readability first; a thin answer -> the same call without md_readability."""
    crawl = _call(api, url, {**CRAWLBASE_OPTIONS, **extra}, sleep, token_name)
    if crawl.thin:
        plain = {k: v for k, v in CRAWLBASE_OPTIONS.items() if k != "md_readability"}
        again = _call(api, url, {**plain, **extra}, sleep, token_name)
        if again.kind == "page" and non_space(again.result.markdown) >= non_space(crawl.result.markdown):
            crawl = again
    return crawl


def _better(rendered: _Crawl, thin: _Crawl) -> bool:
    """Rendering replaces a thin page when it settles the page or says at least as much."""
    if rendered.kind != "page":
        return False
    says = non_space(rendered.result.markdown)
    return says >= non_space(thin.result.markdown) or (says > 0 and rendered.result.label is not None)


def _escalation() -> str:
    return "CRAWLBASE_JS_TOKEN" if config.has("CRAWLBASE_JS_TOKEN") else "javascript=true"


def _fetch_crawlbase(url: str, sleep: Callable[[float], None]) -> FetchResult:
    crawl = _crawl_pass(_crawling_api(config.secret("CRAWLBASE_TOKEN")), url, {}, sleep, "CRAWLBASE_TOKEN")
    if crawl.kind in ("failed", "empty") or crawl.thin:
        if _escalation() == "CRAWLBASE_JS_TOKEN":
            rendered = _crawl_pass(_crawling_api(config.secret("CRAWLBASE_JS_TOKEN")), url, {}, sleep,
                                   "CRAWLBASE_JS_TOKEN")
        else:
            rendered = _crawl_pass(_crawling_api(config.secret("CRAWLBASE_TOKEN")), url, {"javascript": "true"},
                                   sleep, "CRAWLBASE_TOKEN")
        if crawl.kind != "page" or _better(rendered, crawl):
            crawl = rendered
    if crawl.kind in ("failed", "down"):
        raise _Uncached(crawl.result)
    return _final(crawl.result)


# --- entry point -----------------------------------------------------------------------------

def backend() -> str:
    """'crawlbase' when CRAWLBASE_TOKEN is set, else 'direct'."""
    return "crawlbase" if config.has("CRAWLBASE_TOKEN") else "direct"


def _request(url: str, chosen: str) -> dict:
    """The cache request: the URL and the options that shape the answer, never a token."""
    if chosen == "direct":
        return {"url": url, "extractor": "trafilatura markdown", "thin_chars": THIN_CHARS}
    request = {"url": url, "options": CRAWLBASE_OPTIONS, "thin_chars": THIN_CHARS, "javascript": _escalation()}
    override = config.get("CRAWLBASE_API_URL")
    if override:                              # a stand-in's answers never replay as real crawls
        parts = urlsplit(override)
        request["endpoint"] = f"{parts.scheme}://{parts.hostname}:{parts.port or ''}{parts.path}"
    return request


def fetch(url: str, *, sleep: Callable[[float], None] = time.sleep) -> FetchResult:
    """Crawlbase when CRAWLBASE_TOKEN is set, else direct; cached via default_cache() (module rules).

    `sleep` waits between retries (tests pass a no-op).
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError("url must be a non-empty string")
    url = url.strip()
    chosen = backend()
    try:
        parts = urlsplit(url)
        parts.port                            # raises ValueError on a non-numeric port
        valid = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:                        # e.g. an unclosed [IPv6 or a non-numeric port
        valid = False
    if not valid:
        return _failed(url, None, None, chosen, "invalid_url")
    if parts.path.lower().endswith(".pdf"):
        return _failed(url, None, None, chosen, "pdf_unsupported", "not_found")

    def compute():
        result = (_fetch_crawlbase if chosen == "crawlbase" else _fetch_direct)(url, sleep)
        return result.to_dict(), None, _answered_by(chosen)

    try:
        answer = default_cache().call(
            f"fetch.{chosen}", chosen, _request(url, chosen), compute,
            how_to_run_live="let it reach the page (set CRAWLBASE_TOKEN to crawl through Crawlbase)")
    except _Uncached as exc:
        return exc.result
    return FetchResult.from_dict(answer)


def _answered_by(chosen: str) -> str:
    if chosen == "crawlbase":
        return "crawlbase crawling-api"
    import trafilatura
    return f"httpx+trafilatura {trafilatura.__version__}"
