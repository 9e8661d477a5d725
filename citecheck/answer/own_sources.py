"""Uncited sentences asked against the answer's own sources: "supported by URL, which it did not cite".

Rules:
- The answer's sources are the pages its URL markers cite that were read for those markers (`checks.
  read_pages`: fetched or replayed once, not settled by the page's own rules, with text), in the order the
  answer first cites them. Nothing is fetched again. Quoted documents and local files are not among them.
- Each uncited sentence (`uncited.asserts_fact`, no marker) is asked against them as verify judges a page
  (`verify.trace_text` on the page's text: passages, retrieval, the configured judge method, guard). A
  sentence's sources are taken by the share of its content words each page holds (ties: the answer's
  order), one question per sentence per round, sentences in order: a sentence is asked no more once a
  source supports it.
- At most UNCITED_MAX_CALLS questions (one sentence against one source) an answer, 0: none. What was asked
  is stated in every output: "asked N of M uncited sentences against K sources (C calls, budget B)".
- A judge failure is the question's labelled row (not_found / judge_unavailable or check_failed, as in
  verify); with no recorded answer in an offline replay the row is `not_asked` / `not_recorded`, with no
  judge configured `not_asked` / `judge_unavailable` (and nothing more is asked): the rest of the report
  stands. A corrupt cache and a cancellation still raise.
- An uncited sentence's note says what its sources said: "supported by URL (cited by m1, m3), which it did
  not cite"; "not supported by any of the answer's K sources: URL: not_found; …"; what part was asked when
  the budget ran out; or why nothing was asked.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..batch.pool import run_pool
from ..cache.errors import CacheMiss
from ..config import MissingSetting
from ..context import RunContext
from ..judge.methods.sentences import content_words, stem, words
from ..verdict.review import Gate
from ..vocabulary import JUDGE_UNAVAILABLE, NOT_ASKED, NOT_RECORDED, SUPPORTED

BUDGET = "UNCITED_MAX_CALLS"
ASKED_BY = {NOT_RECORDED: "not recorded (an offline replay holds no answer for it)",
            JUDGE_UNAVAILABLE: "no judge is configured"}
"""Why a question has no answer, as a sentence's note says it."""


@dataclass(frozen=True)
class Source:
    """One of the answer's sources: a page its markers cite, as read for them."""
    url: str
    text: str
    cited_by: tuple[str, ...]           # the markers citing it


@dataclass(frozen=True)
class Asked:
    """One uncited sentence asked against one source: the judge's row, as verify gives it."""
    sentence: int
    source: str
    cited_by: list[str]
    label: str
    reason: str | None
    confidence: float | None
    evidence_quote: str | None
    method: str | None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass
