"""The one-pass baselines as methods: one Choice question over the shown passages, or the JSON judge.

Rules:
- choice: one Choice question over the shown passages joined by blank lines (the same request the
  evaluation always sent), where `Settings.choice_via` sends it (`choice_relation`); supports ->
  supported, contradicts -> contradicted, says_nothing -> not_found.
  Choice names no sentence, so its evidence is the top passage it was shown (verbatim by construction);
  p_supported is P(supports), confidence the Choice confidence.
- json: `judges.json_judge` unchanged (one call, its own quote); p_supported is its confidence when it
  says supported, else 1 - confidence (0 when its answer was off contract).
"""
from __future__ import annotations

from ...cache import request_key
from ...vocabulary import JUDGE_LABELS, JUDGE_OUTPUT_INVALID, NOT_FOUND, RELATIONS
from .. import choice_json, judges
from .base import JudgeMethod, Steps, unusable, verdict

LABEL_OF = dict(zip(RELATIONS, JUDGE_LABELS))
"""Choice relation -> JSON label (supports -> supported, contradicts -> contradicted, says_nothing ->
not_found)."""


def choice_relation(claim: str, source: str, ctx) -> dict:
    """The one-pass Choice judge where `choice_via` sends it: `judges.choice_judge` (typesafe-sdk) or
    `choice_json.choice_judge` (a JSON provider) -> {relation, confidence, probabilities, model}."""
    if ctx.settings.choice_via == "typesafe":
        return judges.choice_judge(claim, source, ctx)
    return choice_json.choice_judge(claim, source, ctx)


def choice_key(claim: str, source: str, settings) -> str:
    """The cache key `choice_relation` reads and writes."""
    if settings.choice_via == "typesafe":
        return request_key("typesafe.system_one", settings.typesafe_model, judges.choice_request(claim, source))
    state = judges.choice_state(claim, source)
    return choice_json.request_keys(state, {"relation": judges.RELATION}, settings)["relation"]


class ChoiceMethod(JudgeMethod):
    name = "choice"

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        model = self.model(steps.ctx.settings)
        steps.reserve(1)
        steps.calls += 1
        source = "\n\n".join(passages)
        try:
            answer = choice_relation(claim, source, steps.ctx)
        except judges.JudgeOutputInvalid as exc:
            return unusable(f"{JUDGE_OUTPUT_INVALID}: {exc}", model, steps)
        key = choice_key(claim, source, steps.ctx.settings)
        steps.done.append({"step": 1, "asked": judges.CHOICE_INSTRUCTIONS, "answer": answer, "key": key})
        label = LABEL_OF[answer["relation"]]
        quote = passages[0] if label != NOT_FOUND and passages else None
        return {**verdict(label, quote, answer["confidence"], answer["probabilities"]["supports"],
                          answer["model"], steps), "relation": answer["relation"]}


class JsonMethod(JudgeMethod):
    name = "json"

    def model(self, settings) -> str:
        return settings.judge_model

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        steps.reserve(1)
        steps.calls += 1
        answer = judges.json_judge(claim, passages, steps.ctx)
        settings = steps.ctx.settings
        key = request_key(f"judge.json/{settings.judge_provider}", settings.judge_model,
                          judges.json_request(claim, passages))
        steps.done.append({"step": 1, "asked": "json verdict", "answer": answer, "key": key})
        if answer["reason"]:
            return {**answer, "p_supported": 0.0, "calls": steps.calls, "steps": steps.done}
        p = answer["confidence"] if answer["label"] == "supported" else 1 - answer["confidence"]
        return {**answer, "p_supported": p, "calls": steps.calls, "steps": steps.done}
