"""Reading a batch file: one {"id", "claim", "urls"} object per line.

Rules:
- Blank lines are skipped silently; a malformed line (not UTF-8, not JSON, a missing or mistyped
  field, a string that is not text, no URL at all, a duplicate id, JSON nested deeper than
  `source.text.MAX_DEPTH`, a number too long to read, a claim longer than CLAIM_MAX_CHARS) is reported as
  "line N: ..." and skipped, the other lines still run. A UTF-8 byte-order mark before line 1 is dropped.
- A URL listed twice on one line is checked once (noted, not an error).
- An optional "quotes" object maps a line's URL to the text the citation says that page holds (a string
  or a list of strings: Anthropic's cited_text, a Perplexity snippet, as `extract` writes them); verify
  matches each on the fetched page before the judge is asked. A key that is not one of the line's URLs,
  or a value that is not text, makes the line malformed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..config import Settings
from ..source.text import MAX_DEPTH, too_deep
from ..source.text import not_text, strip_bom


@dataclass(frozen=True)
class Claim:
    line: int
    id: str
    claim: str
    urls: tuple[str, ...]
    quotes: tuple[tuple[str, tuple[str, ...]], ...] = ()     # (url, the texts its citations carry)

    def carried(self, url: str) -> tuple[str, ...]:
        """The texts the citations of `url` say the page holds (none: ())."""
        return next((texts for cited, texts in self.quotes if cited == url), ())


@dataclass
class Parsed:
    claims: list[Claim]
    problems: list[str]                   # "line N: ..." for every skipped line
    notes: list[str]                      # "line N: ..." for a line kept with a change


def _problem(obj, max_chars: int) -> str | None:
    """Why a parsed line is not a claim, or None."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    missing = [key for key in ("id", "claim", "urls") if key not in obj]
    if missing:
        return "missing " + ", ".join(f'"{key}"' for key in missing)
    if isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)) or not str(obj["id"]).strip():
        return '"id" must be a non-empty string or a number'
    if not isinstance(obj["claim"], str) or not obj["claim"].strip():
        return '"claim" must be a non-empty string'
    if len(obj["claim"]) > max_chars:
        return f'"claim" is {len(obj["claim"]):,} characters, over CLAIM_MAX_CHARS ({max_chars:,})'
    urls = obj["urls"]
    if not isinstance(urls, list) or not all(isinstance(u, str) and u.strip() for u in urls):
        return '"urls" must be a list of URL strings'
    if not urls:
        return '"urls" is empty: the claim cites nothing to check'
    quotes = obj.get("quotes")
    if quotes is not None and not (isinstance(quotes, dict) and all(
            url.strip() in {u.strip() for u in urls} and _texts(texts) for url, texts in quotes.items())):
        return '"quotes" must map URLs of "urls" to the text each page is said to hold (a string or a list)'
    carried = [("quotes", t) for texts in (quotes or {}).values() for t in _texts(texts)]
    for key, value in (("id", obj["id"]), ("claim", obj["claim"]), *(("urls", u) for u in urls), *carried):
        if isinstance(value, str) and not_text(value):
            return f'"{key}" is not text ({not_text(value)})'
    return None


def _texts(value) -> list[str]:
    """A "quotes" value as a list of strings ([] when it is neither a string nor a list of them)."""
    texts = [value] if isinstance(value, str) else value
    return texts if isinstance(texts, list) and all(isinstance(t, str) for t in texts) else []


def parse_lines(lines: list[bytes], max_chars: int = Settings.claim_max_chars) -> Parsed:
    """Raw lines -> claims, skipped lines and notes; blank lines are skipped silently."""
    claims: list[Claim] = []
    problems: list[str] = []
    notes: list[str] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(lines, 1):
        try:
            text = (strip_bom(raw) if number == 1 else raw).decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"line {number}: not UTF-8 text")
            continue
        if not text.strip():
            continue
        if too_deep(text):
            problems.append(f"line {number}: JSON nested deeper than {MAX_DEPTH} levels")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except (ValueError, RecursionError):
            problems.append(f"line {number}: a number too long to read")
            continue
        why = _problem(obj, max_chars)
        item_id = str(obj["id"]).strip() if why is None else ""
        if why is None and item_id in first_line:
            why = f"duplicate id {item_id!r} (first on line {first_line[item_id]})"
        if why:
            problems.append(f"line {number}: {why}")
            continue
        first_line[item_id] = number
        urls = tuple(dict.fromkeys(u.strip() for u in obj["urls"]))
        if len(urls) < len(obj["urls"]):
            notes.append(f"line {number}: a URL is listed twice; it is checked once")
        quotes = tuple((url.strip(), tuple(_texts(texts)))
                       for url, texts in (obj.get("quotes") or {}).items())
        claims.append(Claim(number, item_id, obj["claim"].strip(), urls, quotes))
    return Parsed(claims, problems, notes)


def read_claims(path: str | Path, max_chars: int = Settings.claim_max_chars) -> Parsed:
    """A JSONL file -> Parsed. A path that is no file raises the OSError `paths.a_file` raises."""
    path = paths.a_file(path)
    return parse_lines(path.read_bytes().split(b"\n"), max_chars)
