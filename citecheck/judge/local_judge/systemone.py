"""The Jev System One wire contract of the local judge: validate a request, answer its questions.

Rules (jevcompat 0.1's spec, which `jevcompat test` checks):
- `model` may be the served model's name or the SDKs' alias `jev-latest`; anything else is 404.
- `state` is a string, an object or an array; `questions` a non-empty object whose keys (any non-empty
  string) are question ids. Unknown top-level fields are ignored.
- Question types: `choice` (1 to 255 options, descriptions text or null), `noul` (criteria absent, null
  or {true?, false?}) and `score` (a list of 2 to 10 levels, each text). Instructions and descriptions
  may be strings, objects or arrays.
- Each question is answered on its own from the same prompt whatever its id, its position or the other
  questions (`prompts.choice_messages`): choice = the readout over the option names, noul = P(yes) of a
  yes/no choice, score = the readout over the level numbers "0".."n-1" (`readout.score_readout`).
- A request that breaks these rules is a `Invalid` (422 with FastAPI's `detail: [{loc, msg, type}]`).
"""
from __future__ import annotations

from typing import Any, Callable

from .. import calibration as calibration_file
from . import prompts, readout

ALIAS = "jev-latest"
MAX_OPTIONS = 255
SCORE_LEVELS = (2, 10)
TEXT = (str, dict, list)


class Invalid(Exception):
    """A request that breaks the wire contract: one FastAPI-style error entry (loc below `body`)."""

    def __init__(self, loc: list, msg: str, kind: str = "value_error"):
        super().__init__(f"{'.'.join(map(str, loc)) or 'body'}: {msg}")
        self.loc, self.msg, self.kind = loc, msg, kind

    def detail(self) -> list[dict]:
        return [{"loc": ["body", *self.loc], "msg": self.msg, "type": self.kind}]


class UnknownModel(LookupError):
    """A `model` this server does not serve."""


def _text(value: Any, loc: list, *, nullable: bool) -> None:
    if not (isinstance(value, TEXT) or (nullable and value is None)):
        kinds = "a string, an object or an array" + (" or null" if nullable else "")
        raise Invalid(loc, f"must be {kinds}", "type_error")


def question(qid: str, raw: Any) -> tuple[str, Any, dict[str, Any]]:
    """(type, instructions, {option: description}) of one wire question; a score's options are "0".."n-1"."""
    loc = ["questions", qid]
    if not qid:
        raise Invalid(loc, "a question id must be a non-empty string", "string_too_short")
    if not isinstance(raw, dict):
        raise Invalid(loc, "a question is an object", "dict_type")
    kind, instructions, criteria = raw.get("type"), raw.get("instructions"), raw.get("criteria")
    if kind not in ("choice", "noul", "score"):
        raise Invalid([*loc, "type"], f"question type {kind!r} is not one of choice, noul, score",
                      "union_tag_invalid")
    _text(instructions, [*loc, "instructions"], nullable=True)
    if kind == "choice":
        if not isinstance(criteria, dict) or not 1 <= len(criteria) <= MAX_OPTIONS:
            raise Invalid([*loc, "criteria"], f"a choice needs an object of 1 to {MAX_OPTIONS} options")
        for name, description in criteria.items():
            if not name.strip():
                raise Invalid([*loc, "criteria"], "option names must not be blank")
            _text(description, [*loc, "criteria", name], nullable=True)
        return kind, instructions, dict(criteria)
    if kind == "noul":
        if criteria is not None and (not isinstance(criteria, dict) or set(criteria) - {"true", "false"}):
            raise Invalid([*loc, "criteria"], "must be null or an object with 'true' and/or 'false'")
        for side, description in (criteria or {}).items():
            _text(description, [*loc, "criteria", side], nullable=True)
        if instructions is None and not any((criteria or {}).values()):
            raise Invalid(loc, "a noul needs instructions or a described outcome")
        return kind, instructions, prompts.noul_criteria(criteria)
    low, high = SCORE_LEVELS
    if not isinstance(criteria, list) or not low <= len(criteria) <= high:
        raise Invalid([*loc, "criteria"], f"a score needs a list of {low} to {high} levels", "list_type")
    for index, level in enumerate(criteria):
        _text(level, [*loc, "criteria", index], nullable=False)
    return kind, instructions, {str(i): level for i, level in enumerate(criteria)}


def parse(body: Any, served: str) -> dict[str, tuple[str, Any, dict[str, Any]]]:
    """The request's questions, validated (Invalid / UnknownModel otherwise)."""
    if not isinstance(body, dict):
        raise Invalid([], "the request body must be a JSON object", "dict_type")
    model = body.get("model")
    if model is not None and model not in (served, ALIAS):
        raise UnknownModel(f"model {model!r} is not served here; this server serves {served!r} "
                           f"(or {ALIAS!r})")
    if "state" not in body:
        raise Invalid(["state"], "state is required", "missing")
    _text(body["state"], ["state"], nullable=False)
    if "assets" in body:
        raise Invalid(["assets"], "assets (images) are not supported by the local judge")
    questions = body.get("questions")
    if not isinstance(questions, dict) or not questions:
        raise Invalid(["questions"], "questions must be a non-empty object of named questions")
    return {qid: question(qid, raw) for qid, raw in questions.items()}


def answer(state: Any, kind: str, instructions: Any, criteria: dict[str, Any],
           logprobs_of: Callable[[list[dict], list[str]], tuple[dict[str, float], int]],
           calibration: dict[str, dict[str, float]]) -> tuple[dict, int]:
    """One question's wire answer and its prompt tokens; `logprobs_of(messages, options)` is the model."""
    logprobs, tokens = logprobs_of(prompts.choice_messages(state, instructions, criteria), list(criteria))
    if kind == "noul":
        return {"type": "noul", "noul": readout.readout(logprobs)["probabilities"]["yes"]}, tokens
    if kind == "score":
        out = readout.score_readout(logprobs)
        return {"type": "score", "score": out["score"], "confidence": out["confidence"],
                "legend": dict(criteria), "probabilities": out["probabilities"]}, tokens
    offsets = calibration.get(calibration_file.question_key(instructions, criteria))
    return {"type": "choice", **readout.readout(logprobs, offsets)}, tokens
