"""api: the HTTP service — validate, bound, delegate to the same `verify_claim` as the CLI.

Rules:
- `POST /verify {"claim", "urls"}` answers the CLI's `verify` JSON. The HTTP layer validates and
  delegates; it never judges a citation itself.
- Statuses: 200 a verdict (an upstream failure is a labelled citation, not an error; so is an
  offline cache miss: unreachable / cache_miss, for the missing citations only); 408 the body did not
  arrive within API_BODY_TIMEOUT seconds; 413 a body over API_MAX_BODY_BYTES (checked before
  parsing); 422 a bad body (not UTF-8, not JSON, nested deeper than MAX_JSON_DEPTH, unknown field,
  empty claim, claim over API_MAX_CLAIM_CHARS, 0 or more than API_MAX_URLS urls, a non-http(s) url, a
  lone surrogate in the claim or a url); 429 no free slot within API_QUEUE_TIMEOUT seconds
  (Retry-After says when to retry); 503 a required setting is missing or was rejected (a Crawlbase
  token refused: the body names the variable, never a value); 504 the verification took longer than
  API_DEADLINE seconds.
- `quotes` (optional): the texts the citations carry, per URL or for every URL; verify matches each on
  its page before a judge is asked (`verify.carried_match`), as batch lines' `quotes` do.
- Slots, the parse lane and the deadline are `lanes`'; `/check-answer`, its page and `/` are `answer_app`'s,
  whose bodies may be larger (`answer_app.body_limits`).
- `serve` closes a connection whose request head is not complete within API_HEADER_TIMEOUT seconds
  (`serving`), so half-sent requests cannot pile up.
- Private addresses are refused by the fetcher (netguard, on every redirect hop), which labels the
  citation unreachable / blocked_address; the API itself refuses non-http(s) URLs with 422.
- Nothing secret is echoed: error texts pass through `config.redact`, request bodies are never
  logged, and 422 details carry no input.
- `serve` binds 127.0.0.1 by default; `serve --dry-run` replays the cache (CITECHECK_OFFLINE=1)
  against the fixture site, so it answers with no keys and no network.
- Every citation answered carries the AUTO_ACCEPT gate's `auto` and `auto_note` (the gate, with its table,
  read once, here; for the model that answered; its note on stderr once per server run); with
  AUDIT_DB set every answer is audited (batch `api`) through the app's one writer thread
  (`audit.service`). `/review` is the review page (`review_app`), off unless REVIEW_TOKEN is set.
"""

import argparse
import asyncio
import dataclasses
import importlib
import logging
import re
import sys
import time
import typing
from typing import Callable, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from .. import config
from ..config import ApiLimits as Limits
from ..config import Settings
from ..context import RunContext
from ..verdict.review import Gate, gated
from ..vocabulary import CACHE_MISS, UNREACHABLE, CitationRow, Label
from ..web import netguard
from . import answer_app, audit_service, review_app
from .lanes import Lanes, Refused

log = logging.getLogger("citecheck.serve.api")

MAX_URL_CHARS = 2048
MAX_JSON_DEPTH = 32
"""The body is an object of a string and a list of strings (depth 2); deeper nesting is refused before
the JSON parser recurses into it."""
FIXTURE_SITE_MODULE = "citecheck.web.fixture_site"
"""The dry run loads the fixture site by name: it is never on the production API's import path."""


def _model_of(row_type, name: str, **types) -> type[BaseModel]:
    """A pydantic model with the row dataclass's fields and defaults (`types` narrows some)."""
    hints = typing.get_type_hints(row_type)
    return create_model(name, **{f.name: (types.get(f.name, hints[f.name]),
                                          ... if f.default is dataclasses.MISSING else f.default)
                                 for f in dataclasses.fields(row_type)})


Citation = _model_of(CitationRow, "Citation", label=Label)


class Verdict(BaseModel):
    claim: str
    overall: Label
    citations: list[Citation]


class Health(BaseModel):
    status: Literal["ok"]
    offline: bool
    fixture_site: str | None = Field(None, description="the fixture site's address in a dry run")
    limits: dict[str, int | float]


class Problem(BaseModel):
    detail: str


def _is_text(value: str) -> bool:
    from ..verify import is_text
    return is_text(value)


