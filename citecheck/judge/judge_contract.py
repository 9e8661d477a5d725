"""The judges' answer contracts: what an answer must be before anything uses or caches it.

Rules:
- A Choice answer (Jev's `choice` type) to a question with options O: `choice` is one of O;
  `probabilities` has exactly O as keys, each a finite number in [0, 1], summing to 1 within
  SUM_TOLERANCE; `choice` is the most probable option (within ARGMAX_TOLERANCE); `confidence`, when
  given, is a finite number in [0, 1]. The confidence used downstream is `choice_confidence` of the
  probabilities, whatever the server reported (one meaning for every Jev-compatible server).
- A JSON verdict is an object {label: supported|contradicted|not_found, evidence_quote: text or null,
  confidence: a finite number in [0, 1]} (a boolean is not a number; "" is no quote); a fenced
  ```json block is unwrapped first.
- A provider's response envelope holds the model's text where that provider puts it (`envelope`):
  OpenAI choices[0].message.content, Anthropic the forced tool call's input (or its text blocks),
  Ollama message.content. Anything else in its place is off contract.
- Text is text: a string holding a lone surrogate is off contract.
- Anything off contract raises OffContract, whose message says which field held what. Nothing here does
  I/O: the judge clients, the local judge and the judge research all validate with these functions.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..source.text import not_text
from ..vocabulary import JUDGE_LABELS

SUM_TOLERANCE = 0.05
"""How far the probabilities may sum from 1 (jevcompat's spec §5: rounded values are allowed that much)."""
ARGMAX_TOLERANCE = 0.005
"""How much more probable than the chosen option another may be (rounding of the shown values)."""


class OffContract(ValueError):
    """An answer that is not what its contract says; the message names the field and what it held."""


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def is_number(value: Any) -> bool:
    """A finite int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_text(value: Any) -> bool:
    """A str that encodes as UTF-8 (no lone surrogates)."""
    return isinstance(value, str) and not_text(value) is None


def _fraction(name: str, value: Any) -> float:
    if not is_number(value) or not 0 <= value <= 1:
        raise OffContract(f"{name} is {_shown(value)}, not a number from 0 to 1")
    return float(value)


# ---------------------------------------------------------------- Choice

def choice_confidence(probabilities: Iterable[float]) -> float:
    """Jev's reference confidence: (max p - 1/n) / (1 - 1/n) over the n options (1 when n <= 1)."""
    values = list(probabilities)
    n = len(values)
    if n <= 1:
        return 1.0
    return min(1.0, max(0.0, (max(values) - 1 / n) / (1 - 1 / n)))


def check_choice(answer: Any, options: Sequence[str]) -> dict:
    """A Choice answer {choice, probabilities[, confidence]} checked against the question's options ->
    {choice, confidence (the reference formula), probabilities (in option order)}; OffContract otherwise."""
    if not isinstance(answer, Mapping):
        raise OffContract(f"the answer is {_shown(answer)}, not an object")
    choice, probabilities = answer.get("choice"), answer.get("probabilities")
    if choice not in options:
        raise OffContract(f"choice {_shown(choice)} is not one of {', '.join(options)}")
    if not isinstance(probabilities, Mapping) or set(probabilities) != set(options):
        keys = sorted(map(str, probabilities)) if isinstance(probabilities, Mapping) else probabilities
        raise OffContract(f"probabilities must have exactly the keys {', '.join(options)}; "
                          f"got {_shown(keys)}")
    values = {option: _fraction(f"probability of {option!r}", probabilities[option]) for option in options}
    total = sum(values.values())
    if abs(total - 1) > SUM_TOLERANCE:
        raise OffContract(f"probabilities sum to {total:.4g}, not 1")
    if max(values.values()) - values[choice] > ARGMAX_TOLERANCE:
        raise OffContract(f"choice {choice!r} (p={values[choice]:.3g}) is not the most probable option")
    if answer.get("confidence") is not None:
        _fraction("confidence", answer["confidence"])
    return {"choice": choice, "confidence": choice_confidence(values.values()), "probabilities": values}


# ---------------------------------------------------------------- JSON verdict

def parsed_json(text: str, what: str = "") -> Any:
    """A model's text as JSON (a ```json fence dropped); OffContract "<what>not JSON" otherwise."""
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise OffContract(f"{what}not JSON") from None


def verdict(content: Any) -> dict:
    """The model's text -> {label, evidence_quote, confidence}; OffContract for anything else."""
    if content is None:
        raise OffContract("no content")
    if not is_text(content):
        raise OffContract(f"content is {_shown(content)}, not text")
    data = parsed_json(content)
    if not isinstance(data, dict):
        raise OffContract("not a JSON object")
    label, quote = data.get("label"), data.get("evidence_quote")
    if label not in JUDGE_LABELS:
        raise OffContract(f"label {_shown(label)}")
    if quote is not None and not is_text(quote):
        raise OffContract("evidence_quote is not a string or null")
    return {"label": label, "evidence_quote": quote or None,
            "confidence": _fraction("confidence", data.get("confidence"))}


# ---------------------------------------------------------------- provider envelopes

def _object(name: str, value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        raise OffContract(f"{name} is {_shown(value)}, not an object")
    return value


def _openai(body: Mapping) -> str:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise OffContract(f"choices is {_shown(choices)}, not a non-empty list")
    message = _object("choices[0].message", _object("choices[0]", choices[0]).get("message"))
    content = message.get("content")
    parts = isinstance(content, list) and all(isinstance(p, Mapping) and isinstance(p.get("text"), str)
                                              for p in content)
    if parts:                                    # content parts, as some compatible servers send them
        content = "".join(p["text"] for p in content)
    if content is None and isinstance(message.get("refusal"), str):
        raise OffContract(f"the model refused: {_shown(message['refusal'])}")
    if not isinstance(content, str):
        raise OffContract(f"choices[0].message.content is {_shown(content)}, not text")
    return content


def _anthropic(body: Mapping) -> str:
    blocks = body.get("content")
    if not isinstance(blocks, list):
        raise OffContract(f"content is {_shown(blocks)}, not a list of blocks")
    blocks = [block for block in blocks if isinstance(block, Mapping)]
    inputs = [block.get("input") for block in blocks if block.get("type") == "tool_use"]
    if inputs:
        return json.dumps(_object("the tool call's input", inputs[0]), ensure_ascii=False)
    texts = [block.get("text") for block in blocks if block.get("type") == "text"]
    if not texts or not all(isinstance(text, str) for text in texts):
        raise OffContract("content has no tool call and no text")
    return "".join(texts)


def _ollama(body: Mapping) -> str:
    content = _object("message", body.get("message")).get("content")
    if not isinstance(content, str):
        raise OffContract(f"message.content is {_shown(content)}, not text")
    return content


ENVELOPES = {"openai": _openai, "anthropic": _anthropic, "ollama": _ollama}


def envelope(provider: str, body: Any, model: str) -> tuple[str, dict | None, str]:
    """(the model's text, token usage or None, the model that answered) from a provider's response body."""
    body = _object("the response body", body)
    text = ENVELOPES[provider](body)
    if provider == "ollama":
        usage = {"input_tokens": body.get("prompt_eval_count"), "output_tokens": body.get("eval_count")}
    else:
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    answered_by = body.get("model") if isinstance(body.get("model"), str) and body.get("model") else model
    return text, usage, answered_by
