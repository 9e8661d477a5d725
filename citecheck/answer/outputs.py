"""The answer report written for people and programs: the JSON, one CSV, the text table, the HTML file.

Rules:
- JSON: `AnswerReport.to_dict()` as is.
- CSV: one row per marker, then one per sentence, then one per question an uncited sentence was asked of
  one of the answer's own sources (`asked`: `markers` the markers citing that source elsewhere), then one
  for the answer, columns `CSV_COLUMNS`; `row` says which (marker | sentence | asked | answer), lists are
  space-separated ids or URLs, the answer row's `note` holds the two headline lines and the uncited budget
  line. Cells as batch writes them (`batch.report_csv.cell`: redacted, formula-neutralised), the file
  replaced atomically.
- Text: the headline lines, the uncited budget line ("uncited: asked N of M uncited sentences against K
  sources (C calls, budget B)"), then one line per sentence (its number, kind, label and which markers
  support it, or for an uncited one what the answer's sources said) and one per problem.
"""
from __future__ import annotations

import csv
from pathlib import Path

from ..batch.report_csv import cell
from ..config import printable
from ..files import replace_file
from .rows import AnswerReport

CSV_COLUMNS = ("row", "id", "sentence", "text", "source", "label", "reason", "confidence", "evidence_quote",
               "quote", "status", "diff", "auto", "method", "markers", "supported_by", "found_in", "where",
               "note")


def csv_rows(report: AnswerReport) -> list[dict]:
    """The CSV's rows as dicts over CSV_COLUMNS (module rules)."""
    data = report.to_dict()
    blank = dict.fromkeys(CSV_COLUMNS)
    rows = [{**blank, **{k: v for k, v in m.items() if k in blank}, "row": "marker", "text": m["claim"]}
            for m in data["markers"]]
    rows += [{**blank, **{k: v for k, v in s.items() if k in blank}, "row": "sentence",
              "id": f"s{s['sentence']}", "markers": " ".join(s["markers"]),
              "supported_by": " ".join(s["supported_by"]), "found_in": " ".join(s["found_in"])}
             for s in data["sentences"]]
    texts = {s.sentence: s.text for s in report.sentences}
    rows += [{**blank, **{k: v for k, v in a.items() if k in blank}, "row": "asked",
              "id": f"s{a['sentence']}", "text": texts[a["sentence"]], "markers": " ".join(a["cited_by"])}
             for a in data["uncited_checks"]["rows"]]
    rows.append({**blank, "row": "answer", "id": report.answer, "note": "; ".join(headline(report))})
    return rows


def headline(report: AnswerReport) -> list[str]:
    """The two headline lines and the uncited budget line."""
    return [*report.lines(), f"uncited: {report.own.line()}"]


def write_csv(report: AnswerReport, path: str | Path) -> None:
    def write(handle) -> None:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in csv_rows(report):
            writer.writerow({k: cell(row[k]) for k in CSV_COLUMNS})
    replace_file(path, write)


def text(report: AnswerReport) -> str:
    """The printed report (module rules)."""
    lines = headline(report)
    for s in report.sentences:
        label = f" {s.label}" if s.label else ""
        lines.append(f"sentence {s.sentence} [{s.kind}{label}] {s.note or ''}".rstrip())
    lines += [f"problem: {p}" for p in report.problems()]
    return printable("\n".join(lines), lines=True)


def write_html(report: AnswerReport, path: str | Path) -> None:
    from ..report.answer_html import write_answer_report
    write_answer_report(report.to_dict(), report.lines(), path)
