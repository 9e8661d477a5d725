"""`citecheck mcp`: the four tools through a real MCP client session (the SDK's stdio client spawning
`python -m citecheck mcp`), offline, replaying the committed json_cache.json. Good calls give what the CLI
gives; bad input is one tool error line and the server keeps serving; no secret and no absolute path of
the documents folder ever comes back."""
from __future__ import annotations

import asyncio
import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from citecheck import extract
from citecheck.paths import ROOT

REPLAY = {"PYTHONPATH": str(ROOT), "CITECHECK_OFFLINE": "1", "CITECHECK_CACHE_STORE": "off",
          "CITECHECK_CACHE": str(ROOT / "json_cache.json")}
"""The server's whole environment beyond the SDK's defaults (PATH, HOME, ...): no key, replay only."""
SITE = "http://127.0.0.1:8731"
BOILING = "At sea level, pure water boils at 100 °C (212 °F)."
URLS = [f"{SITE}/articles/boiling-point", f"{SITE}/articles/boiling-point-table-2019"]
TOKEN = "Mcp-Test-Review-Token-7f3Kq9"
"""A REVIEW_TOKEN strong enough for Settings: a secret the server holds and must never send back."""
TOOLS = {"check_document", "verify_claim", "extract", "check_answer"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The documents folder: the RFC and its citations, two answers, the documents sent with an answer,
    and a symlink leading out of it."""
    root = tmp_path_factory.mktemp("documents")
    outside = tmp_path_factory.mktemp("outside") / "private.txt"
    outside.write_text("not for the tools\n", encoding="utf-8")
    for name in ("rfc7519.txt", "citations.json"):
        shutil.copy(ROOT / "data" / name, root / name)
    (root / "answers").mkdir()
    for name in ("anthropic_rfc.json", "markdown.md"):
        shutil.copy(ROOT / "data" / "answers" / name, root / "answers" / name)
    (root / "sent").mkdir()
    shutil.copy(ROOT / "data" / "rfc7519.txt", root / "sent" / "0-rfc7519.txt")
    (root / "escape.txt").symlink_to(outside)
    return root


def session(folder: Path, calls: list[tuple[str, dict]], env: dict | None = None, log: Path | None = None):
    """Spawn `python -m citecheck mcp --root FOLDER` through the SDK's stdio client, list its tools and
    make `calls` in one session: (tools, results)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "citecheck", "mcp", "--root", str(folder)],
                                   env={**REPLAY, **(env or {})}, cwd=str(ROOT))

    async def talk(errlog):
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, arguments) for name, arguments in calls]
    with open(log or os.devnull, "w", encoding="utf-8") as errlog:
        return asyncio.run(talk(errlog))


def text(result) -> str:
    return "".join(block.text for block in result.content)


def answer(result) -> dict:
    """A good call's JSON: its text and its structured content say the same."""
    assert not result.is_error, text(result)
    data = json.loads(text(result))
    assert result.structured_content == data
    return data


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **REPLAY, **(env or {})}
    return subprocess.run([sys.executable, "-m", "citecheck", *args], capture_output=True, text=True,
                          env=full, cwd=ROOT, timeout=120)


def cli_json(*args: str):
    done = cli(*args)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


# ---------------------------------------------------------------- good calls give what the CLI gives

@pytest.fixture(scope="module")
def served(folder, tmp_path_factory):
    """One session making every good call, auditing to its own AUDIT_DB."""
    audit_db = tmp_path_factory.mktemp("audit") / "audit.db"
    cited = json.loads((folder / "citations.json").read_text(encoding="utf-8"))
    calls = {
        "check file": ("check_document", {"source": "rfc7519.txt", "citations_file": "citations.json"}),
        "check inline": ("check_document", {"source": str(folder / "rfc7519.txt"), "citations": cited}),
        "check mixed": ("check_document", {"source": "rfc7519.txt", "citations": [
            cited[0], {"id": "B1", "claim": "A claim with no quote field.", "section": "4.1.4"},
            {"id": "B2", "claim": "A claim in no section.", "quote": None, "section": "99.9"},
            {"id": "N1", "claim": "The exp claim is optional.", "quote": None, "section": "4.1.4"}]}),
        "verify": ("verify_claim", {"claim": BOILING, "urls": URLS}),
        "extract markdown": ("extract", {"answer": (folder / "answers" / "markdown.md").read_text(encoding="utf-8")}),
        "extract with documents": ("extract", {"answer_file": "answers/anthropic_rfc.json", "documents": "sent"}),
        "check answer file": ("check_answer", {"source": "rfc7519.txt", "answer_file": "answers/anthropic_rfc.json"}),
        "check answer inline": ("check_answer", {"source": "rfc7519.txt", "answer": (
            folder / "answers" / "anthropic_rfc.json").read_text(encoding="utf-8"), "answer_format": "anthropic"}),
    }
    tools, results = session(folder, list(calls.values()), env={"AUDIT_DB": str(audit_db)})
    return tools, dict(zip(calls, results)), audit_db


