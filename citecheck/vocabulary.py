"""The one vocabulary of both flows: statuses, relations, verdicts, labels and reasons, and the row types.

Rules:
- Every other module imports its words from here; no label, verdict, status or reason set is restated
  anywhere else. Adding a reason is one entry in REASONS (its label, whether it is transient, its rule).
- A *transient* reason describes our failure to look (the crawl, the DNS, the judge or the check could
  not be done), not the page: such a result is never cached and a resumed batch tries it again.
- Rows are dataclasses with `to_dict()` / `from_dict()`; the dict keys, in order, are the published
  contract (CLI JSON, API body, CSV columns, audit columns all derive from these field lists).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, make_dataclass
from typing import Literal

# ---------------------------------------------------------------- source-document flow

STATUSES = ("found", "misquoted", "missing", "section-only")
"""How a citation's quote relates to the source text (citecheck.matching)."""
FOUND, MISQUOTED, MISSING, SECTION_ONLY = STATUSES
SPAN_STATES = ("matches", "changed", "invalid", "none")
"""What a stored span (span_start, span_end) says against the text it is read in now (`matching.spans.check`):
the quote is there; the text there differs now (a page fetched again, a section edited); not a span of that
text (a hand-edited row); no span recorded."""
SPAN_MATCHES, SPAN_CHANGED, SPAN_INVALID, SPAN_NONE = SPAN_STATES

RELATIONS = ("supports", "contradicts", "says_nothing")
"""The options of the Choice question: how the source relates to the claim."""

VERDICTS = ("verified", "contradicted", "unsupported", "fabricated")
"""One verdict per source-document citation."""
FABRICATED = "fabricated"
VERDICT_OF = dict(zip(RELATIONS, VERDICTS[:3]))
"""supports -> verified, contradicts -> contradicted, says_nothing -> unsupported."""
JUDGE_UNAVAILABLE = "judge_unavailable"
"""What `check` prints in the verdict column of a citation that needed the judge when none could be
asked (no key, unreachable, an offline cache miss): no verdict, not one of VERDICTS, never automatic.
The same word as the live-web reason of that name."""

# ---------------------------------------------------------------- live-web flow

LABELS = ("supported", "contradicted", "not_found", "unreachable")
"""One label per claim-URL citation, and per claim (`aggregate.overall`)."""
SUPPORTED, CONTRADICTED, NOT_FOUND, UNREACHABLE = LABELS
JUDGE_LABELS = LABELS[:3]
"""What the JSON judge may answer: a page it could read is never 'unreachable'."""
Label = Literal["supported", "contradicted", "not_found", "unreachable"]


# the reason codes: every other module spells a reason through these names
HTTP_404 = "http_404"
HTTP_410 = "http_410"
SOFT_404 = "soft_404"
REDIRECTED_TO_HOMEPAGE = "redirected_to_homepage"
PDF_UNSUPPORTED = "pdf_unsupported"
PDF_TOO_LARGE = "pdf_too_large"
PDF_CORRUPT = "pdf_corrupt"
NOT_PDF = "not_pdf"
EMPTY_PAGE = "empty_page"
UNSUPPORTED_CONTENT = "unsupported_content"
INVALID_URL = "invalid_url"
TOO_MANY_REDIRECTS = "too_many_redirects"
PAYWALL = "paywall"
LOGIN_REQUIRED = "login_required"
EVIDENCE_QUOTE_NOT_IN_SOURCE = "evidence_quote_not_in_source"
JUDGE_OUTPUT_INVALID = "judge_output_invalid"
JUDGE_CALL_BUDGET = "judge_call_budget"
CACHE_MISS = "cache_miss"
CRAWL_FAILED = "crawl_failed"
RATE_LIMITED = "rate_limited"
BOT_CHALLENGE = "bot_challenge"
ACCESS_DENIED = "access_denied"
PDF_TRUNCATED = "pdf_truncated"
PDF_TOO_SLOW = "pdf_too_slow"
PAGE_TOO_COMPLEX = "page_too_complex"
FETCH_ERROR = "fetch_error"
DNS_FAILURE = "dns_failure"
BLOCKED_ADDRESS = "blocked_address"
BLOCKED_URL = "blocked_url"
CHECK_FAILED = "check_failed"
WORKER_LOST = "worker_lost"
WORKER_RESULT_INVALID = "worker_result_invalid"
FABRICATED_QUOTE = "fabricated_quote"
RETRACTED = "retracted"
WITHDRAWN = "withdrawn"
EXPRESSION_OF_CONCERN = "expression_of_concern"
ROBOTS_DISALLOWED = "robots_disallowed"
ROBOTS_UNREACHABLE = "robots_unreachable"
UNSUPPORTED_LANGUAGE = "unsupported_language"
NUMBER_MISMATCH = "number_mismatch"


