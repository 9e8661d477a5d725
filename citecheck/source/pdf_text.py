"""Read a PDF into a `citecheck.source.document.Document`: one section per page, its text repaired for quoting.

Library: pypdf 7.1.0. It is pure Python (nothing compiled, nothing fetched at run time), maintained (7.x in
2026), says plainly whether a file is encrypted, has a layout mode that keeps each line's horizontal
position (enough to recover two columns), and its writer builds the encrypted and bookmarked PDFs the
tests need. pdfplumber reads finer character boxes, but through pdfminer.six plus a compiled PDFium
(pypdfium2): more than this needs. AES-encrypted files (most encrypted PDFs today) need `cryptography`
(pinned too) even when their user password is empty. pypdf's own warnings about a malformed file are
silenced (logger "pypdf" at ERROR): the file is reported once, as a PdfError, or read.

Rules:
- The container is checked first: no "%PDF-" in the first KiB (or an empty file) is not_pdf; no "%%EOF"
  in the last 2 KiB is pdf_truncated (pypdf would quietly read what is left); what pypdf cannot parse
  is pdf_corrupt.
- Limits come next: over `max_bytes` (PDF_MAX_BYTES) or `max_pages` (PDF_MAX_PAGES) is PdfTooLarge
  before any text is extracted, never a partial read (a quote on page 450 would look invented).
- pypdf runs in `sandbox` (`read_pages` in a child process; only the page texts and bookmarks come back):
  past `max_seconds` (PDF_MAX_SECONDS, wall clock, whatever one page costs) it is killed, PdfTooSlow
  naming the page it was on; over the sandbox's memory cap or answer size PdfTooLarge; a crash PdfCorrupt.
- An encrypted file is opened with the empty password (permission-only encryption); if that fails it is
  pdf_unsupported / encrypted.
- Sections: "1", "2", ... one per page (title "page N"); then "1-2", "2-3", ... two consecutive pages
  each, so a quote running across a page break is found (matching.locate searches one section at a
  time); then, with `outline`, one per bookmark, named by its title (made unique), from its page to the
  next bookmark's page. Document.text is the pages joined by blank lines.
  The result is a `PdfDocument` (a Document that knows its page count: its summary says "N pages").
- Reading order: a page whose layout-mode text has a gutter (a run of GUTTER_SPACES spaces at one
  character position in the middle 20-80 % of the line width, with text on both sides on at least 3 lines
  and on COLUMN_SHARE of the page's lines) is read left column then right column, band by band between
  full-width lines; any other page is read in pypdf's plain order. Layout mode costs about 2.4 times a
  plain extraction, so it runs on the COLUMN_SAMPLE pages with the most text first, and on the other
  pages only when one of those has two columns.
- Text repair (ligatures, running headers and page numbers, soft and line-end hyphens): `pdf_repair`.
- Every failure is a PdfError whose message is one line naming the file and whose `reason` labels it in
  the live-web flow: not_pdf, pdf_truncated, pdf_corrupt, pdf_too_large, pdf_too_slow, pdf_unsupported
  (`detail` "encrypted" or "no extractable text").
"""
from __future__ import annotations

import io
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..config import PdfLimits
from ..vocabulary import NOT_PDF, PDF_CORRUPT, PDF_TOO_LARGE, PDF_TOO_SLOW, PDF_TRUNCATED, PDF_UNSUPPORTED
from . import pdf_repair, sandbox
from .document import Document, Section, count

MAX_BYTES, MAX_PAGES, MAX_SECONDS = PdfLimits.max_bytes, PdfLimits.max_pages, PdfLimits.max_seconds
"""The defaults of PDF_MAX_BYTES, PDF_MAX_PAGES and PDF_MAX_SECONDS (config.PdfLimits)."""
GUTTER_SPACES = 3
COLUMN_SHARE = 0.4
COLUMN_SAMPLE = 3

logging.getLogger("pypdf").setLevel(logging.ERROR)


