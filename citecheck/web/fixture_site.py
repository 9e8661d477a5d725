"""fixture_site: the fixture site in data/site/, served on 127.0.0.1 by a small real HTTP server.

Rules:
- data/site/routes.json maps each path to a page (pages/NAME wrapped in layout.html unless
  "layout": false) or a raw file, with an optional status, redirect (Location) and delay; any
  other path is a 404. Query strings are ignored.
- The pages are fixtures written for this project (data/site/README.md), not copies of real sites.
- A fixed port (CITECHECK_SITE_PORT, default 8731) keeps the cited URLs, and so the crawl cache keys,
  identical from run to run; port=0 picks a free port (tests).
- If the fixed port already serves this fixture site (another notebook started it), it is reused
  and left running; a port held by anything else is an error naming the variable.

    with fixture_site.serve() as base_url:            # a block
        fetch.fetch(base_url + "/articles/boiling-point", ctx)
    server = fixture_site.start(); ...; server.stop()  # notebook cells
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import html
import json
import mimetypes
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..config import Settings
from ..paths import ROOT

SITE_DIR = ROOT / "data" / "site"
HOST = "127.0.0.1"
DEFAULT_PORT = Settings().site_port
MARKER = "X-Fixture-Site"
"""Response header that identifies this server, so a second notebook can reuse it."""
MARKER_VALUE = "citecheck"
MISSING = {"status": 404, "page": "not-found.html", "title": "Page not found"}


def load_routes(root: Path | None = None) -> dict[str, dict]:
    """routes.json as {path: route}; a route must name a page, a file or a redirect."""
    root = Path(root) if root is not None else SITE_DIR
    path = root / "routes.json"
    try:
        routes = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON (line {exc.lineno})") from None
    for route_path, route in routes.items():
        if not route_path.startswith("/") or not ({"page", "file", "redirect"} & set(route)):
            raise ValueError(f"{path}: route {route_path!r} must start with / and name a page, file or redirect")
    return routes


def pages(root: Path | None = None, *, include_test_only: bool = False) -> list[dict]:
    """The fixture pages with what each one demonstrates and the label/reason fetch should give."""
    rows = []
    for route_path, route in load_routes(root).items():
        if "expect" not in route or (route.get("test_only") and not include_test_only):
            continue
        rows.append({"path": route_path, "about": route.get("about", ""),
                     "status": route.get("status", 200), **route["expect"]})
    return rows


def _render(root: Path, route: dict) -> tuple[bytes, str]:
    """(body, content type) for one route."""
    if "file" in route:
        file = root / route["file"]
        kind = route.get("content_type") or mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        return file.read_bytes(), kind
    if "page" not in route:
        return b"", route.get("content_type", "text/html; charset=utf-8")
    body = (root / "pages" / route["page"]).read_text(encoding="utf-8")
    if route.get("layout", True):
        layout = (root / "layout.html").read_text(encoding="utf-8")
        body = layout.replace("{title}", html.escape(route.get("title", ""))).replace("{content}", body)
    return body.encode("utf-8"), route.get("content_type", "text/html; charset=utf-8")


def _handler(root: Path, routes: dict[str, dict]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "citecheck-fixture-site/1"

        def _answer(self, with_body: bool) -> None:
            route = routes.get(unquote(urlsplit(self.path).path), MISSING)
            if route.get("delay"):
                time.sleep(float(route["delay"]))
            body, kind = _render(root, route)
            self.send_response(int(route.get("status", 200)))
            self.send_header(MARKER, MARKER_VALUE)
            if "redirect" in route:
                self.send_header("Location", route["redirect"])
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up (timeouts)
                    self.wfile.write(body)

        def do_GET(self):  # noqa: N802 (http.server's naming)
            self._answer(True)

        def do_HEAD(self):  # noqa: N802
            self._answer(False)

        def log_message(self, format, *args):  # quiet: tests and notebooks print their own output
            pass

    return Handler


def _is_fixture_site(host: str, port: int) -> bool:
    """True when host:port already answers as this fixture site."""
    request = urllib.request.Request(f"http://{host}:{port}/", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.headers.get(MARKER) == MARKER_VALUE
    except urllib.error.HTTPError as exc:
        return exc.headers.get(MARKER) == MARKER_VALUE
    except OSError:
        return False


class FixtureSite:
    """A running fixture site; `owned` is False when an already-running one was reused."""

    def __init__(self, host: str, port: int, server: ThreadingHTTPServer | None = None):
        self.host, self.port, self._server = host, port, server
        self._thread: threading.Thread | None = None
        if server is not None:
            self._thread = threading.Thread(target=server.serve_forever, name=f"fixture-site-{port}",
                                            daemon=True)
            self._thread.start()

    @property
    def owned(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def stop(self) -> None:
        """Shut the server down (a reused server is left to whoever started it)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FixtureSite":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start(port: int | None = None, host: str = HOST, root: Path | None = None) -> FixtureSite:
    """Serve the fixture site on host:port (default 8731, the CITECHECK_SITE_PORT default; 0 = a free port)."""
    root = Path(root) if root is not None else SITE_DIR
    routes = load_routes(root)
    port = DEFAULT_PORT if port is None else port
    try:
        server = ThreadingHTTPServer((host, port), _handler(root, routes))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE and port and _is_fixture_site(host, port):
            return FixtureSite(host, port)
        if exc.errno == errno.EADDRINUSE:
            raise OSError(exc.errno, f"port {port} on {host} is in use by another program; "
                                     "set CITECHECK_SITE_PORT to a free port") from None
        raise
    server.daemon_threads = True
    return FixtureSite(host, server.server_address[1], server)


@contextlib.contextmanager
def serve(port: int | None = None, host: str = HOST, root: Path | None = None):
    """`with serve() as base_url:` the fixture site runs for the block."""
    with start(port, host, root) as running:
        yield running.base_url


def main(argv: list[str] | None = None) -> int:
    """`python -m citecheck.web.fixture_site [--port N]`: serve the fixture site until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m citecheck.web.fixture_site", description=main.__doc__)
    parser.add_argument("--port", type=int, default=None, help="default: CITECHECK_SITE_PORT (8731)")
    parser.add_argument("--host", default=HOST)
    args = parser.parse_args(argv)
    running = start(Settings.from_env().site_port if args.port is None else args.port, args.host)
    print(f"fixture site at {running.base_url}" + ("" if running.owned else " (already running)"), flush=True)
    if not running.owned:
        return 0
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        running.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
