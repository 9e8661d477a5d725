"""Extract the cookbook's inputs from an LLM answer: batch claims for cited URLs, check citations for
quoted documents.

    from citecheck import extract
    result = extract.extract_file("data/answers/perplexity.json")       # format detected
    result.claims          # [{"id": "c1", "claim": ..., "urls": [...]}]   -> claims.jsonl
    result.citations       # [{"id": "q1", "claim": ..., "quote": ..., "section": ..., ...}] -> citations.json
    result.problems        # dangling markers, uncited sources, bad ranges ... each with its position

Formats (one module each, behind `base.Reader`): markdown, anthropic, openai, perplexity; `auto` picks
one: JSON is recognised by its vendor's top-level shape (Anthropic: `content` list with type message /
role assistant; OpenAI: `output` list; Perplexity: `choices` list with `citations` or `search_results`);
other text is Markdown, except text starting "{" that is not valid JSON; JSON of no known shape, an empty
answer and broken JSON are an AnswerFormatError.
Nothing in an answer is executed or fetched.

Imports: the foundation, context, `source`, `matching.normal` (what a quote with content is) and
`verdict.ci_gate` (exit statuses); no other flow.
"""
from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..paths import not_a_file
from ..vocabulary import ANSWER_FORMAT_CHOICES
from .anthropic_messages import AnthropicReader
from .base import Reader
from .markdown import MarkdownReader
from .openai_responses import OpenAIReader
from .parsed import AnswerError, AnswerFormatError, Documents, Extraction, Problem
from .perplexity import PerplexityReader

READERS: dict[str, Reader] = {reader.name: reader for reader in
                              (MarkdownReader(), AnthropicReader(), OpenAIReader(), PerplexityReader())}
FORMATS = ANSWER_FORMAT_CHOICES
if tuple(READERS) != FORMATS[1:]:
    raise ImportError(f"the readers {tuple(READERS)} are not vocabulary.ANSWER_FORMATS")
MAX_BYTES = Settings.answer_max_bytes
"""Largest answer file read (ANSWER_MAX_BYTES's default, 4 MiB); an LLM answer is kilobytes."""
MAX_MARKERS = Settings.answer_max_markers
"""Most citations read from one answer (ANSWER_MAX_MARKERS's default); the rest are one problem line."""

__all__ = ["AnswerError", "AnswerFormatError", "Extraction", "FORMATS", "MAX_BYTES", "MAX_MARKERS", "Problem",
           "READERS",
           "detect", "extract", "extract_file", "read_text"]


def detect(text: str) -> str:
    """The answer's format name (see module doc), or AnswerFormatError('auto', ...) saying why not."""
    from .jsondoc import load
    Error = AnswerFormatError
    stripped = text.lstrip()
    if not stripped:
        raise Error("auto", "line 1:1", "the answer is empty")
    if stripped[0] not in "{[":
        return "markdown"
    try:
        data = load(text, "auto")
    except Error as exc:
        if stripped[0] == "[":              # "[1] ..." or "[a link](url) ..." starts many a Markdown answer
            return "markdown"
        raise Error("auto", exc.where, f"it starts like JSON but is {exc.what}") from None
    for name, reader in READERS.items():
        if name != "markdown" and reader.looks_like(data):
            return name
    keys = ", ".join(sorted(data)[:6]) if isinstance(data, dict) else f"a JSON {type(data).__name__}"
    raise Error("auto", "$", f"JSON with none of the known shapes ({keys}); name the format: "
                             "anthropic (content), openai (output) or perplexity (choices)")


def extract(text: str, fmt: str = "auto", documents: Documents = (), *,
            max_markers: int = MAX_MARKERS) -> Extraction:
    """Claims, citations and problems of one answer (at most `max_markers` citations, ANSWER_MAX_MARKERS);
    AnswerFormatError if it is not `fmt`."""
    if fmt not in FORMATS:
        raise AnswerError(f"unknown answer format {fmt!r}; use one of {', '.join(FORMATS)}")
    name = detect(text) if fmt == "auto" else fmt
    return READERS[name].extract(text, documents, max_markers)


def extract_file(path: str | Path, fmt: str = "auto", documents: Documents = (), *,
                 max_bytes: int = MAX_BYTES, max_markers: int = MAX_MARKERS) -> Extraction:
    """extract() on a UTF-8 file, refusing one over max_bytes; every failure is one line naming the file."""
    return extract(read_text(path, fmt, max_bytes=max_bytes), fmt, documents, max_markers=max_markers)


def read_text(path: str | Path, fmt: str = "auto", *, max_bytes: int = MAX_BYTES) -> str:
    """An answer file's text: UTF-8 (BOM dropped), at most max_bytes; every failure is one line naming the
    file (AnswerError; bad bytes: AnswerFormatError for `fmt` at their line:column)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise AnswerError(f"{path}: {size:,} bytes, over the {max_bytes:,}-byte limit for an answer "
                              "(ANSWER_MAX_BYTES)")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise AnswerError(f"answer file not found: {path}") from None
    except IsADirectoryError:
        raise AnswerError(not_a_file(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        from .prose import line_col
        good = raw[:exc.start].decode("utf-8-sig")
        raise AnswerFormatError(fmt, line_col(good, len(good)), "not UTF-8 text") from None
    return text
