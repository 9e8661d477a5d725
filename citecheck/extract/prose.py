"""Build an answer's prose from pieces of its source text and map source positions into it.

Rules:
- `copy` keeps source[start:end] (copies come in source order); `add` inserts text of its own (a
  paragraph break); anything never copied is removed (markers, link syntax, block prefixes).
- `position(p)` maps a source position to the prose: exact inside kept text; a position inside removed
  text maps to the point where it was removed (the end of the kept text before it).
- `line_col(text, p)` is the 1-based "line L:C" of a source position, for messages (`line_cols(text)`
  answers it for many positions in log time each).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import Callable


class Prose:
    def __init__(self, source: str):
        self.source = source
        self._out: list[str] = []
        self._length = 0
        self._starts: list[int] = []              # source start of each kept run
        self._runs: list[tuple[int, int, int]] = []  # (source start, prose start, length)

    @property
    def text(self) -> str:
        return "".join(self._out)

    def __len__(self) -> int:
        return self._length

    @property
    def last(self) -> str:
        """The last character written ('' when empty)."""
        for piece in reversed(self._out):
            if piece:
                return piece[-1]
        return ""

    def copy(self, start: int, end: int) -> None:
        if end <= start:
            return
        if self._runs and start < self._runs[-1][0] + self._runs[-1][2]:
            raise ValueError("copies must come in source order")
        self._starts.append(start)
        self._runs.append((start, self._length, end - start))
        self._out.append(self.source[start:end])
        self._length += end - start

    def add(self, text: str) -> None:
        self._out.append(text)
        self._length += len(text)

    def position(self, p: int) -> int:
        i = bisect_right(self._starts, p) - 1
        if i < 0:
            return 0
        start, out, length = self._runs[i]
        return out + min(p - start, length)


def line_cols(text: str) -> Callable[[int], str]:
    """`line_col` of text for many positions: the line starts found once, each position by bisection."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(p: int) -> str:
        line = bisect_right(starts, p)
        return f"line {line}:{p - starts[line - 1] + 1}"
    return where


def line_col(text: str, p: int) -> str:
    """'line L:C' (1-based) of position p in text."""
    line = text.count("\n", 0, p) + 1
    column = p - (text.rfind("\n", 0, p) + 1) + 1
    return f"line {line}:{column}"


class Pieces:
    """The text parts of a JSON answer joined into one text, each remembered with its JSON path.

    Parts added one after another are joined as they are (Anthropic's text blocks are pieces of one
    text); after `gap()` (a tool call or another message between them) the next part starts a new
    paragraph.
    """

    def __init__(self):
        self._chunks: list[str] = []
        self._parts: list[tuple[int, str, str]] = []     # (start, path, text)
        self._starts: list[int] = []
        self._cols: dict[int, Callable[[int], str]] = {}  # part -> its line_cols, made on first use
        self._length = 0
        self._gap = False

    @property
    def text(self) -> str:
        return "".join(self._chunks)

    def gap(self) -> None:
        self._gap = True

    def add(self, path: str, text: str) -> tuple[int, int]:
        """Append one part; returns its (start, end) in the joined text."""
        if self._gap and self._length:
            self._chunks.append("\n\n")
            self._length += 2
        self._gap = False
        start = self._length
        self._parts.append((start, path, text))
        self._starts.append(start)
        self._chunks.append(text)
        self._length += len(text)
        return start, self._length

    def where(self, p: int) -> str:
        """The JSON path of the part holding joined position p, with the line:column inside it."""
        i = max(bisect_right(self._starts, p) - 1, 0)
        start, path, text = self._parts[i]
        if i not in self._cols:
            self._cols[i] = line_cols(text)
        return f"{path}, {self._cols[i](p - start)}"
