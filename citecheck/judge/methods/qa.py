"""question-answer consistency (QAFactEval-style): ask the claim's central fact of the source, compare answers.

Rules (the methods lab's prompts; no number fitted):
- Step 1: one JSON generation (QUESTION_SCHEMA, a one-shot example) turns the claim's central fact into one
  short question and the claim's own answer to it (a few words of the claim). Not that shape: off contract.
- Step 2: one JSON generation answers that question from the text alone: the ANSWER_SENTENCES sentences of
  the shown passages BM25 ranks best for the question, joined by newlines; `null` = not stated.
- Not stated -> not_found, confidence 0, no third call.
- Step 3: one Choice question over {question, answer_1: the claim's, answer_2: the source's}: same / different.
  p_supported = P(same). `label_of`: supported iff P(same) >= SAME_AT (0.5: the two-option midpoint, not
  fitted); contradicted ("stated, and different") only on the judge's different: P(different) >= SAME_AT;
  else not_found (unreachable while the Choice contract makes the two sum to 1; it keeps the rule total).
  `confidence_of`: supported -> P(same), contradicted -> P(different), not_found -> 1 - max of the two.
  The recorded `signals` are {same, different}, so evaluation re-labels with this same rule.
- The evidence quote is the asked sentence holding the source's answer (verbatim by construction); when the
  answer is in none of them it is the answer itself, and the guard decides whether that is on the page.
"""
from __future__ import annotations

from ... import matching
from ...vocabulary import NOT_FOUND
from .. import judges
from ..judge_contract import OffContract
from . import sentences as units
from .base import JudgeMethod, Steps, verdict

ANSWER_SENTENCES = 3
SAME_AT = 0.5
QUESTION_SCHEMA = {"type": "object",
                   "properties": {"question": {"type": "string", "maxLength": 150},
                                  "answer": {"type": "string", "maxLength": 80}},
                   "required": ["question", "answer"], "additionalProperties": False}
QUESTION_SYSTEM = ("Turn the central fact of the claim into one short question, and give the claim's answer to it: "
                   'a few words copied from the claim. Reply with JSON only: {"question": ..., "answer": ...}.')
QUESTION_EXAMPLE = [
    {"role": "user",
     "content": "Claim: Marie Curie, who was born in Warsaw, won the Nobel Prize in Physics in 1903."},
    {"role": "assistant",
     "content": '{"question": "Which prize did Marie Curie win in 1903?", "answer": "the Nobel Prize in Physics"}'},
]
ANSWER_SCHEMA = {"type": "object",
                 "properties": {"answer": {"anyOf": [{"type": "string", "maxLength": 80}, {"type": "null"}]}},
                 "required": ["answer"], "additionalProperties": False}
ANSWER_SYSTEM = ("Answer the question from the text alone, in a few words copied from the text. If the text does "
                 'not give the answer, the answer is null. Reply with JSON only: {"answer": ...}.')
SAME_INSTRUCTIONS = "Do `answer_1` and `answer_2` give the same answer to the `question`?"
SAME_CRITERIA = {"same": "Both answers say the same thing.",
                 "different": "The answers disagree."}
NAME = "same"


def question_messages(claim: str, stated: str = "") -> list[dict]:
    return [{"role": "system", "content": QUESTION_SYSTEM}, *QUESTION_EXAMPLE,
            {"role": "user", "content": f"{stated}Claim: {claim}"}]


def answer_messages(question: str, text: str, stated: str = "") -> list[dict]:
    return [{"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"{stated}Text:\n{text}\n\nQuestion: {question}"}]


def _words(value) -> str | None:
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else None


def check_question(data) -> dict:
    """{question, answer} from the parsed reply (module rules); OffContract when it is not that shape."""
    question, answer = (_words(data.get(k)) if isinstance(data, dict) else None for k in ("question", "answer"))
    if question is None or answer is None:
        raise OffContract("question: not a question and an answer, both non-empty strings")
    return {"question": question, "answer": answer}


def check_answer(data) -> str | None:
    """The source's answer, None when not stated; OffContract when the reply is not {"answer": str | null}."""
    if not isinstance(data, dict) or "answer" not in data or not (data["answer"] is None or isinstance(data["answer"], str)):
        raise OffContract('answer: not {"answer": a string or null}')
    return _words(data["answer"])


def same_question() -> judges.ChoiceQuestion:
    return judges.ChoiceQuestion(SAME_INSTRUCTIONS, SAME_CRITERIA)


def evidence(answer: str, asked: list[str]) -> str:
    """The asked sentence holding `answer` (normalised), else the answer itself."""
    needle = matching.normalise(answer)
    return next((s for s in asked if needle in matching.normalise(s)), answer)


def label_of(signals: dict) -> str:
    """supported / contradicted / not_found from {same, different} (module rules)."""
    if signals["same"] >= SAME_AT:
        return "supported"
    return "contradicted" if signals["different"] >= SAME_AT else NOT_FOUND


def confidence_of(signals: dict, label: str) -> float:
    """The verdict's confidence for `label` (module rules), to 4 decimals."""
    if label == "supported":
        return round(signals["same"], 4)
    if label == "contradicted":
        return round(signals["different"], 4)
    return round(1 - max(signals["same"], signals["different"]), 4)


class QaMethod(JudgeMethod):
    name = "qa"

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        model = self.model(steps.ctx.settings)
        texts = units.sentences(passages)
        if not texts:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)
        steps.reserve(3)
        stated = judges.language_prefix(claim, passages)     # "" in English: its prompts unchanged
        asked = steps.generate("question", question_messages(claim, stated), QUESTION_SCHEMA, check_question)
        if asked is None:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)     # base.judge labels it
        shown = [texts[i] for i in units.ranked(asked["question"], texts)[:ANSWER_SENTENCES]]
        answer = steps.generate("answer", answer_messages(asked["question"], "\n".join(shown), stated),
                                ANSWER_SCHEMA, check_answer)
        found = {"question": asked["question"], "claim_answer": asked["answer"], "source_answer": answer}
        if steps.invalid or answer is None:
            return {**verdict(NOT_FOUND, None, 0.0, 0.0, model, steps), **found}
        same = steps.choice("same", {"question": asked["question"], "answer_1": asked["answer"], "answer_2": answer},
                            {NAME: same_question()}, model)
        if same is None:
            return {**verdict(NOT_FOUND, None, 0.0, 0.0, model, steps), **found}
        probabilities = same[NAME]["probabilities"]
        signals = {option: round(probabilities.get(option, 0.0), 4) for option in SAME_CRITERIA}
        label = label_of(signals)
        quote = evidence(answer, shown) if label != NOT_FOUND else None
        return {**verdict(label, quote, confidence_of(signals, label), signals["same"], model, steps),
                **found, "signals": signals}
