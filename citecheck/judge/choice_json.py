"""A Choice question answered by a JSON provider (openai, anthropic, ollama): the same options, the same
answer shape as `judges.choice_step`, so every method runs on whichever judge is configured.

Rules:
- One call per question (a step with several questions makes several calls), to JUDGE_PROVIDER with
  JUDGE_MODEL, cached as `judge.choice/<provider>` (`function`) over {messages, schema} (`request`).
- Messages: system = the question's instructions, one line "- <option>: <criterion>" per option, and
  REPLY; user = `json.dumps(state, ensure_ascii=False, indent=1)`. Schema "choice": {answer: one of the
  options (criteria order), confidence: 0-1}, both required, nothing else.
- Probabilities: OpenAI is asked for `logprobs` (top 5); at the token where the answer's value starts,
  each option gets the summed probability of the top tokens that are a non-empty prefix of it (quotes and
  spaces stripped), renormalised over the options (`from_logprobs`). Where logprobs are absent or name no
  option (Anthropic, Ollama, a server that ignores the flag): the chosen option gets max(confidence, 1/n),
  the others share the rest equally (`from_confidence`). `readout` records which ("logprobs" |
  "confidence"). The choice is the most probable option (the answer itself unless logprobs disagree).
- The answer is checked by the Choice contract (`judge_contract.check_choice`) before it is cached; off
  contract raises OffContract (as `judges.choice_step`), and `choice_judge` turns that into
  JudgeOutputInvalid (as `judges.choice_judge`).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from ..cache import request_key
from ..config import Settings
from ..context import RunContext
from . import judge_contract as contract
from . import judges
from .judge_contract import OffContract

REPLY = 'Reply with JSON only: {"answer": <one option>, "confidence": <0-1>}'
LOGPROBS = {"logprobs": True, "top_logprobs": 5}
"""What an OpenAI request adds: the answer token's five most likely alternatives."""
READOUTS = ("logprobs", "confidence")
_VALUE_START = re.compile(r'"answer"\s*:\s*"')


def function(provider: str) -> str:
    """The cache function of a Choice question asked of `provider`."""
    return f"judge.choice/{provider}"


def messages(state: dict, question) -> list[dict]:
    """The system prompt (instructions, one line per option, REPLY) and the state as indented JSON."""
    options = "\n".join(f"- {option}: {criterion}" for option, criterion in question.criteria.items())
    return [{"role": "system", "content": f"{question.instructions}\n{options}\n{REPLY}"},
            {"role": "user", "content": json.dumps(state, ensure_ascii=False, indent=1)}]


