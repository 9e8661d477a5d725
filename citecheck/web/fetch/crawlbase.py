"""The Crawlbase backend: the Crawling API through the unmodified crawlbase SDK.

Rules:
- Every first call sends CRAWLBASE_OPTIONS (Markdown, readability, stored); a thin answer is fetched
  again without md_readability. The rid is kept (the SDK drops the storage headers); the storage URL
  never is (it embeds the token).
- JavaScript rendering (CRAWLBASE_JS_TOKEN, else javascript=true) when the crawl failed (HTTP 520),
  the origin answered an empty page (cb_status/pc_status 207) or the page is still thin; the
  rendered answer replaces a thin page only if it says at least as much or settles the page.
- Timeouts, connection errors, answers that cannot be read (JSON that is not JSON, a truncated gzip
  body), 429 and 5xx (but 520) are retried, then crawl_failed (uncached).
- Bounded: a body is at most FETCH_MAX_BYTES decoded bytes, counted as it streams and inflates
  (`fetch.inflate`, every encoding and stack, names in any case; `KeepRid.request` reads it in place of the
  SDK, which reads a body whole; an encoding it cannot undo -> not_found / unsupported_content; a corrupt
  one is unreadable). TLS certificates and host names are verified (the SDK's context does neither). Every call waits at most
  CRAWLBASE_TIMEOUT, and all the calls of one fetch (retries, the thin-page retry, rendering) end
  within FETCH_DEADLINE: a call still running then is abandoned (its thread ends with its socket's
  timeout) and no new one starts. A page the deadline cut short is returned but not cached.
- Politeness: the Crawling API has no robots.txt option (it takes a user_agent, which would change the
  cache key), so `fetch` reads robots.txt itself before asking Crawlbase; each call holds a slot of the
  page's origin in the run's host limit (`fetch.hosts`) until it really ends.
- Crawlbase rejecting the token (401/402/403) is an error naming the variable, not a page verdict
  (the API answers it with 503, like a missing setting).
- `crawlbase_api_url` overrides the SDK's base URL (self-hosted or a test stand-in) for both APIs.
"""
from __future__ import annotations

import http.client
import ssl
import threading
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from ...config import MissingSetting, Settings
from ...vocabulary import EMPTY_PAGE, INVALID_URL, NOT_FOUND, UNSUPPORTED_CONTENT
from . import inflate
from .deadline import Budget
from .hosts import HostBusy, Slots
from .pages import THIN_CHARS, FetchResult, Uncached, failed, final, non_space, retrying, settled

CRAWLBASE_OPTIONS = {"format": "md", "md_readability": "true", "store": "true"}
"""What every first Crawlbase call sends; the thin-page retry drops md_readability."""
SDK_DEFAULT_URL = "https://api.crawlbase.com/"
_TLS = ssl.create_default_context()
"""Certificates and host names verified (the SDK's own context verifies neither; the token is in the URL)."""
NAME = "crawlbase"


class CrawlbaseRejected(MissingSetting, ValueError):
    """Crawlbase refused the token (401 / 402 / 403): a setting to fix, not a verdict on the page."""

    def __init__(self, message: str, name: str | None = None):
        self.name = name or message.split(" ", 1)[0]      # the message starts with the variable's name
        ValueError.__init__(self, message)


def _rid(headers) -> str | None:
    """The storage rid: the `rid` header, else the rid inside `storage_url` (whose token is dropped)."""
    rid = headers.get("rid")
    if rid:
        return str(rid)
    storage_url = headers.get("storage_url") or ""
    return (parse_qs(urlsplit(storage_url).query).get("rid") or [None])[0]


def point_sdk_at_api_url(settings: Settings) -> None:
    """Point the crawlbase SDK (Crawling and Storage APIs) at `crawlbase_api_url`, or its default."""
    from crawlbase import base_api
    override = settings.crawlbase_api_url
    base_api.CRAWLBASE_API_URL = override.rstrip("/") + "/" if override else SDK_DEFAULT_URL


def _chunks(handler):
    """A response's body, a chunk at a time; cut short of its Content-Length -> IncompleteRead."""
    while chunk := handler.read(inflate.CHUNK):
        yield chunk
    if handler.length:
        raise http.client.IncompleteRead(b"", handler.length)


