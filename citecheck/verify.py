"""verify: one claim against its cited URLs — fetch, passages, retrieval, JSON judge, guard, aggregate.

Rules:
- The page speaks first. When fetch settles a citation (404, 410, soft 404, homepage redirect, PDF,
  empty page, crawl failure) the judge is not asked and confidence is null: no model answered.
- Then the page's notice (`web.notices`, its title, banner and first screen): retracted, withdrawn or an
  expression of concern -> not_found with that reason, no model asked, never automatic; a correction is
  the row's `notice`, beside the verdict.
- Then the languages (`source.language`): a claim in a language the cookbook does not read (not English,
  French, German or Russian), or a page in a script it does not read -> not_found / unsupported_language,
  no model asked, never automatic.
- Then the text the citation carries, if any (`quotes`: Anthropic's cited_text, a Perplexity snippet), is
  looked for on the page's text (its Markdown marks dropped, `page_text`) with the source-document flow's
  rules (`matching.locate`: exact after normalising, else a near miss, else missing). The row's `status` is
  the worst of its texts (missing, misquoted, found). Missing: not_found / fabricated_quote, no model
  asked. Misquoted: judged on the real page, `diff` says how the text differs, never automatic. Found:
  judged as usual.
- Otherwise the page is cut into passages of at most 200 words; at most MAX_PASSAGES of them are
  ranked (`retrieval.shortlist` chooses which on a long page), the 3 best for the claim (RETRIEVAL:
  BM25 by default, or MiniLM cosine) are shown to the judge (JUDGE_METHOD: the pooled method by
  default, see citecheck.judge.methods), and the guard keeps its verdict only if the quote is in those
  passages. `judge_page` is this half alone;
  `trace_text` (claim + page text, no fetch) gives the row `trace_citation` gives for a page with that
  text, gate and failure labels included: the evaluation measures exactly it.
- A failure of the outside world is a labelled row, never an exception: fetch labels its own
  (crawl_failed, dns_failure, blocked_address, invalid_url, …: see citecheck.vocabulary), and a judge
  that cannot be reached → not_found / judge_unavailable; anything else one citation raises → not_found /
  check_failed (logged), so one bad URL never loses the claim's other URLs. Cache problems (an offline
  miss, a corrupt file) and missing or rejected settings do raise: they are the operator's to fix, and
  the message says how. So does `cancellation.Cancelled` (the API gave up waiting: nobody reads the row).
- One label per claim: any contradicted → contradicted; else any supported → supported; else all
  unreachable → unreachable; else not_found (`aggregate.overall`).
- Every row carries the AUTO_ACCEPT gate's `auto` (`review.gated`, at the threshold in force for the model
  that answered, `auto_note` saying why when none is); `threshold` is `review.gate_of`'s (None: the run's).
  `method` names the judge method that answered (the verdict's, after any fallback; null when no model
  answered). `verify` audits its citations (batch `verify`, `model` the model that answered) when AUDIT_DB
  is set. An evidence quote carries its span in the page's text as stored (`matching.spans.find`).
- What a page's text alone decides (its notice, passages, text folded for spans, carried-quote sections)
  is worked out once per page and process (`web.page_memo`, bounded): rows are the same with or without it.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import httpx

from . import audit, cancellation, config, matching
from .cache import CacheError
from .context import RunContext
from .judge import methods
from .judge.judges import JudgeUnavailable
from .matching import numbers, spans
from .verdict.aggregate import overall
from .verdict.guard import guard
from .verdict.review import Gate, gate_of, gated
from .vocabulary import (
    CHECK_FAILED,
    CRAWL_FAILED,
    EMPTY_PAGE,
    FABRICATED_QUOTE,
    FOUND,
    JUDGE_UNAVAILABLE,
    MISQUOTED,
    MISSING,
    NOT_FOUND,
    NUMBER_MISMATCH,
    SUPPORTED,
    UNREACHABLE,
    UNSUPPORTED_LANGUAGE,
    CitationRow,
)
from .source import language
from .source.document import Document, Section
from .web import netguard, notices, page_memo
from .web.fetch import FetchResult, fetch
from .web.passages import split_passages
from .web.retrieval import rank, shortlist

log = logging.getLogger("citecheck.verify")
OPERATOR_ERRORS = (CacheError, config.MissingSetting, cancellation.Cancelled)
"""Raised, not labelled: the operator's to fix (or the caller's own cancellation)."""


@dataclass
class Trace:
    """Every step of one claim-URL check, for notebooks and debugging; `row` is what verify returns."""
    claim: str
    url: str
    row: dict
    page: FetchResult | None = None
    passages: list[str] = field(default_factory=list)   # the whole page, in page order
    shown: list[str] = field(default_factory=list)      # the top passages the judge saw, best first
    scores: list[float] = field(default_factory=list)   # their RETRIEVAL scores for the claim (BM25 or cosine)
    judged: dict | None = None                          # the judge's verdict before the guard


def _row(url: str, page: FetchResult | None, label: str, reason: str | None,
         quote: str | None = None, confidence: float | None = None, method: str | None = None,
         carried: matching.Match | None = None, numbers: str | None = None) -> dict:
    found = spans.find(quote, folded(page.markdown)) if page and quote else None
    span_start, span_end = found or (None, None)
    return CitationRow(url=url, label=label, evidence_quote=quote, confidence=confidence,
                       final_url=page.final_url if page else None,
                       original_status=page.original_status if page else None,
                       rid=page.rid if page else None, reason=reason, method=method,
                       span_start=span_start, span_end=span_end,
                       status=carried.status if carried else None,
                       diff=carried.diff if carried else None, numbers=numbers).to_dict()


_LINK = re.compile(r"!?\[([^\]\n]{0,500})\]\([^)\n]{0,2000}\)")
_MARKS = re.compile(r"(?m)^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-+][ \t]+)|\*|__|`")
_WORST = {FOUND: 0, MISQUOTED: 1, MISSING: 2}


def page_text(markdown: str) -> str:
    """A fetched page's Markdown as the text a reader sees: links and images as their text; heading, quote
    and list marks, emphasis asterisks, `__` and backticks dropped (bounded, linear patterns)."""
    return _MARKS.sub("", _LINK.sub(r"\1", markdown))


def folded(text: str) -> spans.Folded:
    """`text` folded for spans, once per text and process (`page_memo`)."""
    return page_memo.remembered(spans.Folded, text)


def page_sections(markdown: str) -> matching.Sections:
    """The page's text (`page_text`) as the one section "page", normalised; folded for spans when asked."""
    text = page_text(markdown)
    return matching.Sections(Document("page", text, {"page": Section("page", "page", text)}), fold=folded)