@dataclass(frozen=True)
class PdfDocument(Document):
    """A Document read from a PDF: its sections are its pages (then page pairs and bookmarks)."""
    pages: int = 0

    def divisions(self) -> str:
        """'P pages' (the summary's middle part)."""
        return count(self.pages, "page")


class PdfError(ValueError):
    """A PDF that cannot be read; `reason` is the live-web reason code, str(error) one line."""
    reason = PDF_CORRUPT
    detail = ""

    def __init__(self, name: str, what: str):
        self.name, self.what = name, what
        super().__init__(f"{name}: {self.reason}: {what}")


class PdfNotPdf(PdfError):
    reason = NOT_PDF


class PdfTruncated(PdfError):
    reason = PDF_TRUNCATED


class PdfCorrupt(PdfError):
    reason = PDF_CORRUPT


class PdfTooLarge(PdfError):
    reason = PDF_TOO_LARGE


class PdfTooSlow(PdfError):
    reason = PDF_TOO_SLOW


class PdfUnsupported(PdfError):
    """Readable as a PDF, but it yields no text to check quotes against."""
    reason = PDF_UNSUPPORTED


class PdfEncrypted(PdfUnsupported):
    detail = "encrypted"


class PdfNoText(PdfUnsupported):
    detail = "no extractable text"


_ERRORS = {cls.__name__: cls for cls in (PdfNotPdf, PdfTruncated, PdfCorrupt, PdfTooLarge, PdfTooSlow,
                                         PdfEncrypted, PdfNoText)}
"""The PdfErrors a sandboxed read may report, by name (nothing else is raised from its answer)."""


def load_limited(path: str | Path, limits: PdfLimits | None = None) -> PdfDocument:
    """load() within the run's PDF limits (Settings.pdf)."""
    limits = limits or PdfLimits()
    return load(path, max_bytes=limits.max_bytes, max_pages=limits.max_pages, max_seconds=limits.max_seconds)