def schema(options) -> dict:
    """The answer's JSON schema: one of `options` (in criteria order) and a confidence in [0, 1]."""
    return {"type": "object",
            "properties": {"answer": {"type": "string", "enum": list(options)},
                           "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
            "required": ["answer", "confidence"], "additionalProperties": False}


def request(state: dict, question) -> dict:
    """What one question's cache key is made of (with `function(JUDGE_PROVIDER)` and JUDGE_MODEL)."""
    return {"messages": messages(state, question), "schema": schema(tuple(question.criteria))}


def request_keys(state: dict, questions: dict, settings: Settings) -> dict[str, str]:
    """{question name: the cache key its call is stored under}."""
    return {name: request_key(function(settings.judge_provider), settings.judge_model, request(state, q))
            for name, q in questions.items()}


def from_confidence(answer: str, confidence: float, options) -> dict[str, float]:
    """The chosen option max(confidence, 1/n), the others the rest in equal shares."""
    n = len(options)
    top = max(confidence, 1 / n)
    rest = (1 - top) / (n - 1) if n > 1 else 0.0
    return {option: (top if option == answer else rest) for option in options}


def from_logprobs(tokens: Any, options) -> dict[str, float] | None:
    """Option probabilities from OpenAI `logprobs.content` at the token where the answer's value starts
    (module rules); None when there is no such token or its alternatives name no option."""
    if not isinstance(tokens, list) or not all(isinstance(t, dict) and isinstance(t.get("token"), str)
                                               for t in tokens):
        return None
    text = "".join(t["token"] for t in tokens)
    found = _VALUE_START.search(text)
    if not found:
        return None
    at, end = found.end(), 0
    for token in tokens:
        end += len(token["token"])
        if end > at:
            break
    else:
        return None
    mass = dict.fromkeys(options, 0.0)
    for alt in token.get("top_logprobs") or []:
        if not isinstance(alt, dict) or not isinstance(alt.get("token"), str) or not contract.is_number(alt.get("logprob")):
            continue
        stem = alt["token"].strip().strip("\"'").strip()
        for option in options:
            if stem and option.startswith(stem):
                mass[option] += math.exp(alt["logprob"])
    total = sum(mass.values())
    if not total > 0:
        return None
    return {option: p / total for option, p in mass.items()}


def read_answer(content: str, logprobs: Any, options) -> dict:
    """The provider's text (+ OpenAI logprobs) -> {choice, confidence, probabilities, readout}; OffContract
    when the text is not {"answer": one of options, "confidence": 0-1}."""
    data = contract.parsed_json(content, "choice: ")
    if not isinstance(data, dict) or data.get("answer") not in options:
        shown = data.get("answer") if isinstance(data, dict) else data
        raise OffContract(f"choice: answer {shown!r:.60} is not one of {', '.join(options)}")
    confidence = data.get("confidence")
    if not contract.is_number(confidence) or not 0 <= confidence <= 1:
        raise OffContract(f"choice: confidence {confidence!r:.60} is not a number from 0 to 1")
    probabilities = from_logprobs(logprobs, options)
    readout = "logprobs" if probabilities else "confidence"
    probabilities = probabilities or from_confidence(data["answer"], float(confidence), options)
    best = max(probabilities.values())
    choice = data["answer"] if best - probabilities[data["answer"]] <= contract.ARGMAX_TOLERANCE else \
        max(options, key=probabilities.get)
    return {"choice": choice, "confidence": float(confidence), "probabilities": probabilities, "readout": readout}


def _logprobs(provider: str, body: Any) -> Any:
    if provider != "openai" or not isinstance(body, dict):
        return None
    try:
        return body["choices"][0]["logprobs"]["content"]
    except (KeyError, IndexError, TypeError):
        return None


def ask(state: dict, question, ctx: RunContext, answered: list | None = None) -> dict:
    """One Choice question over `state` to JUDGE_PROVIDER -> {type, choice, confidence (the reference
    formula), probabilities, readout}; OffContract when off contract (nothing cached). `answered` gets the
    model that answered (`judges._ask`)."""
    settings = ctx.settings
    provider, model = settings.judge_provider, settings.judge_model
    options = tuple(question.criteria)
    asked = request(state, question)

    def compute() -> tuple[dict, dict | None, str]:
        extra = LOGPROBS if provider == "openai" else None
        body = judges.PROVIDERS[provider](model, asked["messages"], ctx, asked["schema"], "choice", extra)
        content, usage, answered_by = contract.envelope(provider, body, model)
        return read_answer(content, _logprobs(provider, body), options), usage, answered_by

    def check(answer: Any) -> dict:
        checked = contract.check_choice(answer, options)
        if answer.get("readout") not in READOUTS:
            raise OffContract(f"readout {answer.get('readout')!r:.40} is not one of {', '.join(READOUTS)}")
        return {"type": "choice", **checked, "readout": answer["readout"]}

    return judges._ask(ctx, function(provider), model, asked, compute, judges.LIVE_HINT[provider], check,
                       answered)


def choice_step(state: dict, questions: dict, ctx: RunContext, answered: list | None = None) -> dict:
    """A judge method's step over a JSON provider: `judges.choice_step`'s shape, {name: {type, choice,
    confidence, probabilities, readout}}, one call per question. Off contract raises OffContract."""
    return {name: ask(state, question, ctx, answered) for name, question in questions.items()}


def choice_judge(claim: str, source: str, ctx: RunContext) -> dict:
    """`judges.choice_judge` over a JSON provider: {relation, confidence, probabilities, model, readout}."""
    answered: list[str] = []
    try:
        answer = ask(judges.choice_state(claim, source), judges.RELATION, ctx, answered)
    except OffContract as exc:
        raise judges.JudgeOutputInvalid(f"Choice question to the {ctx.settings.judge_provider} judge answered "
                                        f"off its contract: {exc} (not cached)") from None
    return {"relation": answer["choice"], "confidence": answer["confidence"],
            "probabilities": answer["probabilities"], "model": answered[-1],
            "readout": answer["readout"]}