def _crawling_api(token: str, settings: Settings, timeout: float | None = None):
    """A CrawlingAPI that keeps the rid (the SDK drops the storage headers), pointed at the API URL."""
    from crawlbase import CrawlingAPI

    class KeepRid(CrawlingAPI):
        def request(self, options=None, data=None):
            """The SDK's request with a verifying TLS context and the body read under the cap as it
            streams, whatever its Content-Encoding says (the SDK reads a body whole and inflates only
            an exact `gzip`)."""
            options = dict(options or {})
            self.response = {"headers": {}}
            method = options.pop("HTTP_METHOD", None)
            request = urllib.request.Request(self.buildURL(options), headers=self.headers, method=method)
            try:
                handler = urllib.request.urlopen(request, data.encode() if isinstance(data, str) else data,
                                                 self.timeout, context=_TLS)
            except urllib.error.HTTPError as error:
                error.close()
                self.response.update(body="", status_code=error.code)
                return self.response
            with handler:
                self.response["status_code"] = handler.getcode()
                try:
                    self.response["body"] = inflate.read_capped(_chunks(handler),
                                                                handler.headers.get("Content-Encoding"),
                                                                settings.fetch_max_bytes)[0]
                except inflate.UnknownEncoding as exc:
                    self.response["body"] = b""
                    self.response["headers"]["unsupported_encoding"] = str(exc)
                if (handler.headers.get("Content-Type") == "application/json; charset=utf-8"
                        or (not options.get("callback") and options.get("format") == "json")):
                    self.parseJsonResponse()
                else:
                    self.parseRegularResponse(handler)
            return self.response

        def parseRegularResponse(self, handler):  # noqa: N802 (the SDK's name)
            super().parseRegularResponse(handler)
            self.response["headers"]["rid"] = _rid(handler.headers)

    point_sdk_at_api_url(settings)
    return KeepRid({"token": token, "timeout": settings.crawlbase_timeout if timeout is None else timeout})


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


UNREADABLE = (OSError, EOFError, ValueError, zlib.error, http.client.HTTPException)
"""What one call may raise that is a failed call, not a bug: timeouts, refused connections, JSON that
is not JSON, a truncated gzip body, a broken HTTP answer."""


@dataclass
class _Session:
    """The calls of one fetch: settings, deadline, retry wait, and whether the deadline cut a call."""
    settings: Settings
    budget: Budget
    sleep: Callable[[float], None]
    cut: bool = field(default=False)
    limit: Slots | None = None

    def get(self, token_name: str, url: str, options: dict):
        """One SDK call on a fresh client (an abandoned call keeps its own), abandoned at the deadline."""
        if self.budget.spent:
            self.cut = True
            return None
        api = _crawling_api(self.settings.secrets.require(token_name), self.settings,
                            self.budget.cap(self.settings.crawlbase_timeout))
        outcome: dict = {}
        try:
            release = self.limit.acquire(url, self.budget) if self.limit else (lambda: None)
        except HostBusy:
            return None                                             # transient: the page's host is busy

        def call():
            try:
                outcome["response"] = api.get(url, dict(options))   # a fresh dict: the SDK mutates it
            except UNREADABLE:
                outcome["response"] = None
            except Exception as exc:                                # noqa: BLE001 - raised below, in the caller
                outcome["error"] = exc
            finally:
                release()                                           # held until the call really ends
        worker = threading.Thread(target=call, name="crawlbase-call", daemon=True)
        worker.start()
        worker.join(self.budget.remaining())
        if worker.is_alive():
            self.cut = True
            return None
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("response")


