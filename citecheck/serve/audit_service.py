"""The API's audit: one `Writer` per app, and the hook that audits every /verify answer through it.

Rules:
- An app has a writer when AUDIT_DB is set (every /verify is audited there, batch `api`) or when the
  review page is on (its decisions are written to the journal, AUDIT_DB else audit.db); else none.
- A verification is queued for the writer by the worker thread that ran it, as its work ends, whether
  or not its request is still waiting: one that overran API_DEADLINE (the client got 504) was still
  decided, so it is still audited.
- The writer is closed, its queue drained, when the app shuts down (the app's lifespan).
"""
from __future__ import annotations

import contextlib
from typing import Callable

from ..audit import API_BATCH
from ..audit.writer import Writer
from ..config import Settings


def open_writer(settings: Settings, *, review: bool) -> Writer | None:
    """The app's writer (see module rules), already migrated; None when nothing is written."""
    if settings.audit_db is not None:
        return Writer(settings.audit_db)
    return Writer(settings.journal) if review else None


Verify = Callable[[str, list[str]], dict]


def auditing(verify: Verify, writer: Writer) -> Verify:
    """`verify`, queueing each answer's citations (each with the model that answered it and the texts it
    carried) for the writer before it returns (batch `api`)."""
    from ..verify import audit_claim

    def verify_and_audit(claim: str, urls: list[str], **quotes) -> dict:
        result = verify(claim, urls, **quotes)
        writer.submit(lambda conn: audit_claim(conn, API_BATCH, result, quotes.get("quotes")))
        return result
    return verify_and_audit


def closing(writer: Writer | None):
    """A FastAPI lifespan that closes `writer` (running what is queued) at shutdown."""
    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            if writer is not None:
                writer.close()
    return lifespan
