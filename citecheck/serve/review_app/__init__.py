"""review_app: `/review`, the server-rendered review page over the audit DB, inside `serve`.

Rules:
- Off unless REVIEW_TOKEN is set: then every /review path answers 404 naming the variable. `serve` binds
  loopback unless the operator asks otherwise (`api`).
- Every request is authenticated and every write is CSRF-checked (`review_app.auth`); everything shown
  is escaped (`render_html`); pages carry no script and a Content-Security-Policy that forbids one.
- The queue is in the package's order (`review.queue_key`), filterable by batch, reason and view, PER_PAGE
  items a page (`review_app.queue`). An item shows the claim, its URL or section, label, reason,
  confidence, the passages the judge read with the evidence quote marked (the word diff for a
  misquote), its review history, and a form to confirm or correct the label with a note.
- Decisions go to the `reviews` table through the app's one writer thread (`audit.reviews.record`):
  a review of a row that does not exist, was decided again or was reviewed meanwhile is refused with a
  message and nothing is overwritten. Reads use their own read-only connections.
"""
from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import PlainTextResponse

from ...config import Settings
from ...context import RunContext

TOKEN = "REVIEW_TOKEN"


def enabled(settings: Settings) -> bool:
    return settings.secrets.has(TOKEN)


def status(settings: Settings) -> str:
    """One line for `serve`'s start: whether /review is on, and over which DB."""
    if not enabled(settings):
        return f"/review is off (set {TOKEN} to turn it on)"
    return f"/review is on, over {settings.journal} (log in with {TOKEN})"


def attach(app: FastAPI, ctx: RunContext, writer, gate_line: str) -> None:
    """Add /review to the app: the pages when REVIEW_TOKEN is set, else a 404 naming it."""
    if not enabled(ctx.settings):
        async def off(path: str = ""):
            return PlainTextResponse(f"the review page is off: set {TOKEN} to turn it on", status_code=404)
        for path in ("/review", "/review/{path:path}"):
            app.add_api_route(path, off, methods=["GET", "POST"], include_in_schema=False)
        return
    from .auth import Keys
    from .pages import router
    keys = Keys(ctx.settings.secrets.require(TOKEN))
    app.include_router(router(keys, writer, ctx.settings.journal, gate_line), prefix="/review",
                       include_in_schema=False)
