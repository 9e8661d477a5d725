"""A hostile origin on 127.0.0.1 for the fetchers: it drips, stalls, resets or sends broken bytes.

`with SlowOrigin(behaviour) as origin:` serves on `origin.url` (or on a given host/port); each connection
reads the request head, records it in `origin.requests`, then plays `behaviour(connection, head, stop)`
(`stop` is set when the stand-in stops: a stalled behaviour returns then).
Behaviours (functions that build one):
- `drip(head, body, every)`: the head at once, then the body one byte every `every` seconds.
- `drip_head(head, every)`: the status line and headers themselves one byte at a time.
- `stall(head=b"")`: send `head` (maybe nothing), then hold the connection open, silent, until stopped.
- `reset(head=b"")`: send `head`, then reset the connection (RST, not a clean close).
- `raw(data)`: send exactly `data` and close (a truncated gzip body, a lying Content-Type, ...).
- `page(body, content_type, status, headers)`: a well-formed answer (the control case).
- `routes({path: behaviour})`: a behaviour per request path (any other path: 404).
`response(status, headers, length)` builds a head. Nothing here is used outside the tests.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Callable

Behaviour = Callable[[socket.socket, bytes, threading.Event], None]


def response(status: int = 200, headers: dict | None = None, length: int | None = None,
             content_type: str = "text/html; charset=utf-8") -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}", "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _drip_bytes(conn: socket.socket, data: bytes, every: float, stop: threading.Event) -> None:
    for i in range(len(data)):
        if stop.wait(every):
            return
        conn.sendall(data[i:i + 1])


def drip(head: bytes, body: bytes, every: float) -> Behaviour:
    def play(conn, head_received, stop):
        conn.sendall(head)
        _drip_bytes(conn, body, every, stop)
    return play


def drip_head(head: bytes, every: float) -> Behaviour:
    def play(conn, head_received, stop):
        _drip_bytes(conn, head, every, stop)
    return play


def stall(head: bytes = b"") -> Behaviour:
    def play(conn, head_received, stop):
        if head:
            conn.sendall(head)
        stop.wait()
    return play


def reset(head: bytes = b"") -> Behaviour:
    def play(conn, head_received, stop):
        if head:
            conn.sendall(head)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return play


def raw(data: bytes) -> Behaviour:
    def play(conn, head_received, stop):
        conn.sendall(data)
    return play


def page(body: bytes | str, content_type: str = "text/html; charset=utf-8", status: int = 200,
         headers: dict | None = None) -> Behaviour:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return raw(response(status, headers, len(data), content_type) + data)


def routes(table: dict[str, Behaviour]) -> Behaviour:
    def play(conn, head_received, stop):
        path = head_received.split(b" ", 2)[1].decode("latin-1").split("?")[0]
        table.get(path, page("not here", status=404))(conn, head_received, stop)
    return play


class SlowOrigin:
    """A threaded TCP server that plays one behaviour per connection (see the module doc)."""

    def __init__(self, behaviour, host: str = "127.0.0.1", port: int = 0):
        self.behaviour = behaviour
        self.requests: list[bytes] = []
        self.connections = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._listener = socket.create_server((host, port))
        self._listener.settimeout(0.2)
        self.host, self.port = self._listener.getsockname()[:2]
        self.url = f"http://{host}:{self.port}"

    def __enter__(self) -> "SlowOrigin":
        thread = threading.Thread(target=self._accept, daemon=True, name="slow-origin")
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        started = time.monotonic()
        with conn:
            conn.settimeout(5)
            head = b""
            try:
                while b"\r\n\r\n" not in head and time.monotonic() - started < 5:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    head += chunk
                self.requests.append(head)
                self.behaviour(conn, head, self._stop)
            except OSError:                     # the client gave up (its deadline): not an error here
                pass


HALF_BODY = (b"POST /verify HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
             b'Content-Length: 200\r\n\r\n{"claim": "c", ')
"""A request whose head is complete and whose body stops a third of the way."""
HALF_HEAD = b"POST /verify HTTP/1.1\r\nHost: t\r\nContent-Ty"
"""A request that stops inside its headers."""


def half_sent(port: int, each: int, host: str = "127.0.0.1") -> list[socket.socket]:
    """The other side, a hostile client: `each` connections that stop inside the body, then `each` inside
    the head (in that order), left open."""
    sockets = []
    for data in [HALF_BODY] * each + [HALF_HEAD] * each:
        sock = socket.create_connection((host, port))
        sock.sendall(data)
        sockets.append(sock)
    return sockets
