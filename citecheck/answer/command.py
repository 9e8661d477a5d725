"""`python -m citecheck check-answer ANSWER`: one LLM answer's report — each marker against its own source,
each sentence against the sources it cites, uncited claims, citation precision and recall.

Rules:
- ANSWER is read as `extract` reads it (format named or detected, at most ANSWER_MAX_BYTES, UTF-8);
  `--source FILE` is the document its quoted citations cite (document 0, split as `check` splits it, its
  text as sent checking their ranges). Cited URLs are fetched and judged as `verify` does them. The local
  files a Markdown answer names are read only from `--documents DIR`, the documents the user named
  (`extract.local`; the answer's own folder: `--documents .`); without it none is read.
- stdout: the two headline lines (`citation_precision=…`, `citation_recall=…`), a line per sentence and
  one per problem; `--json` prints the report's JSON instead. `--out FILE.csv` and `--report FILE.html`
  write the CSV and the HTML report (`answer.outputs`).
- The report (its JSON) is at most ANSWER_MAX_REPORT_BYTES: over it, one line and nothing printed or written
  (checked from the answer's sentences and claims before any check, and on the JSON at the end).
- Exit status (`ci_gate`), as `check`'s: 1 when the answer had a reading problem (a marker pointing
  nowhere, a range outside its text, …: each one line, the rest still reported) or when no judge answered
  for a marker (`check`'s hint line, once); `--fail-under X`: 3 when citation precision is below X (after
  everything is printed); else 0. An answer that cannot be read at all is one line and status 1.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..context import RunContext
from ..vocabulary import ANSWER_FORMAT_CHOICES


def add_arguments(parser) -> None:
    from ..source import sources
    from ..verdict import ci_gate
    parser.add_argument("answer", help="an LLM answer: Markdown text, or an Anthropic, OpenAI or Perplexity "
                                       "JSON response")
    parser.add_argument("--format", choices=ANSWER_FORMAT_CHOICES, default="auto",
                        help="the answer's format (default auto: detected from its content)")
    parser.add_argument("--source", metavar="FILE", help="the document the answer's quoted citations cite "
                                                         "(document 0): RFC text, Markdown, text or PDF")
    parser.add_argument("--documents", metavar="DIR",
                        help="the folder of the documents you name: the local files a Markdown answer's "
                             "source list names are read only from it (default: none is read)")
    parser.add_argument("--source-format", choices=sources.FORMATS, default=None,
                        help="how to split the source (default: from the file, as check does)")
    parser.add_argument("--json", action="store_true", help="print the report's JSON instead of the text")
    parser.add_argument("--out", metavar="FILE.csv",
                        help="write the report as CSV (its markers, its sentences, the answer)")
    parser.add_argument("--report", metavar="FILE.html", help="write the self-contained HTML report")
    parser.add_argument("--fail-under", type=ci_gate.fraction, metavar="X",
                        help=f"exit {ci_gate.GATE_FAILED} when citation precision is below X (0-1)")


def _source(path: str, fmt: str | None, ctx: RunContext):
    """(the document split into sections, the text as sent) for --source, as `check --answer` reads it."""
    from ..extract.documents import read_document
    from ..source import sources
    from ..source.pdf_text import PdfDocument
    document = sources.load(path, fmt or sources.detect_format(path), pdf=ctx.settings.pdf)
    return document, document if isinstance(document, PdfDocument) else read_document(Path(path))


def run(args, ctx: RunContext) -> int:
    from ..extract import read_text
    from ..extract.command import within_report_cap
    from ..verdict import ci_gate
    from ..verdict.review import Gate
    from ..web import netguard
    from . import outputs, report
    document, sent = _source(args.source, args.source_format, ctx) if args.source else (None, None)
    text = read_text(args.answer, args.format, max_bytes=ctx.settings.answer_max_bytes)
    before = netguard.lookups()
    result = report(text, ctx, fmt=args.format, name=str(args.answer), source=document,
                    documents=[sent] if sent is not None else (), threshold=Gate.of(ctx.settings),
                    folder=args.documents, folder_name=f"--documents {args.documents}")
    netguard.tell_if_offline("check-answer", before)
    data = json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
    within_report_cap(len(data.encode()), ctx, "the report")
    print(data if args.json else outputs.text(result))
    if args.out:
        outputs.write_csv(result, args.out)
    if args.report:
        outputs.write_html(result, args.report)
    unjudged = _unjudged(result, ctx)
    gate = None
    if args.fail_under is not None:
        gate = ci_gate.precision_gate({"citation": result.precision()}, args.fail_under, "citation")
    return ci_gate.finish("check-answer", result.bad_input() or unjudged, gate)


def _unjudged(result, ctx: RunContext) -> bool:
    """Whether no judge answered for a marker; if so, `check`'s hint line on stderr (module rules)."""
    from ..check import unavailable_hint
    from ..config import printable
    from ..judge.judges import judge_problem
    from ..vocabulary import JUDGE_UNAVAILABLE, NO_SOURCE, UNCHECKED
    unjudged = [m.id for m in result.markers if m.reason == JUDGE_UNAVAILABLE]
    if unjudged:
        checked = sum(m.label not in (NO_SOURCE, UNCHECKED) for m in result.markers)
        why = judge_problem(ctx.settings)
        print(printable(unavailable_hint([(mid, why) for mid in unjudged], checked, "check-answer")),
              file=sys.stderr)
    return bool(unjudged)
