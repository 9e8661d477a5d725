"""check: the source-document flow for a citations file — locate each quote, judge, decide.

Rules:
- The judge reads the claim against the whole section the quote was located in (the cited section
  for a claim-only citation); a missing quote asks no model (`review.decide`: fabricated).
- One row per usable citation, in file order (`vocabulary.SourceRow`); `check` prints the
  CHECK_COLUMNS as a table or as JSON, and exits 1 when a citation was unusable.
- The check degrades, it never goes silent: a citation the judge cannot answer (no key, unreachable,
  an offline cache miss) is a row with verdict `judge_unavailable` (never automatic) and the others
  are still checked; once the live judge has failed, the rest are only replayed from the cache, so
  one outage costs one timeout. `check` then prints one hint line and exits 1.
- `auto` is the AUTO_ACCEPT gate (`review.decide`); `check` audits its rows when AUDIT_DB is set
  (`audit.source`).
"""
from __future__ import annotations

import json
import sys
from typing import Callable

from . import judges, matching, sources
from .cache import CacheMiss
from .config import MissingSetting
from .context import RunContext
from .review import decide
from .sources import Document
from .vocabulary import CHECK_COLUMNS, JUDGE_UNAVAILABLE, MISQUOTED, MISSING, SourceRow

JUDGE_FAILURES = (judges.JudgeUnavailable, CacheMiss, MissingSetting)
"""What makes a citation `judge_unavailable` instead of stopping the check."""


def judge_source(match: matching.Match, document: Document) -> str:
    """The text the judge reads: the whole section the quote was located in."""
    return document.sections[match.section].text


UNJUDGED = {"relation": None, "confidence": None, "verdict": JUDGE_UNAVAILABLE, "auto": False}
"""The decision of a located quote that no judge could answer."""


def check_matches(document: Document, citations: list[dict], ctx: RunContext, *,
                  threshold: float | None = None, judge: Callable[[str, str], dict] | None = None,
                  unavailable: list[tuple[str, str]] | None = None) -> list[tuple[dict, matching.Match]]:
    """(SourceRow dict, Match) per citation; each judge failure is appended to `unavailable` as
    (id, message) and its row is `judge_unavailable` (see module rules)."""
    threshold = ctx.settings.auto_accept if threshold is None else threshold
    judge_ctx = ctx
    out = []
    for citation in citations:
        match = matching.locate(citation["quote"], document, citation["section"],
                                max_chars=ctx.settings.near_miss_max_chars)
        decided = decide(match, None, threshold)
        if match.status != MISSING:
            source = judge_source(match, document)
            try:
                answer = (judge(citation["claim"], source) if judge
                          else judges.choice_judge(citation["claim"], source, judge_ctx))
                decided = decide(match, answer, threshold)
            except JUDGE_FAILURES as exc:
                decided = UNJUDGED
                if unavailable is not None:
                    unavailable.append((citation["id"], str(exc)))
                if not isinstance(exc, (CacheMiss, judges.JudgeOutputInvalid)):   # down: replay only from now on
                    judge_ctx = judge_ctx.replace(offline=True)
        out.append((SourceRow(id=citation["id"], status=match.status, section=match.section,
                              **decided).to_dict(), match))
    return out


def check_citations(document: Document, citations: list[dict], ctx: RunContext, *,
                    threshold: float | None = None, judge: Callable[[str, str], dict] | None = None,
                    unavailable: list[tuple[str, str]] | None = None) -> list[dict]:
    """One SourceRow dict per citation: id, status, section, relation, confidence, verdict, auto."""
    return [row for row, _ in check_matches(document, citations, ctx, threshold=threshold, judge=judge,
                                            unavailable=unavailable)]


# ---------------------------------------------------------------- CLI: python -m citecheck check

COLUMNS = CHECK_COLUMNS