class _RequestBase(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    @field_validator("claim", check_fields=False)
    @classmethod
    def _not_blank(cls, claim: str) -> str:
        if not claim.strip():
            raise ValueError("claim is blank")
        if not _is_text(claim):
            raise ValueError("claim holds a lone surrogate (not text)")
        return claim

    @field_validator("quotes", check_fields=False)
    @classmethod
    def _quoted_texts(cls, quotes, info):
        urls = set(info.data.get("urls") or ())
        for url, texts in (quotes.items() if isinstance(quotes, dict) else [(None, quotes or [])]):
            if url is not None and url not in urls:
                raise ValueError("quotes names a URL that urls does not list")
            if not all(_is_text(t) for t in ([texts] if isinstance(texts, str) else texts)):
                raise ValueError("a quote holds a lone surrogate (not text)")
        return quotes

    @field_validator("urls", check_fields=False)
    @classmethod
    def _http_urls(cls, urls: list[str]) -> list[str]:
        for index, url in enumerate(urls):
            if not _is_text(url):
                raise ValueError(f"urls[{index}] holds a lone surrogate (not text)")
            if len(url) > MAX_URL_CHARS:
                raise ValueError(f"urls[{index}] is longer than {MAX_URL_CHARS} characters")
            try:
                netguard.check_url(url, allow_private=True)   # scheme, host and port; addresses are fetch's
            except netguard.BlockedURL as exc:
                raise ValueError(f"urls[{index}] is not an http or https URL with a host: {exc.detail}") from None
        return urls


def _request_model(limits: Limits) -> type[BaseModel]:
    """The body schema with this app's limits, so /openapi.json states them."""
    return create_model(
        "VerifyRequest", __base__=_RequestBase,
        claim=(str, Field(min_length=1, max_length=limits.max_claim_chars,
                          json_schema_extra={"pattern": r"\S"}, description="the sentence to check (not blank)")),
        urls=(list[str], Field(min_length=1, max_length=limits.max_urls,
                               json_schema_extra={"items": {"type": "string", "maxLength": MAX_URL_CHARS,
                                                            "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"}},
                               description="the URLs cited for the claim (http or https)")),
        quotes=(dict[str, str | list[str]] | list[str] | None,
                Field(None, description="the texts the citations carry (Anthropic's cited_text, a Perplexity "
                                        "snippet), matched on each page before a judge is asked: per URL "
                                        "({url: text or [texts]}, URLs of urls) or for every URL ([texts])")),
    )


def carried(quotes, urls: list[str]) -> dict:
    """verify's keyword for a request's `quotes` (module rules): {} when it carries none."""
    if not quotes:
        return {}
    by_url = quotes if isinstance(quotes, dict) else dict.fromkeys(urls, quotes)
    return {"quotes": {url: [texts] if isinstance(texts, str) else list(texts)
                       for url, texts in by_url.items()}}


class BodyGuard:
    """ASGI middleware: a body that is too slow (408), too large (413, before anything parses it), not
    UTF-8 or nested deeper than MAX_JSON_DEPTH (422, in the validation errors' shape) never reaches
    the app."""

    def __init__(self, app, max_bytes: int, timeout: float, larger: dict[str, tuple[int, str]] | None = None):
        self.app, self.max_bytes, self.timeout, self.larger = app, max_bytes, timeout, larger or {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        max_bytes, named = self.larger.get(scope.get("path", ""), (self.max_bytes, "API_MAX_BODY_BYTES"))
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                return await _problem(send, 400, "Content-Length is not a whole number")
            if int(declared) > max_bytes:
                return await _too_large(send, max_bytes, named)
        chunks, size, ends = [], 0, time.monotonic() + self.timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(0.0, ends - time.monotonic()))
            except TimeoutError:
                return await _problem(send, 408, f"the request body did not arrive within {self.timeout:g} s "
                                                 "(API_BODY_TIMEOUT)")
            if message["type"] != "http.request":
                return  # the client went away before sending its body
            size += len(message.get("body", b""))
            if size > max_bytes:
                return await _too_large(send, max_bytes, named)
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = unreadable(body)
        if problem:
            error = {"loc": ["body"], "msg": problem, "type": "json_invalid"}
            return await _send_json(send, 422, {"detail": [error]})
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


async def _too_large(send, max_bytes: int, named: str):
    await _problem(send, 413, f"request body is larger than {max_bytes} bytes ({named})")


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]")