def test_the_server_lists_the_four_tools_with_their_arguments(served):
    tools = {tool.name: tool for tool in served[0]}
    assert set(tools) == TOOLS
    assert all(tool.description for tool in tools.values())
    assert tools["verify_claim"].input_schema["required"] == ["claim", "urls"]
    assert set(tools["check_document"].input_schema["properties"]) == {"source", "citations", "citations_file",
                                                                        "format"}
    assert set(tools["check_answer"].input_schema["properties"]) == {"source", "answer", "answer_file",
                                                                      "answer_format", "format"}
    assert tools["extract"].input_schema["properties"]["format"]["enum"] == [
        "auto", "markdown", "anthropic", "openai", "perplexity"]


def test_check_document_gives_checks_rows_from_a_file_or_inline(served, folder):
    expected = cli_json("check", "--source", str(folder / "rfc7519.txt"), "--citations",
                        str(folder / "citations.json"), "--json")
    for call in ("check file", "check inline"):
        got = answer(served[1][call])
        assert got["document"] == "rfc7519.txt: 58,357 characters, 45 numbered sections"
        assert [{key: row[key] for key in cli_row} for row, cli_row in zip(got["rows"], expected)] == expected
        assert len(got["rows"]) == 9 and got["problems"] == []
    rows = {row["id"]: row for row in answer(served[1]["check file"])["rows"]}
    assert rows["C5"]["verdict"] == "fabricated" and rows["C9"]["diff"]
    assert rows["C1"]["section"] == "4.1.4" and rows["C1"]["claim"].startswith("A JWT must not be accepted")


def test_check_document_reports_bad_citations_and_checks_the_rest(served):
    got = answer(served[1]["check mixed"])
    assert [row["id"] for row in got["rows"]] == ["C1", "N1"]
    assert got["rows"][0]["verdict"] == "verified"
    assert got["rows"][1]["verdict"] == "judge_unavailable"           # not in the cache: replay only, no judge
    problems = got["problems"]
    assert problems[:2] == ["citation B1: missing field 'quote'",
                            "citation B2: field 'section' names unknown section '99.9' in rfc7519.txt"]
    assert problems[2].startswith("citecheck check: judge unavailable for 1 of 2 citations (N1)")


def test_verify_claim_gives_verifys_json(served):
    expected = cli_json("verify", "--claim", BOILING, "--url", URLS[0], "--url", URLS[1])
    got = answer(served[1]["verify"])
    assert got == expected
    assert got["overall"] == "supported" and [c["label"] for c in got["citations"]] == ["supported", "unreachable"]


def test_extract_gives_the_claims_and_citations_extract_writes(served, folder):
    got = answer(served[1]["extract markdown"])
    expected = extract.extract_file(ROOT / "data" / "answers" / "markdown.md")
    assert got["format"] == "markdown" and got["claims"] == expected.claims and got["citations"] == []
    assert got["problems"] == [str(p) for p in expected.problems] and "is never cited" in got["problems"][0]
    got = answer(served[1]["extract with documents"])
    rfc = (ROOT / "data" / "rfc7519.txt").read_text(encoding="utf-8")
    expected = extract.extract_file(ROOT / "data" / "answers" / "anthropic_rfc.json", documents=[rfc])
    assert got["format"] == "anthropic" and got["citations"] == expected.citations and got["claims"] == []
    assert got["documents"] == [{"name": "0-rfc7519.txt", "read": True}]
    assert [p.split(":")[0] for p in got["problems"]] == ["$.content[9].citations[0]", "$.content[15].citations[0]"]


def test_check_answer_gives_the_answer_report_check_answer_gives(served, folder):
    expected = cli_json("check-answer", str(folder / "answers" / "anthropic_rfc.json"), "--source",
                        str(folder / "rfc7519.txt"), "--json")
    for call in ("check answer file", "check answer inline"):
        got = answer(served[1][call])
        assert got["markers"] == expected["markers"] and got["sentences"] == expected["sentences"]
        assert got["summary"] == expected["summary"] and got["summary"]["citation_precision"] == 0.375
        assert len(got["markers"]) == 8


