"""A stand-in for the JSON judge's three providers, for the unmodified httpx clients in judges.py.

One server answers every wire format: OpenAI chat completions (`…/chat/completions`), Anthropic
messages (`/v1/messages`) and Ollama chat (`/api/chat`). `server.script` says what the model
"writes": `content` (text, or a function of the request body), `status`, or a literal `raw` body;
`failures` is a queue of (status, headers) answered first, one per request (429/5xx then recovery).
`silent_server()` accepts connections and never answers (timeouts).
"""
from __future__ import annotations

import contextlib
import json
import socket
import time

from .http import Recorded, StandIn

MODEL = "standin-judge-1"


def verdict_json(label="supported", quote=None, confidence=0.9) -> str:
    return json.dumps({"label": label, "evidence_quote": quote, "confidence": confidence})


def wire_reply(path: str, content: str | None) -> dict:
    """The provider's response body around `content`, chosen by the request path."""
    if path.endswith("/chat/completions"):
        return {"id": "chatcmpl-standin", "object": "chat.completion", "model": MODEL,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
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

    def __call__(self, request: Recorded):
        if self.delay:
            time.sleep(self.delay)
        if self.failures:
            status, headers = self.failures.pop(0)
            return status, headers, {"error": {"message": f"stand-in failure {status}"}}
        if self.raw is not None:
            return self.status, {"Content-Type": "application/json"}, self.raw
        if self.status != 200:
            return self.status, {}, {"error": {"message": f"stand-in failure {self.status}"}}
        content = self.content(request.json()) if callable(self.content) else self.content
        return 200, {}, wire_reply(request.path, content)


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
