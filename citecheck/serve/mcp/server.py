"""server: `python -m citecheck mcp` — the four tools served over stdio on the official MCP Python SDK.

Rules:
- One run: the CLI's RunContext (settings read once), the gate read once at start, the documents folder
  fixed by `--root`. Each call runs in a worker thread, so the server keeps answering; a call the client
  cancels stops at the flow's next `cancellation.check()` and its result is dropped. A sandboxed parse
  (a PDF, a page) waits for one of the API's parse slots (`ApiLimits.parse_slots`, the parse lane of
  `cancellation`), so many PDFs at once cost what that many parses cost, not one each.
- An argument a tool does not take refuses the call, naming it and the ones the tool takes; a missing or
  mistyped one names the argument and what is wrong (never the value sent).
- Every failure is a tool error (`isError`), never a crash of the server: bad input and the operator's
  errors (an offline cache miss, a missing key, an unreadable file) as their one line; anything else as
  "internal error (Type)", its traceback on stderr.
- A line that is not a JSON-RPC message gets one JSON-RPC error reply and the server keeps serving:
  -32700 (parse error, id null) for text that is not JSON (a lone surrogate, nesting too deep for the
  parser included), -32600 (invalid request; the id when it has one) for JSON that is not a message.
- Nothing a tool returns (rows, problems, errors) holds a secret's value (`Secrets.redact`: the variable's
  name instead) or the documents folder's absolute path (paths inside it print relative). stdout is the
  protocol's; anything else goes to stderr.
"""
from __future__ import annotations

import argparse
import functools
import inspect
import sys
import threading
import traceback
from typing import Any, Callable

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ... import __version__, cancellation, config
from ...cache import CacheError
from ...context import RunContext
from ...paths import shown
from ...judge.judges import JudgeUnavailable
from ...verdict.review import Gate
from .inputs import Folder
from .tools import Tools

TOOLS = ("check_document", "verify_claim", "extract", "check_answer")
EXPECTED = (ValueError, OSError, CacheError, config.MissingSetting, JudgeUnavailable, cancellation.Cancelled)
"""Failures reported as their own one line (bad input, the operator's to fix); anything else is a bug."""
INSTRUCTIONS = ("citecheck checks whether citations hold up. check_document: quoted citations against a "
                "source document; check_answer: an LLM answer's quoted citations of its source; "
                "verify_claim: a claim against the URLs it cites; extract: an LLM answer into claims (URLs) "
                "and citations (quotes). Files are named relative to the server's documents folder.")


def invalid_arguments(tool: str, error: ValidationError) -> str:
    """One line: each argument that failed validation and why (the values sent are not repeated)."""
    wrong = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in error.errors())
    return f"{tool}: invalid arguments: {wrong}"


def malformed_reply(error: Exception) -> mcp_types.JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read as a message (module rules)."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    if not problems or any(problem["type"] == "json_invalid" for problem in problems):
        return mcp_types.JSONRPCError(jsonrpc="2.0", id=None, error=mcp_types.ErrorData(
            code=mcp_types.PARSE_ERROR, message="parse error: the line is not JSON text"))
    sent = next((p["input"] for p in problems if isinstance(p.get("input"), dict)), {})
    ident = sent.get("id")
    if not (isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))):
        ident = None
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=ident, error=mcp_types.ErrorData(
        code=mcp_types.INVALID_REQUEST, message="invalid request: not a JSON-RPC 2.0 message"))