def unreadable(body: bytes) -> str | None:
    """Why a body cannot be parsed safely (not UTF-8, nested deeper than MAX_JSON_DEPTH), or None."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the body is not UTF-8 (byte {exc.start})"
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub(b"", _JSON_STRING.sub(b"", body)):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_JSON_DEPTH:
        return f"the body is nested {deepest} levels deep, more than {MAX_JSON_DEPTH}"
    return None


class AccessLog:
    """ASGI middleware: one log line per request (method, path, status, seconds), never a body."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), 0

        async def send_and_note(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            log.info("%s %s -> %d in %.3f s", scope.get("method", ""), config.redact(scope.get("path", "")), status,
                     time.perf_counter() - started)


async def _problem(send, status: int, detail: str) -> None:
    await _send_json(send, status, {"detail": detail})


async def _send_json(send, status: int, content: dict) -> None:
    body = JSONResponse(content).body
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _verify_with(ctx: RunContext, threshold: Gate) -> Callable[[str, list[str]], dict]:
    def verify(claim: str, urls: list[str], quotes: dict[str, list[str]] | None = None) -> dict:
        from ..verify import verify_claim  # imported on first use: it loads the pipeline
        return verify_claim(claim, urls, ctx, threshold, with_passages=True, quotes=quotes)
    return verify


def gating(verify: Callable[[str, list[str]], dict], gate: Gate) -> Callable[[str, list[str]], dict]:
    """`verify`, with every citation it answers gated for the model that answered it (cache-miss rows
    included); why a person reviews is said once on stderr (`Gate.tell`)."""
    def verify_and_gate(claim: str, urls: list[str], **quotes) -> dict:
        result = verify(claim, urls, **quotes)
        citations = [gated(c, gate) for c in result["citations"]]
        gate.tell(citations, "serve")
        return {**result, "citations": citations}
    return verify_and_gate


def cache_miss_row(url: str) -> dict:
    """A citation the offline cache cannot answer: unreachable / cache_miss (nothing was fetched)."""
    return CitationRow(url=url, label=UNREACHABLE, reason=CACHE_MISS).to_dict()


def labelling_cache_misses(verify: Callable[[str, list[str]], dict]) -> Callable[[str, list[str]], dict]:
    """`verify`, except that an offline cache miss labels only the citations that missed.

    verify raises CacheMiss for the whole claim; the URLs are then verified one at a time, each miss
    becomes unreachable / cache_miss, the replayable ones keep their verdicts, and the claim's label
    follows aggregate's fixed rule.
    """
    from ..cache import CacheMiss
    from ..verdict.aggregate import overall

    def verify_or_label(claim: str, urls: list[str], **quotes) -> dict:
        try:
            return verify(claim, urls, **quotes)
        except CacheMiss:
            pass
        citations = []
        for url in urls:
            try:
                citations += verify(claim, [url], **quotes)["citations"]
            except CacheMiss as exc:
                log.warning("cache miss, labelled: %s", config.redact(str(exc)))
                citations.append(cache_miss_row(url))
        return {"claim": claim, "overall": overall(c["label"] for c in citations), "citations": citations}

    return verify_or_label


def create_app(ctx: RunContext, verify: Callable[[str, list[str]], dict] | None = None, *,
               limits: Limits | None = None, fixture_site: str | None = None,
               check_answer: Callable[[str, str], dict] | None = None) -> FastAPI:
    """The ASGI app over `ctx`. `verify` defaults to citecheck.verify.verify_claim and `check_answer`
    (text, format -> the report's JSON) to `answer.report` (tests pass fakes); `limits` to the context's
    API_* settings; `fixture_site` is the dry run's fixture-site address, shown by /health."""
    limits = limits or ctx.settings.api
    gate = Gate.of(ctx.settings)
    verify = gating(labelling_cache_misses(verify or _verify_with(ctx, gate)), gate)
    writer = audit_service.open_writer(ctx.settings, review=review_app.enabled(ctx.settings))
    if ctx.settings.audit_db is not None:
        verify = audit_service.auditing(verify, writer)
    VerifyRequest = _request_model(limits)
    lanes = Lanes(limits)

    app = FastAPI(title="citecheck", version="0.1.0", lifespan=audit_service.closing(writer),
                  description="Verify an LLM's cited URLs against a claim (the live-web flow).")
    app.state.limits, app.state.audit_writer = limits, writer
    review_app.attach(app, ctx, writer, gate.headline())

    @app.exception_handler(RequestValidationError)
    async def _bad_body(request: Request, exc: RequestValidationError):
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
                  for e in exc.errors()]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.get("/health", response_model=Health)
    async def health() -> dict:
        """Liveness, whether the cache is replay-only, and the limits in force."""
        return {"status": "ok", "offline": ctx.settings.offline, "fixture_site": fixture_site,
                "limits": {k: v for k, v in vars(limits).items()}}

    error_docs = {400: {"model": Problem, "description": "a Content-Length that is not a number"},
                  408: {"model": Problem, "description": "the body did not arrive within API_BODY_TIMEOUT"},
                  413: {"model": Problem, "description": "body over API_MAX_BODY_BYTES"},
                  429: {"model": Problem, "description": "no free slot within API_QUEUE_TIMEOUT"},
                  503: {"model": Problem, "description": "a required setting is missing or rejected (named)"},
                  504: {"model": Problem, "description": "took longer than API_DEADLINE"}}

    @app.post("/verify", response_model=Verdict, responses=error_docs)
    async def verify_endpoint(body: VerifyRequest) -> dict:  # type: ignore[valid-type]
        """Verify one claim against its cited URLs; one label per URL and one overall label."""
        claim, urls, quotes = body.claim, list(body.urls), carried(body.quotes, body.urls)
        try:
            return await lanes.run(lambda: verify(claim, urls, **quotes))
        except Refused as exc:
            return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=exc.headers)

    answer_app.attach(app, ctx, lanes, gate, error_docs, check_answer)
    app.add_middleware(BodyGuard, max_bytes=limits.max_body_bytes, timeout=limits.body_timeout,
                       larger=answer_app.body_limits(limits, ctx.settings))
    app.add_middleware(AccessLog)
    return app


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: loopback)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--dry-run", action="store_true",
                        help="replay json_cache.json against the fixture site: no keys, no network")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])


