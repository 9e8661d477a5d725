"""check: the source-document flow for a citations file — locate each quote, judge, decide.

Rules:
- The judge reads the claim against the whole section the quote was located in (the cited section
  for a claim-only citation); a missing quote asks no model (`review.decide`: fabricated).
- One row per usable citation, in file order (`vocabulary.SourceRow`); `check` prints the
  CHECK_COLUMNS as a table or as JSON, and exits 1 when a citation was unusable.
- A document-only citation (no quote and no section: an OpenAI `file_citation`) is skipped with a
  problem line: there is no quote to find and no section to judge (`checkable`).
- `--answer FILE` takes the citations from an LLM answer (`answer_citations`); `--fail-on` is the CI
  gate (`ci_gate`: exit 3 when a listed verdict occurs, after everything is printed).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

from . import ci_gate, judges, matching, sources
from .context import RunContext
from .review import decide
from .sources import Document
from .vocabulary import ANSWER_FORMAT_CHOICES, CHECK_COLUMNS, MISSING, SourceRow


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
        match = matching.locate(citation["quote"], document, citation["section"])
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
    widths = [max([len(col), *(len(r[i]) for r in cells)]) for i, col in enumerate(COLUMNS)]
    lines = ["  ".join(col.ljust(w) for col, w in zip(COLUMNS, widths))]
    lines += ["  ".join(value.ljust(w) for value, w in zip(r, widths)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def add_arguments(parser) -> None:
    parser.add_argument("--source", required=True,
                        help="source document (RFC text, Markdown, plain text or PDF)")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--citations", help="JSON list of {id, claim, quote|null, section}")
    given.add_argument("--answer", metavar="FILE", help="an LLM answer whose quoted citations of the source "
                                                        "(document 0) are checked; see `citecheck extract`")
    parser.add_argument("--answer-format", choices=ANSWER_FORMAT_CHOICES, default="auto",
                        help="the answer's format (default auto: detected)")
    parser.add_argument("--format", choices=sources.FORMATS, default="rfc", help="how to split the source")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.add_argument("--fail-on", type=ci_gate.fail_on_list, metavar="VERDICT[,VERDICT...]",
                        help=f"exit {ci_gate.GATE_FAILED} when a citation is one of these "
                             f"({', '.join(ci_gate.FAIL_ON)})")


def run(args, ctx: RunContext) -> int:
    document = sources.load(args.source, args.format, pdf=ctx.settings.pdf)
    if args.answer:
        citations, errors = answer_citations(args.answer, args.answer_format, args.source, document, ctx)
        unusable = 0                                    # the answer's problems are not citations
    else:
        citations, errors = sources.load_citations(args.citations, document)
        unusable = len(errors)
    citations, skipped = checkable(citations)
    total, errors = len(citations) + len(skipped) + unusable, errors + skipped
    for error in errors:
        print(f"citecheck check: {error}", file=sys.stderr)
    rows = check_citations(document, citations, ctx)
    if args.json:
        print(json.dumps([{col: row[col] for col in COLUMNS} for row in rows], indent=2))
    else:
        print(document.summary(total))
        print(format_table(rows))
    gate = ci_gate.verdict_gate(rows, args.fail_on) if args.fail_on else None
    return ci_gate.finish("check", bool(errors), gate)


# ---------------------------------------------------------------- citations from an LLM answer

def checkable(citations: list[dict]) -> tuple[list[dict], list[str]]:
    """(citations to check, a problem line per citation skipped): a document-only citation (no quote, no
    section) has nothing to find and no section to judge; one of another document than the source (an
    answer's document_index other than 0) cannot be found in it."""
    kept, skipped = [], []
    for citation in citations:
        index = citation.get("document_index", 0)
        if citation.get("quote") is None and citation.get("section") is None:
            skipped.append(f"citation {citation['id']}: a document-only citation (no quote, no section): "
                           "skipped, there is nothing to find and no section to judge")
        elif index != 0:
            skipped.append(f"citation {citation['id']}: cites document {index} ({citation.get('document')}), "
                           "not the source (document 0): skipped")
        else:
            kept.append(citation)
    return kept, skipped


def answer_citations(answer: str, fmt: str, source: str, document: Document,
                     ctx: RunContext) -> tuple[list[dict], list[str]]:
    """The answer's quoted citations, read with the source as document 0 (its text as sent, or the PDF),
    and the answer's problems, by position. URL citations are batch's (a note says how many); an answer
    without a quoted citation is a ValueError."""
    from .extract.command import read_answer
    from .extract.documents import read_document
    from .pdf_text import PdfDocument
    as_sent = document if isinstance(document, PdfDocument) else read_document(Path(source))
    result = read_answer(answer, fmt, ctx, [as_sent])
    batch_note = f"{len(result.claims)} claims cite URLs: `citecheck batch {answer}` checks those"
    if not result.citations:
        raise ValueError(f"{answer}: no quoted document citations to check" +
                         (f" ({batch_note})" if result.claims else ""))
    if result.claims:
        print(f"citecheck check: {answer}: {batch_note}", file=sys.stderr)
    return result.citations, [f"{answer}: {problem}" for problem in result.problems]
