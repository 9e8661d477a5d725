"""chunks (LLM-AggreFact's protocol): the claim against each shown passage with one yes/no question, max P(yes).

Rules:
- Units: the shown passages, each one chunk, in shown order (a passage with no text is skipped); one
  call per chunk, the budget for all of them reserved before the first.
- The step: one Choice question QUESTION (yes / no) over state {claim, document: the chunk}.
- p_supported = the largest P(yes) over the chunks, to 4 decimals (the first chunk wins a tie).
  supported iff p_supported >= SUPPORT_AT, confidence p_supported; the evidence quote is the best
  chunk's sentence ranked first for the claim by BM25 (`sentences.ranked`), verbatim by construction
  (none when the chunk has no sentence of MIN_WORDS words); verify still guards it.
- Otherwise not_found, confidence 1 - p_supported, no quote. This protocol has no contradicted: a yes/no
  "supported?" question cannot tell a passage that says the opposite from one that says nothing.
- No chunk to ask: not_found, confidence 0, no call.
"""
from __future__ import annotations

from ...vocabulary import NOT_FOUND
from .. import judges
from . import sentences as units
from .base import JudgeMethod, Steps, verdict

SUPPORT_AT = 0.4157
"""The p_supported from which the verdict is supported: chosen on the tune split (WiCE sample tune half and RFC
tune pairs) by pooled's criterion, the mean of WiCE balanced accuracy and RFC 3-class accuracy (0025-chunks)."""
INSTRUCTIONS = "Is the `claim` supported by the `document`?"
CRITERIA = {"yes": "The document supports the claim.",
            "no": "The document does not support the claim."}
NAME = "supported"


def question() -> judges.ChoiceQuestion:
    return judges.ChoiceQuestion(INSTRUCTIONS, CRITERIA)


def label_of(p_supported: float, support_at: float = SUPPORT_AT) -> str:
    """supported from `support_at`, else not_found (never contradicted)."""
    return "supported" if p_supported >= support_at else NOT_FOUND


def best_sentence(claim: str, chunk: str) -> str | None:
    """The chunk's sentence ranked first for the claim by BM25 (None without a sentence)."""
    texts = units.sentences([chunk])
    return texts[units.ranked(claim, texts)[0]] if texts else None


def pool(claim: str, asked: list[tuple[str, dict]], support_at: float = SUPPORT_AT) -> tuple:
    """(label, quote, confidence, p_supported) from (chunk, probabilities) pairs (module rules)."""
    chunk, best = max(asked, key=lambda pair: pair[1]["yes"])
    p = round(best["yes"], 4)
    if label_of(p, support_at) == "supported":
        return "supported", best_sentence(claim, chunk), p, p
    return NOT_FOUND, None, round(1 - p, 4), p


class ChunksMethod(JudgeMethod):
    name = "chunks"

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        model = self.model(steps.ctx.settings)
        chunks = [p for p in passages if p.strip()]
        if not chunks:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)
        def state(chunk: str) -> dict:
            return judges.with_language({"claim": claim, "document": chunk}, claim, passages)
        asked = steps.ask_each(chunks, state, NAME, question(), model)
        if steps.invalid:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)     # base.judge labels it
        label, quote, confidence, p = pool(claim, asked)
        return verdict(label, quote, confidence, p, model, steps)
