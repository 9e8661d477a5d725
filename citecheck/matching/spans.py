"""Character spans: where a quote stands in the raw text a row names, found the way `normalise` compares.

Rules:
- A span is (start, end), 0 <= start <= end, offsets into the raw text (a section's `text`, or a fetched
  page's text as stored), so text[start:end] is the quote as that text spells it (its own line wraps,
  typographic quotes and dashes). No span is (None, None).
- `Folded(text)` is `normalise(text)` with the way back: `raw_span` maps a span of the normalised text
  to the raw text (a collapsed whitespace run, a wrap rejoined at a hyphen, maps to all of it; a span
  never starts or ends inside one).
- `find(quote, text)` is the first place the normalised quote stands in the normalised text (`text` raw, or
  its `Folded`, made once for every quote of a page).
- A stored span is checked before it is used (`check`): it `matches` when text[start:end] normalises to
  the quote; `changed` when it does not (the page was fetched again and differs, the section was
  edited); `invalid` when it is not a span of that text (not two integers, out of range: a hand-edited
  row); `none` when no span was recorded. Never an exception.
"""
from __future__ import annotations

import re
from bisect import bisect_right

from ..vocabulary import SPAN_CHANGED, SPAN_INVALID, SPAN_MATCHES, SPAN_NONE
from .normal import _FOLD, has_content, normalise

_CHANGES = re.compile(r"(?<=\w)-\n\s*(?=\w)|\s{2,}|[^\S ]")
"""What `normalise` changes the length or the character of, after folding (which keeps lengths): a wrap
at a hyphen (one '-'), a whitespace run (one space), one whitespace character other than a space."""


class Folded:
    """`normalise(text)` (as `text`) and the map back to the raw text (module rules)."""

    def __init__(self, raw: str):
        folded = raw.translate(_FOLD)
        pieces, anchors, at, out = [], [(0, 0)], 0, 0      # anchors: (normalised, raw) advancing together
        for change in _CHANGES.finditer(folded):
            pieces += [folded[at:change.start()], "-" if change.group()[0] == "-" else " "]
            out += change.start() - at
            anchors += [(out, change.start()), (out + 1, change.end())]
            out, at = out + 1, change.end()
        pieces.append(folded[at:])
        whole = "".join(pieces)
        self._lead = len(whole) - len(whole.lstrip(" "))
        self.text = whole.strip(" ")
        self._anchors = anchors
        self._normalised = [n for n, _ in anchors]

    def _raw(self, position: int) -> int:
        i = bisect_right(self._normalised, position + self._lead) - 1
        normalised, raw = self._anchors[i]
        return raw + position + self._lead - normalised

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """The raw span of self.text[start:end] (an empty span maps to a point)."""
        first = self._raw(start)
        return (first, first) if end <= start else (first, self._raw(end - 1) + 1)


def find(quote: str | None, text: str | Folded) -> tuple[int, int] | None:
    """The raw span of the first place `quote` stands in `text` as `normalise` compares; None if nowhere.
    `text` may be given folded already (`Folded(text)`, made once for many quotes)."""
    needle = normalise(quote or "")
    if not has_content(needle):
        return None
    folded = text if isinstance(text, Folded) else Folded(text)
    at = folded.text.find(needle)
    return None if at < 0 else folded.raw_span(at, at + len(needle))


def is_span(start, end) -> bool:
    """True for no span (None, None) or two integers 0 <= start <= end (bools are not integers here)."""
    if start is None and end is None:
        return True
    return all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) and 0 <= start <= end


def check(text: str, start, end, quote: str | None) -> str:
    """What a stored span says against `text` now: SPAN_MATCHES, SPAN_CHANGED, SPAN_INVALID or SPAN_NONE
    (module rules)."""
    if start is None and end is None:
        return SPAN_NONE
    if not is_span(start, end) or end > len(text) or not quote:
        return SPAN_INVALID
    return SPAN_MATCHES if normalise(text[start:end]) == normalise(quote) else SPAN_CHANGED
