"""A cited PDF: downloaded directly (never through the Crawling API) and read page by page by `pdf_text`.

Rules:
- A URL whose path ends in `.pdf` is fetched by the direct fetcher whatever the backend (the Crawling
  API does not return a PDF's text): netguard on every hop, the fetch's deadline, at most PDF_MAX_BYTES
  (a Content-Length over it is refused before the download). A direct fetch of any other URL that
  answers a PDF (application/pdf, or a body that starts with %PDF-) is read the same way.
- The text is `pdf_text.from_bytes` under PDF_MAX_BYTES / PDF_MAX_PAGES / PDF_MAX_SECONDS: the pages
  (repaired for quoting) joined by blank lines; it then goes through passages, retrieval, the judge and
  the guard like an HTML page's.
- A PDF that cannot be read gets pdf_text's reason (vocabulary.REASONS): pdf_unsupported (`detail`
  says "encrypted" or "no extractable text"), pdf_too_large, pdf_corrupt, not_pdf — cached;
  pdf_truncated and pdf_too_slow — transient, never cached.
- Cached under `fetch.pdf`; the request names the reader and the limits, so a changed limit reads again.
"""
from __future__ import annotations

import logging
from urllib.parse import unquote, urlsplit

from ...config import Settings
from ...vocabulary import PDF_TOO_LARGE, REASONS
from .pages import FetchResult, failed

FUNCTION = "fetch.pdf"
TYPES = frozenset({"application/pdf", "application/x-pdf"})
MAGIC = b"%PDF-"

log = logging.getLogger("citecheck.web.fetch")


def is_pdf_url(url: str) -> bool:
    """A URL whose path ends in .pdf (any case)."""
    return urlsplit(url).path.lower().endswith(".pdf")


def is_pdf(content_type: str, start: bytes) -> bool:
    """Served as a PDF, or a body that is one whatever it was served as."""
    return content_type in TYPES or start.lstrip()[:5] == MAGIC


def read(url: str, final_url: str, status: int, data: bytes, settings: Settings, backend: str) -> FetchResult:
    """The PDF's text as a page (module rules); a PDF that cannot be read -> its labelled reason."""
    from ...source import pdf_text
    name = unquote(urlsplit(final_url).path.rsplit("/", 1)[-1]) or "document.pdf"
    try:
        document = pdf_text.from_bytes(data, name, max_bytes=settings.pdf.max_bytes,
                                       max_pages=settings.pdf.max_pages, max_seconds=settings.pdf.max_seconds,
                                       outline=False)
    except pdf_text.PdfError as exc:
        log.info("%s: %s", url, exc)
        return failed(url, final_url, status, backend, exc.reason, REASONS[exc.reason].label,
                      exc.detail or str(exc))
    return FetchResult(url, final_url, status, document.text, None, None, None, backend)


def too_large(url: str, final_url: str, status: int | None, backend: str, detail: str) -> FetchResult:
    """Over PDF_MAX_BYTES: refused, never read in part (a quote past the cut would look invented)."""
    return failed(url, final_url, status, backend, PDF_TOO_LARGE, detail=detail)


def cache_request(url: str, settings: Settings) -> dict:
    """What a PDF fetch's cache key covers: the URL, the reader and its limits."""
    import pypdf
    return {"url": url, "reader": f"pypdf {pypdf.__version__}", "max_bytes": settings.pdf.max_bytes,
            "max_pages": settings.pdf.max_pages}


def answered_by() -> str:
    import pypdf
    return f"httpx+pypdf {pypdf.__version__}"
