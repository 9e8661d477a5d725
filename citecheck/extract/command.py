"""`python -m citecheck extract ANSWER`: an LLM answer in, the cookbook's two input files out.

Rules:
- ANSWER is read by `citecheck.extract` (the format named, or detected), at most ANSWER_MAX_BYTES; with
  `--documents DIR` the cited documents are read by `extract.documents` (its rule says which file is
  document_index 0, 1, ...) and every range and cited_text is checked against them. The local files a
  Markdown answer names are read only from DIR, the documents the user named (`extract.local`): one line
  each names it and its size; one not named or that cannot be read is a problem.
- OUT/claims.jsonl (batch's input: cited URLs, with the text each citation carries, if any) and
  OUT/citations.json (check's input: quoted documents) are both written, empty or not; OUT defaults to a
  directory named after the answer file under build/ in the current one (`extract data/answers/openai.json`
  writes `build/openai/claims.jsonl`): outputs stay under build/ (git-ignored) unless `--out` says otherwise.
- The outputs together are at most ANSWER_MAX_REPORT_BYTES: over it, one line and nothing is written.
- Every problem is one line on stderr naming its position (the first PROBLEMS_SHOWN; then one line counts
  the rest); the exit status is `ci_gate`'s: 0, or 1 when
  a problem was reported (the rest was still extracted). An answer that cannot be read at all is one
  line and status 1, and nothing is written.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..config import printable
from ..context import RunContext
from ..vocabulary import ANSWER_FORMAT_CHOICES
from .parsed import Extraction, Problem

DEFAULT_OUT = Path("build")
"""Where `extract` writes without --out: build/<answer stem>, relative to the current directory."""


def read_answer(path: str | Path, fmt: str, ctx: RunContext, documents=()) -> Extraction:
    """extract_file within the run's ANSWER_MAX_BYTES and ANSWER_MAX_MARKERS."""
    from . import extract_file
    return extract_file(path, fmt, documents, max_bytes=ctx.settings.answer_max_bytes,
                        max_markers=ctx.settings.answer_max_markers)


def local_files(result: Extraction, documents: str | Path | None, ctx: RunContext):
    """The local files the answer names (`extract.local`), read only from --documents DIR (None: none)."""
    from .local import read_local_files
    return read_local_files(result.files, documents, ctx.settings.pdf, folder_name=f"--documents {documents}")


def within_report_cap(size: int, ctx: RunContext, what: str) -> None:
    """An AnswerError (one line, nothing written) when `what` would be over ANSWER_MAX_REPORT_BYTES."""
    from .parsed import AnswerError
    cap = ctx.settings.answer_max_report_bytes
    if size > cap:
        raise AnswerError(f"{what} would be {size:,} bytes, over the {cap:,}-byte limit for one answer's "
                          "report (ANSWER_MAX_REPORT_BYTES); nothing written")


PROBLEMS_SHOWN = 100
"""Problem lines printed per input; the rest are counted in one closing line."""


def report(command: str, path: str | Path, problems: list[Problem] | list[str]) -> None:
    """Each problem as one stderr line 'citecheck COMMAND: PATH: where: message', the first PROBLEMS_SHOWN
    of them, then one line counting the rest."""
    for problem in problems[:PROBLEMS_SHOWN]:
        print(printable(f"citecheck {command}: {path}: {problem}"), file=sys.stderr)
    if len(problems) > PROBLEMS_SHOWN:
        print(printable(f"citecheck {command}: {path}: {len(problems) - PROBLEMS_SHOWN:,} more problems not shown "
                        f"(the first {PROBLEMS_SHOWN} are above)"), file=sys.stderr)


def add_arguments(parser) -> None:
    parser.add_argument("answer", help="an LLM answer: Markdown text, or an Anthropic, OpenAI or Perplexity "
                                       "JSON response")
    parser.add_argument("--format", choices=ANSWER_FORMAT_CHOICES, default="auto",
                        help="the answer's format (default auto: detected from its content)")
    parser.add_argument("--documents", metavar="DIR",
                        help="the documents the answer cites, by document_index: the files named in "
                             "DIR/documents.txt in order, else DIR's files sorted by name; the local files a "
                             "Markdown answer names are read only from DIR (its own folder: --documents .)")
    parser.add_argument("--out", metavar="DIR", help="where to write claims.jsonl and citations.json "
                                                     "(default: build/<answer file name without extension>)")


def run(args, ctx: RunContext) -> int:
    from ..verdict import ci_gate
    from .documents import CitedDocuments, read_documents
    cited = read_documents(args.documents, ctx.settings.pdf) if args.documents else CitedDocuments()
    result = read_answer(args.answer, args.format, ctx, cited.documents)
    out = Path(args.out) if args.out else DEFAULT_OUT / Path(args.answer).stem
    claims, citations = result.claims_jsonl(), result.citations_json()
    within_report_cap(len(claims.encode()) + len(citations.encode()), ctx, "claims.jsonl and citations.json")
    out.mkdir(parents=True, exist_ok=True)
    (out / "claims.jsonl").write_text(claims, encoding="utf-8")
    (out / "citations.json").write_text(citations, encoding="utf-8")
    local = local_files(result, args.documents, ctx)
    for n, (name, document) in enumerate(zip(cited.names, cited.documents)):
        shown = "unreadable" if document is None else (
            document.summary() if not isinstance(document, str) else f"{len(document):,} characters of text")
        print(printable(f"document {n}: {name} ({shown})"))
    for name, document in local.documents.items():
        print(printable(f"file {name} ({document.summary()})"))
    urls = sum(len(claim["urls"]) for claim in result.claims)
    carried = sum(len(claim.get("quotes", {})) for claim in result.claims)
    with_text = f" ({carried} URL citations carry the text they quote)" if carried else ""
    print(printable(f"{args.answer}: {result.format} answer: {len(result.claims)} claims citing {urls} URLs -> "
                    f"{out / 'claims.jsonl'}{with_text}; {len(result.citations)} quoted citations -> "
                    f"{out / 'citations.json'}"))
    problems = cited.problems + result.problems + local.problems
    report("extract", args.answer, problems)
    return ci_gate.finish("extract", bool(problems), None)
