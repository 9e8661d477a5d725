"""Markdown answers: inline links, reference links, `[n]` markers and the numbered source list.

Also the renderer the JSON readers run over their text (vendors' text is Markdown too).

Rules (CommonMark/GFM syntax, read by rules, not by a Markdown-to-HTML library, so every position is kept):
- `[text](url)` cites url; `text` stays in the claim. A link whose text is a number (`[1](url)`,
  `[[1]](url)`) or that stands alone in parentheses (`([site](url))`, how OpenAI marks citations) is a
  marker: removed from the claim. `<url>` and bare http(s) URLs cite too and are removed.
- `[text][label]`, `[text][]` and `[label]` cite the definition `[label]: url` (labels are
  case-insensitive); `[^note]` cites the footnote `[^note]: ... url ...`.
- `[n]`, `[n, m]`, `[n-m]` (with `markers`) cite source n of the numbered sources: the definitions
  `[n]: url`, the answer's own source list, or the vendor's list the caller passes (`numbered`).
- The source list (with `source_list`) is the run of lines at the very end of the answer that each
  start `[n]`, `n.` or `n)`, when one of them carries a URL or a file name or all of them start `[n]`,
  with the heading line above it (`Sources:`, `## References`, `**Sources**`); it is not prose. A leading
  `<think>...</think>` block (reasoning models) is not prose.
- A local file: a list entry, definition or footnote with no URL that names a file cites that file (a
  quoted document citation, `Quote` with provenance `file`; `extract.local` reads it). The name is its
  first word that ends in an extension (`[1] coffee.md`, `2. notes/tea.txt - Tea notes`; a definition's
  name must come first: `[1]: coffee.md`), or a link target, `<name>` or `` `name` `` (spaces allowed);
  a name always ends in an extension that starts with a letter, and has no ':' and no leading '#'. The quote of a marker citing a file is the block quote the
  marker stands in (its text since the block's start or the marker before it), else the double-quoted
  passage ("...", “...”, «...») it directly follows (only spaces and punctuation between), with content
  (`matching.has_content`), shared by at most QUOTE_SHARED markers; else None: a claim to judge against
  the file. The quote travels as the citation's quote, not in its claim (`assemble`). `Rendered.files`
  names each cited file with the position of its entry.
- Fenced code is not prose and cites nothing; inline code keeps its text. Headings, list items, table
  rows and block quotes each start a new paragraph, their prefixes removed; so does the text after a
  bold run-in heading (`**Under pressure:** Inside ...`), which is a heading of its own; `**` is removed.
- Problems, one line per marker: a marker or `[text][label]` with no source, or whose entry gives
  neither a URL nor a file name (dangling_marker, saying how to fix it); a defined source never cited
  (uncited_source); a link that is not http(s) (unsupported); an entry with neither a URL nor a file
  name that nothing cites, a source defined twice (malformed).
"""
from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping
from urllib.parse import urlsplit

from ..matching.normal import has_content
from ..vocabulary import MARKDOWN_ANSWER
from .base import Reader
from .parsed import Anchor, AnswerFormatError, Documents, Link, Parsed, Problem, Quote, local_file
from .prose import Prose, line_col, line_cols

MAX_RANGE = 50
"""A marker range `[n-m]` longer than this is not expanded (reported as malformed)."""
QUOTE_SHARED = 4
"""Markers one quoted passage is the quote of (`"..." [1][2]`: both); later ones are claims, so the quotes
extracted never outgrow the answer more than this many times."""
_QUOTED = re.compile(r'"(?P<a>[^"\n]+)"|\u201c(?P<b>[^\u201d\n]+)\u201d|\u00ab(?P<c>[^\u00bb\n]+)\u00bb')
"""A passage in double quotes within one paragraph: "...", \u201c...\u201d or \u00ab...\u00bb."""
_QUOTE_GAP = re.compile(r"[\s.,;:!?]{0,8}")
"""What may stand between a quoted passage's closing mark and the marker that quotes it."""

