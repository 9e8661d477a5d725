"""Load a source document and split it into sections that citations can name.

Rules:
- RFC text: page footers ("Jones, et al. ... [Page N]"), running headers ("RFC 7519 ... May 2015")
  and form feeds are dropped; a paragraph cut by a page break is joined back together.
- A numbered section starts at a line "N.", "N.N." ... or "A.", "A.N." (appendices) at column 0;
  its id is the number without the trailing dot ("4.1.4", "A.1").
- Markdown: one section per heading; its id is the heading text. Plain text: one section per
  paragraph (blank-line separated), ids "1", "2", ...
- PDF: one section per page, read by `citecheck.source.pdf_text` within the run's PDF limits.
- The format follows the file (`detect_format`): `.md`/`.markdown` -> markdown, `.pdf` -> pdf where
  that format exists, anything else -> rfc when it reads like an RFC (a "Request for Comments: N"
  line or RFC page furniture), else text. A file with no sections under one format names the
  format that finds some.
- Files are UTF-8 (a BOM is dropped); bytes that are not are an error naming the file (`text.decode`).
- Citations: a citation that is not usable (a missing or mistyped field, a string that is not text, an
  unknown section) is reported by id and left out, the others are kept; a repeated id is a warning
  (both are kept and checked).
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .document import Document, Section
from .pdf_text import load_limited
from .text import MAX_DEPTH, decode, not_text, read_file, read_head, too_deep

FORMATS = ("rfc", "markdown", "text", "pdf")

_FOOTER = re.compile(r"^\S.*\[Page \d+\]\s*$")
_HEADER = re.compile(r"^RFC \d+ {2,}.*\S\s*$")
_HEADING = re.compile(r"^(?P<num>(?:\d+|[A-Z])(?:\.\d+)*)\.\s+(?P<title>\S.*)$")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
_RFC_MARK = re.compile(r"^Request for Comments: \d+|^RFC \d+ {2,}\S|\[Page \d+\]\s*$", re.MULTILINE)
EXTENSION_FORMATS = {".md": "markdown", ".markdown": "markdown", ".pdf": "pdf"}
"""Formats chosen by extension alone (pdf only where FORMATS has it)."""
SOURCE_SUFFIXES = (*EXTENSION_FORMATS, ".txt")
"""The file names read as sources when an untrusted answer names them (`extract.local`): Markdown, PDF,
and text (plain or RFC)."""
RFC_HEAD = 20_000
"""Characters of a file `looks_like_rfc` reads: an RFC's header and first pages."""


def clean_rfc(raw: str) -> str:
    """Drop page furniture; join a paragraph that a page break cut in two."""
    lines = raw.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FOOTER.match(line):
            # skip footer, form feed and running header, and the blank lines around them
            while out and not out[-1].strip():
                out.pop()
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].strip() == "\f"
                                      or _HEADER.match(lines[i].replace("\f", ""))):
                i += 1
            prev = out[-1].rstrip() if out else ""
            nxt = lines[i] if i < len(lines) else ""
            continues = prev and not prev.endswith((".", ":")) and nxt.startswith(" ")
            if out and not continues:
                out.append("")
            continue
        out.append(line.replace("\f", ""))
        i += 1
    return "\n".join(out).strip("\n") + "\n"


def _dedent_block(lines: list[str]) -> str:
    return "\n".join(line[3:] if line.startswith("   ") else line for line in lines).strip("\n")