@dataclass(frozen=True)
class Reason:
    """Why a citation got its label without (or despite) the judge."""
    code: str
    label: str          # the label this reason comes with
    transient: bool     # our failure to look: never cached, retried on resume
    rule: str           # when it is given


REASONS: dict[str, Reason] = {r.code: r for r in (
    Reason(HTTP_404, UNREACHABLE, False, "the origin answered 404"),
    Reason(HTTP_410, UNREACHABLE, False, "the origin answered 410 (gone on purpose)"),
    Reason(SOFT_404, UNREACHABLE, False, "a short 200 page that reads like 'page not found'"),
    Reason(REDIRECTED_TO_HOMEPAGE, NOT_FOUND, False, "a deep link whose final path is /"),
    Reason(PDF_UNSUPPORTED, NOT_FOUND, False,
           "a PDF with no text to read: encrypted (a password is needed) or a scan (images only)"),
    Reason(PDF_TOO_LARGE, NOT_FOUND, False,
           "a PDF over PDF_MAX_BYTES or PDF_MAX_PAGES (never read in part)"),
    Reason(PDF_CORRUPT, NOT_FOUND, False, "a PDF the reader cannot parse"),
    Reason(NOT_PDF, NOT_FOUND, False, "served as a PDF, but it has no %PDF- header"),
    Reason(EMPTY_PAGE, NOT_FOUND, False, "no text at all, even after JavaScript rendering"),
    Reason(UNSUPPORTED_CONTENT, NOT_FOUND, False, "a content type that is neither HTML nor text"),
    Reason(INVALID_URL, UNREACHABLE, False, "not an http(s) URL with a host"),
    Reason(TOO_MANY_REDIRECTS, UNREACHABLE, False, "more redirect hops than the fetcher follows"),
    Reason(PAYWALL, UNREACHABLE, False,
           "the origin answered 402, or a short page marked isAccessibleForFree=false (schema.org)"),
    Reason(LOGIN_REQUIRED, UNREACHABLE, False,
           "the origin answered 401, a deep link landed on a login page, or a short page is a login form"),
    Reason(EVIDENCE_QUOTE_NOT_IN_SOURCE, NOT_FOUND, False,
           "the judge's quote is not verbatim in the passages it was shown (the guard)"),
    Reason(FABRICATED_QUOTE, NOT_FOUND, False,
           "the text the citation carries (Anthropic cited_text, a Perplexity snippet) is neither on the "
           "fetched page nor a near miss of it (matching: missing): no model asked"),
    *(Reason(code, NOT_FOUND, False, f"the page's title, banner or first screen says {says} (`web.notices`): "
                                       "never supported, never automatic")
      for code, says in ((RETRACTED, "it is retracted"), (WITHDRAWN, "it is withdrawn"),
                         (EXPRESSION_OF_CONCERN, "the editors have an expression of concern"))),
    Reason(UNSUPPORTED_LANGUAGE, NOT_FOUND, False,
           "the claim or the cited text is in a language or script the cookbook does not read (only English, "
           "French, German, Russian: `source.language`): no model asked, never supported"),
    Reason(NUMBER_MISMATCH, NOT_FOUND, False,
           "a number of the claim is not in the evidence (`matching.numbers`): a verbatim quote whose number "
           "the claim changes is contradicted (check, no model asked); a judge's supported is downgraded to "
           "a person (confidence 0, never automatic); the row's `numbers` shows both"),
    Reason(JUDGE_OUTPUT_INVALID, NOT_FOUND, False, "the judge answered off its contract"),
    Reason(JUDGE_CALL_BUDGET, NOT_FOUND, False,
           "the judge method needs more model calls than JUDGE_CALL_BUDGET allows"),
    Reason(ROBOTS_DISALLOWED, UNREACHABLE, False,
           "the site's robots.txt disallows the URL for our user agent (RFC 9309): never fetched, never "
           "judged. Not transient, but kept only ROBOTS_MAX_AGE (per host in a run, a resumed batch's row), "
           "never in the page cache"),
    Reason(CACHE_MISS, UNREACHABLE, False, "a dry run's cache does not hold the call (API only)"),
    Reason(CRAWL_FAILED, UNREACHABLE, True,
           "timeouts (FETCH_DEADLINE in all), connection errors, unreadable answers, 5xx after retries"),
    Reason(RATE_LIMITED, UNREACHABLE, True,
           "the origin answered 429 after the retries, or asked (Retry-After) for a wait FETCH_DEADLINE "
           "does not leave"),
    Reason(BOT_CHALLENGE, UNREACHABLE, True,
           "a short page (any status) that is a robot check: CAPTCHA, 'checking your browser', 'denied'"),
    Reason(ACCESS_DENIED, UNREACHABLE, True,
           "the origin answered 403 with no challenge, paywall or login page: it refused this client"),
    Reason(PDF_TRUNCATED, UNREACHABLE, True, "a PDF with no %%EOF at its end: the download was cut short"),
    Reason(PDF_TOO_SLOW, NOT_FOUND, True, "reading the PDF's text took longer than PDF_MAX_SECONDS"),
    Reason(PAGE_TOO_COMPLEX, NOT_FOUND, True,
           "extracting an HTML page's text passed EXTRACT_MAX_SECONDS or the parsers' memory cap"),
    Reason(FETCH_ERROR, UNREACHABLE, True, "the fetcher raised an unexpected error (its type in the log)"),
    Reason(ROBOTS_UNREACHABLE, UNREACHABLE, True,
           "the site's robots.txt could not be read (429, a 5xx, a network error, FETCH_DEADLINE): complete "
           "disallow (RFC 9309); the page is neither fetched nor judged"),
    Reason(DNS_FAILURE, UNREACHABLE, True, "the host does not resolve"),
    Reason(BLOCKED_ADDRESS, UNREACHABLE, True, "the SSRF guard refused the address"),
    Reason(BLOCKED_URL, UNREACHABLE, True, "blocked_address's name in early releases (old audit rows)"),
    Reason(JUDGE_UNAVAILABLE, NOT_FOUND, True, "the judge could not be reached"),
    Reason(CHECK_FAILED, NOT_FOUND, True, "the check raised an unexpected error (detail in the log)"),
    Reason(WORKER_LOST, NOT_FOUND, True, "every cluster worker that checked it died (batch --cluster)"),
    Reason(WORKER_RESULT_INVALID, NOT_FOUND, True,
           "a cluster worker's result is off the row or cache contract: none of it kept (batch --cluster)"),
)}
HTTP_REASON_PREFIX = "http_"
"""Any other 4xx from the origin is `http_<status>`, unreachable, not transient."""