_URL = r"https?://[^\s<>\[\]()\"'`]+(?:\([^\s()]*\)[^\s<>\[\]()\"'`]*)*"
_INLINE = re.compile(
    r"(?P<image>!\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\([^()\n]*\))"
    r"|(?<!\\)\[(?P<ltext>(?:[^\[\]\\\n]|\\.|\[[^\[\]\n]*\])*)\]\(\s*(?P<lurl><[^>\s]*>|[^\s()<>]*"
    r"(?:\([^\s()]*\)[^\s()<>]*)*)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
    r"|(?<!\\)\[\^(?P<foot>[^\[\]\s]+)\]"
    r"|(?<!\\)\[(?P<num>\d{1,4}(?:\s*[,\u2013-]\s*\d{1,4})*)\]"
    r"|(?<!\\)\[(?P<rtext>(?:[^\[\]\\\n]|\\.)*)\]\[(?P<rlabel>[^\[\]\n]*)\]"
    r"|(?<!\\)\[(?P<stext>(?:[^\[\]\\\n]|\\.)+)\](?![(\[:])"
    r"|<(?P<auto>https?://[^\s<>]+)>"
    rf"|(?P<bare>(?<![\w/]){_URL})"
    r"|(?P<bold>\*\*)"
)
"""Inline tokens. Linear on any text: every repeated class stops at the next bracket, parenthesis or line
end, so a failed attempt at one `[` never scans past the next one; code spans are found by `_CodeSpans`."""
_TICKS = re.compile(r"`+")
_ANY_URL = re.compile(r"\[(?P<title>[^\[\]\n]*)\]\(\s*<?(?P<url>https?://[^\s()<>\[\]]+)>?[^()\n]*\)"
                      r"|<(?P<auto>https?://[^\s<>]+)>"
                      rf"|(?P<bare>{_URL})")
_DEFINITION = re.compile(r"^ {0,3}\[(?P<label>\^?[^\]\n]+)\]:[ \t]*(?P<rest>.*)$")
_ENTRY = re.compile(r"^ {0,3}(?:\[(?P<a>\d{1,4})\]:?|(?P<b>\d{1,4})[.)])[ \t]+(?P<rest>\S.*)$")
_LIST_HEADING = re.compile(r"^ {0,3}(?:#{1,6}[ \t]+\S.*|\*\*[^*\n]+\*\*:?|__[^_\n]+__:?|[^\W\d][\w ]{0,40}:)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+|$)")
_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}(?:>[ \t]?)+")
_RUN_IN = re.compile(r"(?P<mark>\*\*|__)(?P<label>[^*_\n]{1,80}?)(?::(?P=mark)|(?P=mark):)[ \t]+(?=\S)")
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_TRAILING_PUNCT = ".,;:!?*_~'\""
_LOCAL = re.compile(r"\[(?P<title>[^\[\]\n]*)\]\(\s*(?:<(?P<angled>[^<>\n]+)>|(?P<target>[^\s()<>]+))\s*\)"
                    r"|<(?P<bracketed>[^<>\n]+)>|`(?P<ticked>[^`\n]+)`")
"""A local file named by a link target, `<name>` or `` `name` ``: spaces allowed."""
_FILE_NAME = re.compile(r"[\w./~-]*[\w-]\.[A-Za-z][A-Za-z\d]{0,7}")
"""A bare file name: a word ending in an extension that starts with a letter (`coffee.md`, not `v1.2`)."""
_EXTENSION = re.compile(r"[^/]\.[A-Za-z][A-Za-z\d]{0,7}$")
"""How every local file name ends, whichever way it is written."""


@dataclass(frozen=True)
class Defined:
    """A source the answer can cite by label (a URL, or a local file as a Quote), and where it was defined."""
    link: Link | Quote
    where: str


@dataclass(frozen=True)
class LinkUse:
    """One citation found in the text: its source span, the prose span it anchors and the link."""
    source_start: int
    source_end: int
    prose_start: int
    prose_end: int
    link: Link
    where: str


