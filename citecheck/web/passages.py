"""Split a fetched page into passages small enough to embed and to show a judge.

Rules:
- Paragraphs are separated by blank lines; blank blocks are dropped.
- Short paragraphs are packed together (joined by a blank line) while the pack stays within
  `max_words` words, counted with `str.split()`.
- A paragraph longer than `max_words` is cut into pieces of at most `max_words` words, each ending at the
  last sentence end (SENTENCE_END) within the limit; only a piece with no sentence end in it is cut at the
  word limit. So a sentence is split across passages only when it alone is longer than `max_words`.
- Line breaks inside a paragraph are line wraps (a PDF's or a plain-text file's), not sentence ends: the
  passages keep them, and `join_wraps` joins them before anything splits a paragraph into sentences.
- Words are never dropped, reordered or rewritten, so a quote copied from a passage is on the page.
- `max_words < 1` is a ValueError.
"""
from __future__ import annotations

import re
from bisect import bisect_right

MAX_WORDS = 200
"""Words per passage: about one screen of text, well inside MiniLM's 256-token window."""

_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_WORD = re.compile(r"\S+")
SENTENCE_END = re.compile(r"[.!?][\"')\]]?\s+(?=[A-Z0-9\"'(\[])")
"""A sentence ends after . ! ? (optionally closed by a quote or bracket) followed by whitespace and an
upper-case letter, digit, quote or bracket (`judge.methods.sentences` splits with the same rule)."""
_WRAP = re.compile(r"(?<!\w-)[ \t]*\r?\n[ \t]*")


def join_wraps(paragraph: str) -> str:
    """One paragraph (no blank line inside) with its single line breaks read as spaces: a sentence wrapped
    over lines ("...boiled at about" / "95 °C, and...") is one line again. A word wrapped at a hyphen
    ("case-" / "sensitive") is left for `matching.normalise` to rejoin. Words are kept as they are."""
    return _WRAP.sub(" ", paragraph.strip())


def _sentence_ends(paragraph: str, starts: list[int]) -> list[int]:
    """Indices of the words after which a sentence ends (SENTENCE_END), ascending."""
    return sorted({bisect_right(starts, m.start()) - 1 for m in SENTENCE_END.finditer(paragraph)})


def _cut(paragraph: str, max_words: int) -> list[str]:
    """A long paragraph -> pieces of at most max_words words, each ending at its last sentence end within
    the limit (at the limit when it holds none), each keeping its own line breaks."""
    spans = [m.span() for m in _WORD.finditer(paragraph)]
    ends = _sentence_ends(paragraph, [start for start, _ in spans])
    pieces, i = [], 0
    while i < len(spans):
        stop = len(spans) if len(spans) - i <= max_words else i + max_words
        if stop < len(spans):
            inside = [k for k in ends if i <= k < stop]
            stop = inside[-1] + 1 if inside else stop
        pieces.append(paragraph[spans[i][0]:spans[stop - 1][1]])
        i = stop
    return pieces


def split_passages(text: str, max_words: int = MAX_WORDS) -> list[str]:
    """Page text -> passages of at most `max_words` words, in page order (see module rules)."""
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise ValueError(f"max_words must be a whole number >= 1, got {max_words!r}")
    passages: list[str] = []
    pack: list[str] = []
    pack_words = 0
    for block in _BLANK_LINE.split(text.replace("\r\n", "\n")):
        paragraph = block.strip()
        words = len(paragraph.split())
        if not words:
            continue
        pieces = [paragraph] if words <= max_words else _cut(paragraph, max_words)
        for piece in pieces:
            size = len(piece.split())
            if pack and pack_words + size > max_words:
                passages.append("\n\n".join(pack))
                pack, pack_words = [], 0
            pack.append(piece)
            pack_words += size
    if pack:
        passages.append("\n\n".join(pack))
    return passages
