"""A fetched HTML page's text: the bytes decoded, the main content as Markdown, the visible text as the
fallback.

Rules:
- Decoding: the charset the origin declared when it is a text encoding that can decode these bytes;
  anything else (unknown, `idna`, `rot13`, a codec that refuses them) -> trafilatura's own detection.
- Readable text is trafilatura's main-content Markdown; under THIN_CHARS non-space characters, the
  page's visible text instead (no head, script, style, noscript, template; one block per paragraph).
- An XML declaration before the HTML (`<?xml …?><!DOCTYPE html>`) is dropped first: lxml refuses a
  string that declares an encoding, and the page would look empty.
- lxml stops at 256 nested elements; when its visible text is thin, a flat pass (the standard library's
  HTMLParser, which keeps no tree) reads the page instead, so 100,000 nested divs still give their text.
- A notice above the article (a retraction banner, a "RETRACTED:" <title>) that the main-content extractor
  dropped is put back first, as one line, when the extracted text's first screen holds none
  (`web.notices`); a page with no notice word in its markup is not read twice.
- A fetched page is extracted by `extract`: `readable_markdown` in `source.sandbox` (a child process),
  killed past EXTRACT_MAX_SECONDS or over the sandbox's memory cap -> TooComplex (the fetch's row:
  page_too_complex). lxml's parse is not linear in every shape (one element with 100,000 attributes
  took 204 s), so no page is parsed in the caller's process.
"""
from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

from .. import notices
from .pages import THIN_CHARS, non_space


class TooComplex(Exception):
    """A page whose text extraction passed EXTRACT_MAX_SECONDS or the sandbox's memory cap; one line."""

_BLOCK_TAGS = frozenset("p div section article header footer nav main aside li ul ol dl dt dd table tr "
                        "blockquote pre form figure figcaption h1 h2 h3 h4 h5 h6 br hr".split())
_HIDDEN_TAGS = frozenset({"head", "script", "style", "noscript", "template"})
_RAW_TAGS = _HIDDEN_TAGS - {"head"}
_XML_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]{0,200}>([^<]{1,500})</title>", re.IGNORECASE)
_NOTICE_WORD = re.compile(
    r"retract|withdrawn|expression of concern|correction|erratum|corrigend|rétract|rectificatif|zurückgezogen"
    r"|widerruf|berichtigung|korrektur|отозван|ретракц|исправлени|опроверж|обеспокоенност", re.IGNORECASE)
BANNER_SCAN_CHARS = 400_000
"""How much of the markup is read again for a banner the extractor dropped (module rules)."""


def decode(raw: bytes, charset: str | None) -> str:
    """The page's text (module rules)."""
    if charset:
        try:
            return raw.decode(charset, errors="replace")
        except (LookupError, UnicodeError, ValueError):
            pass
    from trafilatura.utils import decode_file
    return decode_file(raw)


def _paragraphs(text: str) -> str:
    paragraphs = (" ".join(block.split()) for block in re.split(r"\n\s*\n", text))
    return "\n\n".join(p for p in paragraphs if p)


def _tree_text(html: str) -> str:
    import lxml.html
    from lxml.etree import ParserError
    try:
        tree = lxml.html.fromstring(html)
    except (ParserError, ValueError):
        return ""
    for element in tree.xpath("|".join(f"//{tag}" for tag in sorted(_HIDDEN_TAGS))):
        element.drop_tree()
    for element in tree.iter():
        if isinstance(element.tag, str) and element.tag.lower() in _BLOCK_TAGS:
            element.text = "\n\n" + (element.text or "")
            element.tail = "\n\n" + (element.tail or "")
    return _paragraphs(tree.text_content())


class _FlatText(HTMLParser):
    """Text outside hidden elements, a paragraph break at each block tag; no tree, so no depth limit."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0                 # open script / style / noscript / template elements
        self.in_head = False            # </head> is optional: <body> ends the head too

    def handle_starttag(self, tag, attrs):
        if tag in _RAW_TAGS:
            self.hidden += 1
        elif tag in ("head", "body"):
            self.in_head = tag == "head"
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in _RAW_TAGS:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "head":
            self.in_head = False
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.hidden and not self.in_head:
            self.parts.append(data)


def _flat_text(html: str) -> str:
    parser = _FlatText()
    parser.feed(html)
    parser.close()
    return _paragraphs("".join(parser.parts))


def visible_text(html: str) -> str:
    """The whole page's visible text, one block per paragraph (module rules)."""
    html = _XML_DECLARATION.sub("", html, count=1)
    text = _tree_text(html)
    if non_space(text) < THIN_CHARS:
        flat = _flat_text(html)
        if non_space(flat) > non_space(text):
            return flat
    return text


def readable_markdown(html: str, url: str | None = None) -> str:
    """trafilatura's main-content Markdown; under THIN_CHARS, the whole page's visible text instead."""
    import trafilatura
    html = _XML_DECLARATION.sub("", html, count=1)
    markdown = trafilatura.extract(html, url=url, output_format="markdown", include_comments=False,
                                   include_tables=True) or ""
    if non_space(markdown) < THIN_CHARS:
        return with_banner(visible_text(html), html)   # what is on the page (a <noscript> note is not)
    return with_banner(markdown.strip(), html)


def with_banner(text: str, html: str) -> str:
    """`text` with the page's notice line first when its own first screen has none and the page's <title>
    or visible first screen has one (module rules)."""
    if notices.find(text) is not None or not _NOTICE_WORD.search(html):
        return text
    head = html[:BANNER_SCAN_CHARS]
    title = _TITLE.search(head)
    notice = notices.find(visible_text(head), unescape(title.group(1)) if title else None)
    return f"{notice.words}\n\n{text}" if notice else text


def extract(markup: str, url: str | None, seconds: float) -> str:
    """`readable_markdown` run in the sandbox within `seconds` (EXTRACT_MAX_SECONDS); TooComplex past it."""
    from ...source import sandbox
    try:
        text = sandbox.run(_extract_in_child, markup.encode("utf-8", "surrogatepass"), seconds, {"url": url},
                           preload=("lxml.html", "trafilatura"))
    except sandbox.TooSlow:
        raise TooComplex(f"text extraction took over {seconds:g} s (EXTRACT_MAX_SECONDS)") from None
    except sandbox.TooBig as exc:
        raise TooComplex(f"text extraction went {exc}") from None
    if not isinstance(text, str):
        raise sandbox.Crashed("the extractor answered off its contract")
    return text


def _extract_in_child(payload: bytes, args: dict, progress) -> str:
    """In the sandbox's child: the page's readable text."""
    return readable_markdown(payload.decode("utf-8", "surrogatepass"), args["url"])
