"""Build the fixture site's PDFs (data/site/files/): `python scripts/build_site_pdfs.py [--check]`.

- boiling-point-survey.pdf: a two-page text PDF (TrueType fonts embedded, so pypdf reads the words back),
  the reader survey the live-web flow downloads and judges.
- boiling-point-scan.pdf: the same survey's first page as a picture only (a scan with no OCR), the PDF the
  live-web flow still refuses: not_found / pdf_unsupported ("no extractable text").
The text is written for the cookbook (data/site/README.md: every figure here is a fixture). The output is
byte-for-byte the same on every run (no dates in the metadata); `--check` fails if the committed files differ.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from pdfs import METADATA, build  # noqa: E402 - the tests' PDF builder (matplotlib, fonts embedded)

FILES = ROOT / "data" / "site" / "files"
HEADER = "Kettle & Flame reader survey (fixture document)"
SURVEY = [
    [
        "Boiling points measured at home: the Kettle & Flame reader survey",
        "",
        "Fixture document for the citecheck cookbook. Every name and figure in it was written for the",
        "cookbook's tests; the physics is ordinary textbook material.",
        "",
        "1. What we asked",
        "Forty-one readers brought a pan of tap water to a full, rolling boil and read the temperature",
        "with a probe thermometer held in the middle of the water, away from the base of the pan. Each",
        "reader also told us the altitude of their kitchen.",
        "",
        "2. What they measured",
        "Readings fell by about 1 °C for every 300 m of altitude. Kitchens near sea level read",
        "between 99.6 °C and 100.2 °C. At 1,500 metres above sea level the water boiled at about",
        "95 °C, and at 3,000 metres above sea level it came to a full boil at roughly 90 °C.",
    ],
    [
        "3. Why the figure falls",
        "Water boils when its vapour pressure equals the pressure of the air above it. Higher up there",
        "is less air pressing down, so the water reaches that point at a lower temperature.",
        "",
        "4. What it means for cooks",
        "Food in boiling water cooks more slowly at altitude, because the water itself is cooler. A",
        "pressure cooker raises the pressure, and so the temperature, to about 120 °C wherever it is.",
    ],
]


def survey() -> bytes:
    return build(SURVEY, header=HEADER)


def scan() -> bytes:
    """The survey's first page rasterised: a picture of text, with no text in the file."""
    import matplotlib
    matplotlib.use("Agg")
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    text_page = Figure(figsize=(8.27, 11.69), dpi=60)
    for row, line in enumerate([HEADER, "", *SURVEY[0]]):
        text_page.text(0.08, 0.95 - row * 0.022, line, fontsize=10)
    canvas = FigureCanvasAgg(text_page)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[:, :, :3].mean(axis=2).astype(np.uint8)
    page = Figure(figsize=(8.27, 11.69))
    axes = page.add_axes((0, 0, 1, 1))
    axes.imshow(pixels, cmap="gray", vmin=0, vmax=255, interpolation="nearest")
    axes.set_axis_off()
    out = io.BytesIO()
    with PdfPages(out, metadata=METADATA) as pdf:
        pdf.savefig(page)
    return out.getvalue()


BUILDERS = {"boiling-point-survey.pdf": survey, "boiling-point-scan.pdf": scan}


def main(argv: list[str]) -> int:
    stale = []
    for name, builder in BUILDERS.items():
        data, path = builder(), FILES / name
        if "--check" in argv:
            if not path.is_file() or path.read_bytes() != data:
                stale.append(name)
            continue
        path.write_bytes(data)
        print(f"wrote {path.relative_to(ROOT)} ({len(data):,} bytes)")
    if stale:
        print(f"stale: {', '.join(stale)} (run python scripts/build_site_pdfs.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
