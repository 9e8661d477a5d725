"""Reading a choice out of one forward pass: option log-probabilities -> probabilities -> choice.

Rules:
- probabilities = softmax(logprob - offset) over the options only (offsets from `calibration`,
  subtracted first); choice = argmax, ties to the earlier option; confidence = its probability.
- Nothing is sampled, so the answer is deterministic. Non-finite scores are an error.
"""
from __future__ import annotations

import math

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
    return {"choice": choice, "confidence": probabilities[choice], "probabilities": probabilities}
