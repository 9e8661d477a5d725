"""A stand-in for the JSON judge's three providers, for the unmodified httpx clients in judges.py.

One server answers every wire format: OpenAI chat completions (`…/chat/completions`), Anthropic
messages (`/v1/messages`) and Ollama chat (`/api/chat`). `server.script` says what the model
"writes": `content` (text, or a function of the request body), `status`, or a literal `raw` body;
`failures` is a queue of (status, headers) answered first, one per request (429/5xx then recovery);
GET …/models lists MODEL, before any of those;
`logprobs(body, content)`, when set, gives the OpenAI reply's `logprobs.content` tokens (None: none).
`silent_server()` accepts connections and never answers (timeouts).

Every request says what it asks by its schema (`kind_of`: verdict, choice, facts, question, answer), and
a Choice question over a JSON provider (citecheck.judge.choice_json) carries its state as the user
message's JSON and its options as the schema's enum (`choice_of`): `by_kind` scripts a reply per kind,
`choice_reply` writes a Choice answer, `answer_tokens` the OpenAI logprobs around its value.
"""
from __future__ import annotations

import contextlib
import json
import math
import socket
import time

from .http import Recorded, StandIn

MODEL = "standin-judge-1"


def verdict_json(label="supported", quote=None, confidence=0.9) -> str:
    return json.dumps({"label": label, "evidence_quote": quote, "confidence": confidence})


def schema_of(body: dict) -> dict:
    """The JSON schema a request constrains the answer to, wherever its provider puts it."""
    if "response_format" in body:
        return body["response_format"]["json_schema"]["schema"]
    if "tools" in body:
        return body["tools"][0]["input_schema"]
    return body.get("format") or {}


KINDS = {frozenset({"label", "evidence_quote", "confidence"}): "verdict",
         frozenset({"answer", "confidence"}): "choice", frozenset({"facts"}): "facts",
         frozenset({"question", "answer"}): "question", frozenset({"answer"}): "answer"}


def kind_of(body: dict) -> str:
    """What a request asks, by its schema's properties: verdict, choice, facts, question or answer."""
    return KINDS[frozenset(schema_of(body).get("properties", {}))]


def user_text(body: dict) -> str:
    return body["messages"][-1]["content"]


def choice_of(body: dict) -> tuple[dict, tuple[str, ...]]:
    """A JSON-provider Choice request's (state, options)."""
    return json.loads(user_text(body)), tuple(schema_of(body)["properties"]["answer"]["enum"])


def choice_reply(answer: str, confidence: float = 0.9) -> str:
    return json.dumps({"answer": answer, "confidence": confidence})


def by_kind(**replies):
    """A `script.content` answering each request by its kind: `replies[kind](body) -> content text`."""
    return lambda body: replies[kind_of(body)](body)


def answer_tokens(content: str, alternatives: dict[str, float]) -> list[dict]:
    """OpenAI `logprobs.content` for `content`: three tokens, the middle one the answer's value, whose
    top_logprobs are `alternatives` (token -> probability)."""
    start = content.index('"answer": "') + len('"answer": "')
    end = content.index('"', start)
    alts = [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()]
    return [{"token": content[:start], "logprob": 0.0, "top_logprobs": []},
            {"token": content[start:end], "logprob": alts[0]["logprob"] if alts else 0.0, "top_logprobs": alts},
            {"token": content[end:], "logprob": 0.0, "top_logprobs": []}]


def models_reply() -> tuple[int, dict, dict]:
    """GET …/models: MODEL alone, in OpenAI's shape and Jev's (each client reads its own key)."""
    return 200, {}, {"object": "list", "data": [{"id": MODEL, "object": "model"}],
                     "models": [{"name": MODEL, "description": "a stand-in judge", "release_date": "2026-12-01"}]}


def wire_reply(path: str, content: str | None, logprobs: list | None = None) -> dict:
    """The provider's response body around `content`, chosen by the request path."""
    if path.endswith("/chat/completions"):
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
        if logprobs is not None:
            choice["logprobs"] = {"content": logprobs}
        return {"id": "chatcmpl-standin", "object": "chat.completion", "model": MODEL, "choices": [choice],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
    if path.endswith("/messages"):
        # a forced tool call answers with the tool's input object; text that is not one stays text
        try:
            block = {"type": "tool_use", "id": "toolu_standin", "name": "record_verdict",
                     "input": json.loads(content or "")}
            if not isinstance(block["input"], dict):
                raise ValueError
        except ValueError:
            block = {"type": "text", "text": content or ""}
        return {"id": "msg_standin", "type": "message", "role": "assistant", "model": MODEL,
                "content": [block], "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
                "usage": {"input_tokens": 11, "output_tokens": 7}}
    return {"model": MODEL, "done": True, "message": {"role": "assistant", "content": content or ""},
            "prompt_eval_count": 11, "eval_count": 7}


class Script:
    """What the stand-in answers next; `reset()` restores a plain supported verdict."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.content = verdict_json()
        self.status = 200
        self.delay = 0.0                    # seconds before each answer (the batch benchmark's judge latency)
        self.raw: bytes | None = None
        self.failures: list[tuple[int, dict]] = []
        self.logprobs = None                # (body, content) -> OpenAI logprobs tokens, or None

    def __call__(self, request: Recorded):
        if request.method == "GET" and request.path.endswith("/models"):       # the model list: its own name
            return models_reply()
        if self.delay:
            time.sleep(self.delay)
        if self.failures:
            status, headers = self.failures.pop(0)
            return status, headers, {"error": {"message": f"stand-in failure {status}"}}
        if self.raw is not None:
            return self.status, {"Content-Type": "application/json"}, self.raw
        if self.status != 200:
            return self.status, {}, {"error": {"message": f"stand-in failure {self.status}"}}
        body = request.json() if callable(self.content) or self.logprobs else None
        content = self.content(body) if callable(self.content) else self.content
        return 200, {}, wire_reply(request.path, content, self.logprobs(body, content) if self.logprobs else None)


def judge_standin() -> StandIn:
    """A StandIn whose `.script` decides the replies."""
    script = Script()
    server = StandIn(script)
    server.script = script
    return server


@contextlib.contextmanager
def silent_server():
    """'http://127.0.0.1:PORT' that accepts connections and never answers (a judge that times out)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def free_port() -> int:
    """A loopback port with nothing listening (for 'judge unreachable')."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
