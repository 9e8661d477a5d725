"""The chat messages the local judge builds from a Jev request: the input first, then the question.

Rules:
- A JSON-object state becomes one titled block per key, in the client's order; anything else is
  shown as is.
- A choice question lists its options with their criteria and ends "Answer with exactly one of: ...".
- A yes/no (noul) question is a choice between "yes" and "no", described by criteria.true / .false.
"""
from __future__ import annotations

import json
from typing import Any

CHOICE_SYSTEM = ("You are a careful annotator. Read the input, then answer the question with exactly one "
                 "of the listed option names and nothing else.")


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, indent=1)


def render_state(state: Any) -> str:
    """A JSON object becomes one titled block per key, in the client's order; anything else is shown as is."""
    if isinstance(state, dict):
        return "\n\n".join(f"## {key}\n{_as_text(value)}" for key, value in state.items())
    return _as_text(state)


def choice_messages(state: Any, instructions: Any, criteria: dict[str, Any], *,
                    system: str = CHOICE_SYSTEM) -> list[dict]:
    """System + user message for a choice question: the input first, then the question and its options."""
    lines = [render_state(state), "", f"Question: {_as_text(instructions) if instructions else 'Which option applies?'}",
             "Options:"]
    for label, description in criteria.items():
        lines.append(f"- {label}: {_as_text(description)}" if description is not None else f"- {label}")
    lines.append(f"Answer with exactly one of: {', '.join(criteria)}.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def noul_criteria(criteria: dict | None) -> dict[str, Any]:
    """A yes/no question is a choice between 'yes' and 'no' (described by criteria.true / .false)."""
    criteria = criteria or {}
    return {"yes": criteria.get("true"), "no": criteria.get("false")}
