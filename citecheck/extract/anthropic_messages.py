"""Anthropic Messages API responses: text blocks with `citations`.

Documentation followed: the Messages API response object (header `anthropic-version: 2023-06-01`); the
Citations guide (platform.claude.com/docs/en/build-with-claude/citations: char_location, page_location,
content_block_location; "end" indices exclusive, pages 1-based, blocks 0-based) and the web search tool
page (agents-and-tools/tool-use/web-search-tool, tool `web_search_20250305`: server_tool_use,
web_search_tool_result, web_search_result_location with url, title, encrypted_index, cited_text), in the
stored copies of 2025-2026 (their navigation lists the Claude 4.5/4.6 models). The newer
`search_result_location` (search-result content blocks) is not read: it is reported as unsupported.

Rules:
- The answer is the `text` blocks of `content`, joined in order; a block of another type between them
  (tool use, search results, thinking) starts a new paragraph and is not prose.
- A text block's citations cite that block's text; the claim is the sentence(s) it lies in.
- `char_location`, `page_location`, `content_block_location` give a check citation: the quote is
  `cited_text`; the section is the start page for `page_location` (a PDF read by `citecheck.source.pdf_text`
  has one section per page) and null otherwise (check then looks for the quote in every section);
  `document`, `document_index` and the range are kept as provenance. Ranges are end-exclusive, pages
  1-based.
- `web_search_result_location` gives a batch claim for its `url`, carrying its `cited_text` (the text the
  citation says the page holds; `verify` matches it on the fetched page before any judge is asked).
- Problems: an inverted or empty range; with `documents`, a character range outside the document's
  text or not matching `cited_text`, a page past its last page, a document_index with no document;
  without them, a `cited_text` whose length is not the range's; a URL no `web_search_tool_result`
  returned; a malformed block or citation (skipped, the rest is read).
"""
from __future__ import annotations

from ..source.sources import Document
from ..vocabulary import ANTHROPIC_ANSWER
from . import markdown
from .base import JsonReader
from .jsondoc import Malformed, entries, expect, get, index, top
from .parsed import Anchor, AnswerFormatError, Documents, Link, Parsed, Problem, Quote
from .prose import Pieces

DOCUMENT_CITATIONS = ("char_location", "page_location", "content_block_location")


