"""short premises, pooled (SummaC-style): the claim against each of its best sentences, pooled by max.

Rules (the lab's, issue 14; every number chosen on the tune split, see docs/DESIGN.md):
- Units: the sentences of the shown passages (`sentences.sentences`), ranked for the claim by BM25
  (`sentences.ranked`); the top SENTENCES are asked, one call each (budget reserved before the first).
- The step: one Choice question QUESTION (yes / no / unknown) over state {claim, text: the sentence}.
- Support: z = log P(yes) - log P(unknown) per sentence; the best sentence has the largest z and
  p_supported = P(yes) / (P(yes) + P(unknown)) there, to 4 decimals (as SUPPORT_AT was chosen over the
  recorded values). supported iff p_supported >= SUPPORT_AT; the
  evidence quote is that sentence (verbatim by construction; verify still guards it), confidence
  p_supported.
- Otherwise contradiction by coverage (fixed, not fitted): the shown passages hold at least COVERAGE of
  the claim's content words -> contradicted, quoting the sentence with the largest
  log P(no) - log P(unknown); else not_found with no quote. Confidence 1 - p_supported.
- No sentence of MIN_WORDS words to ask: not_found, confidence 0, no call.
"""
from __future__ import annotations

import math

from ...vocabulary import NOT_FOUND
from . import sentences as units
from .base import JudgeMethod, Steps, verdict

SENTENCES = 4
"""How many of the claim's best sentences are asked (the lab's run; its prefilter kept a whole gold
evidence set in the top 3/5/8 BM25 sentences for 0.53/0.59/0.67 of WiCE tune claims)."""
SUPPORT_AT = 0.3232
"""The p_supported from which the verdict is supported: chosen on the tune split (WiCE sample tune half and
RFC tune pairs) by `scripts/eval_judge.py --methods pooled` (DESIGN, "Judge methods")."""
COVERAGE = 0.5
"""Not supported, and at least this share of the claim's content words shown -> contradicted."""
INSTRUCTIONS = "Is the `claim` true according to the `text`?"
CRITERIA = {"yes": "The text says the claim is true.",
            "no": "The text says the claim is false.",
            "unknown": "The text does not say."}
NAME = "rel"


def question():
    from typesafe_sdk import Choice
    return Choice(instructions=INSTRUCTIONS, criteria=dict(CRITERIA))


def _log(p: float) -> float:
    return math.log(min(max(p, 1e-6), 1 - 1e-6))


def support_margin(probabilities: dict) -> float:
    return _log(probabilities["yes"]) - _log(probabilities["unknown"])


def contradiction_margin(probabilities: dict) -> float:
    return _log(probabilities["no"]) - _log(probabilities["unknown"])


def top_sentences(claim: str, passages: list[str], n: int = SENTENCES) -> list[str]:
    texts = units.sentences(passages)
    return [texts[i] for i in units.ranked(claim, texts)[:n]]


def p_supported(probabilities: dict) -> float:
    """P(yes) / (P(yes) + P(unknown)), to 4 decimals (0 when both are 0)."""
    yes, unknown = probabilities["yes"], probabilities["unknown"]
    return round(yes / (yes + unknown), 4) if yes + unknown > 0 else 0.0


def label_of(p_supported: float, coverage: float, support_at: float = SUPPORT_AT) -> str:
    """supported from `support_at`; otherwise contradicted when the claim is covered, else not_found."""
    if p_supported >= support_at:
        return "supported"
    return "contradicted" if coverage >= COVERAGE else NOT_FOUND


def pool(claim: str, passages: list[str], asked: list[tuple[str, dict]]) -> tuple:
    """(label, quote, confidence, p_supported) from (sentence, probabilities) pairs (module rules)."""
    text, best = max(asked, key=lambda pair: support_margin(pair[1]))
    p = p_supported(best)
    label = label_of(p, units.coverage(claim, " ".join(passages)))
    if label == "supported":
        return label, text, p, p
    against = max(asked, key=lambda pair: contradiction_margin(pair[1]))[0] if label == "contradicted" else None
    return label, against, 1 - p, p


class PooledMethod(JudgeMethod):
    name = "pooled"

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        model = self.model(steps.ctx.settings)
        top = top_sentences(claim, passages)
        if not top:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)
        steps.reserve(len(top))
        asked = []
        for text in top:
            answer = steps.choice(text, {"claim": claim, "text": text}, {NAME: question()}, model)
            if answer is not None:
                asked.append((text, answer[NAME]["probabilities"]))
        if steps.invalid:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)     # base.judge labels it
        label, quote, confidence, p = pool(claim, passages, asked)
        return {**verdict(label, quote, round(confidence, 4), round(p, 4), model, steps),
                "coverage": round(units.coverage(claim, " ".join(passages)), 4)}
