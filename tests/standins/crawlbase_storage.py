"""A Crawlbase Storage API stand-in (GET /storage?token=&rid=&format=) for the unmodified crawlbase SDK.

Like the real service it answers the stored HTML with `rid`, `url`, `stored_at`, `original_status`
and `pc_status` headers (gzipped when the client accepts it), 404 for an unknown rid and 401 for a
wrong token. The SDK builds every URL from one base, so one server answers both APIs:
`crawlbase_standin(CrawlingStandIn(), storage)` serves /storage from `storage`, every other path from
the Crawling-API stand-in, and keeps each page that stand-in stored (store=true) under its rid.
"""
from __future__ import annotations

import gzip
import itertools
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from .crawlbase import JS_TOKEN, NORMAL_TOKEN, CrawlingStandIn
from .http import Recorded, StandIn


@dataclass
class Storage:
    """The pages the stand-in holds: rid -> (url, html, original_status, stored_at)."""

    tokens: tuple[str, ...] = (NORMAL_TOKEN, JS_TOKEN)
    pages: dict[str, tuple[str, str, int, str]] = field(default_factory=dict)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def store(self, url: str, html: str, original_status: int = 200, rid: str | None = None) -> str:
        rid = rid or f"standin{next(self._ids):06d}"
        self.pages[rid] = (url, html, original_status, "2025-01-01T00:00:00+00:00")
        return rid

    def handle(self, request: Recorded):
        query = _query(request)
        if query.get("token") not in self.tokens:
            return 401, {}, {"error": "invalid token"}
        page = self.pages.get(query.get("rid", ""))
        if page is None:
            return 404, {}, {"error": "not found"}
        url, html, original_status, stored_at = page
        headers = {"rid": query["rid"], "url": url, "stored_at": stored_at,
                   "original_status": str(original_status), "pc_status": "200", "Content-Type": "text/plain"}
        body = html.encode("utf-8")
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            headers["Content-Encoding"] = "gzip"
            body = gzip.compress(body, mtime=0)
        return 200, headers, body


def _query(request: Recorded) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(request.path).query).items()}


def storage_standin(storage: Storage, fallback=None) -> StandIn:
    """Serve `storage` on /storage; any other path goes to `fallback` (e.g. the Crawling-API stand-in)."""
    def handle(request: Recorded):
        if urlsplit(request.path).path.rstrip("/") == "/storage":
            return storage.handle(request)
        if fallback is not None:
            return fallback(request)
        return 404, {}, {"error": "no such endpoint in the Storage API stand-in"}
    return StandIn(handle)


def crawlbase_standin(crawling: CrawlingStandIn, storage: Storage) -> StandIn:
    """Both APIs on one base URL; a crawl answered with a storage rid is kept in `storage`."""
    def crawl_and_store(request: Recorded):
        status, headers, body = crawling.handle(request)
        rid = (parse_qs(urlsplit(headers.get("storage_url", "")).query).get("rid") or [headers.get("rid")])[0]
        if status == 200 and rid:
            page = gzip.decompress(body) if headers.get("Content-Encoding") == "gzip" else body
            storage.store(headers.get("url") or _query(request).get("url", ""), page.decode("utf-8"),
                          int(headers.get("original_status") or 200), rid=rid)
        return status, headers, body
    return storage_standin(storage, fallback=crawl_and_store)