def format_table(rows: list[dict], columns: tuple[str, ...] = COLUMNS) -> str:
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
    cells = [[cell(row, col) for col in columns] for row in rows]
    widths = [max([len(col), *(len(r[i]) for r in cells)]) for i, col in enumerate(columns)]
    lines = ["  ".join(col.ljust(w) for col, w in zip(columns, widths))]
    lines += ["  ".join(value.ljust(w) for value, w in zip(r, widths)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def unjudged_misquotes(checked: list[tuple[dict, matching.Match]]) -> list[str]:
    """'ID misquoted in SECTION (score S): word diff' for each misquote no judge answered: what string
    matching settled without a model."""
    return [f"{row['id']} misquoted in {match.section} (score {match.score}): {match.diff}"
            for row, match in checked if row["verdict"] == JUDGE_UNAVAILABLE and row["status"] == MISQUOTED]


def unavailable_hint(unavailable: list[tuple[str, str]], total: int) -> str:
    """One line: which citations the judge could not answer, and the first failure (it says how to fix it)."""
    ids = ", ".join(cid for cid, _ in unavailable)
    return (f"citecheck check: judge unavailable for {len(unavailable)} of {total} citations ({ids}), "
            f"labelled {JUDGE_UNAVAILABLE}: {unavailable[0][1]}")


def add_arguments(parser) -> None:
    parser.add_argument("--source", required=True, help="source document (RFC text, Markdown or plain text)")
    parser.add_argument("--citations", required=True, help="JSON list of {id, claim, quote|null, section}")
    parser.add_argument("--format", choices=sources.FORMATS, default=None,
                        help="how to split the source (default: from the file: .md -> markdown, "
                             "an RFC -> rfc, else text)")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.add_argument("--expected", action="store_true",
                        help="show the citations file's `expected` verdict next to each verdict")


def run(args, ctx: RunContext) -> int:
    document = sources.load(args.source, args.format or sources.detect_format(args.source))
    loaded = sources.read_citations(args.citations, document)
    citations, errors = loaded.citations, loaded.errors
    for message in errors + loaded.warnings:          # a warning (a duplicate id) keeps the citation
        print(f"citecheck check: {message}", file=sys.stderr)
    unavailable: list[tuple[str, str]] = []
    checked = check_matches(document, citations, ctx, threshold=ctx.settings.auto_accept, unavailable=unavailable)
    if ctx.settings.audit_db is not None:
        _audit(ctx, args, document, citations, [row for row, _ in checked])
    columns = COLUMNS + ("expected",) * args.expected
    rows = [{**row, "expected": citation.get("expected")} for (row, _), citation in zip(checked, citations)]
    if args.json:
        print(json.dumps([{col: row[col] for col in columns} | ({"diff": match.diff} if match.diff else {})
                          for row, (_, match) in zip(rows, checked)], indent=2))
    else:
        print(document.summary(len(citations) + len(errors)))
        lines = [format_table(rows, columns)] if rows else []
        lines += unjudged_misquotes(checked) + [agreement_line(rows)] * args.expected
        if lines:
            print("\n".join(lines))
    if not citations:
        print(f"citecheck check: no usable citations in {args.citations}", file=sys.stderr)
    if unavailable:
        print(unavailable_hint(unavailable, len(citations)), file=sys.stderr)
    return 1 if errors or unavailable or not citations else 0


def agreement_line(rows: list[dict]) -> str:
    """'verdict == expected: 3/9 (of the 9 citations that name one)'."""
    named = [row for row in rows if row.get("expected") is not None]
    agree = sum(row["verdict"] == row["expected"] for row in named)
    return f"verdict == expected: {agree}/{len(named)} (of the {len(named)} citations that name one)"


def _audit(ctx: RunContext, args, document: Document, citations: list[dict], rows: list[dict]) -> None:
    from . import audit
    from .audit.source import write_check
    conn = audit.connect(ctx.settings.audit_db)
    try:
        write_check(conn, args.citations, args.source, document, citations, rows, ctx.settings.typesafe_model)
    finally:
        conn.close()
