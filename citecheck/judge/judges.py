"""Judges: ask a model how a claim relates to source text. Every call goes through the cache.

Rules:
- Choice judge: one typesafe-sdk `Choice` question (supports / contradicts / says_nothing) over
  state {claim, source}. Its confidence is Jev's reference formula over the answer's probabilities,
  (max p - 1/n) / (1 - 1/n) (`judge_contract.choice_confidence`), whichever server answered. The
  cache key includes the local judge's calibration offsets for the question, so refitting them
  re-asks instead of replaying.
- JSON judge: the strict contract {label: supported|contradicted|not_found, evidence_quote: verbatim
  text or null, confidence: 0-1}, from openai (chat completions + JSON schema), anthropic or ollama,
  all running the same prompt: each passage under its own `--- passage N ---` line (nothing the judge
  could copy into a quote), and the contract sentence "copy the quote verbatim, do not add words; if you
  cannot, answer not_found with a null quote". Output that is not that JSON becomes not_found with the
  reason `judge_output_invalid: <what was wrong>`. 429, 5xx and timeouts are retried JUDGE_RETRIES times
  with exponential backoff (or the server's Retry-After).
- Every answer is checked against its contract (`judge_contract`) before it is cached: an off-contract
  answer is never recorded; an off-contract entry already in the cache (an older version recorded
  it) raises CacheCorrupted naming the file and the key.
- Choice questions go where `Settings.choice_via` says: here (typesafe-sdk), or to the JSON provider as
  JSON (`choice_json`, which the methods route to). With no judge configured, the missing key's message
  names every judge variable (NO_JUDGE_HINT).
- The judge interprets; it does not decide. The guard and review stages decide what stands.
- A judge that cannot be reached raises JudgeUnavailable naming the endpoint and the variable to set;
  a Choice answer off its contract raises JudgeOutputInvalid (a JudgeUnavailable: no usable answer).
- One client per provider for the run (`RunContext.client`: one TLS context, kept-alive connections),
  closed with it. Questions are plain data (`ChoiceQuestion`): a cache key, a replay and a JSON provider
  never import typesafe-sdk or httpx; the SDK's `Choice` is built only to call the SDK.
"""
from __future__ import annotations

import email.utils
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..cache import CacheCorrupted, request_key
from ..config import (DEFAULTS, ENDPOINT_VARIABLE, MODEL_VARIABLE, OLLAMA_DEFAULT_HOST, MissingSetting,
                      Settings)
from ..context import RunContext, typesafe_client
from ..paths import shown
from ..source import language
from ..vocabulary import JUDGE_LABELS, JUDGE_OUTPUT_INVALID, JUDGE_UNAVAILABLE, RELATIONS
from . import calibration
from . import judge_contract as contract
from .judge_contract import OffContract

if TYPE_CHECKING:
    import httpx

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
    "that makes the claim false, and \"not_found\" otherwise. evidence_quote is the one sentence from the "
    "passages that decides the label. Copy the quote verbatim, do not add words; if you cannot, answer "
    "not_found with a null quote. confidence is a number from 0 to 1."
)
PASSAGE_SEPARATOR = "--- passage {n} ---"
"""The line before each shown passage: outside the text the judge quotes from, with no bracketed number
a quote could pick up (the guard compares quotes exactly, so a copied `[1]` would reject a right answer)."""

LIVE_HINT = {
    "typesafe": "set TYPESAFE_API_KEY, or point TYPESAFE_ENDPOINT at a Jev-compatible server "
                "(start the local one with `python -m citecheck judge-server`)",
    "openai": "set OPENAI_API_KEY, or point OPENAI_BASE_URL at an OpenAI-compatible server "
              "(start the local one with `python -m citecheck judge-server`)",
    "anthropic": "set ANTHROPIC_API_KEY",
    "ollama": "point OLLAMA_HOST at a running Ollama server",
}
NO_JUDGE_HINT = ("set it, or point TYPESAFE_ENDPOINT at a Jev-compatible server (`citecheck judge-server` "
                 "starts one here), or set OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY or OLLAMA_HOST for "
                 "a JSON judge (every judge method runs on either)")