CORRECTION = "correction"
NOTICE_KINDS = (RETRACTED, WITHDRAWN, EXPRESSION_OF_CONCERN, CORRECTION)
"""What a page's notice says of it (`web.notices`); the first three settle a citation (their reason, never
supported, never automatic), a correction travels beside the verdict in the row's `notice` field."""
SETTLING_NOTICES = frozenset(NOTICE_KINDS[:3])
NO_NOTICE = "none"
"""The label of a page with no notice in data/notices/."""

TRANSIENT = frozenset(code for code, reason in REASONS.items() if reason.transient)


def http_reason(status: int) -> str:
    """The reason for an origin's 4xx answer."""
    return f"{HTTP_REASON_PREFIX}{status}"


def is_transient(reason: str | None) -> bool:
    """True for a reason that describes our failure to look (see module rules)."""
    return reason in TRANSIENT


def known_reason(reason: str | None) -> bool:
    """None, a listed reason, or http_<4xx>."""
    if reason is None or reason in REASONS:
        return True
    code = reason.removeprefix(HTTP_REASON_PREFIX)
    return reason.startswith(HTTP_REASON_PREFIX) and code.isdigit() and 400 <= int(code) < 500


# ---------------------------------------------------------------- rows

class _Row:
    """to_dict / from_dict / field names for the row dataclasses below."""

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict):
        """Build from a dict holding at least the row's fields (extra keys are ignored)."""
        return cls(**{name: data.get(name) for name in cls.field_names()})


