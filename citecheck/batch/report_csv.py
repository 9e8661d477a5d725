"""The batch's CSV report: one row per citation, columns `vocabulary.BatchRow`'s fields.

Rules:
- Written atomically, keeping the file's mode (`files.replace_file`): a kill never leaves half a report.
- Every cell passes `config.redact` (the environment read once per row); None is an empty cell.
- A text cell starting with =, +, -, @, a tab or a carriage return (a claim or an evidence quote taken
  from a page) is prefixed with a single quote, OWASP's rule against CSV formula injection, so a
  spreadsheet shows it as text instead of running it. Numbers are written as they are.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable

from .. import config
from ..files import replace_file
from ..vocabulary import BatchRow

CSV_COLUMNS = BatchRow.field_names()
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value, redact: Callable[[str], str] | None = None) -> str:
    """One CSV cell: empty for None, numbers as they are, text redacted (by `redact`, default
    `config.redact`) and formula-neutralised."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    text = (redact or config.redact)(str(value))
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def write_csv(rows: list[dict], path: str | Path) -> None:
    """One row per citation; written to a temp file and renamed, so a kill never leaves half a report."""
    def write(handle) -> None:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            redact = config.redactor()
            writer.writerow({k: cell(row[k], redact) for k in CSV_COLUMNS})
    replace_file(path, write)
