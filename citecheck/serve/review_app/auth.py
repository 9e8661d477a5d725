"""Who may use the review page, and which writes are the reviewer's own.

Rules:
- One secret, REVIEW_TOKEN (at least MIN_TOKEN characters). A script sends it as `Authorization: Bearer
  <token>`; a person types it once into the login form, which sets a session cookie instead.
- The cookie never holds the token: it is `name.issued.signature`, an HMAC-SHA256 (keyed by the token) of
  the reviewer's name and the time it was issued; HttpOnly, SameSite=Strict, Path=/review, Secure over
  https; valid for SESSION_HOURS. Changing REVIEW_TOKEN ends every session.
- Tokens and signatures are compared in constant time; a wrong or missing one gets 401 and the same words
  whatever was wrong (nothing about the token).
- CSRF: every write (POST) is refused when the browser says it is cross-site (`Sec-Fetch-Site`) or its
  `Origin` is not this server's; a write authenticated by cookie must also carry the form's token, an
  HMAC of the session cookie (a Bearer write needs none: a browser never adds that header by itself).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass

COOKIE = "citecheck_review"
SESSION_HOURS = 12
MIN_TOKEN = 16
MAX_NAME = 60


@dataclass(frozen=True)
class Reviewer:
    name: str
    session: str | None     # the cookie value (None: a Bearer request)


class Keys:
    """The HMAC keys derived from REVIEW_TOKEN (the token itself is only compared, never stored)."""

    def __init__(self, token: str):
        if len(token) < MIN_TOKEN:
            raise ValueError(f"REVIEW_TOKEN must be at least {MIN_TOKEN} characters (a long random secret)")
        self._token = hashlib.sha256(token.encode("utf-8")).digest()
        self._cookie = hmac.new(self._token, b"citecheck review cookie", hashlib.sha256).digest()
        self._csrf = hmac.new(self._token, b"citecheck review csrf", hashlib.sha256).digest()

    def __repr__(self) -> str:
        return "Keys(<REVIEW_TOKEN>)"

    def token_ok(self, offered: str | None) -> bool:
        digest = hashlib.sha256((offered or "").encode("utf-8")).digest()
        return offered is not None and hmac.compare_digest(digest, self._token)

    def _sign(self, payload: str) -> str:
        return hmac.new(self._cookie, payload.encode("ascii"), hashlib.sha256).hexdigest()

    def session(self, name: str, now: float | None = None) -> str:
        """A new session cookie value for `name`."""
        encoded = base64.urlsafe_b64encode(name.encode("utf-8")).decode("ascii").rstrip("=")
        payload = f"{encoded}.{int(time.time() if now is None else now)}"
        return f"{payload}.{self._sign(payload)}"

    def reviewer(self, cookie: str | None, now: float | None = None) -> Reviewer | None:
        """The reviewer a session cookie names, or None when it is not valid (forged, expired, malformed)."""
        try:
            encoded, issued, signature = (cookie or "").split(".")
            if not hmac.compare_digest(self._sign(f"{encoded}.{issued}"), signature):
                return None
            age = (time.time() if now is None else now) - int(issued)
            if not 0 <= age <= SESSION_HOURS * 3600:
                return None
            name = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8")
        except (ValueError, UnicodeError):
            return None
        return Reviewer(name, cookie)

    def csrf(self, session: str) -> str:
        return hmac.new(self._csrf, session.encode("ascii"), hashlib.sha256).hexdigest()

    def csrf_ok(self, session: str, offered: str | None) -> bool:
        return offered is not None and hmac.compare_digest(self.csrf(session), offered)


def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, else None."""
    scheme, _, value = (header or "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def clean_name(name: str | None) -> str:
    """A reviewer's name as recorded: printable, single-spaced, at most MAX_NAME characters."""
    return " ".join("".join(ch for ch in (name or "") if ch.isprintable()).split())[:MAX_NAME]


def cross_site(headers, base_origin: str) -> bool:
    """True when the browser says this request comes from another site, or its Origin is not ours."""
    if headers.get("sec-fetch-site", "").lower() in ("cross-site", "same-site"):
        return True
    origin = headers.get("origin")
    return origin is not None and origin.rstrip("/").lower() != base_origin.rstrip("/").lower()