@dataclass
class Rendered:
    prose: Prose
    links: list[LinkUse] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)       # each cited local file -> where its entry is


def is_web_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _label(text: str) -> str:
    return " ".join(text.split()).lower()


def _first_url(rest: str) -> tuple[str | None, str]:
    """The first URL in a definition or list entry, and the rest of it as the title."""
    match = _ANY_URL.search(rest)
    if not match:
        return None, rest.strip()
    url = match["url"] or match["auto"] or match["bare"].rstrip(_TRAILING_PUNCT)
    title = match["title"] if match["title"] is not None else (rest[:match.start()] + rest[match.end():])
    title = title.strip().strip("-\u2013\u2014:\"' ").strip()
    return url, title or None


_NO_SOURCE = "gives neither a URL nor a file name: add its http(s) URL or the name of a file beside the answer"


def _shown(source: Link | Quote) -> str:
    """A defined source as a message names it: its URL or its file name."""
    return source.url if isinstance(source, Link) else local_file(source)


def _local_name(rest: str, first: bool) -> str | None:
    """The local file a definition or list entry with no URL names (module rules), or None; with `first`,
    only a name at its very start counts."""
    rest = rest.strip()
    match = _LOCAL.match(rest) if first else _LOCAL.search(rest)
    if match:
        name = (match["angled"] or match["target"] or match["bracketed"] or match["ticked"]).strip()
    else:
        words = rest.split()[:1] if first else rest.split()
        name = next((w for w in (w.strip("()[]{},;:'\"").rstrip(".") for w in words) if _FILE_NAME.fullmatch(w)),
                    None)
    if not name or ":" in name or name.startswith("#") or not _EXTENSION.search(name):
        return None
    return name


