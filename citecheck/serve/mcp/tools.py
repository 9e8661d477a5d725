"""The four tools: the CLI's flows (check, verify, extract, check --answer) on a tool call's arguments.

Rules:
- One run, as one CLI command is: the server's RunContext (settings read once, the cache they open) and
  its AUTO_ACCEPT gate (read once at start) serve every call, so the judge, JUDGE_METHOD, the cache
  (CITECHECK_OFFLINE replays), the fetch and PDF deadlines and caps, NEAR_MISS_MAX_CHARS are the CLI's;
  with AUDIT_DB set, checks and verifies are audited as the CLI audits them.
- Files are read from the documents folder only, arguments within the caps (`inputs`); an unusable
  argument refuses the call. Inside a usable call, bad items are lines in `problems` and the rest still
  runs (the CLI's stderr lines): a malformed citation, an answer's dangling marker, a skipped
  document-only citation, the judge unavailable (its rows `judge_unavailable`).
- Results are JSON objects: check_document `{document, rows, problems}`, a row being check's JSON row plus
  `section` and `claim`; verify_claim verify's JSON; extract `{format, claims, citations, documents,
  problems}`; check_answer the answer report's JSON (`citecheck.answer`, as `check-answer --json`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ... import audit, check, matching
from ...audit.source import write_check
from ...context import RunContext
from ...extract import Extraction
from ...extract import extract as extract_text
from ...extract.command import read_answer
from ...extract.documents import CitedDocuments, read_document, read_documents
from ...source import sources
from ...source.document import Document
from ...source.pdf_text import PdfDocument
from ...verdict.review import Gate
from ...verify import audit_claim, public, verify_claim
from ...vocabulary import ANSWER_FORMAT_CHOICES
from . import inputs
from .inputs import Folder, ToolInputError

SourceFormat = Literal[sources.FORMATS]
AnswerFormat = Literal[ANSWER_FORMAT_CHOICES]
INLINE_CITATIONS, INLINE_ANSWER = "mcp-citations", "mcp-answer"
"""The audit batches (`check:mcp-citations`, `check:mcp-answer`) of citations or an answer given in the call;
given as a file, the batch is the file's name, as in the CLI."""

Source = Annotated[str, Field(description="the source document: a file in the documents folder (RFC text, "
                                          "Markdown, plain text or PDF)")]
OptionalSource = Annotated[str | None, Field(description="the document the answer's quotes cite (document 0), a "
                                                         "file in the documents folder")]
SourceFormatArg = Annotated[SourceFormat | None, Field(
    description="how to split the source into sections (default: from the file, as `check` does)")]
AnswerText = Annotated[str, Field(description="the LLM answer itself: Markdown text, or an Anthropic, OpenAI "
                                              "or Perplexity JSON response as text")]
"""Typed `str`, not `str | None`: the SDK parses a string given for any other type as JSON first, which
would turn a JSON answer into an object; "" is "not given"."""
AnswerFile = Annotated[str | None, Field(description="or the answer as a file in the documents folder")]
AnswerFormatArg = Annotated[AnswerFormat, Field(description="the answer's format (auto: detected)")]
Citations = Annotated[list[Any] | None, Field(
    description='the citations: a list of {"id", "claim", "quote" (or null), "section" (or null)}, as in a '
                'citations.json file')]
CitationsPath = Annotated[str | None, Field(description="or a citations JSON file in the documents folder")]
DocumentsFolder = Annotated[str | None, Field(
    description="a folder (inside the documents folder) holding the documents the answer cites, by "
                "document_index: the files its documents.txt names, else its files by name; their character "
                "and page ranges are then checked")]


def row_json(row: dict, match: matching.Match, claim: str) -> dict:
    """check's JSON row (`check.json_row`: the span of a located quote too) with `section` and the
    citation's `claim`."""
    return check.json_row(row, match) | {"section": row["section"], "claim": claim}


