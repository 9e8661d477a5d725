"""robots.txt (RFC 9309): may our user agent fetch a URL? Parsed, matched, and kept per origin.

Rules:
- Our user agent is USER_AGENT (the direct fetcher's User-Agent header); its product token PRODUCT_TOKEN
  is what robots.txt groups name. A group applies when one of its `User-agent` lines names the token
  (case-insensitive, the name up to "/" or a space); several such groups are merged; none: the `*`
  groups, merged; none either: everything is allowed.
- Rules: `Allow` / `Disallow` with `*` (any characters) and a final `$` (end of the path); the longest
  matching pattern wins; an Allow and a Disallow of the same length: Allow. An empty Disallow is no
  rule. /robots.txt itself is always allowed. Paths are compared with the query, percent-encoded the
  same way (non-ASCII as UTF-8 %XX, escapes upper-cased).
- The file: the first MAX_BYTES (500 KiB) are parsed, a line cut there is dropped; undecodable bytes
  are replaced, lines without a colon and unknown keys (Sitemap, Crawl-delay) ignored.
- Fetching it (`fetch.direct.get_robots`: netguard per hop, the host limit, the page's FETCH_DEADLINE):
  2xx: its rules; up to MAX_REDIRECTS redirects followed, more: unavailable; 4xx but 429: unavailable,
  everything allowed; 429, 5xx, a network error or the deadline: unreachable, complete disallow.
- `Robots` keeps one answer per origin (scheme, host, port) for ROBOTS_MAX_AGE seconds (an unreachable
  one FAILURE_SECONDS at most, so an outage is not remembered for a day); one fetch per origin at a
  time, the others wait for its answer within their own deadline.
- Used only when a page is fetched live (the cache's compute): a replayed page never reads robots.txt.
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import quote, urlsplit

PRODUCT_TOKEN = "citecheck"
"""The name robots.txt groups use for us (`User-agent: citecheck`)."""
USER_AGENT = f"{PRODUCT_TOKEN}/0.1 (citation checker; +https://github.com/citecheck)"
"""The User-Agent header of every direct fetch (pages, PDFs, robots.txt)."""
MAX_BYTES = 500 * 1024
"""The part of a robots.txt that is parsed (RFC 9309: at least 500 kibibytes)."""
MAX_REDIRECTS = 5
"""Redirects followed to reach a robots.txt (RFC 9309: at least five); more: unavailable."""
FAILURE_SECONDS = 60.0
"""How long an unreachable robots.txt (complete disallow) is remembered at most."""

_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")


def _encoded(text: str) -> str:
    """Percent-encode what is not printable ASCII (as UTF-8), upper-case existing escapes."""
    text = quote(text, safe="".join(chr(c) for c in range(0x21, 0x7F)))
    return _ESCAPE.sub(lambda m: m.group(0).upper(), text)


def _glob(pattern: str, path: str) -> bool:
    """`pattern` (only `*` special) matches the whole of `path`: the two-pointer walk, at worst
    len(pattern) x len(path) steps whatever the stars (no regex to backtrack)."""
    p = t = 0
    star, mark = -1, 0
    while t < len(path):
        if p < len(pattern) and pattern[p] == "*":
            star, mark, p = p, t, p + 1
        elif p < len(pattern) and pattern[p] == path[t]:
            p, t = p + 1, t + 1
        elif star >= 0:
            p, mark = star + 1, mark + 1
            t = mark
        else:
            return False
    return pattern[p:].strip("*") == ""


@dataclass(frozen=True)
class Rule:
    allow: bool
    pattern: str

    def matches(self, path: str) -> bool:
        """The pattern matches from the path's start; a final `$` anchors its end."""
        if self.pattern.endswith("$"):
            return _glob(self.pattern[:-1], path)
        return _glob(self.pattern + "*", path)


@dataclass(frozen=True)
class Verdict:
    """What robots.txt says about one URL: `allowed`, and why (`detail`: the rule or the failure);
    `read`: False when robots.txt could not be read (the disallow is the standard's, not the site's)."""
    allowed: bool
    detail: str
    read: bool = True


