"""`replay RID`: read a stored page back from the Crawlbase Storage API.

Rules:
- The page is asked for by rid with CRAWLBASE_TOKEN or CRAWLBASE_JS_TOKEN (either of the account's
  tokens works). It is a live lookup and is not cached: the point of an audit is to read what
  Crawlbase holds now.
- The page is printed through `config.redact` (a page that echoes a token shows the variable's name)
  and `config.printable` (its control characters escaped; its lines kept).
- Only rids are ever stored (the audit `rid` column): never a storage URL, never a token.
"""
from __future__ import annotations

import sys

from ...config import MissingSetting, Settings, printable, redact
from ...context import RunContext
from .crawlbase import point_sdk_at_api_url


def storage_token(settings: Settings) -> str:
    """CRAWLBASE_TOKEN, else CRAWLBASE_JS_TOKEN; neither set is an error naming the variable."""
    for name in ("CRAWLBASE_TOKEN", "CRAWLBASE_JS_TOKEN"):
        if settings.secrets.has(name):
            return settings.secrets.require(name)
    raise MissingSetting("CRAWLBASE_TOKEN", "set it (or CRAWLBASE_JS_TOKEN) to read stored pages "
                         "through the Crawlbase Storage API")


def replay(rid: str, settings: Settings) -> str:
    """The page Crawlbase stored under `rid`, as stored (HTML)."""
    rid = (rid or "").strip()
    if not rid or any(ch.isspace() for ch in rid) or rid.startswith(("http://", "https://")):
        raise ValueError(f"{rid!r} is not a rid: pass the rid column of the audit table "
                         "(an empty rid means no page was stored for that citation)")
    from crawlbase import StorageAPI
    point_sdk_at_api_url(settings)
    api = StorageAPI({"token": storage_token(settings), "timeout": 60})
    try:
        response = api.get(rid, {"format": "html"})   # a fresh dict: the SDK mutates its default
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        raise OSError(settings.secrets.redact(f"Crawlbase Storage API unreachable: {reason}")) from None
    status = response.get("status_code")
    if status == 404:
        raise LookupError(f"no stored page for rid {rid} (never stored, expired or deleted)")
    if status != 200:
        raise OSError(f"Crawlbase Storage API answered HTTP {status} for rid {rid}")
    body = response.get("body") or b""
    return body.decode("utf-8", errors="replace") if isinstance(body, bytes) else str(body)


# ---------------------------------------------------------------- CLI: python -m citecheck replay

def add_arguments(parser) -> None:
    parser.add_argument("rid", help="the rid column of the audit table")


def run(args, ctx: RunContext) -> int:
    try:
        page = replay(args.rid, ctx.settings)
    except LookupError as exc:
        print(f"citecheck replay: error: {exc}", file=sys.stderr)
        return 1
    page = printable(redact(page), lines=True)
    sys.stdout.write(page if page.endswith("\n") else page + "\n")
    return 0