def _call(session: _Session, url: str, options: dict, token_name: str) -> _Crawl:
    """One Crawling-API call (retried), read into a _Crawl."""
    response = retrying(lambda: session.get(token_name, url, options), _transient_api, session.sleep,
                        session.budget)
    if _transient_api(response):
        return _Crawl("down", failed(url, None, None, NAME))
    code, headers = response["status_code"], response["headers"]
    if code in (401, 402, 403):
        what = {401: "was rejected", 402: "has no credits left", 403: "may not use this product"}[code]
        hint = " (set CRAWLBASE_JS_TOKEN for JavaScript rendering)" if options.get("javascript") else ""
        raise CrawlbaseRejected(f"{token_name} {what} (Crawlbase HTTP {code}){hint}", token_name)
    if code == 422:
        return _Crawl("page", failed(url, None, None, NAME, INVALID_URL))
    cb_status = _int(_header(headers, "cb_status") or _header(headers, "pc_status"))
    if code != 200 or (cb_status is not None and cb_status >= 500):      # 520: the crawl failed
        return _Crawl("failed", failed(url, _header(headers, "url"), _int(_header(headers, "original_status")),
                                       NAME))
    if cb_status == 207:
        return _Crawl("empty", FetchResult(url, _header(headers, "url"),
                                           _int(_header(headers, "original_status")), "", headers.get("rid"),
                                           NOT_FOUND, EMPTY_PAGE, NAME))
    body = response["body"]
    if headers.get("unsupported_encoding"):
        return _Crawl("page", failed(url, _header(headers, "url"), _int(_header(headers, "original_status")),
                                     NAME, UNSUPPORTED_CONTENT, detail=headers["unsupported_encoding"]))
    markdown = (body.decode("utf-8", errors="replace") if isinstance(body, bytes) else str(body or "")).strip()
    status = _int(_header(headers, "original_status"))
    settle_status = status if status is not None else cb_status
    result = settled(url, _header(headers, "url") or url, settle_status, markdown, headers.get("rid"), NAME)
    return _Crawl("page", FetchResult(**{**result.to_dict(), "original_status": status}))


def _crawl_pass(session: _Session, url: str, extra: dict, token_name: str) -> _Crawl:
    """Readability first; a thin answer -> the same call without md_readability."""
    crawl = _call(session, url, {**CRAWLBASE_OPTIONS, **extra}, token_name)
    if crawl.thin:
        plain = {k: v for k, v in CRAWLBASE_OPTIONS.items() if k != "md_readability"}
        again = _call(session, url, {**plain, **extra}, token_name)
        if again.kind == "page" and non_space(again.result.markdown) >= non_space(crawl.result.markdown):
            crawl = again
    return crawl


def _better(rendered: _Crawl, thin: _Crawl) -> bool:
    """Rendering replaces a thin page when it settles the page or says at least as much."""
    if rendered.kind != "page":
        return False
    says = non_space(rendered.result.markdown)
    return says >= non_space(thin.result.markdown) or (says > 0 and rendered.result.label is not None)


def escalation(settings: Settings) -> str:
    """How a failed, empty or thin page is rendered: with the JavaScript token, or javascript=true."""
    return "CRAWLBASE_JS_TOKEN" if settings.secrets.has("CRAWLBASE_JS_TOKEN") else "javascript=true"


def fetch_crawlbase(url: str, settings: Settings, sleep: Callable[[float], None],
                    limit: Slots | None = None, budget: Budget | None = None) -> FetchResult:
    """One page through the Crawling API (module rules), each call in a slot of the page's origin
    (`limit`), within `budget` (default: FETCH_DEADLINE from now); transient failures raise Uncached."""
    settings.secrets.require("CRAWLBASE_TOKEN")
    session = _Session(settings, budget or Budget(settings.fetch_deadline), sleep, limit=limit)
    crawl = _crawl_pass(session, url, {}, "CRAWLBASE_TOKEN")
    if crawl.kind in ("failed", "empty") or crawl.thin:
        if escalation(settings) == "CRAWLBASE_JS_TOKEN":
            rendered = _crawl_pass(session, url, {}, "CRAWLBASE_JS_TOKEN")
        else:
            rendered = _crawl_pass(session, url, {"javascript": "true"}, "CRAWLBASE_TOKEN")
        if crawl.kind != "page" or _better(rendered, crawl):
            crawl = rendered
    if crawl.kind in ("failed", "down") or session.cut:
        raise Uncached(crawl.result)
    return final(crawl.result)


def cache_request(url: str, settings: Settings) -> dict:
    """What a Crawlbase fetch's cache key covers: the URL and the options, never a token; a stand-in's
    answers never replay as real crawls (its endpoint is part of the key)."""
    request = {"url": url, "options": CRAWLBASE_OPTIONS, "thin_chars": THIN_CHARS, "javascript": escalation(settings)}
    if settings.crawlbase_api_url:
        parts = urlsplit(settings.crawlbase_api_url)
        request["endpoint"] = f"{parts.scheme}://{parts.hostname}:{parts.port or ''}{parts.path}"
    return request


ANSWERED_BY = "crawlbase crawling-api"
