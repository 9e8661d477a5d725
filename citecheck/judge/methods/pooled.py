"""short premises, pooled (SummaC-style): the claim against each of its best sentences, pooled by max.

Rules:
- Units: the sentences of the shown passages (`sentences.sentences`), ranked for the claim by BM25
  (`sentences.ranked`); the top SENTENCES are asked, one call each (budget reserved before the first).
- The step: one Choice question QUESTION (yes / no / unknown) over state {claim, text: the sentence}.
- Per sentence: p_supported = P(yes) / (P(yes) + P(unknown) + max(0, P(no) - P(yes))), to 4 decimals (as
  SUPPORT_AT was chosen over the recorded values): a no above the yes counts against support, so a
  confident no is never supported (no 0.97, yes and unknown 0.015 -> 0.015).
- `summarise` keeps what the rule reads (SIGNALS): the best sentence for support (largest p_supported,
  first on ties) with its P(yes) and P(no); the largest P(no) among the sentences where the judge's no beats
  both unknown and yes (0 when none: `no`), and that sentence; the largest P(no) of any sentence
  (`most_no`); and whether any answer was decided (some option >= DECIDED on some sentence).
- `label_of`: supported iff p_supported >= SUPPORT_AT and P(yes) > P(no) at the best sentence (quote: that
  sentence); else contradicted iff on some sentence P(no) > P(unknown) and P(no) > P(yes) (quote: the one
  with the largest such P(no)); else the tie-break for a weak judge: contradicted when NO answer was decided
  and the shown passages hold >= COVERAGE of the claim's content words (`sentences.coverage`), quoting the
  sentence with the largest P(no); else not_found, no quote. Coverage never overrides a decided judge.
- `confidence_of`: supported -> p_supported; contradicted by the judge -> its P(no) there; contradicted by
  the tie-break and not_found -> 1 - max(p_supported, most_no): how far the judge stayed from both definite
  answers (the tie-break's label rests on coverage, not on the judge, so it is as sure as a not_found).
- No sentence of MIN_WORDS words to ask: not_found, confidence 0, no call.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ...vocabulary import NOT_FOUND
from .. import judges
from . import sentences as units
from .base import JudgeMethod, Steps, verdict

SENTENCES = 4
"""How many of the claim's best sentences are asked (the lab's run; its prefilter kept a whole gold
evidence set in the top 3/5/8 BM25 sentences for 0.53/0.59/0.67 of WiCE tune claims)."""
SUPPORT_AT = 0.3232
"""The p_supported from which the verdict is supported: chosen on the tune split (WiCE sample tune half and
RFC tune pairs) by `scripts/eval_judge.py --methods pooled --replay pooled` (DESIGN, "Judge methods")."""
DECIDED = 0.9
"""An answer is decided when one option has at least this probability; coverage breaks no decided tie
(fixed, not fitted)."""
COVERAGE = 0.5
"""Undecided judge, not supported, and at least this share of the claim's content words shown ->
contradicted (the tie-break; fixed, not fitted)."""
INSTRUCTIONS = "Is the `claim` true according to the `text`?"
CRITERIA = {"yes": "The text says the claim is true.",
            "no": "The text says the claim is false.",
            "unknown": "The text does not say."}
NAME = "rel"


def question() -> judges.ChoiceQuestion:
    return judges.ChoiceQuestion(INSTRUCTIONS, CRITERIA)


def top_sentences(claim: str, passages: list[str], n: int = SENTENCES) -> list[str]:
    texts = units.sentences(passages)
    return [texts[i] for i in units.ranked(claim, texts)[:n]]


def p_supported(probabilities: dict) -> float:
    """P(yes) / (P(yes) + P(unknown) + max(0, P(no) - P(yes))), to 4 decimals (0 when that is 0/0)."""
    yes, no, unknown = (probabilities.get(o, 0.0) for o in ("yes", "no", "unknown"))
    below = yes + unknown + max(0.0, no - yes)
    return round(yes / below, 4) if below > 0 else 0.0


def says_no(probabilities: dict) -> bool:
    """The judge's no beats both unknown and yes."""
    no = probabilities.get("no", 0.0)
    return no > probabilities.get("unknown", 0.0) and no > probabilities.get("yes", 0.0)


