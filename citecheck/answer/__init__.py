"""answer: one LLM answer checked as a whole — every marker against its own source, every sentence against
the sources it cites, uncited claims found, and the answer's citation precision and recall.

    from citecheck import answer
    result = answer.report(text, ctx)              # an AnswerReport; ctx: a RunContext
    result.lines()        # ["citation_precision=0.4286 (3/7)", "citation_recall=0.5000 (2/4)"]
    result.to_dict()      # {answer, format, summary, markers, sentences, uncited_checks, problems}: the JSON

Owns: `read` (sentences and markers of an answer), `checks` (each marker's source checked: verify for a
URL, check for a quoted document), `uncited` (the rule for a sentence that asserts a checkable fact),
`own_sources` (each uncited sentence asked against the pages the answer cites elsewhere),
`rows` (marker and sentence rows, precision, recall, problems), `outputs` (JSON, CSV, the HTML report),
`command` (`citecheck check-answer`). docs/answer-report.md describes the design and every field.
Imports: the foundation, `extract`, `check`, `verify`, `batch.pool`, `report` and the verdict stage.
"""
from __future__ import annotations

from pathlib import Path

from ..context import RunContext
from ..extract.parsed import Documents
from ..source.document import Document
from ..verdict.review import Gate, gate_of
from ..vocabulary import UNCITED
from .rows import AnswerReport, MarkerRow, SentenceRow

__all__ = ["AnswerReport", "MarkerRow", "SentenceRow", "report"]


def report(text: str, ctx: RunContext, *, fmt: str = "auto", name: str = "answer",
           source: Document | None = None, documents: Documents = (),
           threshold: float | Gate | None = None, folder: str | Path | None = None,
           folder_name: str | None = None) -> AnswerReport:
    """The report of one answer given as text (`fmt`: auto or an answer format). `source`: the document its
    quoted citations cite (document 0), `documents`: what was sent with the answer, to check its character
    and page ranges (extract's). `folder`: the documents folder the user named, the only place the local
    files a Markdown answer names are read from (`extract.local`; None: none is read, each is unchecked),
    `folder_name` how messages call it. `threshold`: the
    AUTO_ACCEPT gate (None: the run's). An answer that cannot be read raises extract's AnswerError (one
    line); an offline cache miss or a missing key raises as in verify; anything one citation raises is its
    labelled row; a local file that cannot be read is a reading problem and its markers are unchecked. A
    report whose sentences and claims alone are over ANSWER_MAX_REPORT_BYTES raises before any check. Its
    uncited sentences are asked against the pages its markers cite, within UNCITED_MAX_CALLS
    (`own_sources`)."""
    from ..extract.local import read_local_files
    from .checks import check_markers
    from .own_sources import ask, sources_of
    from .read import read
    from .rows import build
    from ..extract.command import within_report_cap
    answer = read(text, fmt, documents, ctx.settings.answer_max_markers)
    within_report_cap(len(answer.prose.encode()) + sum(len(m.claim.encode()) for m in answer.markers), ctx,
                      "the report (its sentences and its markers' claims alone)")   # before any check
    local = read_local_files(answer.files, folder, ctx.settings.pdf,
                             folder_name=folder_name or f"--documents {folder}")
    answer.problems += local.problems
    gate = gate_of(threshold, ctx.settings)
    checked, pages = check_markers(answer, ctx, gate, source, local)
    result = build(name, answer, checked)
    uncited = [(s.sentence, s.text) for s in result.sentences if s.kind == UNCITED]
    return result.with_own(ask(uncited, sources_of(answer.markers, pages), ctx, gate))
