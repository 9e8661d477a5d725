"""HTML for people: the one Jinja2 environment of the review page and the static report, and the evidence
marks both show.

Rules:
- Autoescape is always on and no template marks a value safe (only our own stylesheet file is inlined
  as is): every text from a page, a claim, a note or a URL is rendered as text (a passage holding
  `<script>` or `onerror=` shows those characters). Markup comes from the templates only; evidence is
  handed to them as (text, marked) segments, never as HTML.
- A URL becomes a link only when it is http(s) (`link`); anything else (`javascript:` …) is shown as text.
- The quote is found in a passage the way the guard compares (`matching.normalise`: typographic quotes
  and dashes folded, whitespace runs equal, a word wrapped at a hyphen rejoined), and marked in the
  passage's own text wherever it occurs: both are normalised once (`spans.Folded` keeps the way back to
  the passage's characters) and searched with `str.find`, so marking is linear in the passage, whatever
  its whitespace (no pattern is built from the quote). One implementation for every page that marks.
- A misquote's word diff is shown up to DIFF_WORDS words a side (a diff is quadratic in them).
- By span first: a source-document row's span (span_start, span_end) is in its section's text, which is
  what the judge read; when the span still holds the evidence there (`matching.spans.check`) exactly those
  characters are marked. A span that no longer does (`changed`) or is not a span of that text (`invalid`)
  is said in one line (`span_line`), and the quote is marked by its words instead. A web row's span is in
  the page's text as stored, not in the passages shown: `span_line` names it, the words mark the quote.
- One stylesheet (templates/style.css), inlined; pages send a Content-Security-Policy that allows that
  stylesheet by its hash and no script at all.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
from pathlib import Path
from urllib.parse import urlsplit

import jinja2
import markupsafe

from .. import matching
from ..matching import spans
from ..vocabulary import MISQUOTED, SOURCE, SPAN_CHANGED, SPAN_MATCHES, SPAN_NONE

TEMPLATES = Path(__file__).with_name("templates")
DIFF_WORDS = 1000
"""Words on either side of a misquote beyond which no word diff is shown (a diff is quadratic in them)."""


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(style=markupsafe.Markup(stylesheet()), link=link,   # our own file, not input
                       span_line=span_line)
    env.filters["confidence"] = lambda c: "–" if c is None else f"{c:.2f}"
    return env


@functools.cache
def stylesheet() -> str:
    return (TEMPLATES / "style.css").read_text(encoding="utf-8")


def content_security_policy(*, images: bool = False) -> str:
    """No script, no outside resource; the one stylesheet by its hash (data: images for the report)."""
    digest = base64.b64encode(hashlib.sha256(stylesheet().encode("utf-8")).digest()).decode()
    img = "data:" if images else "'none'"
    return ("default-src 'none'; script-src 'none'; "
            f"style-src 'sha256-{digest}'; img-src {img}; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


def render(template: str, **values) -> str:
    return environment().get_template(template).render(**values)


def link(url: str | None) -> str | None:
    """The URL if it may be a link (http or https with a host), else None: shown as text."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    return url.strip() if parts.scheme.lower() in ("http", "https") and parts.netloc else None


def marked(passage: str, quote: str | None) -> list[tuple[str, bool]]:
    """The passage as (text, is_quote) segments, the quote marked wherever it occurs (module rules):
    one normalisation of each text and `str.find`, so linear in the passage."""
    needle = matching.normalise(quote or "")
    if not needle:
        return [(passage, False)]
    folded = spans.Folded(passage)
    segments, at, found = [], 0, folded.text.find(needle)
    while found >= 0:
        start, end = folded.raw_span(found, found + len(needle))
        if start > at:
            segments.append((passage[at:start], False))
        segments.append((passage[start:end], True))
        at = end
        found = folded.text.find(needle, found + len(needle))
    if at < len(passage):
        segments.append((passage[at:], False))
    return segments


def _shown(row: dict) -> list[str]:
    try:
        shown = json.loads(row.get("passages") or "[]")
    except ValueError:
        shown = []
    return [p for p in shown if isinstance(p, str)] if isinstance(shown, list) else []


def _section_span(row: dict, shown: list[str]) -> tuple[str, int | None, int | None]:
    """(what the row's span says against the section text the judge read, start, end); SPAN_NONE for a web
    row or a row without a span."""
    start, end = row.get("span_start"), row.get("span_end")
    if row.get("flow") != SOURCE or not shown:
        return SPAN_NONE, start, end
    return spans.check(shown[0], start, end, row.get("evidence_quote")), start, end


def passages_of(row: dict) -> list[tuple[int, bool, list[tuple[str, bool]]]]:
    """What the judge read for an audited row (its `passages` JSON), in the order it read them:
    (number from 1, whether it holds the quote, its marked segments): by span where it holds (see rules)."""
    shown = _shown(row)
    state, start, end = _section_span(row, shown)
    out = []
    for number, passage in enumerate(shown, start=1):
        if number == 1 and state == SPAN_MATCHES:
            segments = [(text, hit) for text, hit in ((passage[:start], False), (passage[start:end], True),
                                                      (passage[end:], False)) if text]
        else:
            segments = marked(passage, row.get("evidence_quote"))
        out.append((number, any(is_quote for _, is_quote in segments), segments))
    return out


def span_line(row: dict) -> str | None:
    """Where the row's evidence stands, in words (None: no span recorded); a span that no longer holds the
    quote, or is not a span, says so (module rules)."""
    start, end = row.get("span_start"), row.get("span_end")
    if start is None and end is None:
        return None
    if row.get("flow") != SOURCE:
        where = "of the page's text as stored" + (f" (rid {row['rid']})" if row.get("rid") else "")
        return (f"characters {start}-{end} {where}" if spans.is_span(start, end)
                else f"{start!r}-{end!r} is not a span: marked by the quote's words instead")
    state, _, _ = _section_span(row, _shown(row))
    section = f"section {row.get('section')}"
    if state == SPAN_MATCHES:
        return f"characters {start}-{end} of {section} (marked below)"
    if state == SPAN_CHANGED:
        return (f"characters {start}-{end} of {section} no longer hold the quote (span {SPAN_CHANGED}: the "
                "text differs now): marked by the quote's words instead")
    return f"{start!r}-{end!r} is not a span of {section}'s text (span {state}): marked by the quote's words instead"


def misquote_diff(row: dict) -> list[tuple[str, str]] | None:
    """For a misquoted source-document row: the word diff from the citation's quote to the source's span
    (None past DIFF_WORDS words on either side)."""
    if row.get("status") != MISQUOTED or not row.get("quote") or not row.get("evidence_quote"):
        return None
    quote, source = matching.normalise(row["quote"]), row["evidence_quote"]
    if max(len(quote.split()), len(source.split())) > DIFF_WORDS:
        return None
    return matching.word_ops(quote, source)
