"""A Jev-compatible stand-in (POST /v1/systemone, GET /v1/models naming its model) for the unmodified
typesafe-sdk.

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
                model: str = "standin-jev", answers: dict | None = None, script=None) -> StandIn:
    """Stand-in answering `probabilities` for each choice question (or `status` with an error body, or the
    literal `answers` object). `script(body)`, when given, scripts each call: it returns the probabilities
    (a dict of floats) or a literal `answers` object (a dict holding "answers") for that request."""
    literal = answers

    def handle(request: Recorded):
        if request.method == "GET" and request.path == "/v1/models":
            listed = {"name": model, "description": "stand-in", "release_date": "2026-01-01"}
            return 200, {}, {"models": [listed]}
        if delay:
            time.sleep(delay)
        if status != 200:
            return status, {}, {"error": {"message": f"stand-in failure {status}"}}
        body = request.json()
        scripted = script(body) if script else None
        if isinstance(scripted, dict) and "answers" in scripted:
            usage = {"input_tokens": 42, "output_tokens": 1}
            return 200, {}, {"model": model, "usage": usage, "answers": scripted["answers"]}
        probs_of_call = scripted or probabilities
        if literal is not None:
            usage = {"input_tokens": 42, "output_tokens": 1}
            return 200, {}, {"model": model, "usage": usage, "answers": literal}
        answers = {}
        for name, question in body["questions"].items():
            labels = list(question["criteria"])
            probs = probs_of_call or {label: 1 / len(labels) for label in labels}
            answers[name] = choice_answer({label: probs.get(label, 0.0) for label in labels})
        return 200, {}, {"model": model, "usage": {"input_tokens": 42, "output_tokens": 1}, "answers": answers}
    return StandIn(handle)
