"""answer_app: one LLM answer's report over HTTP — `POST /check-answer` (JSON) and the page at `/`.

Rules:
- `POST /check-answer {"answer", "format"}` answers `check-answer --json`'s report (`answer.report`: its
  sentences, markers, problems, precision and recall), run in the API's lanes (`lanes`: API_CONCURRENCY
  slots, the parse lane, 429 when busy, 504 past API_DEADLINE).
- Limits, each named where it refuses: the body is at most API_MAX_BODY_BYTES + BODY_FACTOR x
  ANSWER_MAX_BYTES (room for JSON's or a form's escaping of the answer; checked before parsing: 413); the
  answer itself at most ANSWER_MAX_BYTES as UTF-8 (413); an answer with more citations than
  ANSWER_MAX_MARKERS is refused whole (422: counted by its format's reader before anything is fetched,
  never checked in part); a blank answer, one that is not of its format, a report over
  ANSWER_MAX_REPORT_BYTES: 422 with the one line saying why. An offline cache miss is 503 naming the call.
- Local files are never read over HTTP: no documents folder is given, so a local-file citation is
  `unchecked` / document_not_named and its problem line says so (LOCAL_FILES).
- The page at `/` is on only when REVIEW_TOKEN is set (else `/`, /login, /logout and /check-answer/page are
  404 naming it), with /review's rules (`review_app.auth`): the token as Bearer or typed once into the
  login form (its own session cookie, COOKIE, path /), the same lock on failed logins, every POST refused
  cross-site and, with the cookie, without the form's CSRF token; no script, the same CSP. Its form posts
  to /check-answer/page, which checks the answer as /check-answer does and renders the report server-side
  in a worker thread under RENDER_SECONDS (503 past it): every sentence, the ones the report judged
  marked (<mark>) with their label and markers, each marker's row, each problem linked to its sentence.
"""
from __future__ import annotations

import asyncio
import json
import math
import re
from typing import Callable, Literal
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .. import config
from ..answer.rows import MarkerRow, SentenceRow, ratio_line
from ..config import ApiLimits, Settings
from ..context import RunContext
from ..extract.local import HOW_TO_NAME
from ..extract.parsed import AnswerError
from ..report import render_html
from ..verdict.review import Gate
from ..vocabulary import ANSWER_FORMAT_CHOICES, CITED, UNCITED
from .lanes import Lanes, Refused
from .review_app import TOKEN, enabled
from .review_app.auth import SESSION_HOURS, Keys, LockedOut, Reviewer, Throttle, bearer, cross_site
from .review_app.pages import HEADERS, RENDER_SECONDS

BODY_FACTOR = 3
"""An answer's body may be this many times ANSWER_MAX_BYTES (a form escapes a byte as %XX) plus
API_MAX_BODY_BYTES."""
COOKIE = "citecheck_answer"
PAGE, FORM = "/", "/check-answer/page"
LOCAL_FILES = ("local files are never read over HTTP: check this answer with "
               "`citecheck check-answer --documents DIR`")
_SENTENCE = re.compile(r"^(?:m\d+ \(sentence (\d+)\)|sentence (\d+):)")


class AnswerRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str = Field(min_length=1, description="the answer: Markdown text, or a provider's JSON response "
                                                  "as text (at most ANSWER_MAX_BYTES as UTF-8)")
    format: Literal[ANSWER_FORMAT_CHOICES] = Field("auto", description="the answer's format (auto: detected)")

    @field_validator("answer")
    @classmethod
    def _text(cls, answer: str) -> str:
        if not answer.strip():
            raise ValueError("answer is blank")
        try:
            answer.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("answer holds a lone surrogate (not text)") from None
        return answer


class AnswerReport(BaseModel):
    model_config = ConfigDict(extra="allow")      # the report's JSON as `answer` writes it, whatever it adds
    answer: str
    format: str
    summary: dict[str, int | float | list[int] | None]
    markers: list[MarkerRow]
    sentences: list[SentenceRow]
    problems: list[str]


def body_limits(limits: ApiLimits, settings: Settings) -> dict[str, tuple[int, str]]:
    """The larger body limit of the paths that take an answer (`api.BodyGuard`), and how it is named."""
    limit = (limits.max_body_bytes + BODY_FACTOR * settings.answer_max_bytes,
             f"API_MAX_BODY_BYTES + {BODY_FACTOR} x ANSWER_MAX_BYTES")
    return {"/check-answer": limit, FORM: limit}


def _checking(ctx: RunContext, gate: Gate) -> Callable[[str, str], dict]:
    def check(text: str, fmt: str) -> dict:
        from ..answer import report      # imported on first use: it loads the pipeline
        return report(text, ctx, fmt=fmt, threshold=gate).to_dict()
    return check


