"""Judges: ask a model how a claim relates to source text. Every call goes through the cache.

Rules:
- Choice judge: one typesafe-sdk `Choice` question (supports / contradicts / says_nothing) over
  state {claim, source}; its confidence is the answer's confidence. The cache key includes the local
  judge's calibration offsets for the question, so refitting them re-asks instead of replaying.
- JSON judge: the strict contract {label: supported|contradicted|not_found, evidence_quote: verbatim
  text or null, confidence: 0-1}, from openai (chat completions + JSON schema), anthropic or ollama,
  all running the same prompt. Output that is not that JSON becomes not_found with a reason.
- The judge interprets; it does not decide. The guard and review stages decide what stands.
- A judge that cannot be reached raises JudgeUnavailable naming the endpoint and the variable to set.
"""
from __future__ import annotations

import json
from typing import Any

import httpx

from . import calibration
from .config import DEFAULTS, Settings
from .context import RunContext
from .vocabulary import JUDGE_LABELS, RELATIONS

CHOICE_INSTRUCTIONS = "How does the `source` text relate to the `claim`?"
CHOICE_CRITERIA = dict(zip(RELATIONS, (
    "The source states what the claim says.",
    "The source states something that makes the claim false.",
    "The source does not address what the claim says.",
)))

JSON_SCHEMA = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": list(JUDGE_LABELS)},
        "evidence_quote": {"type": ["string", "null"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["label", "evidence_quote", "confidence"],
    "additionalProperties": False,
}
JSON_SYSTEM = (
    "You check whether cited web passages support a claim. Reply with JSON only: "
    '{"label": ..., "evidence_quote": ..., "confidence": ...}. '
    "label is \"supported\" if the passages state the claim, \"contradicted\" if they state something "
    "that makes the claim false, and \"not_found\" otherwise. evidence_quote is the one sentence, copied "
    "exactly from the passages, that decides the label, or null when there is none. confidence is a "
    "number from 0 to 1."
)

LIVE_HINT = {
    "typesafe": "set TYPESAFE_API_KEY, or point TYPESAFE_ENDPOINT at a Jev-compatible server "
                "(start the local one with `python -m citecheck judge-server`)",
    "openai": "set OPENAI_API_KEY, or point OPENAI_BASE_URL at an OpenAI-compatible server "
              "(start the local one with `python -m citecheck judge-server`)",
    "anthropic": "set ANTHROPIC_API_KEY",
    "ollama": "point OLLAMA_HOST at a running Ollama server",
}


class JudgeUnavailable(RuntimeError):
    """The judge could not answer (unreachable, timeout, 5xx, 401): names the endpoint, never a key."""


# ---------------------------------------------------------------- Choice judge (typesafe-sdk)

def choice_question():
    """The one typed question every Choice call asks."""
    from typesafe_sdk import Choice
    return Choice(instructions=CHOICE_INSTRUCTIONS, criteria=dict(CHOICE_CRITERIA))


def local_calibration() -> dict | None:
    """The local judge's offsets for this question (data/judge_calibration.json), or None.

    They are part of every Choice cache key: refitting them changes the local judge's answers, so
    it must miss the cache instead of replaying answers read out with the old offsets.
    """
    return calibration.load_calibration().get(calibration.question_key(CHOICE_INSTRUCTIONS, CHOICE_CRITERIA))


def choice_state(claim: str, source: str) -> dict:
    return {"claim": claim, "source": source}


def _typesafe_client(settings: Settings):
    from typesafe_sdk import RetryPolicy, TypeSafeClient
    endpoint = settings.typesafe_endpoint
    if endpoint:
        key = settings.secrets.get("TYPESAFE_API_KEY") or "local"   # a local server needs no key
    else:
        key = settings.secrets.require("TYPESAFE_API_KEY", "or set TYPESAFE_ENDPOINT to a Jev-compatible server")
    return TypeSafeClient(api_key=key, base_url=endpoint or None, model=settings.typesafe_model,
                          timeout=settings.judge_timeout, compression=False if endpoint else None,
                          retry=RetryPolicy(max_retries=2))


def _typesafe_endpoint(settings: Settings) -> str:
    return settings.typesafe_endpoint or "https://api.typesafe.ai"


def choice_judge(claim: str, source: str, ctx: RunContext) -> dict:
    """{relation, confidence, probabilities, model} for one claim against one source text."""
    from typesafe_sdk import TypeSafeAPIConnectionError, TypeSafeAPIError
    settings = ctx.settings
    model = settings.typesafe_model
    state = choice_state(claim, source)
    question = choice_question()
    request = {"state": state, "questions": {"relation": question.model_dump(mode="json", exclude_none=True)},
               "local_calibration": local_calibration()}

    def compute():
        try:
            with _typesafe_client(settings) as client:
                response = client.system_one(state=state, questions={"relation": question})
        except TypeSafeAPIConnectionError as exc:
            raise JudgeUnavailable(f"Choice judge at {_typesafe_endpoint(settings)} did not answer "
                                   f"({type(exc).__name__}); {LIVE_HINT['typesafe']}") from None
        except TypeSafeAPIError as exc:
            raise JudgeUnavailable(f"Choice judge at {_typesafe_endpoint(settings)} answered HTTP {exc.status}; "
                                   f"{LIVE_HINT['typesafe']}") from None
        answer = response.choices["relation"]
        result = {"relation": answer.choice, "confidence": answer.confidence,
                  "probabilities": dict(answer.probabilities)}
        usage = {"input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens}
        return result, usage, response.model

    answer = ctx.cache.call("typesafe.system_one", model, request, compute, how_to_run_live=LIVE_HINT["typesafe"])
    return {**answer, "model": model}


# ---------------------------------------------------------------- JSON judge (HTTP providers)

def json_messages(claim: str, passages: list[str]) -> list[dict]:
    shown = "\n\n".join(f"[{n}] {text}" for n, text in enumerate(passages, 1))
    return [{"role": "system", "content": JSON_SYSTEM},
            {"role": "user", "content": f"Claim: {claim}\n\nPassages:\n{shown}"}]


def parse_verdict(content: str | None) -> dict:
    """The model's text -> {label, evidence_quote, confidence, reason}; anything off-contract is not_found."""
    def invalid(why: str) -> dict:
        return {"label": "not_found", "evidence_quote": None, "confidence": 0.0, "reason": f"judge_output_invalid: {why}"}
    text = (content or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return invalid("not JSON")
    if not isinstance(data, dict):
        return invalid("not a JSON object")
    label, quote, conf = data.get("label"), data.get("evidence_quote"), data.get("confidence")
    if label not in JUDGE_LABELS:
        return invalid(f"label {label!r}")
    if quote is not None and not isinstance(quote, str):
        return invalid("evidence_quote is not a string or null")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
        return invalid(f"confidence {conf!r}")
    return {"label": label, "evidence_quote": quote or None, "confidence": float(conf), "reason": None}


def _post(url: str, body: dict, headers: dict, provider: str, timeout: float) -> dict:
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise JudgeUnavailable(f"{provider} judge at {url} did not answer ({type(exc).__name__}); "
                               f"{LIVE_HINT[provider]}") from None
    if response.status_code != 200:
        raise JudgeUnavailable(f"{provider} judge at {url} answered HTTP {response.status_code}; "
                               f"{LIVE_HINT[provider]}")
    try:
        return response.json()
    except ValueError:
        raise JudgeUnavailable(f"{provider} judge at {url} answered a body that is not JSON") from None


def _call_openai(model: str, messages: list[dict], settings: Settings) -> tuple[str, dict, str]:
    base = settings.openai_base_url.rstrip("/")
    local = base != DEFAULTS["OPENAI_BASE_URL"]
    key = settings.secrets.get("OPENAI_API_KEY") or ("local" if local else settings.secrets.require("OPENAI_API_KEY"))
    body = {"model": model, "messages": messages, "temperature": 0,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "verdict", "strict": True, "schema": JSON_SCHEMA}}}
    data = _post(f"{base}/chat/completions", body, {"Authorization": f"Bearer {key}"}, "openai",
                 settings.judge_timeout)
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        content = None
    return content, data.get("usage"), data.get("model", model)


ANTHROPIC_TOOL = {"name": "record_verdict", "description": "Record the verdict on the claim.",
                  "input_schema": JSON_SCHEMA}


def _call_anthropic(model: str, messages: list[dict], settings: Settings) -> tuple[str, dict, str]:
    """Messages API with the schema enforced as a forced tool call; its input is the verdict."""
    key = settings.secrets.require("ANTHROPIC_API_KEY")
    body = {"model": model, "max_tokens": 400, "temperature": 0, "system": messages[0]["content"],
            "messages": messages[1:], "tools": [ANTHROPIC_TOOL],
            "tool_choice": {"type": "tool", "name": ANTHROPIC_TOOL["name"]}}
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    data = _post(f"{settings.anthropic_base_url.rstrip('/')}/v1/messages", body, headers, "anthropic",
                 settings.judge_timeout)
    parts = [part for part in data.get("content", []) if isinstance(part, dict)]
    tool_inputs = [part.get("input") for part in parts if part.get("type") == "tool_use"]
    if tool_inputs:
        text = json.dumps(tool_inputs[0], ensure_ascii=False)
    else:
        text = "".join(part.get("text", "") for part in parts)
    return text, data.get("usage"), data.get("model", model)


def _call_ollama(model: str, messages: list[dict], settings: Settings) -> tuple[str, dict, str]:
    host = settings.ollama_host.rstrip("/")
    body = {"model": model, "messages": messages, "format": JSON_SCHEMA, "stream": False,
            "options": {"temperature": 0}}
    data = _post(f"{host}/api/chat", body, {}, "ollama", settings.judge_timeout)
    usage = {"input_tokens": data.get("prompt_eval_count"), "output_tokens": data.get("eval_count")}
    return (data.get("message") or {}).get("content"), usage, data.get("model", model)


PROVIDERS = {"openai": _call_openai, "anthropic": _call_anthropic, "ollama": _call_ollama}


def json_judge(claim: str, passages: list[str], ctx: RunContext) -> dict:
    """{label, evidence_quote, confidence, reason, model} from JUDGE_PROVIDER over the passages shown."""
    provider, model = ctx.settings.judge_provider, ctx.settings.judge_model
    messages = json_messages(claim, passages)
    request = {"messages": messages, "schema": JSON_SCHEMA}

    def compute() -> tuple[Any, dict | None, str]:
        content, usage, answered_by = PROVIDERS[provider](model, messages, ctx.settings)
        return {"content": content}, usage, answered_by

    answer = ctx.cache.call(f"judge.json/{provider}", model, request, compute, how_to_run_live=LIVE_HINT[provider])
    return {**parse_verdict(answer["content"]), "model": model}
