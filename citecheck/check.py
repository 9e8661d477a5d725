"""check: the source-document flow for a citations file — locate each quote, judge, decide.

Rules:
- The judge reads the claim against the whole section the quote was located in (the cited section
  for a claim-only citation); a missing quote asks no model (`review.decide`: fabricated). A claim in a
  language, or a section in a script, the cookbook does not read (`source.language`) asks none either: verdict
  unsupported, reason unsupported_language, never automatic.
- One row per usable citation, in file order (`vocabulary.SourceRow`); `check` prints the
  CHECK_COLUMNS as a table (then a diff line per misquoted citation) or as JSON, and exits 1 when a
  citation was unusable. A located quote (found,
  misquoted) carries its span in the section's text: JSON adds `section`, `span_start`, `span_end`.
- The check degrades, it never goes silent: a citation the judge cannot answer (no key, unreachable,
  an offline cache miss) is a row with verdict `judge_unavailable` (never automatic) and the others
  are still checked; once the live judge has failed, the rest are only replayed from the cache, so
  one outage costs one timeout. `check` then prints one hint line and exits 1 (as `check-answer`
  does). Each such row's
  `reason` (in rows and --json) is that line's failure: its own, or the outage that stopped the judge.
- `auto` is the AUTO_ACCEPT gate (`review.decide`) at the threshold in force for the model that answered;
  `auto_note` says why when none is (printed in --json, and once on stderr); `method` names the judge
  method that answered (`relation_judge`'s; null when no model answered); `check` audits its rows, with
  the model that answered each, when AUDIT_DB is set (`audit.source`).
- Numbers (`matching.numbers`): a found quote whose number the claim changes, with no number of the section
  agreeing, is contradicted with reason `number_mismatch` and `numbers` ('"90 °C" vs "100 °C"'), no model
  asked, gated as any no-model verdict (`number_check`); a judge's verified with a claim number agreeing with
  none of the section is unsupported, confidence 0, to a person, same reason (`downgraded`).
- A document-only citation (no quote and no section: an OpenAI `file_citation`) is skipped with a
  problem line: there is no quote to find and no section to judge (`checkable`).
- `--answer FILE` takes the citations from an LLM answer (`answer_citations`); `--fail-on` is the CI
  gate (`ci_gate`: exit 3 when a listed verdict occurs, after everything is printed).
- Local files (`extract.local`): a citation of a file a Markdown answer names (`file`) is checked when that
  file is the `--source` the user named (`names_file`; without `--source` nothing is read: one line says
  which file to name); one of another file is skipped with a line. With no quote it is judged against the
  section `best_section` picks; a near miss shows at most the quote's length of the file (`bounded`).
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Callable

from . import matching
from .cache import CacheMiss
from .config import MissingSetting, printable
from .context import RunContext
from .judge import judges, methods
from .source import language, sources
from .source.sources import Document
from .verdict import ci_gate
from .verdict.review import Gate, decide, gate_of
from .matching import numbers
from .vocabulary import (ANSWER_FORMAT_CHOICES, CHECK_COLUMNS, CONTRADICTED, FOUND, JUDGE_UNAVAILABLE,
                         MISQUOTED, MISSING, NUMBER_MISMATCH, RELATIONS, UNSUPPORTED_LANGUAGE, VERDICTS,
                         SourceRow)

JUDGE_FAILURES = (judges.JudgeUnavailable, CacheMiss, MissingSetting)
"""What makes a citation `judge_unavailable` instead of stopping the check."""


def judge_source(match: matching.Match, document: Document) -> str:
    """The text the judge reads: the whole section the quote was located in."""
    return document.sections[match.section].text


UNJUDGED = {"relation": None, "confidence": None, "verdict": JUDGE_UNAVAILABLE, "auto": False}
"""The decision of a located quote that no judge could answer."""
UNREAD = {"relation": None, "confidence": None, "verdict": VERDICTS[2], "auto": False,
          "reason": UNSUPPORTED_LANGUAGE}
"""The decision of a located quote whose claim or section is in a language the cookbook does not read
(`source.language`): unsupported, no model asked, never automatic."""


def check_matches(document: Document, citations: list[dict], ctx: RunContext, *,
                  threshold: float | Gate | None = None, judge: Callable[[str, str], dict] | None = None,
                  unavailable: list[tuple[str, str]] | None = None) -> list[tuple[dict, matching.Match]]:
    """(SourceRow dict, Match) per citation; each judge failure is appended to `unavailable` as
    (id, message) and its row is `judge_unavailable` (see module rules). `threshold`: `review.gate_of`."""
    threshold = gate_of(threshold, ctx.settings)
    judge_ctx, outage = ctx, None
    sections = matching.Sections(document)          # normalised once for every citation
    ranked: dict[str, str] = {}                     # claim -> best_section: once per claim, not per marker
    out = []
    for citation in citations:
        section = citation["section"]
        if section is None and citation.get("file") and not matching.has_content(citation["quote"]):
            if citation["claim"] not in ranked:
                ranked[citation["claim"]] = best_section(citation["claim"], document, ctx.settings.retrieval)
            section = ranked[citation["claim"]]
        match = matching.locate(citation["quote"], sections, section, max_chars=ctx.settings.near_miss_max_chars)
        if citation.get("file"):
            match = bounded(match, citation["quote"])
        decided = decide(match, None, threshold)
        changed, against = number_check(citation["claim"], citation["quote"], match, document)
        if changed is not None:
            decided = {"relation": RELATIONS[1], "confidence": None, "verdict": CONTRADICTED,
                       "reason": NUMBER_MISMATCH, "numbers": changed.shown(), **threshold.route(None, None)}
        elif match.status != MISSING:
            source = judge_source(match, document)
            if language.unsupported(citation["claim"]) or language.unreadable(source):
                out.append((SourceRow(id=citation["id"], status=match.status, section=match.section,
                                      span_start=match.start, span_end=match.end, **UNREAD).to_dict(), match))
                continue
            try:
                answer = (judge(citation["claim"], source) if judge
                          else methods.relation_judge(citation["claim"], source, judge_ctx))
                decided = downgraded({**decide(match, answer, threshold), "method": answer.get("method"),
                                      "model": answer.get("model")}, against)
            except JUDGE_FAILURES as exc:
                reason = outage or str(exc)                 # after an outage a miss is the outage's doing
                decided = {**UNJUDGED, "reason": printable(reason)}
                if unavailable is not None:
                    unavailable.append((citation["id"], reason))
                if not isinstance(exc, (CacheMiss, judges.JudgeOutputInvalid)):   # down: replay only from now on
                    judge_ctx, outage = judge_ctx.replace(offline=True), reason
        out.append((SourceRow(id=citation["id"], status=match.status, section=match.section,
                              span_start=match.start, span_end=match.end, **decided).to_dict(), match))
    return out


def number_check(claim: str, quote: str | None, match: matching.Match, document: Document
                 ) -> tuple[numbers.Comparison | None, numbers.Comparison | None]:
    """(the claim against its verbatim quote when the claim changes one of its numbers and no number of
    the section agrees with it, else None; the claim's numbers against the section, None when not located).
    The first makes the citation contradicted with no model asked (`number_mismatch`)."""
    if match.status == MISSING or match.section is None:
        return None, None
    against = numbers.compare(claim, judge_source(match, document))
    if match.status != FOUND or not against.mismatch:
        return None, against
    quoted = numbers.compare(claim, quote or "")
    return (quoted if quoted.status == numbers.CHANGED else None), against


def downgraded(decided: dict, against: numbers.Comparison | None) -> dict:
    """A judge's verified with a claim number nowhere in the section: unsupported, confidence 0, to a
    person, `number_mismatch` and the numbers shown."""
    if decided["verdict"] != VERDICTS[0] or against is None or not against.mismatch:
        return decided
    return {**decided, "verdict": VERDICTS[2], "confidence": 0.0, "auto": False, "reason": NUMBER_MISMATCH,
            "numbers": against.shown()}


def bounded(match: matching.Match, quote: str | None) -> matching.Match:
    """A near miss in a local file showing at most the quote's own length of the file's text: its closest
    span (the diff's source side, the row's evidence) cut to the normalised quote's length."""
    if match.closest is None or len(match.closest) <= len(needle := matching.normalise(quote)):
        return match
    closest = match.closest[:len(needle)]
    return replace(match, closest=closest, diff=matching.word_diff(needle, closest))


def best_section(claim: str, document: Document, how: str) -> str:
    """The section a claim that quotes nothing of a local file is judged against: the one ranked first for
    it (ties: the first), by MiniLM cosine with RETRIEVAL=minilm, else by BM25+ (rank-bm25's BM25Plus, over
    `retrieval.tokens`): a document has few sections, and Okapi's idf is zero for a word in half of them
    (with two sections every word scores 0), while BM25+'s log((N + 1) / df) stays positive."""
    from .web.retrieval import rank, tokens
    keys = list(document.sections)
    texts = [document.sections[key].text for key in keys]
    if how != "bm25":
        ((best, _),) = rank(claim, texts, 1, how=how)
        return keys[best]
    from rank_bm25 import BM25Plus
    scores = BM25Plus([tokens(text) or [""] for text in texts]).get_scores(tokens(claim))
    return keys[max(range(len(keys)), key=lambda i: (scores[i], -i))]


def check_citations(document: Document, citations: list[dict], ctx: RunContext, *,
                    threshold: float | Gate | None = None, judge: Callable[[str, str], dict] | None = None,
                    unavailable: list[tuple[str, str]] | None = None) -> list[dict]:
    """One SourceRow dict per citation: id, status, section, relation, confidence, verdict, auto, auto_note,
    method, model (what answered; None when no model did) and the located quote's span in the section."""
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
            return f"{value:.3f}"                  # as the notebooks print it (notebook.tidy)
        if col == "auto":
            return "auto" if value else "review"
        return printable(str(value))
    cells = [[cell(row, col) for col in columns] for row in rows]
    widths = [max([len(col), *(len(r[i]) for r in cells)]) for i, col in enumerate(columns)]
    lines = ["  ".join(col.ljust(w) for col, w in zip(columns, widths))]
    lines += ["  ".join(value.ljust(w) for value, w in zip(r, widths)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def misquotes(checked: list[tuple[dict, matching.Match]]) -> list[str]:
    """'ID misquoted in SECTION (score S): word diff' for each misquoted citation, judged or not: what the
    quote changed, which the table's status alone does not say."""
    return [f"{row['id']} misquoted in {match.section} (score {match.score}): {match.diff}"
            for row, match in checked if row["status"] == MISQUOTED]


def number_lines(rows: list[dict]) -> list[str]:
    """'ID number_mismatch: numbers "90 °C" vs "100 °C"' for each citation whose numbers differ."""
    return [f"{row['id']} {NUMBER_MISMATCH}: numbers {row['numbers']}" for row in rows if row.get("numbers")]


def unavailable_hint(unavailable: list[tuple[str, str]], total: int, command: str = "check") -> str:
    """One line, the same for `check` and `check-answer`: which citations the judge could not answer, and
    the first failure (it says how to fix it)."""
    ids = ", ".join(cid for cid, _ in unavailable)
    return (f"citecheck {command}: judge unavailable for {len(unavailable)} of {total} citations ({ids}), "
            f"labelled {JUDGE_UNAVAILABLE}: {unavailable[0][1]}")


def add_arguments(parser) -> None:
    parser.add_argument("--source", help="source document (RFC text, Markdown, plain text or PDF); with "
                                         "--answer, default: the one local file the answer names")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--citations", help="JSON list of {id, claim, quote|null, section}")
    given.add_argument("--answer", metavar="FILE", help="an LLM answer whose quoted citations of the source "
                                                        "(document 0) are checked; see `citecheck extract`")
    parser.add_argument("--answer-format", choices=ANSWER_FORMAT_CHOICES, default="auto",
                        help="the answer's format (default auto: detected)")
    parser.add_argument("--format", choices=sources.FORMATS, default=None,
                        help="how to split the source (default: from the file: .md -> markdown, "
                             ".pdf -> pdf, an RFC -> rfc, else text)")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.add_argument("--expected", action="store_true",
                        help="show the citations file's `expected` verdict next to each verdict")
    parser.add_argument("--fail-on", type=ci_gate.fail_on_list, metavar="VERDICT[,VERDICT...]",
                        help=f"exit {ci_gate.GATE_FAILED} when a citation is one of these "
                             f"({', '.join(ci_gate.FAIL_ON)})")


def run(args, ctx: RunContext) -> int:
    if args.source is None and not args.answer:
        print("citecheck check: error: --source FILE is needed with --citations", file=sys.stderr)
        return 2                                        # a usage error, as argparse's
    document = None
    if args.source:
        document = sources.load(args.source, args.format or sources.detect_format(args.source), pdf=ctx.settings.pdf)
    warnings: list[str] = []
    if args.answer:
        document, citations, errors = answer_citations(args.answer, args.answer_format, args.source, document, ctx)
        unusable = 0                                    # the answer's problems are not citations
    else:
        loaded = sources.read_citations(args.citations, document)
        citations, errors, warnings = loaded.citations, loaded.errors, loaded.warnings
        unusable = len(errors)
    citations, skipped = checkable(citations, args.source or document.name)
    total, errors = len(citations) + len(skipped) + unusable, errors + skipped
    for message in errors + warnings:                 # a warning (a duplicate id) keeps the citation
        print(printable(f"citecheck check: {message}"), file=sys.stderr)
    unavailable: list[tuple[str, str]] = []
    gate = Gate.of(ctx.settings)
    checked = check_matches(document, citations, ctx, threshold=gate, unavailable=unavailable)
    if ctx.settings.audit_db is not None:
        _audit(ctx, args, document, citations, [row for row, _ in checked])
    columns = COLUMNS + ("expected",) * args.expected
    rows = [{**row, "expected": citation.get("expected")} for (row, _), citation in zip(checked, citations)]
    if args.json:
        print(json.dumps([json_row(row, match, columns) for row, (_, match) in zip(rows, checked)], indent=2))
    else:
        print(printable(document.summary(total), lines=True))
        lines = [format_table(rows, columns)] if rows else []
        lines += [printable(line) for line in misquotes(checked) + number_lines(rows)]
        lines += [agreement_line(rows)] * args.expected
        if lines:
            print("\n".join(lines))
    if not citations:
        print(printable(f"citecheck check: no usable citations in {args.citations or args.answer}"),
              file=sys.stderr)
    if unavailable:
        print(printable(unavailable_hint(unavailable, len(citations)), lines=True), file=sys.stderr)
    gate.tell(rows, "check")
    failing = ci_gate.verdict_gate(rows, args.fail_on) if args.fail_on else None
    return ci_gate.finish("check", bool(errors or unavailable or not citations), failing)


def json_row(row: dict, match: matching.Match, columns: tuple[str, ...] = COLUMNS) -> dict:
    """One row of `check --json`: the columns, then `diff` (a misquote), `auto_note` and `reason` (when set)
    and, for a located quote, its `section`, `span_start` and `span_end`."""
    located = {key: row[key] for key in ("section", "span_start", "span_end")}
    return ({col: row[col] for col in columns} | ({"diff": match.diff} if match.diff else {})
            | ({"auto_note": row["auto_note"]} if row["auto_note"] else {})
            | ({"reason": row["reason"]} if row.get("reason") else {})
            | ({"numbers": row["numbers"]} if row.get("numbers") else {})
            | (located if row["span_start"] is not None else {}))


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
        write_check(conn, args.citations or args.answer, args.source or document.name, document, citations, rows)
    finally:
        conn.close()


# ---------------------------------------------------------------- citations from an LLM answer

def names_file(source: str | Path, name: str) -> bool:
    """Whether a local file name an answer wrote (`coffee.md`, `notes/coffee.md`) names `source`: the
    source's path ends with it."""
    parts = PurePath(os.path.normpath(name)).parts
    return Path(source).resolve().parts[-len(parts):] == parts


def checkable(citations: list[dict], source: str | Path | None = None) -> tuple[list[dict], list[str]]:
    """(citations to check, a problem line per citation skipped): a document-only citation (no quote, no
    section, no local file) has nothing to find and no section to judge; one of another document than the
    source (an answer's document_index other than 0, or a local file that is not `source`) cannot be
    found in it."""
    kept, skipped = [], []
    for citation in citations:
        index, file = citation.get("document_index", 0), citation.get("file")
        if file is not None and source is not None and not names_file(source, file):
            skipped.append(f"citation {citation['id']}: cites the file {file}, not the source "
                           f"({Path(source).name}): skipped")
        elif citation.get("quote") is None and citation.get("section") is None and file is None:
            skipped.append(f"citation {citation['id']}: a document-only citation (no quote, no section): "
                           "skipped, there is nothing to find and no section to judge")
        elif index != 0:
            skipped.append(f"citation {citation['id']}: cites document {index} ({citation.get('document')}), "
                           "not the source (document 0): skipped")
        else:
            kept.append(citation)
    return kept, skipped


def answer_citations(answer: str, fmt: str, source: str | None, document: Document | None,
                     ctx: RunContext) -> tuple[Document, list[dict], list[str]]:
    """(the source, the answer's quoted citations, its problems by position): read with the source as
    document 0 (its text as sent, or the PDF); without a source, a ValueError naming the file to name
    (`local_source`). URL citations are batch's (a note says how many); an answer without a quoted
    citation, or with no source to check it against, is a ValueError."""
    from .extract.command import read_answer, report
    from .extract.documents import read_document
    from .source.pdf_text import PdfDocument
    as_sent = [] if source is None else [document if isinstance(document, PdfDocument)
                                         else read_document(Path(source))]
    result = read_answer(answer, fmt, ctx, as_sent)
    batch_note = f"{len(result.claims)} claims cite URLs: `citecheck batch {answer}` checks those"
    if not result.citations:
        raise ValueError(f"{answer}: no quoted document citations to check" +
                         (f" ({batch_note})" if result.claims else ""))
    if result.claims:
        report("check", answer, [batch_note])
    return (document or local_source(result, answer), result.citations,
            [f"{answer}: {problem}" for problem in result.problems])


def local_source(result, answer: str) -> Document:
    """The source of an answer given without --source: none is read (an answer names files, the user names
    the source: `extract.local`); a ValueError saying which file to name."""
    names = list(result.files)
    if len(names) == 1:
        raise ValueError(f"{answer}: name the source with --source FILE (the answer cites the local file "
                         f"{names[0]}; only a file you name is read)")
    raise ValueError(f"{answer}: name the source with --source FILE" + (
        f" (the answer cites {len(names)} local files: {', '.join(names)}; `citecheck check-answer "
        f"{answer} --documents DIR` checks each marker against its own file)" if names
        else " (the answer names no local file)"))
