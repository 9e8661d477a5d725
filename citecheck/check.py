"""check: the source-document flow for a citations file — locate each quote, judge, decide.

Rules:
- The judge reads the claim against the whole section the quote was located in (the cited section
  for a claim-only citation); a missing quote asks no model (`review.decide`: fabricated).
- One row per usable citation, in file order (`vocabulary.SourceRow`); `check` prints the
  CHECK_COLUMNS as a table or as JSON, and exits 1 when a citation was unusable.
"""
from __future__ import annotations

import json
import sys
from typing import Callable

from . import judges, matching, sources
from .context import RunContext
from .review import decide
from .sources import Document
from .vocabulary import CHECK_COLUMNS, MISSING, SourceRow


def judge_source(match: matching.Match, document: Document) -> str:
    """The text the judge reads: the whole section the quote was located in."""
    return document.sections[match.section].text


def check_citations(document: Document, citations: list[dict], ctx: RunContext, *,
                    threshold: float | None = None,
                    judge: Callable[[str, str], dict] | None = None) -> list[dict]:
    """One SourceRow dict per citation: id, status, section, relation, confidence, verdict, auto."""
    threshold = ctx.settings.auto_accept if threshold is None else threshold
    judge = judge or (lambda claim, source: judges.choice_judge(claim, source, ctx))
    rows = []
    for citation in citations:
        match = matching.locate(citation["quote"], document, citation["section"],
                                max_chars=ctx.settings.near_miss_max_chars)
        answer = None
        if match.status != MISSING:
            answer = judge(citation["claim"], judge_source(match, document))
        rows.append(SourceRow(id=citation["id"], status=match.status, section=match.section,
                              **decide(match, answer, threshold)).to_dict())
    return rows


# ---------------------------------------------------------------- CLI: python -m citecheck check

COLUMNS = CHECK_COLUMNS


def format_table(rows: list[dict]) -> str:
    """Plain-text verdict table (no pandas: the CLI starts fast)."""
    def cell(row, col):
        value = row[col]
        if value is None:
            return "-"
        if col == "confidence":
            return f"{value:.2f}"
        if col == "auto":
            return "auto" if value else "review"
        return str(value)
    cells = [[cell(row, col) for col in COLUMNS] for row in rows]
    widths = [max(len(col), *(len(r[i]) for r in cells)) for i, col in enumerate(COLUMNS)]
    lines = ["  ".join(col.ljust(w) for col, w in zip(COLUMNS, widths))]
    lines += ["  ".join(value.ljust(w) for value, w in zip(r, widths)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def add_arguments(parser) -> None:
    parser.add_argument("--source", required=True, help="source document (RFC text, Markdown or plain text)")
    parser.add_argument("--citations", required=True, help="JSON list of {id, claim, quote|null, section}")
    parser.add_argument("--format", choices=sources.FORMATS, default="rfc", help="how to split the source")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def run(args, ctx: RunContext) -> int:
    document = sources.load(args.source, args.format)
    citations, errors = sources.load_citations(args.citations, document)
    for error in errors:
        print(f"citecheck check: {error}", file=sys.stderr)
    rows = check_citations(document, citations, ctx)
    if args.json:
        print(json.dumps([{col: row[col] for col in COLUMNS} for row in rows], indent=2))
    else:
        print(document.summary(len(citations) + len(errors)))
        print(format_table(rows))
    return 1 if errors else 0