def split_rfc(text: str) -> dict[str, Section]:
    """Sections of cleaned RFC text in document order; front matter and the TOC are skipped.

    Body text is indented, so every line at column 0 after the TOC is a heading: numbered
    ("4.1.4."), appendix ("Appendix A." -> "A", "A.1.") or unnumbered (its title is its id).
    """
    sections: dict[str, Section] = {}
    current: tuple[str, str] | None = None
    body: list[str] = []
    started = False
    for line in text.split("\n"):
        heading = line[:1].strip() and "...." not in line
        match = _HEADING.match(line.removeprefix("Appendix ")) if heading else None
        started = started or bool(match and match["num"] == "1")
        if started and heading:
            if current:
                sections[current[0]] = Section(current[0], current[1], _dedent_block(body))
            current = (match["num"], match["title"].strip()) if match else (line.strip(), line.strip())
            body = []
        elif current:
            body.append(line)
    if current:
        sections[current[0]] = Section(current[0], current[1], _dedent_block(body))
    return sections


def split_markdown(text: str) -> dict[str, Section]:
    """One section per Markdown heading; text before the first heading is section 'preamble'."""
    sections: dict[str, Section] = {}
    title, body = "preamble", []
    in_fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        match = None if in_fence else _MD_HEADING.match(line)
        if match:
            if "\n".join(body).strip():
                sections[title] = Section(title, title, "\n".join(body).strip())
            title, body = match["title"], []
        else:
            body.append(line)
    if "\n".join(body).strip():
        sections[title] = Section(title, title, "\n".join(body).strip())
    return sections


def split_paragraphs(text: str) -> dict[str, Section]:
    """One section per blank-line-separated paragraph, numbered from 1."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
    return {str(n): Section(str(n), f"paragraph {n}", block) for n, block in enumerate(blocks, 1)}


def load(path: str | Path, fmt: str = "rfc", *, pdf=None) -> Document:
    """Read a source file and split it by `fmt` (rfc | markdown | text | pdf); `pdf` is the run's
    config.PdfLimits (default: the documented defaults)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "pdf":
        return load_limited(path, pdf)
    path = Path(path)
    try:
        raw = decode(read_file(path, f"source file {path}"), f"source file {path}")
    except FileNotFoundError:
        raise FileNotFoundError(f"source file not found: {path}") from None
    if fmt == "rfc":
        text = clean_rfc(raw)
        sections = split_rfc(text)
    else:
        text = raw.replace("\r\n", "\n")
        sections = split_markdown(text) if fmt == "markdown" else split_paragraphs(text)
    if not sections:
        raise ValueError(f"{path.name}: no sections found with --format {fmt}{_other_format_hint(raw, fmt)}")
    return Document(path.name, text, sections)


def looks_like_rfc(text: str) -> bool:
    """An RFC names itself ("Request for Comments: 7519") or carries RFC page furniture."""
    return bool(_RFC_MARK.search(text[:RFC_HEAD]))


def detect_format(path: str | Path) -> str:
    """The format a file's extension (or, for text, its first RFC_HEAD characters) implies (module rules):
    the file is read as `load` reads it, its type and size checked on the descriptor before any byte."""
    path = Path(path)
    by_extension = EXTENSION_FORMATS.get(path.suffix.lower())
    if by_extension in FORMATS:
        return by_extension
    try:
        head = read_head(path, f"source file {path}", 4 * RFC_HEAD)   # UTF-8: at most 4 bytes a character
    except FileNotFoundError:
        raise FileNotFoundError(f"source file not found: {path}") from None
    return "rfc" if looks_like_rfc(head.decode("utf-8", errors="replace")) else "text"


def _other_format_hint(raw: str, fmt: str) -> str:
    """'; --format markdown finds 3 sections' for the first other format that finds any: markdown when
    the file has Markdown headings, then rfc, then text ('' or 'the file has no text' if none)."""
    text = raw.replace("\r\n", "\n")
    has_headings = any(_MD_HEADING.match(line) for line in text.split("\n"))
    splits = {"markdown": lambda: split_markdown(text) if has_headings else {},
              "rfc": lambda: split_rfc(clean_rfc(raw)), "text": lambda: split_paragraphs(text)}
    for other, split in splits.items():
        found = len(split()) if other != fmt else 0
        if found:
            return f"; --format {other} finds {found} section{'s' * (found != 1)}"
    return "; the file has no text" if not raw.strip() else ""


