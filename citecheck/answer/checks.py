"""Each marker checked against its own source: what the report says of one marker.

Rules:
- A cited URL is checked by `verify.verify_citation` for the marker's sentence, with the texts the
  answer's citations of that URL in that sentence carry (cited_text, snippets: matched on the page first).
  Markers sharing a sentence and a URL share one check; at most BATCH_CONCURRENCY run at once
  (`batch.pool`). The row is verify's: supported / contradicted / not_found / unreachable with its reason,
  evidence quote and confidence. The text of each page read is kept, once per URL (`read_pages`), so the
  uncited sentences are asked against it (`own_sources`) with no second fetch.
- A quoted document citation is checked by `check` against `source` (document 0): the quote located
  (`status`, `diff` when misquoted), then judged. Its verdict reads as a label: verified -> supported,
  contradicted -> contradicted, unsupported -> not_found, fabricated -> not_found / fabricated_quote
  (no model asked), no judge -> not_found / judge_unavailable. Without a source, for another
  document_index, or with neither quote nor section, it is `unchecked` and says why.
- A citation of a local file (`extract.local`) is checked the same way against that file (with no quote:
  against the section `check.best_section` picks); a file that was not read leaves it `unchecked`, why
  (`document_not_named` for one the user did not name: its problem line says how to name it).
- A marker that points at no source is `no_source`, with the reader's words.
- The AUTO_ACCEPT gate is the run's (`review.Gate`), as in verify and check.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import check
from ..batch.pool import interleaved, run_pool
from ..context import RunContext
from ..extract.local import LocalFiles
from ..extract.parsed import Link, Quote, local_file
from ..source.document import Document
from ..verdict.review import Gate
from ..vocabulary import (CONTRADICTED, FABRICATED, FABRICATED_QUOTE, FOUND, JUDGE_UNAVAILABLE, NO_SOURCE,
                          NOT_FOUND, SUPPORTED, UNCHECKED, VERDICTS)
from .read import Marker, Read

LABEL_OF = dict(zip(VERDICTS, (SUPPORTED, CONTRADICTED, NOT_FOUND, NOT_FOUND)))
"""A source-document verdict read as a live-web label."""


@dataclass(frozen=True)
class Checked:
    """What the report says of one marker's source (MarkerRow's fields but the marker's own)."""
    source: str | None
    label: str
    reason: str | None = None
    confidence: float | None = None
    evidence_quote: str | None = None
    quote: str | None = None
    status: str | None = None
    diff: str | None = None
    auto: bool | None = None
    method: str | None = None


def check_markers(read: Read, ctx: RunContext, gate: Gate, source: Document | None = None,
                  local: LocalFiles | None = None) -> tuple[dict[str, Checked], dict[str, str]]:
    """(marker id -> Checked, for every marker of `read` (module rules); `local`: the local files read,
    URL -> the text of each cited page that was read (`read_pages`))."""
    out = {m.id: Checked(None, NO_SOURCE, reason=m.message) for m in read.markers if m.source is None}
    web, pages = _web([m for m in read.markers if isinstance(m.source, Link)], ctx, gate)
    out.update(web)
    out.update(_documents([m for m in read.markers if isinstance(m.source, Quote)], ctx, gate, source,
                          local or LocalFiles()))
    return out, pages


def read_pages(traces) -> dict[str, str]:
    """URL -> the text of its page, for every traced page that was read: fetched (or replayed) and not
    settled by its own rules (404, soft 404, …), with passages to show a judge; the first trace's page."""
    pages: dict[str, str] = {}
    for trace in traces:
        if trace.page is not None and trace.page.label is None and trace.passages:
            pages.setdefault(trace.url, trace.page.markdown)
    return pages


def _web(markers: list[Marker], ctx: RunContext, gate: Gate) -> tuple[dict[str, Checked], dict[str, str]]:
    from ..verify import trace_citation
    texts: dict[tuple[str, str], list[str]] = {}
    for m in markers:
        carried = texts.setdefault((m.claim, m.source.url), [])
        carried.extend([m.source.quote] * (bool(m.source.quote) and m.source.quote not in carried))
    def traced(key: tuple[str, str]):
        return trace_citation(key[0], key[1], ctx, gate, quotes=texts[key])
    traces = dict(run_pool(traced, interleaved(list(texts)), ctx.settings.batch_concurrency))
    pages = read_pages(traces[key] for key in texts)           # in the order the answer cites them
    out = {}
    for m in markers:
        row = traces[(m.claim, m.source.url)].row
        out[m.id] = Checked(m.source.url, row["label"], row["reason"], row["confidence"],
                            row["evidence_quote"], m.source.quote, row["status"], row["diff"], row["auto"],
                            row["method"])
    return out, pages


def _target(source: Quote, document: Document | None, local: LocalFiles) -> tuple[Document | None, str | None]:
    """(the document a quoted citation is checked against, None) or (None, why it is unchecked)."""
    provenance, file = dict(source.provenance), local_file(source)
    if file is not None:
        return (local.documents[file], None) if file in local.documents else (None, local.reason(file))
    if document is None:
        return None, "no source document was given to look in"
    if provenance.get("document_index", 0) != 0:
        return None, f"cites document {provenance['document_index']}, not the source given (document 0)"
    if source.quote is None and source.section is None:
        return None, "a document-only citation: no quote to find, no section to judge"
    return document, None


def _documents(markers: list[Marker], ctx: RunContext, gate: Gate, document: Document | None,
               local: LocalFiles) -> dict[str, Checked]:
    out, groups = {}, {}
    for m in markers:
        target, why = _target(m.source, document, local)
        if why:
            name = dict(m.source.provenance).get("document") or local_file(m.source) or "document"
            out[m.id] = Checked(name, UNCHECKED, reason=why, quote=m.source.quote)
        else:
            groups.setdefault(id(target), (target, []))[1].append(
                {"id": m.id, "claim": m.claim, "quote": m.source.quote, "section": m.source.section,
                 "file": local_file(m.source)})
    for target, citations in groups.values():
        checked = check.check_matches(target, citations, ctx, threshold=gate)
        for citation, (row, match) in zip(citations, checked):
            verdict = row["verdict"]
            reason = FABRICATED_QUOTE if verdict == FABRICATED else (None if verdict in LABEL_OF else JUDGE_UNAVAILABLE)
            out[citation["id"]] = Checked(
                target.name + (f" §{match.section}" if match.section else ""), LABEL_OF.get(verdict, NOT_FOUND),
                reason, row["confidence"], citation["quote"] if match.status == FOUND else match.closest,
                citation["quote"], match.status, match.diff, row["auto"], row["method"])
    return out