def carried_match(quotes: Sequence[str], page: FetchResult, max_chars: int) -> matching.Match | None:
    """The worst `matching.locate` of the texts a citation carries on the page's text, normalised once per
    page and process (`page_sections`, module rules); None when it carries none with content."""
    texts = [quote for quote in quotes if matching.has_content(quote)]
    if not texts:
        return None
    sections = page_memo.remembered(page_sections, page.markdown)
    return max((matching.locate(quote, sections, max_chars=max_chars) for quote in texts),
               key=lambda match: _WORST[match.status])


def notice_of(head: str) -> notices.Notice | None:
    """The notice the head of a page's Markdown gives, read as text (`page_text`)."""
    return notices.find(page_text(head))


def unreadable_page(markdown: str) -> bool:
    """Whether a page's text is in a script the cookbook does not read (made once per page: `page_memo`)."""
    return language.unreadable(page_text(markdown))


def judge_page(claim: str, page: FetchResult, ctx: RunContext, quotes: Sequence[str] = ()) -> Trace:
    """The judged half of the flow for a page fetch did not settle. Its notice first (`web.notices`): a
    retraction, withdrawal or expression of concern settles it (not_found, that reason, no model asked);
    a correction travels beside the verdict in `notice`. Then the languages: a claim or page in one the
    cookbook does not read is not_found / unsupported_language, no model asked. Then `_judged`."""
    notice = page_memo.remembered(notice_of, page.markdown[:2 * notices.FIRST_SCREEN_CHARS])
    if notice is not None and notice.settles:
        row = {**_row(page.url, page, NOT_FOUND, notice.kind), "notice": notice.field()}
        return Trace(claim, page.url, row, page)
    if language.unsupported(claim) or page_memo.remembered(unreadable_page, page.markdown):
        return Trace(claim, page.url, _row(page.url, page, NOT_FOUND, UNSUPPORTED_LANGUAGE), page)
    trace = _judged(claim, page, ctx, quotes)
    if notice is not None:
        trace.row = {**trace.row, "notice": notice.field()}
    return trace


