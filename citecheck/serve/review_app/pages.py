"""The /review routes: login, the queue, one item, a decision (see `review_app` for the rules).

Rules:
- Every parameter is untrusted: a value longer than MAX_PARAM characters, a number that is not ASCII
  digits within its bounds (page 1..MAX_PAGE, a review id 1..MAX_ID), or a malformed item key (also one
  nested too deep to decode) is 400 with a short message naming the parameter, never a 500.
- A login or Bearer request the lock refuses unchecked (`auth.Throttle`) gets 429 with Retry-After.
- A page whose work grows with what the DB holds (the queue, an item: its passages marked, its diff) is
  read and rendered in a worker thread (`read`), never on the event loop, under RENDER_SECONDS: past it
  the request gets a 503 message page with Retry-After and the server keeps answering everything else
  (the thread finishes on its own; marking is linear, see `render_html`).
"""
from __future__ import annotations

import asyncio
import base64
import functools
import json
import math
import sqlite3
from pathlib import Path
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ... import audit
from ...audit import reviews
from ...report import render_html
from ...vocabulary import REASONS, labels_of
from . import auth, queue
from .auth import COOKIE, Keys, LockedOut, Reviewer

HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store"}
STATUS_OF = {"missing": 404, "stale": 409, "reviewed": 409, "invalid": 422}
MAX_PARAM = 8192        # characters in one parameter (an item key holds a URL)
MAX_PAGE = 1_000_000
MAX_ID = 2 ** 63 - 1    # SQLite's largest integer
RENDER_SECONDS = 10.0   # a page read and rendered off the loop gets this long, then 503


class BadParameter(ValueError):
    """A request parameter that is malformed or out of bounds (400; the message names it)."""


class TooSlow(Exception):
    """A page that was not rendered within RENDER_SECONDS (503)."""


def whole(params, name: str, maximum: int) -> int | None:
    """A whole-number parameter from 1 to `maximum` (ASCII digits only); None when absent or empty."""
    value = params.get(name) or ""
    if not value:
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > len(str(maximum)) \
            or not 1 <= int(value) <= maximum:
        raise BadParameter(f"{name} must be a whole number from 1 to {maximum}")
    return int(value)


def bounded(params) -> None:
    """BadParameter when any parameter is longer than MAX_PARAM characters."""
    for name, value in params.items():
        if len(name) > MAX_PARAM or len(value) > MAX_PARAM:
            raise BadParameter(f"a parameter is longer than {MAX_PARAM} characters")