class Tools:
    """The tools of one server run; each method is one MCP tool (its docstring is the tool's description)."""

    def __init__(self, ctx: RunContext, gate: Gate, folder: Folder):
        self.ctx, self.gate, self.folder = ctx, gate, folder

    # ------------------------------------------------------------ the tools

    def check_document(self, source: Source, citations: Citations = None,
                       citations_file: CitationsPath = None,
                       format: SourceFormatArg = None) -> dict[str, Any]:
        """Check quoted citations against a source document, like `citecheck check`: each quote is located
        (found, misquoted with a word diff, missing = fabricated, section-only) and the judge reads the
        claim against the section it is in. Give `citations` or `citations_file`. Returns
        {document, rows, problems}."""
        path = self.folder.file("source", source)
        document = self._load(path, format)
        if inputs.exactly_one(citations=citations, citations_file=citations_file) == "citations_file":
            loaded = sources.read_citations(self.folder.file("citations_file", citations_file), document)
        else:
            loaded = sources.citations_of(citations, document)
        kept, skipped = check.checkable(loaded.citations)
        return self._checked(document, path, kept, loaded.errors + skipped + loaded.warnings,
                             citations_file or INLINE_CITATIONS)

    def verify_claim(self, claim: Annotated[str, Field(description="the claim the URLs should support")],
                     urls: Annotated[list[str], Field(description="the cited URLs (http or https)")]
                     ) -> dict[str, Any]:
        """Verify one claim against the URLs cited for it, like `citecheck verify`: each page is fetched,
        cut into passages, and the judge reads the best three; one label per URL (supported, contradicted,
        not_found, unreachable, with the reason and the evidence quote) and one overall. Returns
        {claim, overall, citations}."""
        settings = self.ctx.settings
        claim = inputs.claim_text(claim, settings.claim_max_chars)
        urls = inputs.url_list(urls, settings.api.max_urls)
        result = verify_claim(claim, urls, self.ctx, self.gate, with_passages=settings.audit_db is not None)
        self._audit(lambda conn: audit_claim(conn, audit.VERIFY_BATCH, result))
        return public(result)

    def extract(self, answer: AnswerText = "", answer_file: AnswerFile = None,
                format: AnswerFormatArg = "auto", documents: DocumentsFolder = None) -> dict[str, Any]:
        """Turn an LLM answer into citecheck's inputs, like `citecheck extract`: `claims` (sentences citing
        URLs: verify_claim's input) and `citations` (quoted documents: check_document's input), with the
        answer's `problems` by position (dangling markers, uncited sources, bad ranges). Give `answer` or
        `answer_file`."""
        cited = (read_documents(self.folder.folder("documents", documents), self.ctx.settings.pdf)
                 if documents is not None else CitedDocuments())
        result = self._extraction(answer, answer_file, format, cited.documents)
        shown = [{"name": name, "read": document is not None}
                 for name, document in zip(cited.names, cited.documents)]
        return {"format": result.format, "claims": result.claims, "citations": result.citations,
                "documents": shown, "problems": [str(p) for p in cited.problems + result.problems]}

    def check_answer(self, answer: AnswerText = "", answer_file: AnswerFile = None,
                     answer_format: AnswerFormatArg = "auto", source: OptionalSource = None,
                     format: SourceFormatArg = None) -> dict[str, Any]:
        """Report on an LLM answer, like `citecheck check-answer`: each citation marker checked against its own
        source (a cited URL fetched and judged, a quoted document located and judged in `source`), each
        sentence with the sources that support it, uncited claims, citation precision and recall, and the
        answer's problems. Give `answer` or `answer_file`; `source`: the document its quotes cite."""
        return self.answer_report(answer, answer_file, answer_format, source, format)

    # ------------------------------------------------------------ the wiring

    def answer_report(self, answer: str, answer_file: str | None, fmt: str, source: str | None,
                      source_format: str | None) -> dict[str, Any]:
        """check_answer's result: `citecheck.answer.report`'s JSON (the answer within ANSWER_MAX_BYTES; the
        source, if given, as document 0, its text as sent checking the answer's ranges)."""
        from ...answer import report
        from ...extract import read_text
        document = sent = None
        if source is not None:
            path = self.folder.file("source", source)
            document = self._load(path, source_format)
            sent = document if isinstance(document, PdfDocument) else read_document(path)
        max_bytes = self.ctx.settings.answer_max_bytes
        if inputs.exactly_one(answer=answer, answer_file=answer_file) == "answer_file":
            text = read_text(self.folder.file("answer_file", answer_file), fmt, max_bytes=max_bytes)
        else:
            text = inputs.answer_text(answer, max_bytes)
        return report(text, self.ctx, fmt=fmt, name=answer_file or INLINE_ANSWER, source=document,
                      documents=[sent] if sent is not None else (), threshold=self.gate).to_dict()

    def _load(self, path: Path, fmt: str | None) -> Document:
        return sources.load(path, fmt or sources.detect_format(path), pdf=self.ctx.settings.pdf)

    def _extraction(self, answer: str, answer_file: str | None, fmt: str, documents) -> Extraction:
        """The answer given inline (within ANSWER_MAX_BYTES) or as a file, read in format `fmt`."""
        if inputs.exactly_one(answer=answer, answer_file=answer_file) == "answer_file":
            return read_answer(self.folder.file("answer_file", answer_file), fmt, self.ctx, documents)
        return extract_text(inputs.answer_text(answer, self.ctx.settings.answer_max_bytes), fmt, documents)

    def _checked(self, document: Document, path: Path, citations: list[dict], problems: list[str],
                 given_as: str) -> dict[str, Any]:
        """Locate and judge `citations` in `document` (check's rules); audited as `check:<given_as>`."""
        unavailable: list[tuple[str, str]] = []
        checked = check.check_matches(document, citations, self.ctx, threshold=self.gate,
                                      unavailable=unavailable)
        rows = [row for row, _ in checked]
        self._audit(lambda conn: write_check(conn, given_as, self.folder.shown(str(path)), document,
                                             citations, rows))
        if unavailable:
            problems = [*problems, check.unavailable_hint(unavailable, len(citations))]
        if not citations:
            problems = [*problems, "no usable citations"]
        return {"document": f"{document.name}: {document.summary()}",
                "rows": [row_json(row, match, citation["claim"])
                         for (row, match), citation in zip(checked, citations)],
                "problems": problems}

    def _audit(self, write) -> None:
        """`write(conn)` to the audit DB when AUDIT_DB is set (the CLI's rule)."""
        if self.ctx.settings.audit_db is None:
            return
        conn = audit.connect(self.ctx.settings.audit_db)
        try:
            write(conn)
        finally:
            conn.close()
