"""Who may use the review page, and which writes are the reviewer's own.

Rules:
- One secret, REVIEW_TOKEN, strong enough (`config.review_token_problem`: the error says how to make
  one). A script sends it as `Authorization: Bearer
  <token>`; a person types it once into the login form, which sets a session cookie instead.
- The cookie never holds the token: it is `name.issued.signature`, an HMAC-SHA256 of the reviewer's name
  and the time it was issued, keyed by the token and a random key drawn when the server starts; HttpOnly,
  SameSite=Strict, Path=/review, Secure over https; valid for SESSION_HOURS. Changing REVIEW_TOKEN or
  restarting the server ends every session. Logging out revokes that cookie on the server (its
  signature, kept in memory until it would have expired: a revocation lives exactly as long as any
  cookie it could refuse).
- Failed logins are counted per client address (`Throttle`), as distinct wrong tokens (one already
  refused within WINDOW guesses nothing new and is not counted again). After MAX_FAILURES within WINDOW
  seconds the address is locked until the oldest leaves the window: a token is then checked only when its
  fingerprint (an HMAC under a key drawn at start) falls in the right token's bucket (BUCKET_BITS of it),
  and at most MAX_FAILURES wrong ones of that bucket per WINDOW; every other request is 429 with
  Retry-After, unchecked. So the right token always passes, a guesser gets at most 2 x MAX_FAILURES
  checks a WINDOW, and locking the right token out takes MAX_FAILURES wrong tokens of its bucket, which no
  one can tell apart: some 10 x 2**24 requests a minute. Behind a proxy every client shares its address.
- Tokens and signatures are compared in constant time; a wrong or missing one gets 401 and the same words
  whatever was wrong (nothing about the token).
- CSRF: every write (POST) is refused when the browser says it is cross-site (`Sec-Fetch-Site`) or its
  `Origin` is not this server's; a write authenticated by cookie must also carry the form's token, an
  HMAC of the session cookie (a Bearer write needs none: a browser never adds that header by itself).
"""
from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

from ...config import review_token_problem

COOKIE = "citecheck_review"
SESSION_HOURS = 12
MAX_NAME = 60
MAX_FAILURES = 10       # failed logins per client address ...
WINDOW = 60.0           # ... within this many seconds, then 429 until the oldest leaves the window
BUCKET_BITS = 24        # of a token's fingerprint: a locked address's token is checked when they match
MAX_CLIENTS = 10_000    # addresses remembered at once (the oldest forgotten first)


class LockedOut(Exception):
    """Too many failed logins from this client (429 after `retry_after` seconds)."""

    def __init__(self, retry_after: int):
        super().__init__(retry_after)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Reviewer:
    name: str
    session: str | None     # the cookie value (None: a Bearer request)


class Keys:
    """The HMAC keys derived from REVIEW_TOKEN (the token itself is only compared, never stored)."""

    def __init__(self, token: str):
        if (weak := review_token_problem(token)) is not None:
            raise ValueError(weak)
        self._revoked: dict[str, int] = {}      # signature -> issued (module rules)
        self._token = hashlib.sha256(token.encode("utf-8")).digest()
        self._cookie = hmac.new(self._token, b"citecheck review cookie" + os.urandom(32), hashlib.sha256).digest()
        self._csrf = hmac.new(self._token, b"citecheck review csrf", hashlib.sha256).digest()
        self._fingerprints = os.urandom(32)
        self._bucket = self.bucket(self.fingerprint(token))

    def __repr__(self) -> str:
        return "Keys(<REVIEW_TOKEN>)"

    def token_ok(self, offered: str | None) -> bool:
        digest = hashlib.sha256((offered or "").encode("utf-8")).digest()
        return offered is not None and hmac.compare_digest(digest, self._token)

    def fingerprint(self, offered: str | None) -> bytes:
        """An HMAC of the offered token under a key drawn at start (`Throttle` counts it, never the token)."""
        return hmac.new(self._fingerprints, (offered or "").encode("utf-8"), hashlib.sha256).digest()

    @staticmethod
    def bucket(fingerprint: bytes) -> int:
        return int.from_bytes(fingerprint[:8], "big") >> (64 - BUCKET_BITS)

    def may_be_right(self, fingerprint: bytes) -> bool:
        """True when the fingerprint is in the right token's bucket (module rules)."""
        return self.bucket(fingerprint) == self._bucket

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
            if not 0 <= age <= SESSION_HOURS * 3600 or signature in self._revoked:
                return None
            name = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8")
        except (ValueError, UnicodeError):
            return None
        return Reviewer(name, cookie)

    def revoke(self, session: str, now: float | None = None) -> None:
        """End this (valid) session cookie on the server; revocations past their expiry are forgotten."""
        now = time.time() if now is None else now
        _, issued, signature = session.split(".")
        self._revoked = {s: i for s, i in self._revoked.items() if now - i <= SESSION_HOURS * 3600}
        self._revoked[signature] = int(issued)

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


class Throttle:
    """Failed logins per client address, and the lock that still lets the right token in (module rules);
    `clock` is injectable for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._failures: dict[object, collections.deque] = {}    # (time, fingerprint), oldest first
        self._lock = threading.Lock()

    def _recent(self, key, now: float) -> collections.deque:
        times = self._failures.get(key, collections.deque(maxlen=MAX_FAILURES))
        while times and now - times[0][0] >= WINDOW:
            times.popleft()
        return times

    def retry_after(self, key) -> int | None:
        """Seconds until `key` (a client address) may try any token again (None: it may now)."""
        with self._lock:
            now = self._clock()
            times = self._recent(key, now)
            if len(times) < MAX_FAILURES:
                return None
            return max(1, math.ceil(WINDOW - (now - times[0][0])))

    def failed(self, key, fingerprint: bytes = b"") -> None:
        """Count one wrong token from `key` (a client address), unless it was refused there in the window."""
        with self._lock:
            now = self._clock()
            times = self._recent(key, now)
            if fingerprint and any(seen == fingerprint for _, seen in times):
                return
            times.append((now, fingerprint))
            self._failures.pop(key, None)
            self._failures[key] = times               # most recent last
            while len(self._failures) > MAX_CLIENTS:
                self._failures.pop(next(iter(self._failures)))

    def check(self, client: str, offered: str | None, keys: Keys) -> bool:
        """Whether `offered` is the token, from `client`; LockedOut when it may not be checked (module
        rules: a locked address's token is checked only in the right token's bucket)."""
        fingerprint, key = keys.fingerprint(offered), client
        if (wait := self.retry_after(client)) is not None:
            if not keys.may_be_right(fingerprint):
                raise LockedOut(wait)
            key = (client, "bucket")
            if (wait := self.retry_after(key)) is not None:
                raise LockedOut(wait)
        if keys.token_ok(offered):
            return True
        self.failed(key, fingerprint)
        return False
