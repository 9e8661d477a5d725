"""The source-document flow's audit rows: `check` writes one per citation when AUDIT_DB is set.

Rules:
- Batch `check:<citations file name>`, id the citation's id, url the source document's path; `label` is
  the verdict, `status` the quote's match (found / misquoted / missing / section-only), `section` where it
  was located (the cited one when it was not), `quote` the citation's own quote.
- `evidence_quote` is the source text the quote stands on: the quote itself when found verbatim, the
  closest span of the section for a misquote (the review page shows the word diff), null otherwise;
  `span_start`/`span_end` say where it stands in the section's text (the row's; null when not located).
- `passages` is the section the judge read (null for a fabricated quote: no model was asked); `model` and
  `method` are the row's: what answered.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from ..vocabulary import FABRICATED, FOUND, MISQUOTED, SOURCE
from . import CHECK_BATCH, write_citation


def batch_name(citations_path: str | Path) -> str:
    return CHECK_BATCH + Path(citations_path).name


def audit_rows(document, citations: list[dict], rows: list[dict], source_path: str | Path) -> list[dict]:
    """One audit citation dict per checked row (see module rules)."""
    from .. import matching
    by_id = {c["id"]: c for c in citations}
    sections = None                                  # normalised once, for the first misquote
    out = []
    for row in rows:
        citation = by_id[row["id"]]
        section = row["section"] or citation.get("section")
        evidence = None
        if row["status"] == FOUND:
            evidence = matching.normalise(citation["quote"])
        elif row["status"] == MISQUOTED:
            sections = sections or matching.Sections(document)
            evidence = matching.locate(citation["quote"], sections, citation.get("section")).closest
        text = document.sections[section].text if section in document.sections else None
        out.append({"id": row["id"], "claim": citation["claim"], "url": str(source_path),
                    "label": row["verdict"], "confidence": row["confidence"], "evidence_quote": evidence,
                    "auto": row["auto"], "flow": SOURCE, "section": section, "status": row["status"],
                    "quote": citation.get("quote"), "model": row.get("model"), "method": row.get("method"),
                    "span_start": row.get("span_start"), "span_end": row.get("span_end"),
                    "passages": [text] if text is not None and row["verdict"] != FABRICATED else None})
    return out


def write_check(conn: sqlite3.Connection, citations_path: str | Path, source_path: str | Path, document,
                citations: list[dict], rows: list[dict]) -> list[dict]:
    """Write `check`'s rows to the audit DB, each with the model that answered it."""
    batch = batch_name(citations_path)
    return [write_citation(conn, batch, row["id"], row["claim"], row)
            for row in audit_rows(document, citations, rows, source_path)]
