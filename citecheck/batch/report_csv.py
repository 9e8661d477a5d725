"""The batch's CSV report: one row per citation, columns `vocabulary.BatchRow`'s fields.

Rules:
- Written to a temp file and renamed, so a kill never leaves half a report.
- Every cell passes `config.redact`; None is an empty cell.
"""
from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

from .. import config
from ..vocabulary import BatchRow

CSV_COLUMNS = BatchRow.field_names()


def write_csv(rows: list[dict], path: str | Path) -> None:
    """One row per citation; written to a temp file and renamed, so a kill never leaves half a report."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or Path(".")))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: "" if row[k] is None else config.redact(str(row[k]))
                                 for k in CSV_COLUMNS})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
