"""Sites that refuse robots: paywalls, login walls, bot challenges and rate limits, each with its own reason.

Rules (checked before the page rules of `fetch.pages`; `markup` is the raw page when the backend has it
(direct), else the readable text (Crawlbase's Markdown), so markup-only signs are direct-only):
- Status first: 401 -> login_required; 402 -> paywall; 429 -> rate_limited (transient).
- bot_challenge (transient): a short page (readable text under SHORT_CHARS non-space characters), of
  any status, that is a robot check: Cloudflare's challenge ("Just a moment...", challenge-platform,
  Turnstile), a CAPTCHA widget (reCAPTCHA, hCaptcha, DataDome, PerimeterX), "verify you are human",
  "checking your browser", or an "access denied" interstitial.
- paywall: a page whose readable text is under TEASER_CHARS and whose markup says
  `isAccessibleForFree: false` (schema.org, in JSON-LD, microdata or a meta tag: the markup search
  engines ask publishers to put on paywalled content). A short page with a "subscribe" box and no such
  markup is not a paywall here: it is judged (a judge finds nothing in a teaser).
- login_required: a deep link that landed on a login path (/login, /signin, /sign-in, /sso, ...),
  or a short page whose markup holds a password field.
- 403 with none of the above -> access_denied (transient: the origin refused this client).
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from ...vocabulary import ACCESS_DENIED, BOT_CHALLENGE, LOGIN_REQUIRED, PAYWALL, RATE_LIMITED

SHORT_CHARS = 800
"""A robot check or a login form is a short page: under this many readable non-space characters."""
TEASER_CHARS = 2000
"""A page marked paywalled whose readable text is under this is a teaser, not the article."""

_CHALLENGE = re.compile(
    r"cf-chl-|challenge-platform|cf-turnstile|/cdn-cgi/challenge|g-recaptcha|h-captcha|hcaptcha\.com"
    r"|captcha-delivery\.com|px-captcha|\bjust a moment\.\.\.|checking (?:if the site connection is secure"
    r"|your browser)|verify (?:that )?you are (?:a )?human|are you a robot|unusual traffic from your"
    r"|\baccess denied\b|you don[’']?t have permission to access|attention required!? \| cloudflare"
    r"|enable javascript and cookies to continue|pardon our interruption",
    re.IGNORECASE)
_NOT_FREE = re.compile(
    r"isAccessibleForFree[\"']?\s*(?::|content\s*=)\s*[\"']?false"
    r"|content\s*=\s*[\"']false[\"'][^>]*itemprop\s*=\s*[\"']isAccessibleForFree",
    re.IGNORECASE)
_PASSWORD_FIELD = re.compile(r"<input\b[^>]*\btype\s*=\s*[\"']?password", re.IGNORECASE)
_LOGIN_PATH = re.compile(
    r"/(?:log-?in|sign-?in|signon|sso|auth|session/new|users/sign_in|accounts?/login|wp-login\.php)(?:[/.?]|$)",
    re.IGNORECASE)


def _readable(text: str) -> int:
    return len("".join(text.split()))


def _lands_on_login(url: str, final_url: str | None) -> bool:
    """A link that was not to a login page but ended on one."""
    path = urlsplit(final_url).path if final_url else ""
    return bool(_LOGIN_PATH.search(path)) and not _LOGIN_PATH.search(urlsplit(url).path)


def refusal(url: str, final_url: str | None, status: int | None, text: str,
            markup: str | None = None) -> str | None:
    """The reason a site refused to show the page to a robot (module rules), or None."""
    if status in (401, 402, 429):
        return {401: LOGIN_REQUIRED, 402: PAYWALL, 429: RATE_LIMITED}[status]
    markup = text if markup is None else markup
    short = _readable(text) < SHORT_CHARS
    if short and (_CHALLENGE.search(markup) or _CHALLENGE.search(text)):
        return BOT_CHALLENGE
    if _readable(text) < TEASER_CHARS and _NOT_FREE.search(markup):
        return PAYWALL
    if _lands_on_login(url, final_url) or (short and _PASSWORD_FIELD.search(markup)):
        return LOGIN_REQUIRED
    if status == 403:
        return ACCESS_DENIED
    return None
