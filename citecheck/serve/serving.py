"""The HTTP server behind `serve`: uvicorn, with a deadline on every request head.

Rules:
- A connection whose request head (request line and headers) is not complete API_HEADER_TIMEOUT seconds
  after its first byte could arrive (the connection opened, or the previous response ended) gets
  408 and is closed. uvicorn has no such timer: without it a client that sends half a request line
  holds a connection forever (slowloris).
- The body has its own deadline, API_BODY_TIMEOUT, enforced by the app (`api.BodyGuard`: 408).
- Idle keep-alive connections close after uvicorn's timeout_keep_alive (5 s), as before.
- The access log names the path without its query string (`WithoutQuery`): a `?token=` a client puts
  in a URL never reaches a log.
"""
from __future__ import annotations

import asyncio
import copy
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..config import ApiLimits

_TIMEOUT_BODY = b'{"detail":"the request head did not arrive in time (API_HEADER_TIMEOUT)"}'
REQUEST_TIMEOUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
                   b"content-length: " + str(len(_TIMEOUT_BODY)).encode() + b"\r\n\r\n" + _TIMEOUT_BODY)


def guarded_protocol(header_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the head deadline (module rules)."""

    class HeadDeadline(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(header_timeout, self._head_too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.write(REQUEST_TIMEOUT)
                self.transport.close()

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._arm()                       # still waiting for (the rest of) a request head
            else:
                self._disarm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeadDeadline


class WithoutQuery(logging.Filter):
    """Cuts the query string off the path in uvicorn's access-log records (client, method, path, ...)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].partition("?")[0], *args[3:])
        return True


def log_config() -> dict:
    """uvicorn's logging configuration with `WithoutQuery` on its access logger."""
    from uvicorn.config import LOGGING_CONFIG
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["without_query"] = {"()": WithoutQuery}
    config["loggers"]["uvicorn.access"]["filters"] = ["without_query"]
    return config


def server_config(app, limits: ApiLimits, host: str, port: int, log_level: str = "info"):
    """The uvicorn Config `serve` runs: the app over the guarded protocol, its access log without query
    strings."""
    import uvicorn
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, log_config=log_config(),
                          http=guarded_protocol(limits.header_timeout))