class AnthropicReader(JsonReader):
    name = ANTHROPIC_ANSWER

    @classmethod
    def looks_like(cls, data: object) -> bool:
        return (isinstance(data, dict) and isinstance(data.get("content"), list)
                and (data.get("type") == "message" or data.get("role") == "assistant"))

    def read(self, data: object, documents: Documents) -> Parsed:
        if not isinstance(data, dict):
            raise AnswerFormatError(self.name, "$", "is not a JSON object (a Messages API response is one)")
        expect(self.name, data, "type", "message")
        expect(self.name, data, "role", "assistant")
        content = top(self.name, data, "content", list)
        problems: list[Problem] = []
        pieces = Pieces()
        blocks: list[tuple[int, int, int, dict]] = []
        results: set[str] = set()
        for i, block in enumerate(content):
            where = f"$.content[{i}]"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                try:
                    start, end = pieces.add(f"{where}.text", get(block, "text", str, where))
                    blocks.append((i, start, end, block))
                    continue
                except Malformed as exc:
                    problems.append(Problem(exc.where, "malformed", f"{exc.what}; block skipped"))
            elif not isinstance(kind, str):
                problems.append(Problem(where, "malformed", "is not a content block (no type); skipped"))
            elif kind == "web_search_tool_result":
                results |= _result_urls(block, where, problems)
            pieces.gap()
        rendered = markdown.render(pieces.text, pieces.where, markers=False)
        parsed = markdown.parsed_from(rendered)
        for i, start, end, block in blocks:
            for where, citation in entries(block, "citations", f"$.content[{i}]", problems):
                try:
                    source = self._source(citation, where, documents, results, problems)
                except Malformed as exc:
                    problems.append(Problem(exc.where, "malformed", f"{exc.what}; citation skipped"))
                    continue
                if source is not None:
                    prose = rendered.prose
                    parsed.anchors.append(Anchor(prose.position(start), prose.position(end), source, where))
        parsed.problems[:0] = problems
        return parsed

    def _source(self, c: object, w: str, documents: Documents, results: set[str],
                problems: list[Problem]) -> Link | Quote | None:
        kind = get(c, "type", str, w)
        if kind == "web_search_result_location":
            url = get(c, "url", str, w)
            if not markdown.is_web_url(url):
                raise Malformed(f"{w}.url", f"{url!r} is not an http(s) URL")
            if results and url not in results:
                problems.append(Problem(w, "unknown_result",
                                        f"cites {url}, which no web_search_tool_result in this response returned"))
            return Link(url, get(c, "title", str, w, optional=True),
                        get(c, "cited_text", str, w, optional=True) or None)
        if kind not in DOCUMENT_CITATIONS:
            problems.append(Problem(f"{w}.type", "unsupported", f"citation type {kind!r} is not read; skipped"))
            return None
        cited = get(c, "cited_text", str, w)
        number = index(c, "document_index", w)
        document = _document(documents, number, w, problems)
        provenance: list[tuple[str, object]] = [
            ("document", get(c, "document_title", str, w, optional=True) or f"document {number}"),
            ("document_index", number)]
        if kind == "char_location":
            start, end = index(c, "start_char_index", w), index(c, "end_char_index", w)
            provenance += [("start_char_index", start), ("end_char_index", end)]
            _check_characters(cited, start, end, document, number, w, problems)
            return Quote(cited, None, tuple(provenance))
        if kind == "page_location":
            start, end = index(c, "start_page_number", w, minimum=1), index(c, "end_page_number", w, minimum=1)
            provenance += [("start_page_number", start), ("end_page_number", end)]
            _check_range(start, end, "page_number", w, problems)
            if isinstance(document, Document):
                pages = sum(1 for key in document.sections if key.isdigit())
                if end - 1 > pages:
                    problems.append(Problem(w, "out_of_range", f"pages {start}-{end - 1} run past the last page "
                                                               f"of document {number} ({pages} pages)"))
            return Quote(cited, str(start), tuple(provenance))
        start, end = index(c, "start_block_index", w), index(c, "end_block_index", w)
        provenance += [("start_block_index", start), ("end_block_index", end)]
        _check_range(start, end, "block_index", w, problems)
        return Quote(cited, None, tuple(provenance))


def _result_urls(block: dict, where: str, problems: list[Problem]) -> set[str]:
    """URLs a web_search_tool_result returned (its content is a list of results, or an error object)."""
    content = block.get("content")
    if not isinstance(content, list):
        return set()
    urls = set()
    for k, result in enumerate(content):
        if isinstance(result, dict) and isinstance(result.get("url"), str):
            urls.add(result["url"])
        else:
            problems.append(Problem(f"{where}.content[{k}]", "malformed", "search result without a url"))
    return urls


def _document(documents: Documents, number: int, w: str, problems: list[Problem]):
    if not documents:
        return None
    if number >= len(documents):
        problems.append(Problem(f"{w}.document_index", "out_of_range",
                                f"document {number} was not given ({len(documents)} documents)"))
        return None
    return documents[number]


def _check_range(start: int, end: int, unit: str, w: str, problems: list[Problem]) -> None:
    if end <= start:
        problems.append(Problem(w, "out_of_range", f"end_{unit} {end} is not after start_{unit} {start} "
                                                   "(the end is exclusive)"))


def _check_characters(cited: str, start: int, end: int, document, number: int, w: str,
                      problems: list[Problem]) -> None:
    if end < start:
        problems.append(Problem(w, "out_of_range", f"end_char_index {end} is before start_char_index {start}"))
    elif isinstance(document, str):
        if end > len(document):
            problems.append(Problem(w, "out_of_range", f"characters {start}-{end} fall outside document "
                                                       f"{number} ({len(document):,} characters)"))
        elif document[start:end] != cited:
            problems.append(Problem(w, "cited_text_mismatch", f"cited_text is not the text at characters "
                                                              f"{start}-{end} of document {number}"))
    elif document is None and end - start != len(cited):
        problems.append(Problem(w, "cited_text_mismatch", f"cited_text has {len(cited)} characters but the "
                                                          f"range {start}-{end} covers {end - start}"))