REQUIRED = ("id", "claim", "quote", "section")


@dataclass
class CitationsFile:
    citations: list[dict]                                   # the usable citations, in file order
    errors: list[str] = field(default_factory=list)         # "citation ID: ..." for each one left out
    warnings: list[str] = field(default_factory=list)       # "citation ID: ..." for one kept with a doubt


def read_citations(path: str | Path, document: Document | None = None) -> CitationsFile:
    """Read a citations JSON list (module rules). A file that is not a UTF-8 JSON list raises, naming it."""
    path = Path(path)
    try:
        text = decode(read_file(path, f"citations file {path}"), f"citations file {path}")
        if too_deep(text):
            raise ValueError(f"{path.name} is nested deeper than {MAX_DEPTH} levels; not a citations file")
        data = json.loads(text)
    except FileNotFoundError:
        raise FileNotFoundError(f"citations file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path.name} is not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ValueError(f"{path.name} is nested too deeply to be a citations file") from None
    if not isinstance(data, list):
        raise ValueError(f"{path.name} must hold a JSON list of citations")
    return citations_of(data, document)


def citations_of(data: list, document: Document | None = None) -> CitationsFile:
    """The usable citations of a parsed JSON list (module rules): a file's, or a list given inline (MCP)."""
    loaded, first = CitationsFile([]), {}
    for n, item in enumerate(data, 1):
        cid = item.get("id", f"#{n}") if isinstance(item, dict) else f"#{n}"
        shown_id = cid if isinstance(cid, str) and not not_text(cid) else repr(cid)
        problem = _citation_problem(item, document)
        if problem:
            loaded.errors.append(f"citation {shown_id}: {problem}")
            continue
        if str(cid) in first:
            loaded.warnings.append(f"citation {shown_id}: duplicate id (also citation #{first[str(cid)]}); "
                                   "both are checked")
        first.setdefault(str(cid), n)
        loaded.citations.append(item)
    return loaded


def load_citations(path: str | Path, document: Document | None = None) -> tuple[list[dict], list[str]]:
    """Read citations JSON -> (usable citations, one-line errors and warnings naming id and field).

    A file that is not a JSON list raises; a bad citation is reported and the others are kept
    (`read_citations` keeps errors and warnings apart).
    """
    loaded = read_citations(path, document)
    return loaded.citations, loaded.errors + loaded.warnings


def _citation_problem(item, document: Document | None) -> str | None:
    if not isinstance(item, dict):
        return "is not a JSON object"
    for name in REQUIRED:
        if name not in item:
            return f"missing field '{name}'"
    for name in REQUIRED:
        if isinstance(item[name], str) and not_text(item[name]):
            return f"field '{name}' is not text ({not_text(item[name])})"
    if isinstance(item["id"], bool) or not isinstance(item["id"], (str, int)):
        return "field 'id' must be a string or a number"
    if not isinstance(item["claim"], str) or not item["claim"].strip():
        return "field 'claim' must be a non-empty string"
    if item["quote"] is not None and not isinstance(item["quote"], str):
        return "field 'quote' must be a string or null"
    section = item["section"]
    if section is not None and (isinstance(section, bool) or not isinstance(section, (str, int, float))):
        return "field 'section' must be a string, a number or null"
    if document is not None and section is not None and str(section) not in document.sections:
        return f"field 'section' names unknown section {section!r} in {document.name}" + \
            closest_section(str(section), document)
    return None


def closest_section(name: str, document: Document) -> str:
    """'; did you mean 'Boiling'?' for the document's section id or title closest to `name` ('' if none is
    close): a misspelt or miscased name, or a section's title given for its number."""
    ids = {key.casefold(): section.id for section in document.sections.values()
           for key in (section.title, section.id)}
    close = difflib.get_close_matches(name.casefold(), ids, n=1, cutoff=0.75)
    return f"; did you mean {ids[close[0]]!r}?" if close else ""