"""What a run with no judge configured is told after 'TYPESAFE_API_KEY is not set: ' (`MissingSetting`):
the other ways to configure a judge, names only, never a value."""
KEY_VARIABLE = {"typesafe": "TYPESAFE_API_KEY", "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def _endpoint(provider: str, settings: Settings) -> str:
    """The variable that set the judge's endpoint, or 'the default (VARIABLE changes it)'."""
    variable = ENDPOINT_VARIABLE[provider]
    given = {"typesafe": settings.typesafe_endpoint, "ollama": settings.ollama_host,
             "openai": settings.openai_base_url.rstrip("/") != DEFAULTS["OPENAI_BASE_URL"],
             "anthropic": settings.anthropic_base_url.rstrip("/") != DEFAULTS["ANTHROPIC_BASE_URL"]}[provider]
    return variable if given else f"the default ({variable} changes it)"


def unreachable_hint(provider: str, settings: Settings) -> str:
    """What a judge that could not be reached is told: the endpoint and the variable that set it, never a key
    (a key that is set is not the problem)."""
    where = _endpoint(provider, settings)
    local = (" (`python -m citecheck judge-server` starts the local one)"
             if provider in ("typesafe", "openai") else "")
    if where == ENDPOINT_VARIABLE[provider]:
        return f"the endpoint {where} names could not be reached: check that its server is running{local}"
    return f"the endpoint could not be reached from here: {where}; check the network"


def status_hint(provider: str, status: int, settings: Settings) -> str:
    """What a judge that answered an HTTP error is told, by status: a refused key, an unknown model, a
    failing server (naming the variables, never a value); else how to configure one (LIVE_HINT)."""
    key, model = KEY_VARIABLE.get(provider), MODEL_VARIABLE[provider]
    if status in (401, 403) and key and settings.secrets.has(key):
        return f"{key} was refused: check that it is a key for the endpoint ({_endpoint(provider, settings)})"
    if status == 404:
        return (f"the endpoint ({_endpoint(provider, settings)}) has no such path or model: check its URL, "
                f"or set {model} to a model it serves")
    if status == 429 or status >= 500:
        return f"the server ({_endpoint(provider, settings)}) is busy or failing: try again later"
    return LIVE_HINT[provider]


def judge_problem(settings: Settings) -> str:
    """Why no judge answered, said from the settings (for a flow whose rows keep only the reason code):
    replay only, no judge configured (every variable named), or the configured one's endpoint."""
    if settings.offline:
        return "CITECHECK_OFFLINE=1 and the cache holds no answer for them: unset it to ask the judge"
    if not settings.choice_configured and not settings.json_providers:
        return str(MissingSetting("TYPESAFE_API_KEY", NO_JUDGE_HINT))
    route = settings.choice_via
    return (f"the {route} judge ({_endpoint(route, settings)}) gave no usable answer (unreachable, refused, "
            "or off its contract): `citecheck check` on one of them prints its failure")


TIMEOUT_HINT = "the judge is up but slow (a CPU model on shared cores): raise JUDGE_TIMEOUT or try again"

RETRY_STATUSES = frozenset({408, 429, *range(500, 600)})
RETRY_BACKOFF = 1.0
"""Seconds before the first retry of the JSON judge; doubled for each further one."""
RETRY_AFTER_MAX = 60.0
"""A Retry-After longer than this is not waited for: the judge gives up and says so."""
_sleep = time.sleep


class JudgeUnavailable(RuntimeError):
    """The judge could not answer (unreachable, timeout, 5xx, 401): names the endpoint, never a key."""
    reason = JUDGE_UNAVAILABLE


class JudgeOutputInvalid(JudgeUnavailable):
    """The judge answered, off its contract (the message says how); nothing was cached."""
    reason = JUDGE_OUTPUT_INVALID


def _ask(ctx: RunContext, function: str, model: str, request: dict, compute: Callable, hint: str,
         check: Callable[[Any], Any], answered: list | None = None) -> Any:
    """`check(answer)` for the cached or freshly computed answer. A fresh answer is checked before it is
    cached (OffContract propagates, nothing is written); a cached one that fails is a corrupt entry.
    `answered` (when given) gets the name of the model that answered (`Settings.answering_name`: the one its
    cache entry is stamped with, unless the reader named the model)."""
    name = ctx.settings.answering_name

    def checked():
        answer, usage, answered_by = compute()
        if answered is not None:
            answered.append(name(model, answered_by))        # named even when its answer is off contract
        check(answer)
        return answer, usage, answered_by

    answer, answered_by = ctx.cache.answered(function, model, request, checked, how_to_run_live=hint)
    if answered is not None:
        answered.append(name(model, answered_by))
    try:
        return check(answer)
    except OffContract as exc:
        key = request_key(function, model, request)
        raise CacheCorrupted(f"{shown(ctx.cache.path)}: entry {key} ({function}) is off its contract "
                             f"({exc}); "
                             "delete that entry to ask the judge again") from None


# ---------------------------------------------------------------- Choice judge (typesafe-sdk)

@dataclass(frozen=True)
class ChoiceQuestion:
    """A Choice question as plain data: what its cache key, the calibration table and a JSON provider read.
    typesafe-sdk's `Choice` is built from it only when the SDK is called (`sdk_question`)."""
    instructions: str
    criteria: Mapping[str, str]

    def model_dump(self, *, mode: str = "json", exclude_none: bool = True) -> dict:
        """The wire form, as typesafe-sdk's `Choice.model_dump(mode="json", exclude_none=True)` gives it
        (a test compares them): the cache keys recorded with the SDK's objects stay the same."""
        return {"type": "choice", "instructions": self.instructions, "criteria": dict(self.criteria)}


RELATION = ChoiceQuestion(CHOICE_INSTRUCTIONS, CHOICE_CRITERIA)
"""The one question every Choice judge call asks (`choice_question` is its typesafe-sdk form)."""


def sdk_question(question):
    """typesafe-sdk's `Choice` for a question (a ChoiceQuestion or already a `Choice`)."""
    from typesafe_sdk import Choice
    return Choice(instructions=question.instructions, criteria=dict(question.criteria))


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
    return with_language({"claim": claim, "source": source}, claim, [source])


def with_language(state: dict, claim: str, texts: list[str]) -> dict:
    """`state` with a last `language` entry saying which language the claim and the text are in, when the
    claim is not English (`source.language.stated`); an English claim's state, and its cache key, are
    unchanged."""
    line = language.stated(claim, texts)
    return state if line is None else {**state, "language": line}


def language_prefix(claim: str, texts: list[str]) -> str:
    """The language line and a blank line before a JSON prompt's user text, or "" for English (as
    `with_language`)."""
    line = language.stated(claim, texts)
    return "" if line is None else f"{line}\n\n"


def _typesafe_client(settings: Settings):
    """A new typesafe-sdk client for the settings (`_typesafe` keeps one per run); hosted Jev needs a key."""
    if not settings.typesafe_endpoint:
        settings.secrets.require("TYPESAFE_API_KEY", NO_JUDGE_HINT)
    return typesafe_client(settings)


def _typesafe(ctx: RunContext):
    """The run's typesafe-sdk client for its endpoint, model, timeout and key (opened on first use)."""
    s = ctx.settings
    built_from = ("judge", "typesafe", s.typesafe_endpoint, s.typesafe_model, s.judge_timeout, s.secrets)
    return ctx.client(built_from, lambda: _typesafe_client(s))


def _typesafe_endpoint(settings: Settings) -> str:
    return settings.typesafe_endpoint or "https://api.typesafe.ai"


def _sdk_system_one(ctx: RunContext, state: dict, questions: dict):
    """One system_one call through typesafe-sdk -> the SDK's response; failures translated (module rules)."""
    from typesafe_sdk import TypeSafeAPIConnectionError, TypeSafeAPIError, TypeSafeAPITimeoutError
    from typesafe_sdk._core.errors import TypeSafeAPIResponseValidationError
    settings = ctx.settings
    where = f"Choice judge at {_typesafe_endpoint(settings)}"
    try:
        return _typesafe(ctx).system_one(state=state, questions={name: sdk_question(q)
                                                                   for name, q in questions.items()})
    except TypeSafeAPITimeoutError:
        raise JudgeUnavailable(f"{where} timed out after {settings.judge_timeout:g} s (JUDGE_TIMEOUT); "
                               f"{TIMEOUT_HINT}") from None
    except TypeSafeAPIConnectionError as exc:
        raise JudgeUnavailable(f"{where} did not answer ({type(exc).__name__}); "
                               f"{unreachable_hint('typesafe', settings)}") from None
    except TypeSafeAPIResponseValidationError as exc:
        raise OffContract(f"the SDK could not read the response at {exc.field_path!r}") from None
    except TypeSafeAPIError as exc:
        raise JudgeUnavailable(f"{where} answered HTTP {exc.status}; "
                               f"{status_hint('typesafe', exc.status, settings)}") from None


def _usage(response) -> dict:
    return {"input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens}


def _system_one(ctx: RunContext, state: dict, question) -> tuple[dict, dict, str]:
    """One Choice call through typesafe-sdk -> (the raw answer, usage, the model that answered)."""
    response = _sdk_system_one(ctx, state, {"relation": question})
    answer = response.choices.get("relation")
    if answer is None:
        raise OffContract("no choice answer for the question 'relation'")
    raw = {"relation": answer.choice, "confidence": answer.confidence,
           "probabilities": dict(answer.probabilities)}
    return raw, _usage(response), response.model


def step_calibration(questions: dict) -> dict | None:
    """The local judge's offsets for a step's questions (part of the key, as for `local_calibration`):
    None when none is fitted; one question's offsets alone; else {name: offsets} of those fitted."""
    fitted = calibration.load_calibration()
    found = {name: fitted.get(calibration.question_key(q.instructions, dict(q.criteria)))
             for name, q in questions.items()}
    found = {name: offsets for name, offsets in found.items() if offsets}
    if not found:
        return None
    return next(iter(found.values())) if len(questions) == 1 else found


def step_request(state: dict, questions: dict) -> dict:
    """What a step's cache key is made of (with 'typesafe.system_one' and TYPESAFE_MODEL)."""
    return {"state": state,
            "questions": {n: q.model_dump(mode="json", exclude_none=True) for n, q in questions.items()},
            "local_calibration": step_calibration(questions)}


def choice_step(state: dict, questions: dict, ctx: RunContext, request: dict | None = None,
                answered: list | None = None) -> dict:
    """A judge method's step: named typesafe-sdk Choice questions over `state`, one system_one call,
    cached as 'typesafe.system_one' -> {name: {type, choice, confidence (reference formula), probabilities}}.
    `request` is the step's `step_request` when the caller built it already (to name its key); `answered`
    gets the model that answered (`_ask`).
    Off contract (a question unanswered, an option not asked) raises OffContract; nothing is cached."""
    settings = ctx.settings
    options = {name: tuple(question.criteria) for name, question in questions.items()}
    request = request if request is not None else step_request(state, questions)

    def compute() -> tuple[dict, dict, str]:
        response = _sdk_system_one(ctx, state, questions)
        raw = {name: {"type": "choice", "choice": a.choice, "confidence": a.confidence,
                      "probabilities": dict(a.probabilities)} for name, a in response.choices.items()}
        return raw, _usage(response), response.model

    def check(answer: Any) -> dict:
        if not isinstance(answer, dict):
            raise OffContract(f"the answer is {answer!r:.60}, not an object")
        missing = [name for name in options if name not in answer]
        if missing:
            raise OffContract(f"no choice answer for the question {missing[0]!r}")
        return {name: {"type": "choice", **contract.check_choice(answer[name], opts)}
                for name, opts in options.items()}

    return _ask(ctx, "typesafe.system_one", settings.typesafe_model, request, compute, LIVE_HINT["typesafe"],
                check, answered)


def check_relation(answer: Any) -> dict:
    """A recorded Choice answer {relation, confidence, probabilities} checked against the question's
    options -> the same keys, confidence by the reference formula (OffContract when off contract)."""
    if not isinstance(answer, dict):
        raise contract.OffContract(f"the answer is {answer!r:.60}, not an object")
    checked = contract.check_choice({**answer, "choice": answer.get("relation")}, RELATIONS)
    return {"relation": checked["choice"], "confidence": checked["confidence"],
            "probabilities": checked["probabilities"]}


def choice_request(claim: str, source: str) -> dict:
    """What `choice_judge`'s cache key is made of (with 'typesafe.system_one' and TYPESAFE_MODEL); the
    request is spelled out in choice_judge itself, which notebook 01 shows (a test keeps the two equal)."""
    state, question = choice_state(claim, source), RELATION
    return {"state": state, "questions": {"relation": question.model_dump(mode="json", exclude_none=True)},
            "local_calibration": local_calibration()}


def choice_judge(claim: str, source: str, ctx: RunContext) -> dict:
    """{relation, confidence, probabilities, model} for one claim against one source text (`model`: the
    one that answered, as its cache entry is stamped)."""
    settings = ctx.settings
    model = settings.typesafe_model
    state = choice_state(claim, source)
    question = RELATION
    request = {"state": state, "questions": {"relation": question.model_dump(mode="json", exclude_none=True)},
               "local_calibration": local_calibration()}
    answered: list[str] = []
    try:
        answer = _ask(ctx, "typesafe.system_one", model, request,
                      lambda: _system_one(ctx, state, question), LIVE_HINT["typesafe"], check_relation,
                      answered)
    except OffContract as exc:
        raise JudgeOutputInvalid(f"Choice judge at {_typesafe_endpoint(settings)} answered off its contract: "
                                 f"{exc} (not cached)") from None
    return {**answer, "model": answered[-1]}


# ---------------------------------------------------------------- JSON judge (HTTP providers)

def json_messages(claim: str, passages: list[str]) -> list[dict]:
    """The system prompt and the claim with each passage on its own lines under PASSAGE_SEPARATOR."""
    shown_passages = "\n\n".join(f"{PASSAGE_SEPARATOR.format(n=n)}\n{text}"
                                   for n, text in enumerate(passages, 1))
    return [{"role": "system", "content": JSON_SYSTEM},
            {"role": "user",
             "content": f"{language_prefix(claim, passages)}Claim: {claim}\n\nPassages:\n{shown_passages}"}]


def _invalid(why: str) -> dict:
    return {"label": "not_found", "evidence_quote": None, "confidence": 0.0,
            "reason": f"{JUDGE_OUTPUT_INVALID}: {why}"}


def parse_verdict(content: Any) -> dict:
    """The model's text -> {label, evidence_quote, confidence, reason}; anything off-contract is not_found."""
    try:
        return {**contract.verdict(content), "reason": None}
    except OffContract as exc:
        return _invalid(str(exc))


def _retry_after(response: "httpx.Response") -> float | None:
    """Retry-After in seconds (a number or an HTTP date), or None."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value) if email.utils.parsedate_tz(value) else None
        return max(0.0, when.timestamp() - time.time()) if when else None


def _http(ctx: RunContext, provider: str) -> "httpx.Client":
    """The run's HTTP client for a JSON provider (one TLS context, kept-alive connections)."""
    import httpx
    return ctx.client(("judge", provider), httpx.Client)


def _post(url: str, body: dict, headers: dict, provider: str, ctx: RunContext) -> Any:
    """POST with up to JUDGE_RETRIES retries of 408/429/5xx and timeouts (backoff, or Retry-After)."""
    import httpx
    settings = ctx.settings
    attempts = 1 + settings.judge_retries
    where = f"{provider} judge at {url}"
    for attempt in range(1, attempts + 1):
        delay = RETRY_BACKOFF * 2 ** (attempt - 1)
        try:
            response = _http(ctx, provider).post(url, json=body, headers=headers,
                                                 timeout=settings.judge_timeout)
        except httpx.TimeoutException:
            failure, hint = f"timed out after {settings.judge_timeout:g} s (JUDGE_TIMEOUT)", TIMEOUT_HINT
        except httpx.HTTPError as exc:
            raise JudgeUnavailable(f"{where} did not answer ({type(exc).__name__}); "
                                   f"{unreachable_hint(provider, settings)}") from None
        else:
            if response.status_code == 200:
                try:
                    return response.json()
                except ValueError:
                    raise JudgeUnavailable(f"{where} answered a body that is not JSON") from None
            failure = f"answered HTTP {response.status_code}"
            hint = status_hint(provider, response.status_code, settings)
            if response.status_code not in RETRY_STATUSES:
                raise JudgeUnavailable(f"{where} {failure}; {hint}")
            asked = _retry_after(response)
            if asked is not None and asked > RETRY_AFTER_MAX:
                raise JudgeUnavailable(f"{where} {failure} and asked to retry after {asked:.0f} s; gave up "
                                       f"(waits at most {RETRY_AFTER_MAX:.0f} s); {hint}")
            delay = asked if asked is not None else delay
        if attempt < attempts:
            _sleep(delay)
    tries = f"on each of {attempts} attempts (JUDGE_RETRIES={settings.judge_retries}, with backoff)"
    raise JudgeUnavailable(f"{where} {failure} {tries}; {hint}")


def _call_openai(model: str, messages: list[dict], ctx: RunContext, schema: dict = JSON_SCHEMA,
                 name: str = "verdict", extra: dict | None = None) -> Any:
    """Chat completions with a strict JSON schema; `extra` joins the body (e.g. logprobs)."""
    settings = ctx.settings
    base = settings.openai_base_url.rstrip("/")
    local = base != DEFAULTS["OPENAI_BASE_URL"]
    key = settings.secrets.get("OPENAI_API_KEY") or ("local" if local else settings.secrets.require(
        "OPENAI_API_KEY", "set it, or point OPENAI_BASE_URL at an OpenAI-compatible server, or set "
                          "ANTHROPIC_API_KEY, OLLAMA_HOST, TYPESAFE_API_KEY or TYPESAFE_ENDPOINT"))
    body = {"model": model, "messages": messages, "temperature": 0,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": name, "strict": True, "schema": schema}},
            **(extra or {})}
    return _post(f"{base}/chat/completions", body, {"Authorization": f"Bearer {key}"}, "openai", ctx)


ANTHROPIC_TOOL = {"name": "record_verdict", "description": "Record the verdict on the claim.",
                  "input_schema": JSON_SCHEMA}


def _call_anthropic(model: str, messages: list[dict], ctx: RunContext, schema: dict = JSON_SCHEMA,
                    name: str = "verdict", extra: dict | None = None) -> Any:
    """Messages API with the schema enforced as a forced tool call; its input is the answer."""
    settings = ctx.settings
    tool = ANTHROPIC_TOOL if schema is JSON_SCHEMA else {
        "name": f"record_{name}", "description": f"Record the {name}.", "input_schema": schema}
    key = settings.secrets.require("ANTHROPIC_API_KEY")
    body = {"model": model, "max_tokens": 400, "temperature": 0, "system": messages[0]["content"],
            "messages": messages[1:], "tools": [tool], "tool_choice": {"type": "tool", "name": tool["name"]}}
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    url = f"{settings.anthropic_base_url.rstrip('/')}/v1/messages"
    return _post(url, body, headers, "anthropic", ctx)


def _call_ollama(model: str, messages: list[dict], ctx: RunContext, schema: dict = JSON_SCHEMA,
                 name: str = "verdict", extra: dict | None = None) -> Any:
    body = {"model": model, "messages": messages, "format": schema, "stream": False,
            "options": {"temperature": 0}}
    host = ctx.settings.ollama_host or OLLAMA_DEFAULT_HOST
    return _post(f"{host.rstrip('/')}/api/chat", body, {}, "ollama", ctx)


PROVIDERS = {"openai": _call_openai, "anthropic": _call_anthropic, "ollama": _call_ollama}
"""provider -> call(model, messages, ctx, schema, name, extra): the response body. Only openai reads
`extra` (the others have no such request fields)."""


def _check_content(answer: Any) -> dict:
    if not isinstance(answer, dict) or "content" not in answer:
        raise OffContract(f"the answer is {answer!r:.60}, not {{content: ...}}")
    return contract.verdict(answer["content"])


def json_request(claim: str, passages: list[str]) -> dict:
    """What a JSON judge call's cache key is made of (with 'judge.json/<provider>' and JUDGE_MODEL)."""
    return {"messages": json_messages(claim, passages), "schema": JSON_SCHEMA}


def json_judge(claim: str, passages: list[str], ctx: RunContext) -> dict:
    """{label, evidence_quote, confidence, reason, model} from JUDGE_PROVIDER over the passages shown
    (`model`: the one that answered, else the one asked)."""
    provider, model = ctx.settings.judge_provider, ctx.settings.judge_model
    messages = json_messages(claim, passages)
    request = json_request(claim, passages)

    def compute() -> tuple[Any, dict | None, str]:
        body = PROVIDERS[provider](model, messages, ctx)
        content, usage, answered_by = contract.envelope(provider, body, model)
        return {"content": content}, usage, answered_by

    answered: list[str] = []
    try:
        verdict = _ask(ctx, f"judge.json/{provider}", model, request, compute, LIVE_HINT[provider],
                       _check_content, answered)
    except OffContract as exc:
        return {**_invalid(str(exc)), "model": (answered or [model])[-1]}
    return {**verdict, "reason": None, "model": answered[-1]}


def json_step(messages: list[dict], schema: dict, name: str, ctx: RunContext,
              check: Callable[[Any], Any]) -> Any:
    """A judge method's generation step: `messages` to JUDGE_PROVIDER constrained by `schema`, cached as
    'judge.<name>/<provider>' -> `check(parsed JSON object)`. Not JSON, or off `check`'s contract, raises
    OffContract; nothing is cached."""
    provider, model = ctx.settings.judge_provider, ctx.settings.judge_model
    request = {"messages": messages, "schema": schema}

    def compute() -> tuple[Any, dict | None, str]:
        body = PROVIDERS[provider](model, messages, ctx, schema, name)
        content, usage, answered_by = contract.envelope(provider, body, model)
        return {"content": content}, usage, answered_by

    def parsed(answer: Any) -> Any:
        if not isinstance(answer, dict) or not contract.is_text(answer.get("content")):
            raise OffContract(f"the answer is {answer!r:.60}, not {{content: text}}")
        try:
            return check(json.loads(answer["content"]))
        except (json.JSONDecodeError, RecursionError):
            raise OffContract(f"{name}: not JSON") from None

    return _ask(ctx, f"judge.{name}/{provider}", model, request, compute, LIVE_HINT[provider], parsed)
