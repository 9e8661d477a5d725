"""A Crawlbase Storage API stand-in (GET /storage?token=&rid=&format=) for the unmodified crawlbase SDK.

Like the real service it answers the stored HTML with `rid`, `url`, `stored_at`, `original_status`
and `pc_status` headers (gzipped when the client accepts it), 404 for an unknown rid and 401 for a
wrong token. The SDK builds every URL from one base, so the Crawling-API stand-in can share it:
`storage_standin(storage, fallback=crawling_handler)` answers /storage here and the rest there.
"""
from __future__ import annotations

import gzip
import itertools
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from .http import Recorded, StandIn


@dataclass
class Storage:
    """The pages the stand-in holds: rid -> (url, html, original_status, stored_at)."""

    tokens: tuple[str, ...] = ("standin-token",)
    pages: dict[str, tuple[str, str, int, str]] = field(default_factory=dict)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def store(self, url: str, html: str, original_status: int = 200, rid: str | None = None) -> str:
        rid = rid or f"standin{next(self._ids):06d}"
        self.pages[rid] = (url, html, original_status, "2025-01-01T00:00:00+00:00")
        return rid

    def handle(self, request: Recorded):
        query = {k: v[0] for k, v in parse_qs(urlsplit(request.path).query).items()}
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


def storage_standin(storage: Storage, fallback=None) -> StandIn:
    """Serve `storage` on /storage; any other path goes to `fallback` (e.g. the Crawling-API stand-in)."""
    def handle(request: Recorded):
        if urlsplit(request.path).path.rstrip("/") == "/storage":
            return storage.handle(request)
        if fallback is not None:
            return fallback(request)
        return 404, {}, {"error": "no such endpoint in the Storage API stand-in"}
    return StandIn(handle)
