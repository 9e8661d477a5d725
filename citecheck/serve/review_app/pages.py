"""The /review routes: login, the queue, one item, a decision (see `review_app` for the rules)."""
from __future__ import annotations

import asyncio
import base64
import json
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
from .auth import COOKIE, Keys, Reviewer

HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store"}
STATUS_OF = {"missing": 404, "stale": 409, "reviewed": 409, "invalid": 422}


def item_key(row: dict) -> str:
    """An item's (batch, id, url) as one URL-safe parameter."""
    raw = json.dumps([row["batch"], row["id"], row["url"]], ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def parse_key(value: str | None) -> tuple[str, str, str] | None:
    try:
        raw = base64.urlsafe_b64decode((value or "") + "=" * (-len(value or "") % 4))
        batch, item_id, url = json.loads(raw.decode("utf-8"))
    except (ValueError, TypeError, UnicodeError):
        return None
    return (batch, item_id, url) if all(isinstance(v, str) for v in (batch, item_id, url)) else None


def _key_dict(key: tuple) -> dict:
    return dict(zip(("batch", "id", "url"), key))


def router(keys: Keys, writer, journal: Path, threshold: float) -> APIRouter:
    """The routes over one audit DB; `writer` is the app's audit writer (it has migrated the DB)."""
    routes = APIRouter()
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

    def page(template: str, status: int = 200, reviewer: Reviewer | None = None, **values) -> HTMLResponse:
        csrf = keys.csrf(reviewer.session) if reviewer and reviewer.session else ""
        body = render_html.render(template, reviewer=reviewer, csrf=csrf, threshold=threshold,
                                  item_key=item_key, urlencode=urlencode, **values)
        headers = {**HEADERS, "Content-Security-Policy": render_html.content_security_policy()}
        return HTMLResponse(body, status_code=status, headers=headers)

    def who(request: Request) -> Reviewer | None:
        token = auth.bearer(request.headers.get("authorization"))
        if token is not None:
            return Reviewer("token", None) if keys.token_ok(token) else None
        return keys.reviewer(request.cookies.get(COOKIE))

    def viewing(request: Request) -> tuple[Reviewer | None, queue.Filters, str]:
        """Who asks (None: refuse), the filters, and the review a `saved=` parameter names."""
        return who(request), queue.Filters.read(request.query_params), request.query_params.get("saved", "")

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
    async def login(request: Request):
        if auth.cross_site(request.headers, origin(request)):
            return problem(403, "cross-site request refused", None)
        values = await form(request)
        name = auth.clean_name(values.get("name"))
        if not name or not keys.token_ok(values.get("token")):
            response = page("login.html", 401, failed=True, next_url="")
            response.headers["WWW-Authenticate"] = 'Bearer realm="citecheck review"'
            return response
        response = RedirectResponse("/review", status_code=303)
        response.set_cookie(COOKIE, keys.session(name), max_age=auth.SESSION_HOURS * 3600, path="/review",
                            httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response

    @routes.post("/logout")
    async def logout(request: Request):
        reviewer, _, refusal = await writing(request)
        if refusal is not None:
            return refusal
        response = RedirectResponse("/review/login", status_code=303)
        response.delete_cookie(COOKIE, path="/review")
        return response

    @routes.get("")
    @routes.get("/")
    async def queue_page(request: Request):
        reviewer, filters, saved = viewing(request)
        if reviewer is None:
            return refused()
        number = _page_number(request.query_params.get("page", ""))
        shown, menus, done = await read(lambda conn: (queue.page(conn, filters, number), queue.choices(conn),
                                                      _saved(conn, saved)))
        return page("queue.html", reviewer=reviewer, filters=filters, shown=shown, views=queue.VIEWS,
                    no_reason=queue.NO_REASON, saved=done, per_page=queue.PER_PAGE, **menus)

    @routes.get("/item")
    async def item_page(request: Request):
        reviewer, filters, saved = viewing(request)
        if reviewer is None:
            return refused()
        key = parse_key(request.query_params.get("k"))
        if key is None:
            return problem(404, "no such citation: the link is malformed", reviewer, "/review")

        def gather(conn):
            rows = queue.load(conn, [key])
            if not rows:
                return None
            keys_in_view = queue.ordered_keys(conn, filters)
            return (rows[0], queue.neighbours(keys_in_view, key), len(keys_in_view),
                    reviews.history(conn, *key), _saved(conn, saved))

        found = await read(gather)
        if found is None:
            return problem(404, f"no citation {key[1]} ({key[2]}) in batch {key[0]}: it was never decided, "
                                "or was removed", reviewer, "/review?" + urlencode(filters.query()))
        row, (before, after, position), total, history, done = found
        return page("item.html", reviewer=reviewer, filters=filters, row=row, before=before, after=after,
                    position=position, total=total, history=history, saved=done,
                    passages=render_html.passages_of(row), diff=render_html.misquote_diff(row),
                    reason=REASONS.get(row["reason"] or ""), labels=labels_of(row["flow"]),
                    key_of=lambda k: item_key(_key_dict(k)))

    @routes.post("/decide")
    async def decide(request: Request):
        reviewer, values, refusal = await writing(request)
        if refusal is not None:
            return refusal
        filters = queue.Filters.read(values)
        key = parse_key(values.get("k"))
        if key is None:
            return problem(404, "no such citation: the form is malformed", reviewer, "/review")
        seen = values.get("seen_review", "")
        decision = reviews.Decision(*key, decided_at=values.get("decided_at", ""),
                                    seen_review=int(seen) if seen.isdigit() else None,
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


def _saved(conn: sqlite3.Connection, value: str) -> dict | None:
    """The review a `saved=` parameter names (the one just recorded), for the page's confirmation line."""
    row = conn.execute("SELECT * FROM reviews WHERE review_id = ?", (int(value),)).fetchone() \
        if value.isdigit() else None
    return dict(row) if row else None


def _page_number(value: str) -> int:
    return int(value) if value.isdigit() else 1
