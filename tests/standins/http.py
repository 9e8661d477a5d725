"""A tiny threaded HTTP server on 127.0.0.1 that stand-ins build on: a handler function per request."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class Recorded:
    """One request the stand-in received (`peer`: the client's (address, port), one per connection)."""

    def __init__(self, method: str, path: str, headers: dict, body: bytes, peer: tuple | None = None):
        self.method, self.path, self.headers, self.body, self.peer = method, path, headers, body, peer

    def json(self):
        return json.loads(self.body.decode("utf-8"))


class StandIn:
    """`with StandIn(handler) as server:` serves on 127.0.0.1:<ephemeral>; `server.url`, `server.requests`.

    `handler(request: Recorded) -> (status, headers: dict, body: bytes | str | dict)`. `keep_alive`: HTTP/1.1,
    a connection serves several requests (else HTTP/1.0: one request per connection).
    """

    def __init__(self, handler: Callable[[Recorded], tuple[int, dict, object]], keep_alive: bool = False):
        self.handler = handler
        self.requests: list[Recorded] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                request = Recorded(self.command, self.path, dict(self.headers), self.rfile.read(length),
                                   self.client_address)
                outer.requests.append(request)
                status, headers, body = outer.handler(request)
                if isinstance(body, (dict, list)):
                    body = json.dumps(body)
                    headers = {"Content-Type": "application/json", **headers}
                data = body.encode("utf-8") if isinstance(body, str) else (body or b"")
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, *args):  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def posts(self) -> list[Recorded]:
        """The requests that asked a question: all but the GETs (a judge's model list, asked once a run)."""
        return [request for request in self.requests if request.method != "GET"]

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
