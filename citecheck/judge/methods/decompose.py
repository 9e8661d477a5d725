"""decomposition: split the claim into atomic facts, check each, supported only when every fact is.

Rules (the methods lab's prompt and schema; the verdict is the pooled method's rule, `pooled.label_of`,
applied per fact; SUPPORT_AT, DECIDED and COVERAGE are pooled's):
- Step 1: one JSON generation (JUDGE_PROVIDER, schema FACTS_SCHEMA: 1 to MAX_FACTS strings, a one-shot
  example) -> the claim's atomic facts, whitespace collapsed, repeats dropped. Not that shape: off contract.
- Then one Choice step per fact (budget reserved for all of them first): the pooled method's question
  over state {claim: the fact, text: its FACT_SENTENCES best sentences (BM25 for the fact) joined by
  newlines}; each fact gets `pooled.summarise` of its answer. A fact's quote is the sentence, among its
  own, sharing most of its words (verbatim by construction).
- The claim's p_supported is its weakest fact's (smallest p_supported, first on ties).
- `label_of` over the facts' summaries: supported only when every fact is supported by pooled's rule
  (quote: the weakest fact's); else contradicted when the judge says no on some fact (its no beats unknown
  and yes; quote: the fact with the largest such P(no)); else pooled's tie-break / not_found on the weakest
  fact not supported (`failed_fact`) with the claim's coverage of the shown passages.
- `confidence_of`: pooled's, on the fact that decided (the weakest when supported, the contradicting fact,
  else the failed fact).
"""
from __future__ import annotations

from ...vocabulary import NOT_FOUND
from .. import judges
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


def decide(facts: list, coverage: float, support_at: float = pooled.SUPPORT_AT) -> tuple[str, int]:
    """(label, index of the fact that decided it) from the facts' pooled summaries (module rules)."""
    facts = [pooled.Pooled.of(f) for f in facts]
    weakest = min(range(len(facts)), key=lambda i: facts[i].p_supported)
    if all(pooled.supported(f, support_at) for f in facts):
        return "supported", weakest
    saying = [i for i, f in enumerate(facts) if pooled.contradicted_by_judge(f)]
    if saying:
        return "contradicted", max(saying, key=lambda i: facts[i].no)
    failed = min((i for i, f in enumerate(facts) if not pooled.supported(f, support_at)),
                 key=lambda i: facts[i].p_supported)
    return pooled.label_of(facts[failed], coverage, support_at), failed


def label_of(facts: list, coverage: float, support_at: float = pooled.SUPPORT_AT) -> str:
    """The claim's label from its facts' summaries (module rules)."""
    return decide(facts, coverage, support_at)[0]


def confidence_of(facts: list, coverage: float, support_at: float = pooled.SUPPORT_AT) -> float:
    """The claim's confidence: pooled's, on the fact that decided the label (module rules)."""
    label, which = decide(facts, coverage, support_at)
    return pooled.confidence_of(facts[which], label)


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
        checked, summaries = [], []
        for fact in facts:
            best = [texts[i] for i in units.ranked(fact, texts)[:FACT_SENTENCES]]
            state = judges.with_language({"claim": fact, "text": "\n".join(best)}, claim, passages)
            answer = steps.choice(fact, state, {pooled.NAME: pooled.question()}, model)
            if answer is not None:
                summary = pooled.summarise([answer[pooled.NAME]["probabilities"]])
                checked.append({"fact": fact, "p_supported": summary.p_supported,
                                "quote": max(best, key=lambda t: units.coverage(fact, t))})
                summaries.append(summary.as_dict())
        if steps.invalid:
            return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps)
        coverage = pooled.coverage_of(claim, passages)
        label, which = decide(summaries, coverage)
        out = {"facts": checked, "failed_fact": None if label == "supported" else checked[which]["fact"],
               "coverage": coverage, "signals": summaries}
        quote = checked[which]["quote"] if label != NOT_FOUND else None
        p = min(f["p_supported"] for f in checked)
        confidence = pooled.confidence_of(summaries[which], label)
        return {**verdict(label, quote, confidence, p, model, steps), **out}
