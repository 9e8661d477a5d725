"""The batch's CSV report: one row per citation, columns `vocabulary.BatchRow`'s fields.

Rules:
- Written to a temp file and renamed, so a kill never leaves half a report.
- Every cell passes `config.redact`; None is an empty cell.
- A text cell starting with =, +, -, @, a tab or a carriage return (a claim or an evidence quote taken
  from a page) is prefixed with a single quote, OWASP's rule against CSV formula injection, so a
  spreadsheet shows it as text instead of running it. Numbers are written as they are.
"""
from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

from .. import config
from ..vocabulary import BatchRow

CSV_COLUMNS = BatchRow.field_names()
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value) -> str:
    """One CSV cell: empty for None, numbers as they are, text redacted and formula-neutralised."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    text = config.redact(str(value))
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def write_csv(rows: list[dict], path: str | Path) -> None:
    """One row per citation; written to a temp file and renamed, so a kill never leaves half a report."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or Path(".")))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: cell(row[k]) for k in CSV_COLUMNS})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
