"""Review: turn a quote match and a judge's answer into a verdict, and gate it with AUTO_ACCEPT.

Rules:
- A quote that is not in the source is `fabricated`; no model is asked, confidence is null, and
  the verdict is automatic (string matching settled it).
- Otherwise the Choice judge reads the claim against the section where the quote was found (the
  cited section for a claim-only citation) and its answer maps supports -> verified,
  contradicts -> contradicted, says_nothing -> unsupported.
- `auto` is confidence >= AUTO_ACCEPT; below it a person reviews. A misquote is never automatic:
  the citation misstates the source even when the claim holds.
"""
from __future__ import annotations

import json
from typing import Callable

from . import config, judges, matching, sources
from .sources import Document


def judge_source(match: matching.Match, document: Document) -> str:
    """The text the judge reads: the whole section the quote was located in."""
    return document.sections[match.section].text


def decide(match: matching.Match, answer: dict | None, threshold: float) -> dict:
    """Verdict, confidence and the auto/review gate for one citation."""
    if match.status == "missing" or answer is None:
        return {"relation": None, "confidence": None, "verdict": "fabricated", "auto": True}
    confidence = round(float(answer["confidence"]), 4)
    auto = confidence >= threshold and match.status != "misquoted"
    return {"relation": answer["relation"], "confidence": confidence,
            "verdict": judges.VERDICT_OF[answer["relation"]], "auto": auto}


def check_citations(document: Document, citations: list[dict], *, threshold: float | None = None,
                    judge: Callable[[str, str], dict] = judges.choice_judge) -> list[dict]:
    """One row per citation: id, status, section, relation, confidence, verdict, auto."""
    threshold = config.auto_accept() if threshold is None else threshold
    rows = []
    for citation in citations:
        match = matching.locate(citation["quote"], document, citation["section"])
        answer = None
        if match.status != "missing":
            answer = judge(citation["claim"], judge_source(match, document))
        rows.append({"id": citation["id"], "status": match.status, "section": match.section,
                     **decide(match, answer, threshold)})
    return rows


# ---------------------------------------------------------------- CLI: python -m citecheck check

COLUMNS = ("id", "status", "relation", "confidence", "verdict", "auto")


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


def run(args) -> int:
    import sys
    document = sources.load(args.source, args.format)
    citations, errors = sources.load_citations(args.citations, document)
    for error in errors:
        print(f"citecheck check: {error}", file=sys.stderr)
    rows = check_citations(document, citations)
    if args.json:
        print(json.dumps([{col: row[col] for col in COLUMNS} for row in rows], indent=2))
    else:
        print(document.summary(len(citations) + len(errors)))
        print(format_table(rows))
    return 1 if errors else 0
