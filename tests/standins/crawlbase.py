"""A Crawling-API stand-in (GET /?token=&url=&format=md&...) for the unmodified crawlbase SDK.

Point the SDK at it with CRAWLBASE_API_URL=<stand-in url>. Like the real service it answers with
`original_status`, `cb_status` (or only the deprecated `pc_status`), `url` (after redirects) and, when
`store=true`, a `storage_url` header that embeds the caller's token (optionally also a `rid` header).
Bodies are gzipped when the client accepts it; HTTP 520 means the crawl failed; 401 a wrong token.

Two ways to answer:
- scripted: `script(call) -> Answer`, where `call` is the parsed query (with `token`) of this request
  and `call_index` its position; tests use this to reach every branch.
- origin: with no script, the stand-in fetches the target itself (the fixture site) and converts it
  to Markdown with trafilatura (readability when md_readability=true, else the page's whole text).
"""
from __future__ import annotations

import gzip
import itertools
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qs, urlencode, urlsplit

from .http import Recorded, StandIn

NORMAL_TOKEN = "cbFAKEnormal-7Q2x9K4mW8"
"""Recognisable fake tokens: tests search the cache file and every result for them."""
JS_TOKEN = "cbFAKEjs-3V6n1P8rT5"


@dataclass
class Answer:
    """One Crawling-API answer."""
    body: str = ""
    status: int = 200                    # the API's own HTTP status (520 = crawl failed)
    original_status: int | None = 200
    cb_status: int | None = 200
    url: str | None = None               # the `url` header; default: the requested URL
    status_header: str = "cb_status"     # "pc_status" to send only the deprecated header
    gzip: bool = True
    delay: float = 0.0                   # seconds before answering (timeouts)
    rid_header: bool = False             # also send a plain `rid` header


class CrawlingStandIn:
    """`with CrawlingStandIn(script) as api:` -> api.url, api.calls (parsed queries, in order)."""

    def __init__(self, script: Callable[[dict], Answer] | None = None, tokens=(NORMAL_TOKEN, JS_TOKEN)):
        self.script = script
        self.tokens = tokens
        self.calls: list[dict] = []
        self._rids = itertools.count(1)
        self._server = StandIn(self.handle)
        # a client that timed out has hung up before a delayed answer is written: not an error here
        self._server._server.handle_error = lambda request, client_address: None
        self.url = self._server.url

    def __enter__(self) -> "CrawlingStandIn":
        self._server.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._server.__exit__(*exc)

    def handle(self, request: Recorded):
        query = {k: v[0] for k, v in parse_qs(urlsplit(request.path).query).items()}
        query["call_index"] = len(self.calls)
        self.calls.append(query)
        if query.get("token") not in self.tokens:
            return 401, {}, {"error": "invalid token"}
        answer = self.script(query) if self.script else self.from_origin(query)
        if answer.delay:
            time.sleep(answer.delay)
        if answer.status != 200:
            return answer.status, {}, ""
        rid = f"rid{next(self._rids):05d}"
        headers = {"Content-Type": "text/plain; charset=utf-8", "url": answer.url or query.get("url", "")}
        if answer.original_status is not None:
            headers["original_status"] = str(answer.original_status)
        if answer.cb_status is not None:
            headers[answer.status_header] = str(answer.cb_status)
        if query.get("store") == "true":
            headers["storage_url"] = "https://api.crawlbase.com/storage?" + urlencode(
                {"token": query["token"], "rid": rid})
            if answer.rid_header:
                headers["rid"] = rid
        body = answer.body.encode("utf-8")
        if answer.gzip and "gzip" in request.headers.get("Accept-Encoding", ""):
            headers["Content-Encoding"] = "gzip"
            body = gzip.compress(body, mtime=0)
        return 200, headers, body

    @staticmethod
    def from_origin(query: dict) -> Answer:
        """Crawl the target for real (redirects followed) and convert it like the md format does."""
        import trafilatura
        try:
            with urllib.request.urlopen(query["url"], timeout=10) as response:
                status, final, raw = response.status, response.geturl(), response.read()
        except urllib.error.HTTPError as exc:
            status, final, raw = exc.code, exc.geturl(), exc.read()
        except OSError:
            return Answer(status=520)
        if not raw.strip():
            return Answer(original_status=status, cb_status=207, url=final)
        html = raw.decode("utf-8", errors="replace")
        if query.get("md_readability") == "true":
            body = trafilatura.extract(html, output_format="markdown") or ""
        else:
            body = trafilatura.html2txt(html) or ""
        return Answer(body=body, original_status=status, cb_status=status if status >= 400 else 200, url=final)