def item_key(row: dict) -> str:
    """An item's (batch, id, url) as one URL-safe parameter."""
    raw = json.dumps([row["batch"], row["id"], row["url"]], ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def parse_key(value: str | None) -> tuple[str, str, str] | None:
    """An item key's (batch, id, url), or None when it is malformed (nested too deep included)."""
    if value is None or len(value) > MAX_PARAM:
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        batch, item_id, url = json.loads(raw.decode("utf-8"))
    except (ValueError, TypeError, UnicodeError, RecursionError):
        return None
    return (batch, item_id, url) if all(isinstance(v, str) for v in (batch, item_id, url)) else None


def _key_dict(key: tuple) -> dict:
    return dict(zip(("batch", "id", "url"), key))


def router(keys: Keys, writer, journal: Path, gate_line: str) -> APIRouter:
    """The routes over one audit DB; `writer` is the app's audit writer (it has migrated the DB)."""
    routes = APIRouter()
    throttle = auth.Throttle()
    uri = Path(journal).resolve().as_uri() + "?mode=ro"

    def read(fn):
        """Run fn(conn) on a fresh read-only connection, off the event loop."""
        def run():
            conn = sqlite3.connect(uri, uri=True, timeout=30)
            conn.row_factory = sqlite3.Row
            try:
                return fn(conn)
            finally:
                conn.close()
        return asyncio.to_thread(run)

    async def rendered(fn):
        """fn(conn) through `read`, under RENDER_SECONDS (TooSlow past it: module rules)."""
        try:
            return await asyncio.wait_for(read(fn), RENDER_SECONDS)
        except TimeoutError:
            raise TooSlow from None

    def html(template: str, reviewer: Reviewer | None = None, **values) -> str:
        csrf = keys.csrf(reviewer.session) if reviewer and reviewer.session else ""
        return render_html.render(template, reviewer=reviewer, csrf=csrf, gate_line=gate_line,
                                  item_key=item_key, urlencode=urlencode, **values)

    def respond(body: str, status: int = 200) -> HTMLResponse:
        headers = {**HEADERS, "Content-Security-Policy": render_html.content_security_policy()}
        return HTMLResponse(body, status_code=status, headers=headers)

    def page(template: str, status: int = 200, reviewer: Reviewer | None = None, **values) -> HTMLResponse:
        return respond(html(template, reviewer, **values), status)

    def client(request: Request) -> str:
        return request.client.host if request.client else "?"

    def token_ok(request: Request, token: str | None) -> bool:
        """The token's check, counted per client (`auth.Throttle`: LockedOut when it may not be checked)."""
        return throttle.check(client(request), token, keys)

    def who(request: Request) -> Reviewer | None:
        token = auth.bearer(request.headers.get("authorization"))
        if token is not None:
            return Reviewer("token", None) if token_ok(request, token) else None
        return keys.reviewer(request.cookies.get(COOKIE))

    def viewing(request: Request) -> tuple[Reviewer | None, queue.Filters, int | None]:
        """Who asks (None: refuse), the filters, and the review a `saved=` parameter names (BadParameter
        when a parameter is malformed: only asked of an authenticated request)."""
        reviewer = who(request)
        if reviewer is None:
            return None, queue.Filters(), None
        bounded(request.query_params)
        return reviewer, queue.Filters.read(request.query_params), whole(request.query_params, "saved", MAX_ID)

    def untrusting(route):
        """The route, with a BadParameter answered 400 and a LockedOut 429 (module rules)."""
        @functools.wraps(route)
        async def guarded(request: Request):
            try:
                return await route(request)
            except BadParameter as exc:
                return problem(400, str(exc), keys.reviewer(request.cookies.get(COOKIE)), "/review")
            except LockedOut as exc:
                response = problem(429, "too many failed logins from this address: try again in "
                                        f"{exc.retry_after} s", None)
                response.headers["Retry-After"] = str(exc.retry_after)
                return response
            except TooSlow:
                response = problem(503, f"this page took longer than {RENDER_SECONDS:g} s to prepare and was "
                                        "given up (the server is still answering): try again later, or go "
                                        "back to the queue", keys.reviewer(request.cookies.get(COOKIE)),
                                   "/review")
                response.headers["Retry-After"] = str(math.ceil(RENDER_SECONDS))
                return response
        return guarded

    def refused(status: int = 401) -> HTMLResponse:
        response = page("login.html", status, failed=False, next_url="")
        if status == 401:
            response.headers["WWW-Authenticate"] = 'Bearer realm="citecheck review"'
        return response

    def origin(request: Request) -> str:
        return f"{request.url.scheme}://{request.headers.get('host', '')}"

    async def form(request: Request) -> dict[str, str]:
        kind = request.headers.get("content-type", "").split(";")[0].strip()
        if kind != "application/x-www-form-urlencoded":
            return {}
        parsed = parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
        return {k: v[0] for k, v in parsed.items()}

    def problem(status: int, message: str, reviewer: Reviewer | None, back: str = "") -> HTMLResponse:
        return page("message.html", status, reviewer, message=message, back=back)

    async def writing(request: Request) -> tuple[Reviewer | None, dict, Response | None]:
        """The reviewer and form of a write, or the response refusing it (cross-site, 401, bad CSRF)."""
        if auth.cross_site(request.headers, origin(request)):
            return None, {}, problem(403, "cross-site request refused", None)
        reviewer, values = who(request), await form(request)
        if reviewer is None:
            return None, values, refused()
        if reviewer.session is not None and not keys.csrf_ok(reviewer.session, values.get("csrf")):
            return None, values, problem(403, "this form has expired or did not come from this page: "
                                              "reload the page and try again", reviewer)
        if reviewer.session is None:
            reviewer = Reviewer(auth.clean_name(values.get("reviewer")) or "token", None)
        return reviewer, values, None

    @routes.get("/login")
    async def login_form(request: Request):
        return page("login.html", failed=False, next_url="")

    @routes.post("/login")
    @untrusting
    async def login(request: Request):
        if auth.cross_site(request.headers, origin(request)):
            return problem(403, "cross-site request refused", None)
        values = await form(request)
        name = auth.clean_name(values.get("name"))
        if not token_ok(request, values.get("token")) or not name:
            response = page("login.html", 401, failed=True, next_url="")
            response.headers["WWW-Authenticate"] = 'Bearer realm="citecheck review"'
            return response
        response = RedirectResponse("/review", status_code=303)
        response.set_cookie(COOKIE, keys.session(name), max_age=auth.SESSION_HOURS * 3600, path="/review",
                            httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response

    @routes.post("/logout")
    @untrusting
    async def logout(request: Request):
        reviewer, _, refusal = await writing(request)
        if refusal is not None:
            return refusal
        if reviewer.session is not None:
            keys.revoke(reviewer.session)
        response = RedirectResponse("/review/login", status_code=303)
        response.delete_cookie(COOKIE, path="/review")
        return response

    @routes.get("")
    @routes.get("/")
    @untrusting
    async def queue_page(request: Request):
        reviewer, filters, saved = viewing(request)
        if reviewer is None:
            return refused()
        number = whole(request.query_params, "page", MAX_PAGE) or 1

        def gather(conn):
            return html("queue.html", reviewer, filters=filters, shown=queue.page(conn, filters, number),
                        views=queue.VIEWS, no_reason=queue.NO_REASON, saved=_saved(conn, saved),
                        per_page=queue.PER_PAGE, **queue.choices(conn))

        return respond(await rendered(gather))

    @routes.get("/item")
    @untrusting
    async def item_page(request: Request):
        reviewer, filters, saved = viewing(request)
        if reviewer is None:
            return refused()
        key = parse_key(request.query_params.get("k"))
        if key is None:
            return problem(400, "no such citation: the link is malformed", reviewer, "/review")

        def gather(conn):
            rows = queue.load(conn, [key])
            if not rows:
                return None
            row, keys_in_view = rows[0], queue.ordered_keys(conn, filters)
            before, after, position = queue.neighbours(keys_in_view, key)
            return html("item.html", reviewer, filters=filters, row=row, before=before, after=after,
                        position=position, total=len(keys_in_view), history=reviews.history(conn, *key),
                        saved=_saved(conn, saved), passages=render_html.passages_of(row),
                        diff=render_html.misquote_diff(row), reason=REASONS.get(row["reason"] or ""),
                        labels=labels_of(row["flow"]), key_of=lambda k: item_key(_key_dict(k)))

        body = await rendered(gather)
        if body is None:
            return problem(404, f"no citation {key[1]} ({key[2]}) in batch {key[0]}: it was never decided, "
                                "or was removed", reviewer, "/review?" + urlencode(filters.query()))
        return respond(body)

    @routes.post("/decide")
    @untrusting
    async def decide(request: Request):
        reviewer, values, refusal = await writing(request)
        if refusal is not None:
            return refusal
        bounded(values)
        filters = queue.Filters.read(values)
        key = parse_key(values.get("k"))
        if key is None:
            return problem(400, "no such citation: the form is malformed", reviewer, "/review")
        decision = reviews.Decision(*key, decided_at=values.get("decided_at", ""),
                                    seen_review=whole(values, "seen_review", MAX_ID),
                                    action=values.get("action", ""), label=values.get("label") or None,
                                    note=values.get("note", "")[:4000], reviewer=reviewer.name)
        back = "/review/item?" + urlencode({"k": values.get("k", ""), **filters.query()})
        try:
            saved = await asyncio.wrap_future(writer.submit(lambda conn: reviews.record(conn, decision,
                                                                                        audit.utc_now())))
        except reviews.ReviewRefused as exc:
            return problem(STATUS_OF[exc.kind], str(exc), reviewer, back)
        if reviewer.session is None:                     # a script: the review it recorded
            return Response(json.dumps(saved), media_type="application/json", headers=HEADERS)
        following = await read(lambda conn: queue.after(conn, filters, queue.load(conn, [key])[0]))
        done = filters.query(saved=saved["review_id"])
        if following is None:
            return RedirectResponse("/review?" + urlencode(done), 303)
        next_item = {"k": item_key(_key_dict(following)), **done}
        return RedirectResponse("/review/item?" + urlencode(next_item), 303)

    return routes


def _saved(conn: sqlite3.Connection, review_id: int | None) -> dict | None:
    """The review a `saved=` parameter names (the one just recorded), for the page's confirmation line."""
    row = conn.execute("SELECT * FROM reviews WHERE review_id = ?", (review_id,)).fetchone() \
        if review_id is not None else None
    return dict(row) if row else None
