"""PDFs the tests build themselves: matplotlib draws the lines (TrueType fonts embedded, so pypdf reads the
text back with its line-end hyphens and ligatures as drawn), pypdf adds bookmarks, encryption and blank
pages. `python tests/pdfs.py` rewrites data/answers/rfc7519-excerpt.pdf, the PDF that
data/answers/anthropic_pdf.json cites.
"""
from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["pdf.fonttype"] = 42
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

A4 = (8.27, 11.69)
TOP, STEP = 0.90, 0.022
METADATA = {"Creator": "citecheck tests", "Producer": "matplotlib", "CreationDate": None}


def _page(lines, header: str | None, footer: str | None) -> Figure:
    """One page: `lines` top to bottom, or a (left, right) pair of line lists for two columns."""
    figure = Figure(figsize=A4)
    if header:
        figure.text(0.08, 0.95, header, fontsize=9)
    if isinstance(lines, tuple):
        left, right = lines
        for row in range(max(len(left), len(right))):
            # drawn row by row, left then right: the order a plain text extractor reads them in
            for x, column in ((0.08, left), (0.53, right)):
                if row < len(column):
                    figure.text(x, TOP - row * STEP, column[row], fontsize=10)
    else:
        for row, line in enumerate(lines):
            figure.text(0.08, TOP - row * STEP, line, fontsize=10)
    if footer:
        figure.text(0.47, 0.04, footer, fontsize=9)
    return figure


def build(pages, *, header: str | None = None, footer: str | None = "Page {n}") -> bytes:
    """A PDF with one page per entry of `pages` (see _page); footer "{n}" is the page number."""
    out = io.BytesIO()
    with PdfPages(out, metadata=METADATA) as pdf:
        for n, lines in enumerate(pages, 1):
            pdf.savefig(_page(lines, header, footer.format(n=n) if footer else None))
    return out.getvalue()


def no_text(pages: int = 1) -> bytes:
    """Pages with a drawing and no text at all, as a scan without OCR reads."""
    out = io.BytesIO()
    with PdfPages(out, metadata=METADATA) as pdf:
        for _ in range(pages):
            figure = Figure(figsize=A4)
            figure.add_artist(matplotlib.patches.Rectangle((0.2, 0.2), 0.6, 0.6, color="0.5"))
            pdf.savefig(figure)
    return out.getvalue()


def _rewrite(data: bytes, change) -> bytes:
    from pypdf import PdfReader, PdfWriter
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    change(writer)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted(data: bytes, user_password: str, algorithm: str = "AES-128") -> bytes:
    return _rewrite(data, lambda w: w.encrypt(user_password=user_password, owner_password="owner",
                                              algorithm=algorithm))


def with_outline(data: bytes, marks: list[tuple[str, int]]) -> bytes:
    """Bookmarks (title, 0-based page index)."""
    return _rewrite(data, lambda w: [w.add_outline_item(title=title, page_number=page) for title, page in marks])


def blank(pages: int) -> bytes:
    from pypdf import PdfWriter
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=595, height=842)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# ------------------------------------------------------------ the example PDF of data/answers
RFC_HEADER = "RFC 7519 (excerpt)                    JSON Web Token (JWT)                    May 2015"
RFC_PAGES = [
    [
        '4.1.1.  "iss" (Issuer) Claim',
        'The "iss" (issuer) claim identi\ufb01es the principal that issued the JWT. The',
        'processing of this claim is generally application speci\ufb01c. The "iss"',
        'value is a case-sensitive string containing a StringOrURI value. Use of',
        'this claim is OPTIONAL.',
        '',
        '4.1.3.  "aud" (Audience) Claim',
        'The "aud" (audience) claim identi\ufb01es the recipients that the JWT is',
        'intended for. Each principal intended to process the JWT MUST iden-',
        'tify itself with a value in the audience claim. If the principal',
        'processing the claim does not identify itself with a value in the "aud"',
        'claim when this claim is present, then the JWT MUST be rejected. In the',
        'general case, the "aud" value is an array of case-',
        'sensitive strings, each containing a StringOrURI value.',
        '',
        '4.1.4.  "exp" (Expiration Time) Claim',
        'The "exp" (expiration time) claim identi\ufb01es the expiration time on or',
        'after which the JWT MUST NOT be accepted for processing. The process-',
        'ing of the "exp" claim requires that the current date/time MUST be',
        'before the expiration date/time listed in the "exp" claim.',
        'Implementers MAY provide for some small leeway, usually no more than a',
        'few minutes, to account for clock skew. Its value MUST be a number',
    ],
    [
        'containing a NumericDate value. Use of this claim is OPTIONAL.',
        '',
        '4.1.7.  "jti" (JWT ID) Claim',
        'The "jti" (JWT ID) claim provides a unique identi\ufb01er for the JWT. The',
        'identi\ufb01er value MUST be assigned in a manner that ensures that there',
        'is a negligible probability that the same value will be accidentally',
        'assigned to a different data object. The "jti" claim can be used to',
        'prevent the JWT from being replayed. The "jti" value is a case-',
        'sensitive string. Use of this claim is OPTIONAL.',
    ],
]
RFC_EXCERPT = Path(__file__).resolve().parent.parent / "data" / "answers" / "rfc7519-excerpt.pdf"


def rfc_excerpt() -> bytes:
    """Sections 4.1.1-4.1.7 of RFC 7519 (some left out) on two pages, set the way PDFs set text: a running
    header, page numbers, ligatures, words broken at line ends, a paragraph cut by the page break."""
    return build(RFC_PAGES, header=RFC_HEADER)


if __name__ == "__main__":
    RFC_EXCERPT.write_bytes(rfc_excerpt())
    print(f"wrote {RFC_EXCERPT}")
