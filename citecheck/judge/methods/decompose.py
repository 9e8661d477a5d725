"""decomposition: split the claim into atomic facts, check each, supported only when every fact is.

Rules (the issue-14 lab's prompt and schema; SUPPORT_AT and COVERAGE are the pooled method's):
- Step 1: one JSON generation (JUDGE_PROVIDER, schema FACTS_SCHEMA: 1 to MAX_FACTS strings, a one-shot
  example) -> the claim's atomic facts, whitespace collapsed, repeats dropped. Not that shape: off contract.
- Then one Choice step per fact (budget reserved for all of them first): the pooled method's question
  over state {claim: the fact, text: its FACT_SENTENCES best sentences (BM25 for the fact) joined by
  newlines}; a fact's p_supported = P(yes) / (P(yes) + P(unknown)).
- The claim's p_supported is its weakest fact's; supported iff that is >= pooled.SUPPORT_AT. The quote is
  the sentence, among the weakest fact's, sharing most of its words (verbatim by construction). Otherwise
  the weakest fact is the failed one (`failed_fact`), and the claim is contradicted when the shown passages
  hold >= COVERAGE of its content words (quoting that sentence), else not_found.
"""
from __future__ import annotations

from ...vocabulary import NOT_FOUND
from ..judge_contract import OffContract
from . import pooled
from . import sentences as units
from .base import JudgeMethod, Steps, verdict

MAX_FACTS = 4
FACT_SENTENCES = 3
FACTS_SCHEMA = {"type": "object",
                "properties": {"facts": {"type": "array", "items": {"type": "string", "maxLength": 200},
                                         "minItems": 1, "maxItems": MAX_FACTS}},
                "required": ["facts"], "additionalProperties": False}
FACTS_SYSTEM = ("Split the claim into its atomic facts: each fact is one short sentence that states exactly "
                "one piece of information from the claim. Repeat names instead of using pronouns. Do not add "
                "anything the claim does not say, and do not leave anything out. Use at most 4 facts. "
                'Reply with JSON only: {"facts": [...]}.')
FACTS_EXAMPLE = [
    {"role": "user",
     "content": "Claim: Marie Curie, who was born in Warsaw, won the Nobel Prize in Physics in 1903."},
    {"role": "assistant",
     "content": '{"facts": ["Marie Curie was born in Warsaw.", '
                '"Marie Curie won the Nobel Prize in Physics.", '
                '"Marie Curie won the Nobel Prize in Physics in 1903."]}'},
]


def facts_messages(claim: str) -> list[dict]:
    return [{"role": "system", "content": FACTS_SYSTEM}, *FACTS_EXAMPLE,
            {"role": "user", "content": f"Claim: {claim}"}]


def check_facts(data) -> list[str]:
    """The parsed answer -> its facts (module rules); OffContract when it is not that shape."""
    facts = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(facts, list) or not facts or not all(isinstance(f, str) and f.strip() for f in facts):
        raise OffContract("facts: not a non-empty list of strings")
    if len(facts) > MAX_FACTS:
        raise OffContract(f"facts: {len(facts)} facts, at most {MAX_FACTS}")
    return list(dict.fromkeys(" ".join(f.split()) for f in facts))


class DecomposeMethod(JudgeMethod):
    name = "decompose"

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        settings = steps.ctx.settings
        model = self.model(settings)
        facts = steps.generate("facts", facts_messages(claim), FACTS_SCHEMA, check_facts)
        texts = units.sentences(passages)
        if facts is None or not texts:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)
        steps.reserve(len(facts))
        checked = []
        for fact in facts:
            best = [texts[i] for i in units.ranked(fact, texts)[:FACT_SENTENCES]]
            answer = steps.choice(fact, {"claim": fact, "text": "\n".join(best)}, {pooled.NAME: pooled.question()},
                                  model)
            if answer is not None:
                quote = max(best, key=lambda t: units.coverage(fact, t))
                checked.append({"fact": fact, "p_supported": pooled.p_supported(answer[pooled.NAME]["probabilities"]),
                                "quote": quote})
        if steps.invalid:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)
        weakest = min(checked, key=lambda f: f["p_supported"])
        p = weakest["p_supported"]
        label = pooled.label_of(p, units.coverage(claim, " ".join(passages)))
        out = {"facts": checked, "failed_fact": None if label == "supported" else weakest["fact"]}
        if label == "supported":
            return {**verdict(label, weakest["quote"], p, p, model, steps), **out}
        quote = weakest["quote"] if label == "contradicted" else None
        return {**verdict(label, quote, round(1 - p, 4), p, model, steps), **out}
