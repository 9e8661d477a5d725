"""Split a fetched page into passages small enough to embed and to show a judge.

Rules:
- Paragraphs are separated by blank lines; blank blocks are dropped.
- Short paragraphs are packed together (joined by a blank line) while the pack stays within
  `max_words` words, counted with `str.split()`.
- A paragraph longer than `max_words` is cut at word boundaries into pieces of at most `max_words`.
- Words are never dropped, reordered or rewritten, so a quote copied from a passage is on the page.
- `max_words < 1` is a ValueError.
"""
from __future__ import annotations

import re

MAX_WORDS = 200
"""Words per passage: about one screen of text, well inside MiniLM's 256-token window."""

_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_WORD = re.compile(r"\S+")


def _cut(paragraph: str, max_words: int) -> list[str]:
    """A long paragraph -> pieces of at most max_words words, each keeping its own line breaks."""
    spans = [m.span() for m in _WORD.finditer(paragraph)]
    return [paragraph[spans[i][0]:spans[min(i + max_words, len(spans)) - 1][1]]
            for i in range(0, len(spans), max_words)]


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