def _within_markers(text: str, fmt: str, cap: int) -> None:
    """AnswerError when the answer has more citations than `cap` (ANSWER_MAX_MARKERS),
    as its reader counts them."""
    from ..answer.read import DANGLING
    from ..extract import READERS, detect
    if fmt not in READERS:
        fmt = detect(text)
    parsed = READERS[fmt].parse(text)
    count = len(parsed.anchors) + sum(p.kind == DANGLING for p in parsed.problems)
    if count > cap:
        raise AnswerError(f"the answer has {count:,} citations, over the {cap:,} read from one answer "
                          "(ANSWER_MAX_MARKERS): check it in parts")


def answering(ctx: RunContext, check: Callable[[str, str], dict]) -> Callable[[str, str], dict]:
    """check(text, fmt) within the answer limits (module rules): Refused 413, 422 or 503 when not."""
    from ..cache import CacheMiss
    from ..extract.command import within_report_cap
    settings = ctx.settings

    def answered(text: str, fmt: str) -> dict:
        size = len(text.encode("utf-8"))
        if size > settings.answer_max_bytes:
            raise Refused(413, f"the answer is {size:,} bytes, over the {settings.answer_max_bytes:,}-byte "
                               "limit for an answer (ANSWER_MAX_BYTES)")
        try:
            _within_markers(text, fmt, settings.answer_max_markers)
            result = check(text, fmt)
            within_report_cap(len(json.dumps(result, ensure_ascii=False).encode()), ctx, "the report")
        except AnswerError as exc:
            raise Refused(422, config.redact(str(exc))) from None
        except CacheMiss as exc:
            why = f"offline (CITECHECK_OFFLINE=1) and not in the cache: {exc}"
            raise Refused(503, config.redact(why)) from None
        return {**result, "problems": [p.replace(HOW_TO_NAME, LOCAL_FILES) for p in result["problems"]]}
    return answered


def problem_links(problems: list[str]) -> list[tuple[str, int | None]]:
    """Each problem line with the sentence it is about (None: a reading problem, at its position)."""
    out = []
    for line in problems:
        found = _SENTENCE.match(line)
        out.append((line, int(found.group(1) or found.group(2)) if found else None))
    return out


def attach(app: FastAPI, ctx: RunContext, lanes: Lanes, gate: Gate, error_docs: dict,
           check: Callable[[str, str], dict] | None = None) -> None:
    """Add POST /check-answer, and the page (`/`, /login, /logout, /check-answer/page: module rules)."""
    answered = answering(ctx, check or _checking(ctx, gate))
    docs = {**error_docs, 413: {"model": error_docs[413]["model"],
                                "description": "body over its limit, or answer over ANSWER_MAX_BYTES"}}

    @app.post("/check-answer", response_model=AnswerReport, responses=docs)
    async def check_answer(body: AnswerRequest) -> dict:
        """One answer's report: every marker against its own source, every sentence against the sources it
        cites, uncited claims, citation precision and recall (`check-answer --json`)."""
        text, fmt = body.answer, body.format
        try:
            return await lanes.run(lambda: answered(text, fmt), "the answer's check")
        except Refused as exc:         # a 422 in the validation errors' shape, as the schema says
            detail = [{"loc": ["body", "answer"], "msg": exc.detail, "type": "value_error"}] \
                if exc.status == 422 else exc.detail
            return JSONResponse({"detail": detail}, status_code=exc.status, headers=exc.headers)

    if not enabled(ctx.settings):
        async def off():
            return PlainTextResponse(f"the answer page is off: set {TOKEN} to turn it on", status_code=404)
        for path in (PAGE, "/login", "/logout", FORM):
            app.add_api_route(path, off, methods=["GET", "POST"], include_in_schema=False)
        return
    _page(app, Keys(ctx.settings.secrets.require(TOKEN)), lanes, answered, gate.headline())


