"""Read a vendor's JSON answer and walk it with typed look-ups that name the JSON path on failure.

Rules:
- Text that is not JSON is an AnswerFormatError at its line:column.
- `get` returns obj[key] if it has the expected type; otherwise it raises `Malformed` naming the path
  (`$.content[2].text`). A reader turns Malformed into a problem for one block, or into an
  AnswerFormatError when the top-level shape itself is wrong.
- JSON nested deeper than `source.text.MAX_DEPTH` is refused before it is parsed (`too_deep`); an integer
  too long to convert is an AnswerFormatError too.
- Integers are JSON integers (true/false are not numbers); indices are integers >= 0.
"""
from __future__ import annotations

import json

from ..source.text import MAX_DEPTH, too_deep
from .parsed import AnswerFormatError, Problem

_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "an object"}




class Malformed(Exception):
    def __init__(self, where: str, what: str):
        self.where, self.what = where, what
        super().__init__(f"{where}: {what}")


def load(text: str, fmt: str) -> object:
    """Parse JSON text; a syntax error (or absurd nesting) names its line and column."""
    if too_deep(text):
        raise AnswerFormatError(fmt, "$", f"JSON nested deeper than {MAX_DEPTH} levels; not read")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnswerFormatError(fmt, f"line {exc.lineno}:{exc.colno}", f"not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:               # an integer of thousands of digits
        raise AnswerFormatError(fmt, "$", f"JSON not read ({str(exc)[:80]})") from None


def _is(value: object, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def get(obj: object, key: str, kind: type, where: str, *, optional: bool = False):
    """obj[key] checked to be of `kind`; a missing or null key is None when optional."""
    if not isinstance(obj, dict):
        raise Malformed(where, "is not an object")
    value = obj.get(key)
    if value is None:
        if optional:
            return None
        raise Malformed(f"{where}.{key}", "is missing")
    if not _is(value, kind):
        raise Malformed(f"{where}.{key}", f"must be {_NAMES[kind]}")
    return value


def index(obj: object, key: str, where: str, *, minimum: int = 0) -> int:
    """An integer field that must be >= minimum."""
    value = get(obj, key, int, where)
    if value < minimum:
        raise Malformed(f"{where}.{key}", f"must be {minimum} or more, not {value}")
    return value


def top(fmt: str, obj: object, key: str, kind: type, where: str = "$"):
    """A field the format cannot do without: a failure is the AnswerFormatError for the whole answer."""
    try:
        return get(obj, key, kind, where)
    except Malformed as exc:
        raise AnswerFormatError(fmt, exc.where, exc.what) from None


def expect(fmt: str, obj: dict, key: str, value: str, where: str = "$") -> None:
    """If obj has `key`, it must equal `value` (e.g. "type": "message")."""
    if key in obj and obj[key] != value:
        raise AnswerFormatError(fmt, f"{where}.{key}", f"is {obj[key]!r}, not {value!r}")


def entries(obj: dict, key: str, where: str, problems: list[Problem]) -> list[tuple[str, object]]:
    """(path, item) of each item of the optional list obj[key]; anything else there is reported, read as empty."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(Problem(f"{where}.{key}", "malformed", "must be a list; ignored"))
        return []
    return [(f"{where}.{key}[{n}]", item) for n, item in enumerate(value)]