def test_checks_and_verifies_are_audited_as_the_cli_audits_them(served):
    with sqlite3.connect(served[2]) as conn:
        rows = conn.execute("SELECT batch, url, COUNT(*) FROM citations GROUP BY batch, url ORDER BY batch, url")
        assert rows.fetchall() == [
            ("check:citations.json", "rfc7519.txt", 9), ("check:mcp-citations", "rfc7519.txt", 10),
            ("verify", URLS[0], 1), ("verify", URLS[1], 1)]


# ---------------------------------------------------------------- bad input: a tool error, the server goes on

BAD = [
    ("verify_claim", {"claim": BOILING, "urls": URLS[:1], "url": URLS[0]},
     "verify_claim: unknown argument url; it takes claim, urls"),
    ("check_answer", {"source": "rfc7519.txt", "answer": "x", "strict": True, "depth": 2},
     "check_answer: unknown arguments depth, strict; it takes answer, answer_file, answer_format, source, format"),
    ("verify_claim", {"urls": URLS[:1]}, "verify_claim: invalid arguments: claim: Field required"),
    ("verify_claim", {"claim": BOILING, "urls": "not a list"}, "urls: Input should be a valid list"),
    ("check_document", {"source": "rfc7519.txt", "citations": [], "format": "docx"},
     "check_document: invalid arguments: format: Input should be 'rfc', 'markdown', 'text' or 'pdf'"),
    ("verify_claim", {"claim": "   ", "urls": URLS[:1]}, "claim must not be empty"),
    ("verify_claim", {"claim": "x" * 61, "urls": URLS[:1]}, "claim: 61 characters, over the 60-character limit "
                                                             "(CLAIM_MAX_CHARS)"),
    ("verify_claim", {"claim": BOILING, "urls": URLS + URLS[:1]}, "urls: 3 URLs, over the limit of 2 (API_MAX_URLS)"),
    ("verify_claim", {"claim": BOILING, "urls": []}, "urls: give at least one URL"),
    ("verify_claim", {"claim": BOILING, "urls": ["file:///etc/passwd"]}, "urls[0] 'file:///etc/passwd' is not an "
                                                                         "http(s) URL with a host"),
    ("check_document", {"source": "missing.txt", "citations": []}, "source: no file 'missing.txt' in the documents "
                                                                    "folder"),
    ("check_document", {"source": "../outside/private.txt", "citations": []}, "outside the documents folder"),
    ("check_document", {"source": "/etc/hostname", "citations": []}, "source: /etc/hostname is outside the "
                                                                      "documents folder; not read"),
    ("check_document", {"source": "escape.txt", "citations": []}, "escape.txt: a link out of the documents folder"),
    ("check_document", {"source": "sent", "citations": []}, "sent is a directory, not a file"),
    ("check_document", {"source": "rfc7519.txt"}, "give exactly one of citations or citations_file"),
    ("check_document", {"source": "rfc7519.txt", "citations": [], "citations_file": "citations.json"},
     "give exactly one of citations or citations_file (got citations, citations_file)"),
    ("check_document", {"source": "answers/markdown.md", "citations_file": "answers/anthropic_rfc.json"},
     "anthropic_rfc.json must hold a JSON list of citations"),
    ("extract", {"answer": "x" * 2001}, "answer: 2,001 bytes, over the 2,000-byte limit for an answer "
                                        "(ANSWER_MAX_BYTES)"),
    ("extract", {"answer_file": "answers/anthropic_rfc.json"}, "over the 2,000-byte limit for an answer"),
    ("extract", {"answer": "{not json"}, "cannot tell the answer's format: line 1:2"),
    ("extract", {"answer": "Text [1].", "documents": "../"}, "documents: ../ is outside the documents folder"),
    ("extract", {"answer": "Text [1].", "documents": "rfc7519.txt"}, "no directory 'rfc7519.txt' in the documents"),
    ("check_answer", {"answer": "Water boils [1].", "answer_format": "markdown", "source": "missing.txt"},
     "source: no file 'missing.txt' in the documents folder"),
    ("no_such_tool", {}, "Unknown tool: no_such_tool"),
]


def test_bad_input_is_one_tool_error_line_and_the_server_keeps_serving(folder, tmp_path):
    log = tmp_path / "server.log"
    calls = [(name, arguments) for name, arguments, _ in BAD] + [("verify_claim", {"claim": BOILING,
                                                                                   "urls": URLS[:1]})]
    _, results = session(folder, calls, env={"CLAIM_MAX_CHARS": "60", "API_MAX_URLS": "2",
                                             "ANSWER_MAX_BYTES": "2000"}, log=log)
    for (name, arguments, expected), result in zip(BAD, results):
        said = text(result)
        assert result.is_error, (name, arguments, said)
        assert expected in said and len(said.splitlines()) == 1, (name, arguments, said)
        assert str(folder) not in said and "Traceback" not in said
    assert answer(results[-1])["overall"] == "supported"
    assert "Traceback" not in log.read_text(encoding="utf-8")


