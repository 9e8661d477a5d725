"""A Jev-compatible stand-in (POST /v1/systemone) for the unmodified typesafe-sdk.

It answers every choice question with a fixed distribution (its confidence the top probability, as
the local judge reported it before the reference formula), answers a literal `answers` object (an
off-contract answer), or fails the way it is told to.
"""
from __future__ import annotations

import time

from .http import Recorded, StandIn


def choice_answer(probabilities: dict[str, float]) -> dict:
    best = max(probabilities, key=probabilities.get)
    return {"type": "choice", "choice": best, "confidence": probabilities[best], "probabilities": probabilities}


def jev_standin(probabilities: dict[str, float] | None = None, *, status: int = 200, delay: float = 0.0,
                model: str = "standin-jev", answers: dict | None = None) -> StandIn:
    """Stand-in answering `probabilities` for each choice question (or `status` with an error body, or the
    literal `answers` object)."""
    literal = answers

    def handle(request: Recorded):
        if delay:
            time.sleep(delay)
        if status != 200:
            return status, {}, {"error": {"message": f"stand-in failure {status}"}}
        body = request.json()
        if literal is not None:
            usage = {"input_tokens": 42, "output_tokens": 1}
            return 200, {}, {"model": model, "usage": usage, "answers": literal}
        answers = {}
        for name, question in body["questions"].items():
            labels = list(question["criteria"])
            probs = probabilities or {label: 1 / len(labels) for label in labels}
            answers[name] = choice_answer({label: probs.get(label, 0.0) for label in labels})
        return 200, {}, {"model": model, "usage": {"input_tokens": 42, "output_tokens": 1}, "answers": answers}
    return StandIn(handle)
