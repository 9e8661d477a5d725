"""answer_html: `check-answer … --report FILE.html`, one self-contained HTML file for one answer's report.

Rules:
- One file, nothing fetched: the summary (citation precision and recall, sentences per kind, markers per
  label), every sentence with the markers that cite it and which of them support it, every marker with its
  source's label, evidence and the text it carries (with the diff when misquoted), every question an uncited
  sentence was asked of the answer's own sources under its budget line, and the problems.
- Escaped and styled as `report_html` is (`render_html`: autoescape, no script, the file's own CSP); every
  text passes `config.redact` first. It reads the report's JSON (`AnswerReport.to_dict()`), nothing else.
- Written to a temp file and renamed, so a kill never leaves half a report.
"""
from __future__ import annotations

from pathlib import Path

from .. import config
from ..files import replace_file
from ..vocabulary import MARKER_LABELS, SENTENCE_KINDS
from . import render_html


def _clean(value):
    if isinstance(value, str):
        return config.redact(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def render(report: dict, headline: list[str]) -> str:
    """The HTML of one answer report (`AnswerReport.to_dict()`) under its `headline` lines."""
    report = _clean(report)
    return render_html.render("answer.html", report=report, summary=report["summary"], headline=headline,
                              kinds=SENTENCE_KINDS, labels=MARKER_LABELS,
                              csp=render_html.content_security_policy())


def write_answer_report(report: dict, headline: list[str], path: str | Path) -> None:
    """Write the report (see module rules)."""
    text = render(report, headline)
    replace_file(path, lambda handle: handle.write(text))