def _judged(claim: str, page: FetchResult, ctx: RunContext, quotes: Sequence[str] = ()) -> Trace:
    """The carried text matched, passages, retrieval, judge, guard."""
    url = page.url
    passages = list(page_memo.remembered(split_passages, page.markdown))
    if not passages:                        # fetch labels empty pages; kept for any other backend
        return Trace(claim, url, _row(url, page, NOT_FOUND, EMPTY_PAGE), page)
    carried = carried_match(quotes, page, ctx.settings.near_miss_max_chars)
    if carried is not None and carried.status == MISSING:
        row = _row(url, page, NOT_FOUND, FABRICATED_QUOTE, carried=carried)
        return Trace(claim, url, row, page, passages)
    kept = shortlist(claim, passages, ctx.settings.max_passages)
    ranked = [(kept[i], score) for i, score in rank(claim, [passages[i] for i in kept],
                                                    how=ctx.settings.retrieval)]
    shown = [passages[i] for i, _ in ranked]
    trace = Trace(claim, url, {}, page, passages, shown, [round(s, 4) for _, s in ranked])
    try:
        trace.judged = methods.judge(claim, shown, ctx)
    except JudgeUnavailable:
        trace.row = _row(url, page, NOT_FOUND, JUDGE_UNAVAILABLE, carried=carried)
        return trace
    kept, against = number_checked(claim, guard(trace.judged, shown), shown)
    reason = kept["reason"].split(":")[0] if kept["reason"] else None
    trace.row = _row(url, page, kept["label"], reason, kept["evidence_quote"], kept["confidence"],
                     trace.judged.get("method"), carried, against)
    return trace


def number_checked(claim: str, kept: dict, shown: Sequence[str]) -> tuple[dict, str | None]:
    """(the guarded verdict, the numbers shown): a supported verdict (its evidence quote: the JSON judge's,
    the pooled method's best sentence) where a number of the claim agrees with none stated in what the judge
    read (the shown passages, as `check` reads the section) is not_found, confidence 0, `number_mismatch`
    (quote kept; never automatic: `review.held`); the numbers shown are the quote's when it has one."""
    if kept["label"] != SUPPORTED:
        return kept, None
    against = numbers.compare(claim, "\n\n".join(shown))
    if not against.mismatch:
        return kept, None
    quoted = numbers.compare(claim, kept["evidence_quote"] or "")
    against = quoted if quoted.status == numbers.CHANGED else against
    return {**kept, "label": NOT_FOUND, "confidence": 0.0, "reason": NUMBER_MISMATCH}, against.shown()


def is_text(value: str) -> bool:
    """False for a string holding a lone surrogate (it cannot be written as UTF-8: not text)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def page_of(url: str, text: str) -> FetchResult:
    """A page given as text (no fetch): what `judge_page` reads when the caller already has the text."""
    return FetchResult(url, url, None, text, None, None, None, "given")


def _traced(claim: str, url: str, ctx: RunContext, quotes: Sequence[str]) -> Trace:
    cancellation.check()
    try:
        page = fetch(url, ctx)
    except (httpx.HTTPError, OSError):      # fetch labels its own failures; this is the last net
        return Trace(claim, url, _row(url, None, UNREACHABLE, CRAWL_FAILED))
    if page.label is not None:
        return Trace(claim, url, _row(url, page, page.label, page.reason), page)
    cancellation.check()
    return judge_page(claim, page, ctx, quotes)


def _settled(claim: str, url: str, ctx: RunContext, threshold: float | Gate | None, traced) -> Trace:
    """`traced()`, its failures labelled (module rules), the row gated for the model that answered."""
    try:
        trace = traced()
    except OPERATOR_ERRORS:
        raise
    except Exception as exc:               # noqa: BLE001 - one citation's failure must not lose the others
        log.warning("%s", config.redact(f"{url}: check failed: {type(exc).__name__}: {exc}"))
        trace = Trace(claim, url, _row(url, None, NOT_FOUND, CHECK_FAILED))
    trace.row = gated(trace.row, gate_of(threshold, ctx.settings), answered_by(trace))
    return trace


def answered_by(trace: Trace) -> str | None:
    """The model whose verdict the row carries (None: no model answered)."""
    return trace.judged.get("model") if trace.judged else None


def trace_citation(claim: str, url: str, ctx: RunContext, threshold: float | Gate | None = None,
                   quotes: Sequence[str] = ()) -> Trace:
    """Check one claim-URL pair (`quotes`: the texts the citation carries) and keep every intermediate step
    (see module rules); the row is gated."""
    return _settled(claim, url, ctx, threshold, lambda: _traced(claim, url, ctx, quotes))


def trace_text(claim: str, text: str, ctx: RunContext, url: str = "text:",
               threshold: float | Gate | None = None, quotes: Sequence[str] = ()) -> Trace:
    """The fetch-free flow: `claim` against a page whose text is `text` (as `url`), with the same carried-text
    match, passages, retrieval, judge, guard, failure labels and gate as `trace_citation`."""
    return _settled(claim, url, ctx, threshold, lambda: judge_page(claim, page_of(url, text), ctx, quotes))


def verify_citation(claim: str, url: str, ctx: RunContext, threshold: float | Gate | None = None, *,
                    with_passages: bool = False, quotes: Sequence[str] = ()) -> dict:
    """One claim-URL pair -> a CitationRow dict; network and judge failures become labelled rows. `quotes`:
    the texts the citation carries (matched on the page first, module rules).
    `with_passages` adds `passages`, what the judge read (for the audit DB; None when no model was asked),
    and `model`, the model that answered (a gate applied again reads it)."""
    trace = trace_citation(claim, url, ctx, threshold, quotes)
    if not with_passages:
        return trace.row
    return {**trace.row, "passages": trace.shown or None, "model": answered_by(trace)}


def verify_claim(claim: str, urls: list[str], ctx: RunContext, threshold: float | Gate | None = None, *,
                 with_passages: bool = False, quotes: Mapping[str, Sequence[str]] | None = None) -> dict:
    """{claim, overall, citations}: each URL checked in order (`quotes`: url -> the texts its citation
    carries), one label for the claim."""
    threshold = gate_of(threshold, ctx.settings)
    quotes = quotes or {}
    citations = [verify_citation(claim, url, ctx, threshold, with_passages=with_passages,
                                 quotes=quotes.get(url, ())) for url in urls]
    return {"claim": claim, "overall": overall(c["label"] for c in citations), "citations": citations}


def carried_text(quotes: Sequence[str]) -> str | None:
    """The texts a citation carries as the audit row's `quote` (one per line; None: it carries none)."""
    return "\n".join(quotes) or None


