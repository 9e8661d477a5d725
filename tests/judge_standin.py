"""An in-process stand-in for the JSON judge's providers on 127.0.0.1, reached through the real clients.

One server answers the three wire formats: OpenAI chat completions (`/v1/chat/completions`),
Anthropic messages (`/v1/messages`) and Ollama chat (`/api/chat`). Each request is recorded
(path, headers, JSON body); the reply is scripted by setting `content` (the model's text), `status`,
`delay` (seconds) or `raw` (a literal body). `content` may be a function of the request body.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "standin-judge-1"


def verdict_json(label="supported", quote=None, confidence=0.9) -> str:
    return json.dumps({"label": label, "evidence_quote": quote, "confidence": confidence})


def _reply(path: str, content: str | None) -> dict:
    if path.endswith("/chat/completions"):
        return {"id": "chatcmpl-standin", "object": "chat.completion", "model": MODEL,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
    if path.endswith("/messages"):
        return {"id": "msg_standin", "type": "message", "role": "assistant", "model": MODEL,
                "content": [{"type": "text", "text": content or ""}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 11, "output_tokens": 7}}
    return {"model": MODEL, "created_at": "2025-01-01T00:00:00Z", "done": True,
            "message": {"role": "assistant", "content": content or ""},
            "prompt_eval_count": 11, "eval_count": 7}


class JudgeStandIn:
    """`with JudgeStandIn() as judge:` -> judge.url ('http://127.0.0.1:PORT'), judge.requests."""

    def __init__(self):
        self.requests: list[dict] = []
        self.content = verdict_json()
        self.status = 200
        self.delay = 0.0
        self.raw: bytes | None = None
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                standin.requests.append({"path": self.path, "headers": dict(self.headers), "json": body})
                if standin.delay:
                    time.sleep(standin.delay)
                content = standin.content(body) if callable(standin.content) else standin.content
                if standin.raw is not None:
                    payload = standin.raw
                elif standin.status != 200:
                    payload = json.dumps({"error": {"message": "scripted failure"}}).encode()
                else:
                    payload = json.dumps(_reply(self.path, content)).encode()
                try:
                    self.send_response(standin.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass   # the client gave up (timeout test)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> "JudgeStandIn":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A loopback port with nothing listening (for 'judge unreachable')."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