@dataclass(frozen=True)
class CitationRow(_Row):
    """One claim-URL citation in the live-web flow (the `verify` contract)."""
    url: str
    label: str
    evidence_quote: str | None = None
    confidence: float | None = None
    final_url: str | None = None
    original_status: int | None = None
    rid: str | None = None
    reason: str | None = None
    auto: bool | None = None      # the AUTO_ACCEPT gate (`review.gate`): True accepted, False to a person
    auto_note: str | None = None  # why a person reviews when no AUTO_ACCEPT is in force for the model
    method: str | None = None     # the judge method that answered (after a fallback); null: no model asked
    span_start: int | None = None  # where evidence_quote stands in the page's text as stored (its
    span_end: int | None = None    # characters [span_start, span_end)); null: no evidence quote
    status: str | None = None     # how the text the citation carries matched the fetched page (STATUSES:
                                  # found, misquoted, missing); null: it carried none, or no page was read
    diff: str | None = None       # the word diff from that text to the page when it is misquoted
    notice: str | None = None     # "<kind>: <words>": the notice on the page's first screen (NOTICE_KINDS)
    numbers: str | None = None    # number_mismatch: '"90 °C" vs "100 °C"', the claim's vs the evidence's


def _extended(name: str, doc: str, before: dict, order: tuple[str, ...], after: dict) -> type:
    """A row type holding CitationRow's fields in `order`, with `before` and `after` around them
    (the published column orders differ; the fields and their types are CitationRow's)."""
    cited = {f.name: f.type for f in fields(CitationRow)}
    spec = [*before.items(), *((n, cited[n]) for n in order), *after.items()]
    row = make_dataclass(name, spec, bases=(_Row,), frozen=True)
    row.__doc__, row.__module__ = doc, __name__
    return row


_CLAIM_ORDER = ("url", "label", "reason", "confidence", "evidence_quote", "final_url", "original_status", "rid")

BatchRow = _extended("BatchRow", "One citation of a batch: its claim, its row, and the claim's overall label.",
                     {"id": "str", "claim": "str"},
                     (*_CLAIM_ORDER, "auto", "auto_note", "method", "span_start", "span_end", "status",
                      "diff", "notice"),
                     {"overall": "str"})

FLOWS = ("web", "source")
"""Which flow decided an audited citation: live-web (a URL) or source-document (a section)."""
WEB, SOURCE = FLOWS
AuditRow = _extended("AuditRow", "One decided citation in the audit journal (citecheck.audit), columns in "
                     "table order. A source-document row keeps its verdict in `label`, the document in "
                     "`url`, its `section`, `status` and the citation's own `quote`; `passages` is the JSON "
                     "list of what the judge read (null when no model was asked).",
                     {"batch": "str", "id": "str", "claim": "str"}, _CLAIM_ORDER,
                     {"model": "str", "decided_at": "str", "auto": "bool | None", "flow": "str",
                      "section": "str | None", "status": "str | None", "quote": "str | None",
                      "passages": "str | None", "method": "str | None", "span_start": "int | None",
                      "span_end": "int | None"})