def audit_claim(conn, batch: str, result: dict,
                quotes: Mapping[str, Sequence[str]] | None = None) -> list[dict]:
    """Write a verified claim's citations (with their passages, the model that answered each and the texts
    each carried) to the audit DB as batch `batch`."""
    item_id, quotes = audit.claim_id(result["claim"]), quotes or {}
    return [audit.write_citation(conn, batch, item_id, result["claim"],
                                 {**citation, "quote": carried_text(quotes.get(citation["url"], ()))})
            for citation in result["citations"]]


def public(result: dict) -> dict:
    """The verify JSON: each citation with CitationRow's keys only (the audit's passages dropped)."""
    return {**result, "citations": [CitationRow.from_dict(c).to_dict() for c in result["citations"]]}


# ---------------------------------------------------------------- CLI: python -m citecheck verify

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--claim", required=True, help="the claim the citations should support")
    parser.add_argument("--url", required=True, action="append", dest="urls", metavar="URL",
                        help="a cited URL (repeat for each citation)")
    parser.add_argument("--quote", nargs=2, action="append", default=[], metavar=("URL", "TEXT"),
                        help="the text the citation of URL says the page holds (Anthropic's cited_text, a "
                             "Perplexity snippet): matched on the fetched page before any judge is asked")


def run(args: argparse.Namespace, ctx: RunContext) -> int:
    """Print the verify JSON for one claim; a blank claim or a non-http(s) URL is a one-line error; one
    stderr line when no host name resolved (`netguard.tell_if_offline`)."""
    claim = args.claim.strip()
    if not claim:
        raise ValueError("--claim must not be empty")
    quoted = [("--quote", text) for pair in args.quote for text in pair]
    for name, text in [("--claim", claim), *(("--url", url) for url in args.urls), *quoted]:
        if not is_text(text):
            raise ValueError(f"{name} is not valid text (an undecodable byte or a lone surrogate)")
    quotes: dict[str, list[str]] = {}
    for url, text in args.quote:
        if url not in args.urls:
            raise ValueError(f"--quote names {url!r}, which no --url gives")
        quotes.setdefault(url, []).append(text)
    for url in args.urls:
        try:
            netguard.check_url(url, allow_private=True)   # scheme and host only; addresses are fetch's
        except netguard.BlockedURL as exc:
            raise ValueError(f"--url {url!r} is not an http(s) URL with a host ({exc})") from None
    gate, before = Gate.of(ctx.settings), netguard.lookups()
    result = verify_claim(claim, args.urls, ctx, gate, with_passages=True, quotes=quotes)
    gate.tell(result["citations"], "verify")
    netguard.tell_if_offline("verify", before)
    if ctx.settings.audit_db is not None:
        conn = audit.connect(ctx.settings.audit_db)
        try:
            audit_claim(conn, audit.VERIFY_BATCH, result, quotes)
        finally:
            conn.close()
    print(json.dumps(public(result), indent=2, ensure_ascii=False))
    return 0