@dataclass(frozen=True)
class RobotsFile:
    """One origin's answer: its rules for our user agent, or a whole-site decision (`everything`)."""
    rules: tuple[Rule, ...] = ()
    everything: bool | None = None      # True: unavailable (allow all); False: unreachable (disallow all)
    why: str = ""

    def verdict(self, url: str) -> Verdict:
        if self.everything is not None:
            return Verdict(self.everything, self.why, read=self.everything)
        parts = urlsplit(url)
        path = _encoded((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        if path == "/robots.txt":
            return Verdict(True, "robots.txt itself")
        best: Rule | None = None
        for rule in self.rules:
            if rule.matches(path) and (best is None or len(rule.pattern) > len(best.pattern)
                                       or (len(rule.pattern) == len(best.pattern) and rule.allow)):
                best = rule
        if best is None or best.allow:
            return Verdict(True, f"robots.txt: Allow: {best.pattern}" if best else "robots.txt: no rule")
        return Verdict(False, f"robots.txt: Disallow: {best.pattern} (user agent {PRODUCT_TOKEN})")


def _names_us(agent: str) -> bool:
    name = re.split(r"[/\s]", agent.strip(), maxsplit=1)[0].lower()
    return name == PRODUCT_TOKEN


def parse(data: bytes) -> RobotsFile:
    """The rules that apply to PRODUCT_TOKEN in the first MAX_BYTES of a robots.txt (module rules)."""
    cut = len(data) > MAX_BYTES
    text = data[:MAX_BYTES].decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.splitlines()
    if cut and lines:
        lines.pop()                                     # a line cut at the limit is not a rule
    ours: list[Rule] = []
    anyone: list[Rule] = []
    named_us = named_any = False
    agents: list[str] = []
    in_rules = False
    for line in lines:
        key, colon, value = line.split("#", 1)[0].partition(":")
        if not colon:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "user-agent":
            if in_rules:
                agents, in_rules = [], False
            agents.append(value)
        elif key in ("allow", "disallow"):
            in_rules = True
            if not agents or not value:
                continue                                # a rule outside a group, or an empty Disallow
            rule = Rule(key == "allow", _encoded(value))
            if any(_names_us(a) for a in agents):
                ours.append(rule)
            if any(a.strip() == "*" for a in agents):
                anyone.append(rule)
        if key == "user-agent" and _names_us(value):
            named_us = True
        elif key == "user-agent" and value == "*":
            named_any = True
    if named_us:
        return RobotsFile(tuple(ours))
    return RobotsFile(tuple(anyone) if named_any else ())


def unavailable(why: str) -> RobotsFile:
    """No robots.txt to obey (4xx, too many redirects): everything is allowed."""
    return RobotsFile(everything=True, why=f"robots.txt unavailable ({why}): everything allowed")


def unreachable(why: str) -> RobotsFile:
    """robots.txt could not be read (5xx, 429, the network, the deadline): complete disallow."""
    return RobotsFile(everything=False, why=f"robots.txt unreachable ({why}): complete disallow (RFC 9309)")


def of_answer(status: int, body: bytes) -> RobotsFile:
    """What a final (non-redirect) answer for /robots.txt means (module rules)."""
    if 200 <= status < 300:
        return parse(body)
    if 400 <= status < 500 and status != 429:
        return unavailable(f"HTTP {status}")
    return unreachable(f"HTTP {status}")


def robots_url(url: str) -> str:
    """The robots.txt of a URL's origin."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.rpartition('@')[2]}/robots.txt"


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port): what one robots.txt covers (a URL that is not one: ("", url, None))."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:                       # an unclosed [IPv6 or a non-numeric port
        return "", url, None


class _Entry:
    def __init__(self):
        self.ready = threading.Event()
        self.file: RobotsFile | None = None
        self.error: Exception | None = None      # what reading it raised (the guard's refusal)
        self.until = 0.0


class Robots:
    """A run's robots.txt answers, one per origin (module rules); `close()` forgets them."""

    def __init__(self, max_age: float, clock: Callable[[], float] = time.monotonic):
        self.max_age, self._clock = max_age, clock
        self._lock = threading.Lock()
        self._entries: dict[tuple, _Entry] = {}

    def verdict(self, url: str, read: Callable[[str], RobotsFile], seconds: float) -> Verdict:
        """May `url` be fetched? `read(robots_url)` fetches an origin's file when none is kept; waiting
        for another thread's fetch of it takes at most `seconds` (past that: unreachable)."""
        key = origin(url)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.ready.is_set() and entry.until <= self._clock():
                entry = None
            mine = entry is None
            if mine:
                entry = self._entries[key] = _Entry()
        if mine:
            try:
                entry.file = read(robots_url(url))
            except BaseException as exc:
                with self._lock:
                    self._entries.pop(key, None)
                entry.error = exc if isinstance(exc, Exception) else None
                entry.ready.set()
                raise
            age = self.max_age if entry.file.everything is not False else min(self.max_age, FAILURE_SECONDS)
            entry.until = self._clock() + age
            entry.ready.set()
        elif not entry.ready.wait(max(seconds, 0.0)):
            return unreachable("still being read at the fetch's deadline").verdict(url)
        elif entry.error is not None:
            raise entry.error
        elif entry.file is None:                       # its reader was stopped (cancelled)
            return unreachable("its reading was stopped").verdict(url)
        return entry.file.verdict(url)

    def close(self) -> None:
        with self._lock:
            self._entries.clear()
