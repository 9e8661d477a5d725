"""The answer report written for people and programs: the JSON, one CSV, the text table, the HTML file.

Rules:
- JSON: `AnswerReport.to_dict()` as is.
- CSV: one row per marker, then one per sentence, then one for the answer, columns `CSV_COLUMNS`; `row` says
  which (marker | sentence | answer), lists are space-separated ids, the answer row's `note` holds the two
  headline lines. Cells as batch writes them (`batch.report_csv.cell`: redacted, formula-neutralised), the
  file replaced atomically.
- Text: the headline lines, then one line per sentence (its number, kind, label and which markers support
  it) and one per problem.
"""
from __future__ import annotations

import csv
from pathlib import Path

from ..batch.report_csv import cell
from ..config import printable
from ..files import replace_file
from .rows import AnswerReport

CSV_COLUMNS = ("row", "id", "sentence", "text", "source", "label", "reason", "confidence", "evidence_quote",
               "quote", "status", "diff", "auto", "method", "markers", "supported_by", "where", "note")


def csv_rows(report: AnswerReport) -> list[dict]:
    """The CSV's rows as dicts over CSV_COLUMNS (module rules)."""
    data = report.to_dict()
    blank = dict.fromkeys(CSV_COLUMNS)
    rows = [{**blank, **{k: v for k, v in m.items() if k in blank}, "row": "marker", "text": m["claim"]}
            for m in data["markers"]]
    rows += [{**blank, **{k: v for k, v in s.items() if k in blank}, "row": "sentence",
              "id": f"s{s['sentence']}", "markers": " ".join(s["markers"]),
              "supported_by": " ".join(s["supported_by"])} for s in data["sentences"]]
    rows.append({**blank, "row": "answer", "id": report.answer, "note": "; ".join(report.lines())})
    return rows


def write_csv(report: AnswerReport, path: str | Path) -> None:
    def write(handle) -> None:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in csv_rows(report):
            writer.writerow({k: cell(row[k]) for k in CSV_COLUMNS})
    replace_file(path, write)


def text(report: AnswerReport) -> str:
    """The printed report (module rules)."""
    lines = list(report.lines())
    for s in report.sentences:
        label = f" {s.label}" if s.label else ""
        lines.append(f"sentence {s.sentence} [{s.kind}{label}] {s.note or ''}".rstrip())
    lines += [f"problem: {p}" for p in report.problems()]
    return printable("\n".join(lines), lines=True)


def write_html(report: AnswerReport, path: str | Path) -> None:
    from ..report.answer_html import write_answer_report
    write_answer_report(report.to_dict(), report.lines(), path)
