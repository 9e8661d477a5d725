"""The page rules both fetch backends share: what a fetched page says about the citation by itself.

Rules:
- Sites that refuse robots (401/402/403/429, paywalls, login walls, bot challenges) come first:
  `fetch.refusals`.
- The origin answered any other 4xx -> unreachable / http_<status> (404, 410, ...).
- A deep link whose final path is `/` -> not_found / redirected_to_homepage.
- Readable text under SOFT_404_CHARS non-space characters that reads like "page not found" ->
  unreachable / soft_404. A long article that mentions 404 is not a soft 404.
- Readable text under THIN_CHARS non-space characters is thin (the backends retry, fall back or render).
- No label and no text at all -> not_found / empty_page (an app shell whose text needs JavaScript).
  A short page that has text (a paywall teaser) keeps it: the judge will find nothing in it.
- Timeouts, connection errors, 429 and 5xx are retried after each BACKOFF delay, unless the fetch's
  deadline (`fetch.deadline.Budget`) would pass during the wait; an answer's Retry-After replaces the
  delay and is tried once, if the deadline leaves time.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Callable
from urllib.parse import urlsplit

from ...vocabulary import (
    CRAWL_FAILED,
    EMPTY_PAGE,
    NOT_FOUND,
    REASONS,
    REDIRECTED_TO_HOMEPAGE,
    SOFT_404,
    UNREACHABLE,
    http_reason,
)
from .deadline import Budget
from .refusals import refusal

THIN_CHARS = 200
"""Readable text with fewer non-space characters than this is thin (retry / fall back / escalate)."""
SOFT_404_CHARS = 800
"""Only pages shorter than this (non-space characters) can be a soft 404."""
BACKOFF = (1.0, 3.0)
"""Seconds to wait before each retry of a timeout / 429 / 5xx: two retries, three attempts in all."""

_SOFT_404 = re.compile(
    r"\b404\b|\bnot\s+(?:be\s+)?found\b|\b(?:does\s+not|doesn[’']t|do\s+not|don[’']t)\s+exist\b"
    r"|\b(?:cannot|can[’']t|could\s+not|couldn[’']t)\s+(?:be\s+found|find)\b"
    r"|\bno\s+longer\s+(?:exists|available)\b|\bnothing\s+(?:was\s+)?found\b",
    re.IGNORECASE)


@dataclass(frozen=True)
class FetchResult:
    url: str                      # as cited
    final_url: str | None         # after redirects
    original_status: int | None   # the origin's HTTP status
    markdown: str                 # readable text ('' when none)
    rid: str | None               # Crawlbase storage rid (never the storage URL)
    label: str | None             # 'unreachable' / 'not_found' only when the page settles it
    reason: str | None            # http_404 / http_410 / soft_404 / redirected_to_homepage / ...
    backend: str                  # 'crawlbase' or 'direct'
    detail: str | None = None     # what the reason does not say (a PDF: "encrypted", "no extractable text")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "FetchResult":
        return cls(**data)


class Uncached(Exception):
    """Carries a result out of the cache's compute() so that it is returned but not recorded."""

    def __init__(self, result: FetchResult):
        super().__init__(result.reason)
        self.result = result


def non_space(text: str) -> int:
    """Characters that are not whitespace: the measure of how much a page says."""
    return len("".join(text.split()))


def is_soft_404(text: str) -> bool:
    """A short page (under SOFT_404_CHARS) whose text reads like a 'page not found' template."""
    return non_space(text) < SOFT_404_CHARS and bool(_SOFT_404.search(text))


def _is_deep(url: str) -> bool:
    return urlsplit(url).path not in ("", "/")


def _lands_on_homepage(url: str, final_url: str | None) -> bool:
    """A deep link that ended on some site's root path."""
    return bool(final_url) and _is_deep(url) and urlsplit(final_url).path in ("", "/")


def settle(url: str, final_url: str | None, status: int | None, text: str) -> tuple[str | None, str | None]:
    """(label, reason) when the page settles the citation, else (None, None)."""
    if status is not None and 400 <= status < 500:
        return UNREACHABLE, http_reason(status)
    if _lands_on_homepage(url, final_url):
        return NOT_FOUND, REDIRECTED_TO_HOMEPAGE
    if is_soft_404(text):
        return UNREACHABLE, SOFT_404
    return None, None


def settled(url: str, final_url: str | None, status: int | None, markdown: str, rid: str | None,
            backend: str, markup: str | None = None) -> FetchResult:
    """A FetchResult labelled by `refusals.refusal` (`markup`: the raw page, when there is one), else
    by `settle`."""
    reason = refusal(url, final_url, status, markdown, markup)
    label, reason = (REASONS[reason].label, reason) if reason else settle(url, final_url, status, markdown)
    return FetchResult(url, final_url, status, markdown, rid, label, reason, backend)


def final(result: FetchResult) -> FetchResult:
    """The last word on a page: no label and no text at all -> not_found / empty_page."""
    if result.label is None and non_space(result.markdown) == 0:
        return FetchResult(**{**result.to_dict(), "label": NOT_FOUND, "reason": EMPTY_PAGE})
    return result


def failed(url: str, final_url: str | None, status: int | None, backend: str, reason: str = CRAWL_FAILED,
           label: str | None = None, detail: str | None = None) -> FetchResult:
    """A result with no page text: the fetch itself decided the label (default: the reason's own)."""
    label = label or (REASONS[reason].label if reason in REASONS else UNREACHABLE)
    return FetchResult(url, final_url, status, "", None, label, reason, backend, detail)


def retrying(attempt: Callable[[], object], is_transient: Callable[[object], bool],
             sleep: Callable[[float], None], budget: Budget | None = None,
             asked: Callable[[object], float | None] = lambda outcome: None):
    """Call `attempt` until it is not transient, BACKOFF runs out or the budget would pass during the next
    wait; returns the last outcome. An outcome that `asked` for a wait (Retry-After) gets that wait and
    one more attempt if the budget leaves time for both, else it is the last."""
    outcome = attempt()
    for delay in BACKOFF:
        if not is_transient(outcome):
            break
        wait = asked(outcome)
        if wait is not None:
            if budget is None or budget.allows_wait(wait):
                sleep(wait)
                outcome = attempt()
            break
        if budget is not None and not budget.allows_wait(delay):
            break
        sleep(delay)
        outcome = attempt()
    return outcome