def _code_spans(text: str, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """(opener start, body start, body end, closer end) of each code span in text[start:end], CommonMark's
    way: a run of n backticks opens, the next run of exactly n closes, an opener with no closer is text.
    One pass over the runs, each length's list read by a pointer that only moves forward."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text, start, end)]
    by_length: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(i)
    pointer = dict.fromkeys(by_length, 0)
    spans, i = [], 0
    while i < len(runs):
        length = runs[i][1] - runs[i][0]
        same, k = by_length[length], pointer[length]
        while k < len(same) and same[k] <= i:
            k += 1
        pointer[length] = k
        if k < len(same):
            j = same[k]
            spans.append((runs[i][0], runs[i][1], runs[j][0], runs[j][1]))
            i = j + 1
        else:
            i += 1
    return spans


class _Renderer:
    def __init__(self, text: str, where: Callable[[int], str], markers: bool,
                 numbered: Mapping[str, Defined], source_list: bool):
        self.text, self.where, self.markers = text, where, markers
        self.prose = Prose(text)
        self.out = Rendered(self.prose)
        self.defined: dict[str, Defined] = dict(numbered)
        self.used: set[str] = set()
        self.source_list = source_list
        self._numbered: list[int] | None = None     # the numbered labels, sorted (kept until a definition)
        self.broken: dict[str, str] = {}            # label -> where, of entries with neither URL nor file
        self.block_quotes: list[tuple[int, int]] = []   # prose spans of block quotes
        self.file_entries: dict[str, str] = {}      # local file name -> where its first entry is

    # ------------------------------------------------------------ lines that are not prose
    def run(self) -> Rendered:
        begin = self._after_think()
        lines = []
        position = begin
        for raw in self.text[begin:].split("\n"):
            lines.append((position, position + len(raw.rstrip("\r"))))
            position += len(raw) + 1
        hidden = self._fences(lines)
        hidden |= self._definitions(lines, hidden)
        if self.source_list:
            hidden |= self._trailing_list(lines, hidden)
        self._blocks(lines, hidden)
        for label, defined in self.defined.items():
            if label not in self.used:
                self._problem(defined.where, "uncited_source",
                              f"source [{label}] ({_shown(defined.link)}) is never cited")
        for label, where in self.broken.items():
            if label not in self.used:
                self._problem(where, "malformed", f"source [{label}] {_NO_SOURCE}; nothing cites it")
        self._quote_local_files()
        return self.out

    def _quote_local_files(self) -> None:
        """Give each citation of a local file its quote (module rules) and name the files cited. Linear: each
        passage is found once, and is the quote of at most QUOTE_SHARED markers."""
        uses = [(n, use) for n, use in enumerate(self.out.links) if isinstance(use.link, Quote)]
        if not uses:
            return
        prose = self.prose.text
        passages = [(m.end(), m.start(m.lastgroup), m.end(m.lastgroup), m.start())
                    for m in _QUOTED.finditer(prose)]
        ends = [end for end, *_ in passages]
        block_starts = [lo for lo, _ in self.block_quotes]
        since: dict[int, tuple[int, int]] = {}          # block -> (start of the current segment, last point)
        shared: dict[tuple[int, int], list] = {}         # passage span -> [its quote, markers it served]
        for n, use in uses:
            point, span = use.prose_start, None
            k = bisect_right(block_starts, point) - 1
            if k >= 0 and point <= self.block_quotes[k][1]:
                begin, last = since.get(k, (self.block_quotes[k][0], None))
                if point != last:                        # a block quote's text since its previous marker
                    begin = last if last is not None else begin
                    since[k] = (begin, point)
                span = cut = (begin, point)
            else:
                j = bisect_right(ends, point) - 1
                if j >= 0 and _QUOTE_GAP.fullmatch(prose, ends[j], point):
                    span, cut = passages[j][1:3], (passages[j][3], ends[j])
            entry = shared.setdefault(span, [None, 0]) if span else [None, QUOTE_SHARED]
            if entry[1] < QUOTE_SHARED:
                entry[0] = entry[0] or " ".join(prose[span[0]:span[1]].split()).strip("\"\u201c\u201d\u00ab\u00bb ")
                entry[1] += 1
                if has_content(entry[0]):
                    self.out.links[n] = replace(use, link=replace(use.link, quote=entry[0], passage=cut))
            name = local_file(use.link)
            self.out.files.setdefault(name, self.file_entries[name])

    def _after_think(self) -> int:
        stripped = self.text.lstrip()
        if not stripped.startswith("<think>"):
            return 0
        close = self.text.find("</think>")
        return len(self.text) if close < 0 else close + len("</think>")

    def _fences(self, lines) -> set[int]:
        hidden, fence = set(), None
        for n, (start, end) in enumerate(lines):
            match = _FENCE.match(self.text[start:end])
            if fence is None and match:
                fence = match["fence"]
                hidden.add(n)
            elif fence is not None:
                hidden.add(n)
                if match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence):
                    fence = None
        return hidden

    def _definitions(self, lines, hidden) -> set[int]:
        found = set()
        for n, (start, end) in enumerate(lines):
            match = None if n in hidden else _DEFINITION.match(self.text[start:end])
            if not match:
                continue
            url, title = _first_url(match["rest"])
            label = _label(match["label"])
            name = None if url else _local_name(match["rest"], first=True)
            if url is None and name is None and not label.startswith("^"):
                continue                                   # "[Note]: text" is prose, not a definition
            found.add(n)
            self._define(label, url, title, start, name)
        return found

    def _trailing_list(self, lines, hidden) -> set[int]:
        run: list[int] = []
        entries: list[tuple[int, re.Match]] = []
        n = len(lines) - 1
        while n >= 0:
            start, end = lines[n]
            line = self.text[start:end]
            match = _ENTRY.match(line)
            if not line.strip() or (n in hidden and not match):
                n -= 1
                continue
            if not match:
                break
            run.append(n)
            if n not in hidden:
                entries.append((n, match))
            n -= 1
        read = [(n, m, *_first_url(m["rest"])) for n, m in entries]
        read = [(n, m, url, title, None if url else _local_name(m["rest"], first=False))
                for n, m, url, title in read]
        if not entries or not (any(url or name for _, _, url, _, name in read)
                               or all(m["a"] for _, m in entries)):
            return set()
        while n >= 0 and not self.text[lines[n][0]:lines[n][1]].strip():
            n -= 1
        if n >= 0 and n not in hidden and _LIST_HEADING.match(self.text[lines[n][0]:lines[n][1]]):
            run.append(n)
        for line_no, match, url, title, name in reversed(read):
            self._define(match["a"] or match["b"], url, title, lines[line_no][0], name)
        return set(run)

    def _define(self, label: str, url: str | None, title: str | None, start: int, name: str | None = None) -> None:
        where = self.where(start)
        if label in self.defined or label in self.broken:
            first = self.defined[label].where if label in self.defined else self.broken[label]
            self._problem(where, "malformed", f"source [{label}] is defined twice; the first is used ({first})")
        elif url is None and name is None:
            self.broken[label] = where
        else:
            source = Link(url, title) if url else Quote(None, None, (("file", name),))
            self.defined[label] = Defined(source, where)
            self._numbered = None
            if name:
                self.file_entries.setdefault(name, where)

    # ------------------------------------------------------------ blocks
    def _blocks(self, lines, hidden) -> None:
        new_block, quoting = True, None           # quoting: prose start of the block quote being read
        for n, (start, end) in enumerate(lines):
            line = self.text[start:end]
            if n in hidden or not line.strip() or _RULE.match(line) or _TABLE_RULE.match(line):
                new_block, quoting = True, self._end_quote(quoting)
                continue
            content, stop = start, end
            quote = _QUOTE.match(line)
            if quote:
                content += quote.end()
            rest = self.text[content:end]
            heading = _HEADING.match(rest)
            item = None if heading else _ITEM.match(rest)
            table = not heading and not item and rest.lstrip().startswith("|")
            if heading:
                content += heading.end()
                stop = content + len(self.text[content:end].rstrip().rstrip("#").rstrip())
            elif item:
                content += item.end()
            elif table:
                content += len(rest) - len(rest.lstrip()) + 1
                stop = content + len(self.text[content:end].rstrip().rstrip("|").rstrip())
            starts = new_block or quote or heading or item or table
            if starts and not quote:
                quoting = self._end_quote(quoting)
            if len(self.prose):
                self.prose.add("\n\n" if starts else " ")
            if quote and quoting is None:
                quoting = len(self.prose)
            run_in = _RUN_IN.match(self.text, content, stop) if starts else None
            if run_in:
                self.prose.copy(run_in.start("label"), run_in.end("label"))
                self.prose.add(":\n\n")
                content = run_in.end()
            self._inline(content, stop)
            new_block = bool(heading or table)
        self._end_quote(quoting)

    def _end_quote(self, start: int | None) -> None:
        """Close the block quote that started at prose position `start`, if one is open."""
        if start is not None:
            self.block_quotes.append((start, len(self.prose)))

    # ------------------------------------------------------------ inline
    def _inline(self, start: int, end: int) -> None:
        """Tokens and code spans left to right; a search's match is kept until passed (each character is
        scanned a bounded number of times, whatever the text)."""
        spans, s = _code_spans(self.text, start, end), 0
        pos, match, searched = start, None, False
        while pos < end:
            while s < len(spans) and spans[s][0] < pos:
                s += 1
            if not searched or (match is not None and match.start() < pos):
                match, searched = _INLINE.search(self.text, pos, end), True
            span = spans[s] if s < len(spans) else None
            if span is not None and (match is None or span[0] <= match.start()):
                self.prose.copy(pos, span[0])
                self.prose.copy(span[1], span[2])
                pos = span[3]
            elif match is not None:
                pos = self._token(match, pos)
            else:
                break
        self.prose.copy(pos, end)

    def _cut(self, pos: int, start: int) -> int:
        """Copy text up to a removed marker, dropping the spaces just before it."""
        cut = start
        while cut > pos and self.text[cut - 1] in " \t":
            cut -= 1
        self.prose.copy(pos, cut)
        return cut

    def _remove(self, pos: int, start: int, end: int, links: list[Link]) -> int:
        """Drop the marker at [start, end) and the spaces before it, cite each link at that point, and go
        on past a full stop that would double the one before it ("boils. https://x." -> "boils.")."""
        self._cut(pos, start)
        for link in links:
            self._cite(link, start, end)
        last = self.prose.last
        if last and last in ".!?" and end < len(self.text) and self.text[end] in ".,;:":
            return end + 1
        return end

    def _token(self, m: re.Match, pos: int) -> int:
        if m["image"] is not None:
            self.prose.copy(pos, m.start())
            return m.end()
        if m["ltext"] is not None:
            return self._link(m, pos)
        if m["foot"] is not None:
            return self._marker(m, pos, ["^" + _label(m["foot"])], f"[^{m['foot']}]")
        if m["num"] is not None:
            if not self.markers:
                self.prose.copy(pos, m.end())
                return m.end()
            return self._numbers(m, pos)
        if m["rtext"] is not None:
            return self._reference(m, pos, m["rlabel"] or m["rtext"], m.start("rtext"), m.end("rtext"),
                                   explicit=bool(m["rlabel"]))
        if m["stext"] is not None:
            return self._reference(m, pos, m["stext"], m.start("stext"), m.end("stext"), explicit=False)
        if m["auto"] is not None:
            return self._remove(pos, m.start(), m.end(), [Link(m["auto"])])
        if m["bare"] is not None:
            return self._bare(m, pos)
        self.prose.copy(pos, m.start())
        return m.end()

    def _cite(self, link: Link, src_start: int, src_end: int, prose_start: int | None = None) -> None:
        start = len(self.prose) if prose_start is None else prose_start
        self.out.links.append(LinkUse(src_start, src_end, start, len(self.prose), link, self.where(src_start)))

    def _link(self, m: re.Match, pos: int) -> int:
        url = m["lurl"].strip("<>")
        text = m["ltext"]
        if not is_web_url(url):
            self._problem(self.where(m.start()), "unsupported", f"link to {url!r} is not an http(s) URL; "
                                                              "not a citation")
            self.prose.copy(pos, m.start())
            self.prose.copy(m.start("ltext"), m.end("ltext"))
            return m.end()
        boxed = (m.start() > pos and self.text[m.start() - 1] == "(" and m.end() < len(self.text)
                 and self.text[m.end()] == ")")
        if boxed or re.fullmatch(r"\[?\d{1,4}\]?", text.strip()):
            start, end = (m.start() - 1, m.end() + 1) if boxed else (m.start(), m.end())
            return self._remove(pos, start, end, [Link(url)])
        self.prose.copy(pos, m.start())
        prose_start = len(self.prose)
        self.prose.copy(m.start("ltext"), m.end("ltext"))
        self._cite(Link(url), m.start(), m.end(), prose_start)
        return m.end()

    def _numbers(self, m: re.Match, pos: int) -> int:
        labels: list[str] = []
        for part in re.split(r"\s*,\s*", m["num"]):
            bounds = [int(b) for b in re.split(r"\s*[\u2013-]\s*", part)]
            if len(bounds) == 1:
                labels.append(str(bounds[0]))
            elif len(bounds) == 2 and 0 <= bounds[1] - bounds[0] < MAX_RANGE:
                labels.extend(str(k) for k in range(bounds[0], bounds[1] + 1))
            else:
                self._problem(self.where(m.start()), "malformed", f"marker range [{part}] is not read")
        return self._marker(m, pos, labels, m.group(0))

    def _marker(self, m: re.Match, pos: int, labels: list[str], shown: str) -> int:
        links = []
        for label in labels:
            defined = self.defined.get(label)
            if defined is None:
                if label in self.broken:
                    self.used.add(label)
                    said = f"marker {shown} cites source [{label}] ({self.broken[label]}), which {_NO_SOURCE}"
                else:
                    which = f"[{label}]" if shown == f"[{label}]" else f"{shown} cites [{label}], which"
                    said = f"marker {which} has no source ({self._sources_there()})"
                self._problem(self.where(m.start()), "dangling_marker", said)
                continue
            self.used.add(label)
            links.append(defined.link)
        return self._remove(pos, m.start(), m.end(), links)

    def _reference(self, m: re.Match, pos: int, label: str, text_start: int, text_end: int,
                   explicit: bool) -> int:
        key = _label(label)
        defined = self.defined.get(key)
        if defined is None:
            if explicit:
                self._problem(self.where(m.start()), "dangling_marker", f"reference [{label}] is not defined")
            self.prose.copy(pos, m.end())
            return m.end()
        self.used.add(key)
        self.prose.copy(pos, m.start())
        prose_start = len(self.prose)
        self.prose.copy(text_start, text_end)
        self._cite(defined.link, m.start(), m.end(), prose_start)
        return m.end()

    def _bare(self, m: re.Match, pos: int) -> int:
        url = m["bare"].rstrip(_TRAILING_PUNCT)
        start, end = m.start(), m.start() + len(url)
        if url.count("(") < url.count(")") and url.endswith(")"):
            url, end = url[:-1], end - 1
        if start > pos and self.text[start - 1] == "(" and end < len(self.text) and self.text[end] == ")":
            start, end = start - 1, end + 1
        return self._remove(pos, start, end, [Link(url)])

    def _sources_there(self) -> str:
        """What a marker with no source could have cited: the numbered sources there are."""
        if self._numbered is None:
            self._numbered = sorted(int(k) for k in self.defined if k.isdigit())
        numbers = self._numbered
        if not numbers:
            return "the answer has no numbered sources: end it with a list such as `[1] https://...` or `[1] notes.md`"
        if len(numbers) == 1:
            return f"the only numbered source is [{numbers[0]}]"
        if numbers[-1] - numbers[0] + 1 == len(numbers):
            return f"the numbered sources are [{numbers[0]}]-[{numbers[-1]}]"
        shown = ", ".join(f"[{k}]" for k in numbers[:8]) + (", ..." if len(numbers) > 8 else "")
        return f"the numbered sources are {shown}"

    def _problem(self, where: str, kind: str, message: str) -> None:
        self.out.problems.append(Problem(where, kind, message))


def render(text: str, where: Callable[[int], str], *, markers: bool,
           numbered: Mapping[str, Defined] | None = None, source_list: bool = False) -> Rendered:
    """Prose, citations and problems of Markdown `text` (see module rules); `where` names a position."""
    return _Renderer(text, where, markers, numbered or {}, source_list).run()


class MarkdownReader(Reader):
    """A chat answer in Markdown (see module rules)."""
    name = MARKDOWN_ANSWER

    def parse(self, text: str, documents: Documents = ()) -> Parsed:
        nul = text.find("\x00")
        if nul >= 0:
            raise AnswerFormatError(self.name, line_col(text, nul), "a NUL character: binary data, not text")
        if text.lstrip()[:1] in ("{", "["):
            try:
                json.loads(text)
            except (ValueError, RecursionError):
                pass
            else:
                raise AnswerFormatError(self.name, line_col(text, len(text) - len(text.lstrip())),
                                        "this is a JSON document; name its format (or use auto)")
        rendered = render(text, line_cols(text), markers=True, source_list=True)
        return parsed_from(rendered)


def parsed_from(rendered: Rendered, exclude: list[tuple[int, int]] = ()) -> Parsed:
    """Parsed prose with one anchor per link found, except links inside an `exclude` source span."""
    anchors = [Anchor(use.prose_start, use.prose_end, use.link, use.where) for use in rendered.links
               if not any(lo <= use.source_start and use.source_end <= hi for lo, hi in exclude)]
    return Parsed(rendered.prose.text, anchors, list(rendered.problems), dict(rendered.files))