def test_an_offline_cache_miss_is_a_tool_error_saying_how_to_run_it_live(folder):
    _, (result,) = session(folder, [("verify_claim", {"claim": BOILING, "urls": [f"{SITE}/never-recorded"]})])
    assert result.is_error and len(text(result).splitlines()) == 1
    assert "fetch.direct (model direct, key " in text(result) and "unset CITECHECK_OFFLINE" in text(result)


# ---------------------------------------------------------------- secrets

def test_secrets_never_come_back(folder, tmp_path):
    """A secret the server holds, sent back to it in a URL, a file name, a claim and an answer, returns as
    its variable's name."""
    log = tmp_path / "server.log"
    calls = [("verify_claim", {"claim": BOILING, "urls": [f"ftp://127.0.0.1/{TOKEN}"]}),
             ("check_document", {"source": f"{TOKEN}.txt", "citations": []}),
             ("check_document", {"source": "rfc7519.txt", "citations": [
                 {"id": "S1", "claim": f"The token {TOKEN} is secret.", "quote": None, "section": "4.1.4"}]}),
             ("extract", {"answer": f"Water boils [1].\n\n[1]: {SITE}/a?key={TOKEN}"})]
    _, results = session(folder, calls, env={"REVIEW_TOKEN": TOKEN}, log=log)
    said = [text(result) + json.dumps(result.structured_content) for result in results]
    assert [result.is_error for result in results] == [True, True, False, False]
    assert all(TOKEN not in each and "<REVIEW_TOKEN>" in each for each in said), said
    assert TOKEN not in log.read_text(encoding="utf-8")


# ---------------------------------------------------------------- malformed messages, parse lane

def raw_session(folder: Path, lines: list[str]) -> list[dict]:
    """Spawn the server on a pipe, initialize it, send `lines` one by one and return every reply to them
    (each line is answered, or the wait for its reply times out), then a ping's."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **REPLAY}
    server = subprocess.Popen([sys.executable, "-m", "citecheck", "mcp", "--root", str(folder)], cwd=ROOT,
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    replies = []

    def exchange(line: str) -> dict:
        server.stdin.write(line.encode("utf-8") + b"\n")
        server.stdin.flush()
        ready, _, _ = select.select([server.stdout], [], [], 20)
        assert ready, f"no reply to {line[:60]!r}"
        return json.loads(server.stdout.readline())
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "raw", "version": "1"}}
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        assert "result" in exchange(json.dumps(initialize))
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        replies = [exchange(line) for line in [*lines, '{"jsonrpc": "2.0", "id": 99, "method": "ping"}']]
    finally:
        server.stdin.close()
        server.wait(timeout=20)
    return replies


def test_malformed_messages_each_get_a_json_rpc_error_and_the_server_keeps_serving(folder):
    lines = ["this is not JSON", "[" * 100_000 + "]" * 100_000,
             '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "extract", '
             '"arguments": {"answer": "\\ud800"}}}',
             '{"jsonrpc": "2.0", "id": 4}', '{"jsonrpc": "2.0", "id": 5, "method": 17}', "42"]
    replies = raw_session(folder, lines)
    codes = [(reply["id"], reply["error"]["code"]) for reply in replies[:-1]]
    assert codes == [(None, -32700), (None, -32700), (None, -32700), (4, -32600), (5, -32600), (None, -32600)]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}


def test_sandboxed_parses_wait_for_the_api_s_parse_slots(folder, monkeypatch):
    """Twelve calls that each parse (a PDF, say): at most ApiLimits.parse_slots parse at once."""
    import time

    import anyio

    from citecheck import cancellation, config
    from citecheck.context import RunContext
    from citecheck.serve.mcp import inputs, server, tools
    parses = []                                       # (start, end) of each parse

    def extract(self, answer: str = "") -> dict:
        with cancellation.heavy():
            started = time.monotonic()
            time.sleep(0.2)
            parses.append((started, time.monotonic()))
        return {"claims": []}
    monkeypatch.setattr(tools.Tools, "extract", extract)
    settings = config.Settings.from_env({**REPLAY, "API_CONCURRENCY": "1"})
    built = server.build(RunContext.build(settings), inputs.Folder.at(str(folder)))

    async def twelve() -> None:
        async with anyio.create_task_group() as calls:
            for _ in range(12):
                calls.start_soon(built.call_tool, "extract", {"answer": "a"})
    anyio.run(twelve)
    most = max(sum(start <= moment < end for start, end in parses) for moment, _ in parses)
    assert len(parses) == 12 and most == settings.api.parse_slots == 2
