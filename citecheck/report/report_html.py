"""report_html: `batch … --report FILE.html`, one self-contained HTML file for people who run no server.

Rules:
- One file, nothing fetched: the summary (the precision lines, counts per label, how many go to a
  person at AUTO_ACCEPT), the plots as embedded PNGs, the queue in the package's order (`review.queue`)
  and every row in input order.
- Escaped the way the review page is (`render_html`: autoescape, no script; the file's own
  Content-Security-Policy allows its stylesheet and data: images only); every text passes
  `config.redact` first, as in the CSV.
- Written to a temp file and renamed, so a kill never leaves half a report.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from .. import config
from ..files import replace_file
from ..verdict.precision import precision_lines
from ..verdict.review import queue, review_share
from ..vocabulary import LABELS
from . import plots, render_html


def _clean(row: dict) -> dict:
    return {k: config.redact(v) if isinstance(v, str) else v for k, v in row.items()}


def render(rows: list[dict], *, batch: str, threshold: float, problems: list[str] = ()) -> str:
    """The report's HTML for these BatchRow dicts (each with its `auto`)."""
    rows = [_clean(r) for r in rows]
    points = review_share(rows, [i / 100 for i in range(101)])
    figures = {
        "Labels": plots.label_counts([r["label"] for r in rows], order=LABELS, title="Citation labels"),
        "Confidence": plots.confidence_by_label(rows, threshold, label_key="label", order=LABELS,
                                                title="Judge confidence by label"),
        "Review share": plots.review_share_curve(points, threshold),
    }
    waiting = queue(rows)
    return render_html.render(
        "report.html", batch=batch, threshold=threshold, rows=rows, queue=waiting, problems=list(problems),
        headline=precision_lines(rows), counts=Counter(r["label"] for r in rows), labels=LABELS,
        plots={plots.alt_text(fig): plots.data_uri(fig) for fig in figures.values()},
        csp=render_html.content_security_policy(images=True))


def write_report(rows: list[dict], path: str | Path, *, batch: str, threshold: float,
                 problems: list[str] = ()) -> None:
    """Write the report (see module rules)."""
    text = render(rows, batch=batch, threshold=threshold, problems=problems)
    replace_file(path, lambda handle: handle.write(text))
