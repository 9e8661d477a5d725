"""Reading an answer out of one forward pass: option log-probabilities -> probabilities -> answer.

Rules:
- probabilities = softmax(logprob - offset) over the options only (offsets from `calibration`,
  subtracted first); choice = argmax, ties to the earlier option.
- confidence is Jev's reference formula (`judge_contract.choice_confidence`): (max p - 1/n) / (1 - 1/n)
  over the n options, so 0 is "no better than a uniform guess" and 1 is certainty.
- A score question is a choice among its level numbers "0" .. "n-1": score = sum(i * p_i); confidence =
  1 - (sum p_i |i - mode|) / (that spread under a uniform distribution), mode = the most probable level.
- Nothing is sampled, so the answer is deterministic. Non-finite scores are an error.
"""
from __future__ import annotations

import math

from ..judge_contract import choice_confidence


def log_softmax(logits) -> list[float]:
    top = max(logits)
    total = math.log(sum(math.exp(x - top) for x in logits))
    return [x - top - total for x in logits]


def readout(logprobs: dict[str, float], offsets: dict[str, float] | None = None) -> dict:
    """{choice, confidence, probabilities} from per-option log-probabilities (offsets subtracted first).

    The probabilities are renormalised over the options only; ties go to the earlier option.
    """
    if not logprobs:
        raise ValueError("readout needs at least one option")
    offsets = offsets or {}
    labels = list(logprobs)
    scores = [logprobs[label] - offsets.get(label, 0.0) for label in labels]
    if not all(math.isfinite(s) for s in scores):
        raise ValueError(f"non-finite option log-probabilities: {scores}")
    probabilities = dict(zip(labels, (math.exp(v) for v in log_softmax(scores))))
    choice = max(labels, key=lambda label: (probabilities[label], -labels.index(label)))
    return {"choice": choice, "confidence": choice_confidence(list(probabilities.values())),
            "probabilities": probabilities}


def score_confidence(probabilities: list[float]) -> float:
    """1 - spread around the most probable level / the spread of a uniform distribution (1 when n <= 1)."""
    n = len(probabilities)
    if n <= 1:
        return 1.0
    mode = max(range(n), key=lambda i: probabilities[i])
    spread = sum(p * abs(i - mode) for i, p in enumerate(probabilities))
    uniform = sum(abs(i - (n - 1) / 2) for i in range(n)) / n
    return max(0.0, 1.0 - spread / uniform)


def score_readout(logprobs: dict[str, float]) -> dict:
    """{score, confidence, probabilities} from the log-probabilities of the level numbers "0".."n-1"."""
    probabilities = readout(logprobs)["probabilities"]
    values = [probabilities[str(i)] for i in range(len(probabilities))]
    return {"score": sum(i * p for i, p in enumerate(values)), "confidence": score_confidence(values),
            "probabilities": probabilities}