def run(args: argparse.Namespace, ctx: RunContext) -> int:
    """Serve until interrupted. --dry-run: CITECHECK_OFFLINE=1 plus the fixture site on loopback."""
    import uvicorn

    from . import serving
    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be between 1 and 65535, got {args.port}")
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    fixture = None
    if args.dry_run:
        ctx, fixture = start_dry_run(ctx)
    try:
        app = create_app(ctx, fixture_site=fixture.base_url if fixture else None)
        warm_up(ctx.settings)
        if args.host not in ("127.0.0.1", "::1", "localhost"):
            print(f"citecheck serve: binding {args.host}: reachable from the network, not only this machine",
                  file=sys.stderr)
        print(f"citecheck serve: {review_app.status(ctx.settings)}", file=sys.stderr)
        server_config = serving.server_config(app, ctx.settings.api, args.host, args.port, args.log_level)
        uvicorn.Server(server_config).run()
    finally:
        if fixture is not None:
            fixture.stop()
    return 0


def warm_up(settings: Settings) -> None:
    """Import the pipeline now, and load MiniLM when RETRIEVAL uses it, so the first request is not the slow one."""
    from .. import verify  # noqa: F401
    from ..web import retrieval
    if settings.retrieval == "minilm":
        retrieval.model()


def start_dry_run(ctx: RunContext):
    """Replay only (offline), start the fixture site and let the fetcher reach it — only it.

    Returns (the dry run's context, the running fixture site); a request the cache does not hold
    answers a labelled verdict (unreachable / cache_miss), never a live call.
    """
    from ..cache import store_path
    path, store = ctx.settings.cache_path, store_path(ctx.settings.cache_path, ctx.settings.cache_store)
    if not path.is_file() and not (store is not None and store.is_file()):     # the export, or a live recording
        raise FileNotFoundError(f"serve --dry-run replays {path}, which does not exist here: "
                                "run it from the repository root or set CITECHECK_CACHE")
    fixture = importlib.import_module(FIXTURE_SITE_MODULE).start(port=ctx.settings.site_port)
    dry = ctx.replace(offline=True).allowing(fixture.host, fixture.port)
    print(f"citecheck serve: dry run: replaying {path} (CITECHECK_OFFLINE=1); "
          f"fixture site at {fixture.base_url}", file=sys.stderr)
    return dry, fixture