def _page(app: FastAPI, keys: Keys, lanes: Lanes, answered: Callable[[str, str], dict],
          gate_line: str) -> None:
    """The page's routes (module rules)."""
    from ..report.answer_html import _clean as redacted
    throttle = Throttle()

    def who(request: Request) -> Reviewer | None:
        token = bearer(request.headers.get("authorization"))
        if token is not None:
            client = request.client.host if request.client else "?"
            return Reviewer("token", None) if throttle.check(client, token, keys) else None
        return keys.reviewer(request.cookies.get(COOKIE))

    async def form(request: Request) -> dict[str, str]:
        kind = request.headers.get("content-type", "").split(";")[0].strip()
        if kind != "application/x-www-form-urlencoded":
            return {}
        try:
            parsed = parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True,
                              max_num_fields=8)
        except ValueError:                       # more fields than the form has: none is read
            return {}
        return {k: v[0] for k, v in parsed.items()}

    async def page(status: int = 200, user: Reviewer | None = None, **values) -> HTMLResponse:
        values = {"answer": "", "fmt": "auto", "report": None, "message": None, "failed": False, **values}
        csrf = keys.csrf(user.session) if user and user.session else ""
        headers = {**HEADERS, "Content-Security-Policy": render_html.content_security_policy()}
        try:
            body = await asyncio.wait_for(asyncio.to_thread(
                render_html.render, "answer_page.html", reviewer=None, user=user, csrf=csrf,
                gate_line=gate_line, formats=ANSWER_FORMAT_CHOICES, marked=(CITED, UNCITED), **values),
                RENDER_SECONDS)
        except TimeoutError:
            status, body = 503, (f"the report took longer than {RENDER_SECONDS:g} s to prepare and was given "
                                 "up (the server is still answering): try again later")
            headers["Retry-After"] = str(math.ceil(RENDER_SECONDS))
        if status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="citecheck"'
        return HTMLResponse(body, status_code=status, headers=headers)

    def locked(exc: LockedOut) -> Callable:
        async def respond():
            response = await page(429, message=f"too many failed logins from this address: try again in "
                                               f"{exc.retry_after} s")
            response.headers["Retry-After"] = str(exc.retry_after)
            return response
        return respond

    async def writing(request: Request) -> tuple[Reviewer | None, dict, HTMLResponse | None]:
        """Who writes and the form, or the response refusing it (cross-site, 401, a bad CSRF token)."""
        if cross_site(request.headers, f"{request.url.scheme}://{request.headers.get('host', '')}"):
            return None, {}, await page(403, message="cross-site request refused")
        try:
            user = who(request)
        except LockedOut as exc:
            return None, {}, await locked(exc)()
        values = await form(request)
        if user is None:
            return None, values, await page(401)
        if user.session is not None and not keys.csrf_ok(user.session, values.get("csrf")):
            return None, values, await page(403, user, message="this form has expired or did not come from "
                                                                "this page: reload the page and try again")
        return user, values, None

    @app.get(PAGE, include_in_schema=False)
    async def home(request: Request):
        try:
            user = who(request)
        except LockedOut as exc:
            return await locked(exc)()
        return await page(200 if user else 401, user)

    @app.get("/login", include_in_schema=False)
    async def login_form():
        return RedirectResponse(PAGE, status_code=303)

    @app.post("/login", include_in_schema=False)
    async def login(request: Request):
        if cross_site(request.headers, f"{request.url.scheme}://{request.headers.get('host', '')}"):
            return await page(403, message="cross-site request refused")
        client = request.client.host if request.client else "?"
        try:
            right = throttle.check(client, (await form(request)).get("token"), keys)
        except LockedOut as exc:
            return await locked(exc)()
        if not right:
            return await page(401, failed=True)
        response = RedirectResponse(PAGE, status_code=303)
        response.set_cookie(COOKIE, keys.session("answer page"), max_age=SESSION_HOURS * 3600, path="/",
                            httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response

    @app.post("/logout", include_in_schema=False)
    async def logout(request: Request):
        user, _, refusal = await writing(request)
        if refusal is not None:
            return refusal
        response = RedirectResponse(PAGE, status_code=303)
        response.delete_cookie(COOKIE, path="/")
        if user.session is not None:             # a Bearer script has no session to end
            keys.revoke(user.session)
        return response

    @app.post(FORM, include_in_schema=False)
    async def check_page(request: Request):
        user, values, refusal = await writing(request)
        if refusal is not None:
            return refusal
        text, fmt = values.get("answer", "").removeprefix("\ufeff"), values.get("format", "auto")
        shown = {"answer": text, "fmt": fmt}
        if not text.strip() or fmt not in ANSWER_FORMAT_CHOICES:
            return await page(422, user, message="paste an answer and choose one of the formats", **shown)
        try:
            report = await lanes.run(lambda: answered(text, fmt), "the answer's check")
        except Refused as exc:
            response = await page(exc.status, user, message=exc.detail, **shown)
            response.headers.update(exc.headers)
            return response
        report = redacted(report)
        return await page(200, user, report=report, problems=problem_links(report["problems"]),
                          headline=[ratio_line("citation_precision", *report["summary"]["precision_of"]),
                                    ratio_line("citation_recall", *report["summary"]["recall_of"])], **shown)
