"""A capable judge: the oracle's decisions (standins/oracle.py), answered like a strong model.

Rules:
- Each answer puts 0.90-0.99 on the right option (chosen per question from a digest of what was asked,
  so a repeated question answers the same), the rest spread unevenly over the other options (2 : 1 for
  three options); JSON verdicts carry that probability as their confidence.
- `fixed(p)`: every answer puts exactly `p` on the right option and spreads the rest evenly: the
  issue's foundation case is `fixed(0.97)` on a "no" (yes and unknown 0.015 each).
- Every wire format the oracle speaks (Jev Choice, OpenAI with logprobs, Anthropic, Ollama), and
  GET /v1/models naming its own models, in one body both clients read (as the local judge answers): the
  OpenAI-compatible one under `data` (standins.judge.MODEL), the Jev one under `models` ("oracle-jev").
"""
from __future__ import annotations

import hashlib

from .judge import MODEL
from .oracle import oracle_standin

JEV_MODEL = "oracle-jev"
"""The name the oracle's Jev envelope reports (standins/oracle.py)."""


def models_body(openai: tuple[str, ...] = (MODEL,), jev: tuple[str, ...] = (JEV_MODEL,)) -> dict:
    """GET /v1/models: OpenAI's `data` and Jev's `models` in one body (each client ignores the other)."""
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "standin"}
                                       for name in openai],
            "models": [{"name": name, "description": "stand-in", "release_date": "2026-01-01"}
                       for name in jev]}


def capable(right: str, options: tuple[str, ...], key: str = "") -> dict[str, float]:
    """0.90-0.99 on `right` (by the question's digest), the rest 2 : 1 (or all) on the others."""
    step = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 10
    p = round(0.90 + 0.01 * step, 2)
    others = [o for o in options if o != right]
    weights = [2, 1][: len(others)] if len(others) <= 2 else [1] * len(others)
    rest = {o: round((1 - p) * w / sum(weights), 4) for o, w in zip(others, weights)}
    return {o: (p if o == right else rest[o]) for o in options}


def fixed(p: float):
    """A profile putting exactly `p` on the right option, the rest spread evenly."""
    def profile(right: str, options: tuple[str, ...], key: str = "") -> dict[str, float]:
        rest = round((1 - p) / (len(options) - 1), 6)
        return {o: (p if o == right else rest) for o in options}
    return profile


def capable_standin(stories: list[dict], profile=capable):
    """The oracle's stand-in answering with the capable profile (or another, e.g. `fixed(0.97)`), and its
    model list on GET /v1/models."""
    server = oracle_standin(stories, profile)
    answer = server.handler
    server.handler = lambda request: ((200, {}, models_body()) if request.method == "GET"
                                      and request.path.endswith("/models") else answer(request))
    return server
