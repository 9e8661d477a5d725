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
  passage's own text wherever it occurs.
- One stylesheet (templates/style.css), inlined; pages send a Content-Security-Policy that allows that
  stylesheet by its hash and no script at all.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import jinja2
import markupsafe

from .. import matching
from ..vocabulary import MISQUOTED

TEMPLATES = Path(__file__).with_name("templates")
_FOLDED = {}
for _raw, _folded in matching._FOLD.items():        # the characters normalise folds, by what they become
    _FOLDED.setdefault(_folded, set()).add(chr(_raw))


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(style=markupsafe.Markup(stylesheet()), link=link)   # our own file, not input
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


def _pattern(quote: str) -> re.Pattern | None:
    """A regex finding `quote` in raw text the way matching.normalise compares (see module rules)."""
    needle = matching.normalise(quote)
    if not needle:
        return None
    parts = []
    for char in needle:
        if char == " ":
            parts.append(r"\s+")
        elif char == "-":
            parts.append("[" + re.escape("-" + "".join(_FOLDED.get("-", ()))) + r"](?:\n\s*)?")
        elif char in _FOLDED:
            parts.append("[" + re.escape(char + "".join(_FOLDED[char])) + "]")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts))


def marked(passage: str, quote: str | None) -> list[tuple[str, bool]]:
    """The passage as (text, is_quote) segments, the quote marked wherever it occurs."""
    pattern = _pattern(quote) if quote else None
    if pattern is None:
        return [(passage, False)]
    segments, at = [], 0
    for hit in pattern.finditer(passage):
        if hit.start() > at:
            segments.append((passage[at:hit.start()], False))
        segments.append((hit.group(0), True))
        at = hit.end()
    if at < len(passage):
        segments.append((passage[at:], False))
    return segments


def passages_of(row: dict) -> list[tuple[int, bool, list[tuple[str, bool]]]]:
    """What the judge read for an audited row (its `passages` JSON), in the order it read them:
    (number from 1, whether it holds the quote, its marked segments)."""
    try:
        shown = json.loads(row.get("passages") or "[]")
    except ValueError:
        shown = []
    out = []
    for number, passage in enumerate((p for p in shown if isinstance(p, str)), start=1):
        segments = marked(passage, row.get("evidence_quote"))
        out.append((number, any(is_quote for _, is_quote in segments), segments))
    return out


def misquote_diff(row: dict) -> list[tuple[str, str]] | None:
    """For a misquoted source-document row: the word diff from the citation's quote to the source's span."""
    if row.get("status") != MISQUOTED or not row.get("quote") or not row.get("evidence_quote"):
        return None
    return matching.word_ops(matching.normalise(row["quote"]), row["evidence_quote"])