"""`auto` is null on rows decided before the gate was recorded (audit migration 2): they go to a person.
`model` and `method` are what answered ('' and null: no model asked); `method` is null on rows decided
before migration 4. `span_start`/`span_end`: where `evidence_quote` stands in the text the row names (the
page's text as stored; a source row's `section`), null when there is none or decided before migration 5."""

REVIEW_ACTIONS = ("confirm", "correct")
"""What a reviewer does with a verdict: confirm its label, or correct it to another one."""


def labels_of(flow: str) -> tuple[str, ...]:
    """The labels a verdict of this flow may have (and a reviewer may choose)."""
    return VERDICTS if flow == SOURCE else LABELS


@dataclass(frozen=True)
class SourceRow(_Row):
    """One citation checked against a source document (the `check` contract; `section` and `model`, the
    model that answered, are not printed)."""
    id: str
    status: str
    section: str | None
    relation: str | None
    confidence: float | None
    verdict: str
    auto: bool
    auto_note: str | None = None  # as CitationRow's
    method: str | None = None     # as CitationRow's
    model: str | None = None
    span_start: int | None = None  # where the quote (found) or its closest span (misquoted) stands in the
    span_end: int | None = None    # text of `section`; null when it was not located
    reason: str | None = None      # judge_unavailable: why no judge answered (the failure `check` prints);
                                   # number_mismatch: a number of the claim is not in the quote or section
    numbers: str | None = None     # number_mismatch: '"90 °C" vs "100 °C"' (as CitationRow's)


CHECK_COLUMNS = ("id", "status", "relation", "confidence", "verdict", "auto", "method")
"""What `check` prints, in the table and in --json."""

# ---------------------------------------------------------------- LLM answers (citecheck.extract)

ANSWER_FORMATS = ("markdown", "anthropic", "openai", "perplexity")
"""The answer formats `extract` reads (one reader each); `auto` picks one of them."""
MARKDOWN_ANSWER, ANTHROPIC_ANSWER, OPENAI_ANSWER, PERPLEXITY_ANSWER = ANSWER_FORMATS
ANSWER_FORMAT_CHOICES = ("auto", *ANSWER_FORMATS)
"""What a command's answer-format option accepts."""
DOCUMENT_NOT_NAMED = "document_not_named"
"""A local file an answer cites that is not among the documents the user named (`extract.local`): not in
--documents DIR, hidden, or not a source format. It is never read; its citations are unchecked."""
TOO_MANY_MARKERS = "too_many_markers"
"""An answer's citations past ANSWER_MAX_MARKERS: not extracted or checked (one problem line counts them)."""

# ---------------------------------------------------------------- the answer report (citecheck.answer)

NO_SOURCE = "no_source"
"""A marker of the answer that points at no source (a dangling `[7]`): a labelled row, never checked."""
UNCHECKED = "unchecked"
"""A quoted-document marker with no document to look in (no source given, or another document_index)."""
MARKER_LABELS = (*LABELS, NO_SOURCE, UNCHECKED)
"""What the answer report says of one marker: its source's label, or why it has none."""
SENTENCE_KINDS = ("cited", "uncited", "no_claim")
"""A sentence of the answer: it carries a citation; it asserts a checkable fact with none (`answer.uncited`);
or it asserts nothing to check (a greeting, a hedge, a question, a heading)."""
CITED, UNCITED, NO_CLAIM = SENTENCE_KINDS
NOT_ASKED = "not_asked"
"""An uncited sentence's question to one of the answer's own sources that no judge answered
(`answer.own_sources`): offline with no recorded answer (`not_recorded`), or no judge configured
(`judge_unavailable`)."""
NOT_RECORDED = "not_recorded"
"""Why a question was not asked: an offline replay holds no recorded answer for it (a live run would ask)."""