def load(path: str | Path, *, max_bytes: int = MAX_BYTES, max_pages: int = MAX_PAGES,
         max_seconds: float = MAX_SECONDS, outline: bool = True) -> PdfDocument:
    """A PDF file as a Document (see module rules); its size is checked before it is read."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise PdfTooLarge(path.name, f"{size:,} bytes, over the {max_bytes:,}-byte limit (PDF_MAX_BYTES)")
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"source file not found: {path}") from None
    return from_bytes(data, path.name, max_bytes=max_bytes, max_pages=max_pages, max_seconds=max_seconds,
                      outline=outline)


def from_bytes(data: bytes, name: str, *, max_bytes: int = MAX_BYTES, max_pages: int = MAX_PAGES,
               max_seconds: float = MAX_SECONDS, outline: bool = True) -> PdfDocument:
    """PDF bytes (a file, or a downloaded body) as a Document named `name`, read in `sandbox` (module rules)."""
    _check_container(data, name, max_bytes)
    try:
        limits = {"name": name, "max_pages": max_pages, "outline": outline}
        read = sandbox.run(read_pages, data, max_seconds, limits, preload=("pypdf",))
    except sandbox.TooSlow as exc:
        page = exc.progress if isinstance(exc.progress, int) else 1
        raise PdfTooSlow(name, f"text extraction took over {max_seconds:g} s and stopped at page {page} "
                               "(PDF_MAX_SECONDS)") from None
    except sandbox.TooBig as exc:
        raise PdfTooLarge(name, f"reading it needs more than the reader may use: {exc}") from None
    except sandbox.SandboxError as exc:
        raise PdfCorrupt(name, f"the reader failed: {exc}") from None
    count, pages, marks = _plain(read, name)
    if not any(page.strip() for page in pages):
        raise PdfNoText(name, f"no extractable text on any of its {count} pages (a scan or images only)")
    sections = page_sections(pages)
    for section in _outline_sections(marks, pages, sections):
        sections[section.id] = section
    return PdfDocument(name, "\n\n".join(pages), sections, pages=count)


def read_pages(data: bytes, args: dict, progress: Callable[[int], None] = lambda page: None) -> dict:
    """In the sandbox's child: {"count", "pages" (repaired), "marks" ([title, page] per bookmark)}, or
    {"error": a PdfError's class name, "what": its words}; `progress(n)` before page n's work."""
    name = args["name"]
    try:
        reader = _open(data, name)
        try:
            count = len(reader.pages)
        except Exception as exc:                              # noqa: BLE001 - any pypdf failure is a corrupt file
            raise PdfCorrupt(name, _said(exc)) from None
        if count > args["max_pages"]:
            raise PdfTooLarge(name, f"{count:,} pages, over the {args['max_pages']:,}-page limit (PDF_MAX_PAGES)")
        pages = pdf_repair.repair(_page_texts(reader, name, progress))
    except PdfError as error:
        return {"error": type(error).__name__, "what": error.what}
    return {"count": count, "pages": pages, "marks": _marks(reader, count) if args["outline"] else []}


def _plain(read, name: str) -> tuple[int, list[str], list[tuple[str, int]]]:
    """The child's answer checked as plain data: (page count, page texts, bookmarks); a PdfError it reported
    is raised here."""
    if isinstance(read, dict) and read.get("error") in _ERRORS and isinstance(read.get("what"), str):
        raise _ERRORS[read["error"]](name, read["what"])
    try:
        count, pages, marks = read["count"], read["pages"], read["marks"]
        assert isinstance(count, int) and all(isinstance(page, str) for page in pages)
        marks = [(str(title), int(page)) for title, page in marks]
    except (AssertionError, KeyError, TypeError, ValueError):
        raise PdfCorrupt(name, "the reader answered off its contract") from None
    return count, pages, marks


def _said(exc: BaseException) -> str:
    """The exception in one line for a PdfCorrupt; a MemoryError is re-raised (the sandbox's cap, not the file)."""
    if isinstance(exc, MemoryError):
        raise exc
    return sandbox.one_line(exc)


def _check_container(data: bytes, name: str, max_bytes: int) -> None:
    if len(data) > max_bytes:
        raise PdfTooLarge(name, f"{len(data):,} bytes, over the {max_bytes:,}-byte limit (PDF_MAX_BYTES)")
    if not data:
        raise PdfNotPdf(name, "an empty file")
    if b"%PDF-" not in data[:1024]:
        shown = data[:24].decode("latin-1").encode("unicode_escape").decode("ascii")
        raise PdfNotPdf(name, f"not a PDF: no %PDF- header (it starts {shown!r})")
    if b"%%EOF" not in data[-2048:]:
        raise PdfTruncated(name, f"no %%EOF marker at the end: the file is cut short ({len(data):,} bytes)")


def _open(data: bytes, name: str):
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as exc:                                  # noqa: BLE001
        raise PdfCorrupt(name, _said(exc)) from None
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError as exc:
            raise PdfEncrypted(name, f"encrypted, and decrypting it needs a missing package ({_said(exc)})") \
                from None
        except Exception as exc:                              # noqa: BLE001
            raise PdfCorrupt(name, f"encrypted, and its encryption cannot be read ({_said(exc)})") from None
        if opened == PasswordType.NOT_DECRYPTED:
            raise PdfEncrypted(name, "encrypted: a password is needed to read its text")
    return reader


def _page_texts(reader, name: str, progress: Callable[[int], None]) -> list[str]:
    """Each page's text in reading order (see the module rule on columns)."""
    pages = list(reader.pages)
    texts = []
    for number, page in enumerate(pages, 1):
        progress(number)
        try:
            texts.append(page.extract_text() or "")
        except Exception as exc:                              # noqa: BLE001
            raise PdfCorrupt(name, f"page {number}: {_said(exc)}") from None
    sample = sorted(range(len(pages)), key=lambda i: -len(texts[i]))[:COLUMN_SAMPLE]
    columns: dict[int, str | None] = {}
    for i in sample + [i for i in range(len(pages)) if i not in sample]:
        if i not in sample and not any(columns.values()):
            break                                            # no sampled page has two columns: none has
        progress(i + 1)
        columns[i] = _two_columns(pages[i])
    return [columns.get(i) or text for i, text in enumerate(texts)]


def _two_columns(page) -> str | None:
    """The page read column by column, or None when it has no gutter (or layout mode fails)."""
    try:
        layout = page.extract_text(extraction_mode="layout")
    except MemoryError:
        raise
    except Exception:                                         # noqa: BLE001 - plain order is the fallback
        return None
    return reading_order(layout)


def _gutter(lines: list[str]) -> int | None:
    filled = [line for line in lines if line.strip()]
    if len(filled) < 3:
        return None
    width = max(len(line) for line in filled)
    best, best_count = None, 0
    for column in range(int(width * 0.2), int(width * 0.8) + 1):
        count = sum(1 for line in filled if _splits(line, column))
        if count > best_count:
            best, best_count = column, count
    if best is None or best_count < max(3, math.ceil(COLUMN_SHARE * len(filled))):
        return None
    return best


def _window(column: int) -> tuple[int, int]:
    lo = column - GUTTER_SPACES // 2
    return lo, lo + GUTTER_SPACES


def _splits(line: str, column: int) -> bool:
    """Text on both sides of a run of GUTTER_SPACES spaces that covers `column`."""
    lo, hi = _window(column)
    return (hi <= len(line) and not line[lo:hi].strip() and bool(line[:lo].strip())
            and bool(line[hi:].strip()))


def _full_width(line: str, column: int) -> bool:
    """Text on both sides of the gutter without a gutter between: a title or a footer across the page."""
    lo, hi = _window(column)
    return bool(line[:hi].strip()) and bool(line[lo:].strip()) and not _splits(line, column)


def reading_order(layout: str) -> str | None:
    """Layout-mode page text with two columns read one after the other, or None without a gutter."""
    lines = layout.split("\n")
    column = _gutter(lines)
    if column is None:
        return None
    out: list[str] = []
    left: list[str] = []
    right: list[str] = []
    for line in lines + [None]:
        if line is None or _full_width(line, column):
            out += [part for part in left if part] + [part for part in right if part]
            left, right = [], []
            if line is not None:
                out.append(line.strip())
            continue
        left.append(line[:column].strip())
        right.append(line[column:].strip())
    return "\n".join(out)


def page_sections(pages: list[str]) -> dict[str, Section]:
    """One section per page ("1", "2", ...) and one per pair of consecutive pages ("1-2", ...)."""
    sections = {str(n): Section(str(n), f"page {n}", text) for n, text in enumerate(pages, 1)}
    for n in range(1, len(pages)):
        key = f"{n}-{n + 1}"
        sections[key] = Section(key, f"pages {n}-{n + 1}", pages[n - 1] + "\n" + pages[n])
    return sections


def _marks(reader, count: int) -> list[tuple[str, int]]:
    """(title, page index) per bookmark, in outline order; a broken outline has none."""
    try:
        marks = [(item.title, reader.get_destination_page_number(item)) for item in _flatten(reader.outline)]
    except MemoryError:
        raise
    except Exception:                                         # noqa: BLE001 - bookmarks are optional
        return []
    return [(" ".join(str(title).split()), page) for title, page in marks
            if isinstance(page, int) and 0 <= page < count and str(title).strip()]


def _outline_sections(marks: list[tuple[str, int]], pages: list[str], taken: dict[str, Section]) -> list[Section]:
    """One section per bookmark, from its page to the next bookmark's page."""
    marks = [(title, page) for title, page in marks if 0 <= page < len(pages) and title.strip()]
    sections, used = [], set(taken)
    for k, (title, first) in enumerate(marks):
        later = [page for _, page in marks[k + 1:] if page >= first]
        last = later[0] if later else first
        key, n = title, 2
        while key in used:
            key, n = f"{title} ({n})", n + 1
        used.add(key)
        sections.append(Section(key, title, "\n".join(pages[first:last + 1])))
    return sections


def _flatten(outline) -> list:
    items = []
    for item in outline:
        items.extend(_flatten(item) if isinstance(item, list) else [item])
    return items