class CitecheckServer(MCPServer):
    """The SDK's server, refusing arguments a tool does not take (the SDK would drop them silently) and
    answering malformed lines (`malformed_reply`; the SDK would drop them without a word)."""

    def __init__(self, takes: dict[str, tuple[str, ...]], **options):
        super().__init__(**options)
        self.takes = takes

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        takes = self.takes.get(name)
        unknown = sorted(set(arguments) - set(takes)) if takes is not None else []
        if unknown:
            raise ToolError(f"{name}: unknown argument{'s' * (len(unknown) > 1)} {', '.join(unknown)}; "
                            f"it takes {', '.join(takes)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(invalid_arguments(name, exc.__cause__)) from None
            raise


    async def run_stdio_async(self) -> None:
        async with stdio_server() as (incoming, outgoing):
            messages, read = anyio.create_memory_object_stream(0)

            async def screen() -> None:
                async with messages:
                    async for item in incoming:
                        if isinstance(item, Exception):
                            await outgoing.send(SessionMessage(malformed_reply(item)))
                        else:
                            await messages.send(item)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(screen)
                lowlevel = self._lowlevel_server
                await lowlevel.run(read, outgoing, lowlevel.create_initialization_options())


def cleaner(secrets: config.Secrets, folder: Folder) -> Callable[[Any], Any]:
    """A function giving a result (or a message) with every string cleaned: secret values replaced by their
    variable's name, the documents folder's absolute path dropped."""
    def clean(value):
        if isinstance(value, str):
            return folder.shown(secrets.redact(value))
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(item) for item in value]
        return value
    return clean


def failure(exc: Exception, clean: Callable[[Any], Any]) -> str:
    """The tool error's text: an expected failure's own line; a bug's type, its traceback on stderr."""
    if isinstance(exc, EXPECTED):
        return clean(str(exc))
    print(clean("".join(traceback.format_exception(exc))), file=sys.stderr)
    return f"internal error ({type(exc).__name__}); the server's stderr has the traceback"


def served(tool: Callable[..., dict], clean: Callable[[Any], Any], parse_lane: Callable | None = None
           ) -> Callable[..., Any]:
    """`tool` as the SDK calls it: in a worker thread, cancellable, its parses in `parse_lane`, its result
    cleaned, any failure a ToolError (module rules). The signature (so the input schema) and description
    are the tool's."""
    @functools.wraps(tool)
    async def call(**arguments):
        cancel = threading.Event()

        def work():
            with cancellation.cancellable(cancel, heavy=parse_lane):
                return tool(**arguments)
        try:
            return clean(await anyio.to_thread.run_sync(work, abandon_on_cancel=True))
        except Exception as exc:               # noqa: BLE001 - a tool error, never a crash of the server
            raise ToolError(failure(exc, clean)) from None
        finally:
            cancel.set()                       # cancelled: the work stops at its next check; done: a no-op
    return call


def build(ctx: RunContext, folder: Folder) -> CitecheckServer:
    """The server of one run: the four tools over `ctx`, its gate (read now) and `folder`."""
    tools = Tools(ctx, Gate.of(ctx.settings), folder)
    methods = [getattr(tools, name) for name in TOOLS]
    server = CitecheckServer({m.__name__: tuple(inspect.signature(m).parameters) for m in methods},
                             name="citecheck", version=__version__, instructions=INSTRUCTIONS,
                             log_level="WARNING")
    clean = cleaner(ctx.settings.secrets, folder)
    parse_lane = cancellation.lane(threading.BoundedSemaphore(ctx.settings.api.parse_slots))
    for method in methods:
        server.add_tool(served(method, clean, parse_lane), name=method.__name__,
                        description=inspect.getdoc(method))
    return server


# ---------------------------------------------------------------- CLI: python -m citecheck mcp

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", default=".", metavar="DIR",
                        help="the documents folder: the only place the tools read files from "
                             "(default: the current directory)")


def run(args: argparse.Namespace, ctx: RunContext) -> int:
    """Serve the tools on stdin/stdout until the client closes them."""
    folder = Folder.at(args.root)
    server = build(ctx, folder)
    print(config.printable(f"citecheck mcp: serving {', '.join(TOOLS)} on stdio; documents folder "
                           f"{shown(folder.root)}"), file=sys.stderr)
    server.run("stdio")
    return 0