class OwnSources:
    """What the uncited sentences' questions found (module rules); `rows` in the order they were asked."""
    uncited: int = 0
    sources: int = 0
    budget: int = 0
    rows: list[Asked] = field(default_factory=list)

    def of(self, sentence: int) -> list[Asked]:
        return [row for row in self.rows if row.sentence == sentence]

    def asked(self) -> int:
        """Uncited sentences a judge answered at least one question of."""
        return len({row.sentence for row in self.rows if row.label != NOT_ASKED})

    def line(self) -> str:
        """`asked N of M uncited sentences against K sources (C calls, budget B)`."""
        calls = _plural(len(self.rows), "call")
        return (f"asked {self.asked()} of {_plural(self.uncited, 'uncited sentence')} against "
                f"{_plural(self.sources, 'source')} ({calls}, budget {self.budget})")

    def found_in(self, sentence: int) -> list[str]:
        """The sources that support `sentence` (which it did not cite)."""
        return [row.source for row in self.of(sentence) if row.label == SUPPORTED]

    def note(self, sentence: int) -> str:
        """What the answer's sources said of one uncited sentence (module rules)."""
        rows = self.of(sentence)
        support = [f"{row.source} (cited by {', '.join(row.cited_by)})"
                   for row in rows if row.label == SUPPORTED]
        if support:
            return f"supported by {', '.join(support)}, which it did not cite"
        answered = [row for row in rows if row.label != NOT_ASKED]
        said = "; ".join(f"{row.source}: {row.label}" + (f" ({row.reason})" if row.reason else "")
                         for row in answered)
        unasked = sorted({ASKED_BY[row.reason] for row in rows if row.label == NOT_ASKED})
        if not answered:
            return "not asked: " + ("; ".join(unasked) or self._unasked())
        if len(answered) == self.sources:
            whole = f"any of the answer's {self.sources} sources" if self.sources > 1 else \
                "the answer's one source"
            return f"not supported by {whole}: {said}"
        return f"not supported by the {len(answered)} of the answer's {self.sources} sources asked: {said} " \
               f"(the rest not asked: {'; '.join(unasked) or self._unasked()})"

    def _unasked(self) -> str:
        if not self.sources:
            return "the answer cites no page that was read"
        return f"{BUDGET}={self.budget} asks none" if not self.budget else \
            f"the budget ({BUDGET}={self.budget}) was spent"

    def to_dict(self) -> dict:
        return {"line": self.line(), "asked": self.asked(), "uncited": self.uncited, "sources": self.sources,
                "calls": len(self.rows), "budget": self.budget, "rows": [asdict(row) for row in self.rows]}


def sources_of(markers, pages: dict[str, str]) -> list[Source]:
    """The answer's sources (module rules) from its markers and the pages read for them."""
    cited: dict[str, list[str]] = {}
    for m in markers:
        url = getattr(m.source, "url", None)
        if url in pages:
            cited.setdefault(url, []).append(m.id)
    return [Source(url, pages[url], tuple(ids)) for url, ids in cited.items()]


def _ranked(sentence: str, sources: list[Source], vocabularies: list[set[str]]) -> list[Source]:
    """`sources` by the share of the sentence's content words each holds, ties in the answer's order."""
    wanted = {stem(w) for w in content_words(sentence)}
    share = [len(wanted & vocabulary) for vocabulary in vocabularies]
    return [sources[i] for i in sorted(range(len(sources)), key=lambda i: -share[i])]


def _question(sentence: int, text: str, source: Source, ctx: RunContext, gate: Gate) -> Asked:
    from ..verify import trace_text
    try:
        row = trace_text(text, source.text, ctx, url=source.url, threshold=gate).row
    except CacheMiss:
        row = {"label": NOT_ASKED, "reason": NOT_RECORDED}
    except MissingSetting:
        row = {"label": NOT_ASKED, "reason": JUDGE_UNAVAILABLE}
    return Asked(sentence, source.url, list(source.cited_by), row["label"], row["reason"],
                 row.get("confidence"), row.get("evidence_quote"), row.get("method"))


def ask(uncited: list[tuple[int, str]], sources: list[Source], ctx: RunContext, gate: Gate) -> OwnSources:
    """The uncited sentences (number, text) asked against the answer's sources (module rules)."""
    budget = ctx.settings.uncited_max_calls
    out = OwnSources(len(uncited), len(sources), budget)
    if not (uncited and sources and budget):
        return out
    vocabularies = [{stem(w) for w in set(words(source.text))} for source in sources]
    order = {n: _ranked(text, sources, vocabularies) for n, text in uncited}
    for turn in range(len(sources)):
        todo = [(n, text) for n, text in uncited if not out.found_in(n)][:budget - len(out.rows)]
        if not todo or any(row.reason == JUDGE_UNAVAILABLE and row.label == NOT_ASKED for row in out.rows):
            break
        done = dict(run_pool(lambda item: _question(*item, order[item[0]][turn], ctx, gate), todo,
                             ctx.settings.batch_concurrency))
        out.rows += [done[item] for item in todo]
    return out