@dataclass(frozen=True)
class Pooled:
    """What the rule reads of the answers (module rules); `best` and `against` index the asked units."""
    p_supported: float
    yes: float
    no_there: float
    no: float
    most_no: float
    decided: bool
    best: int
    against: int

    @classmethod
    def of(cls, summary) -> "Pooled":
        return summary if isinstance(summary, cls) else cls(**summary)

    def as_dict(self) -> dict:
        return asdict(self)


SIGNALS = tuple(Pooled.__dataclass_fields__)
"""The summary's fields, as recorded in a verdict's `signals` (evaluation re-labels from them)."""


def summarise(asked: list[dict]) -> Pooled:
    """The summary (module rules) of the asked units' probabilities, in asked order (at least one)."""
    scores = [p_supported(p) for p in asked]
    best = max(range(len(asked)), key=lambda i: scores[i])
    noes = [p.get("no", 0.0) for p in asked]
    saying = [i for i, p in enumerate(asked) if says_no(p)]
    against = max(saying or range(len(asked)), key=lambda i: noes[i])
    return Pooled(p_supported=scores[best], yes=asked[best].get("yes", 0.0), no_there=noes[best],
                  no=noes[against] if saying else 0.0, most_no=max(noes),
                  decided=any(v >= DECIDED for p in asked for v in p.values()), best=best, against=against)


def supported(summary, support_at: float = SUPPORT_AT) -> bool:
    s = Pooled.of(summary)
    return s.p_supported >= support_at and s.yes > s.no_there


def contradicted_by_judge(summary) -> bool:
    return Pooled.of(summary).no > 0


def label_of(summary, coverage: float, support_at: float = SUPPORT_AT) -> str:
    """supported / contradicted / not_found from a summary and the claim's coverage (module rules)."""
    s = Pooled.of(summary)
    if supported(s, support_at):
        return "supported"
    if contradicted_by_judge(s) or (not s.decided and coverage >= COVERAGE):
        return "contradicted"
    return NOT_FOUND


def confidence_of(summary, label: str) -> float:
    """The verdict's confidence for `label` (module rules), to 4 decimals."""
    s = Pooled.of(summary)
    if label == "supported":
        return s.p_supported
    if label == "contradicted" and contradicted_by_judge(s):
        return round(s.no, 4)
    return round(1 - max(s.p_supported, s.most_no), 4)


def coverage_of(claim: str, passages: list[str]) -> float:
    """The claim's coverage by the shown passages, to 4 decimals as recorded (and re-labelled from)."""
    return round(units.coverage(claim, " ".join(passages)), 4)


def pool(claim: str, passages: list[str], asked: list[tuple[str, dict]],
         support_at: float = SUPPORT_AT) -> tuple:
    """(label, quote, confidence, summary) from (sentence, probabilities) pairs (module rules)."""
    summary = summarise([probabilities for _, probabilities in asked])
    label = label_of(summary, coverage_of(claim, passages), support_at)
    quote = {"supported": asked[summary.best][0], "contradicted": asked[summary.against][0]}.get(label)
    return label, quote, confidence_of(summary, label), summary


class PooledMethod(JudgeMethod):
    name = "pooled"

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        model = self.model(steps.ctx.settings)
        top = top_sentences(claim, passages)
        if not top:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)
        asked = steps.ask_each(top, lambda text: judges.with_language({"claim": claim, "text": text}, claim,
                                                                      passages), NAME, question(), model)
        if steps.invalid:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)     # base.judge labels it
        label, quote, confidence, summary = pool(claim, passages, asked)
        return {**verdict(label, quote, confidence, summary.p_supported, model, steps),
                "coverage": coverage_of(claim, passages), "signals": summary.as_dict()}
