"""citecheck.source.sandbox: a parser runs in a child process that its deadline, its caller's cancellation or
its parent's end kills; the host holds no secret; only JSON comes back."""
from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_pdf_text import wide_columns

from citecheck import cancellation
from citecheck.source import pdf_text, sandbox
from citecheck.web.fetch import html_text

ROOT = Path(__file__).resolve().parent.parent
SLOW = wide_columns(400)                      # one page whose reading order takes seconds (test_pdf_text)
ARGS = {"name": "slow.pdf", "max_pages": 300, "outline": False}


def children(pid: int) -> set[int]:
    """Live (not zombie) processes whose parent is `pid`."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def gone(pids: set[int], within: float = 30.0) -> bool:
    """True once none of `pids` is alive (zombies count as gone), polling up to `within` seconds."""
    ends = time.monotonic() + within
    while time.monotonic() < ends:
        alive = {pid for pid in pids if Path(f"/proc/{pid}").exists()
                 and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"}
        if not alive:
            return True
        time.sleep(0.1)
    return False


def test_a_parser_past_its_deadline_is_killed_and_says_how_far_it_got():
    with pytest.raises(sandbox.Failed):       # the host started and pypdf loaded: not part of the 0.5 s
        sandbox.run(pdf_text.read_pages, b"%PDF-", 5.0, {}, preload=("pypdf",))
    with pytest.raises(sandbox.TooSlow) as raised:
        sandbox.run(pdf_text.read_pages, SLOW, 0.5, ARGS, preload=("pypdf",))
    assert raised.value.progress == 1
    assert gone(children(sandbox._host.process.pid))


def test_a_cancelled_caller_kills_its_parser_and_gets_cancelled():
    event = threading.Event()
    threading.Timer(0.5, event.set).start()
    with cancellation.cancellable(event), pytest.raises(cancellation.Cancelled):
        sandbox.run(pdf_text.read_pages, SLOW, 60.0, ARGS, preload=("pypdf",))
    assert gone(children(sandbox._host.process.pid))


def test_a_parse_runs_in_its_callers_heavy_lane_and_its_deadline_starts_there():
    """The API's parse lane admits the parse (here after 1 s of waiting); the 0.5 s deadline counts from then."""
    entered = []

    @contextlib.contextmanager
    def lane():
        time.sleep(1.0)
        entered.append(time.monotonic())
        yield
    started = time.monotonic()
    with cancellation.cancellable(threading.Event(), heavy=lane), pytest.raises(sandbox.TooSlow):
        sandbox.run(pdf_text.read_pages, SLOW, 0.5, ARGS, preload=("pypdf",))
    assert len(entered) == 1 and time.monotonic() - started >= 1.5


def test_an_exception_in_the_parser_is_one_line_and_only_citecheck_functions_run():
    with pytest.raises(sandbox.Failed, match=r"^KeyError: 'name'$"):
        sandbox.run(pdf_text.read_pages, b"%PDF-", 5.0, {})
    with pytest.raises(sandbox.Failed, match="not a citecheck function"):
        sandbox.run(json.loads, b"{}", 5.0)


def test_the_host_holds_no_secret(monkeypatch):
    sandbox.shutdown()
    canary = "sk-canary-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    with pytest.raises(sandbox.Failed):
        sandbox.run(pdf_text.read_pages, b"", 5.0, {})
    environ = Path(f"/proc/{sandbox._host.process.pid}/environ").read_bytes()
    assert canary.encode() not in environ and b"OPENAI_API_KEY" not in environ
    sandbox.shutdown()


RUNNER = """
import sys, threading
from test_pdf_text import wide_columns
from citecheck.source import pdf_text, sandbox
from citecheck.web.fetch import html_text
threading.Thread(target=lambda: sandbox.run(pdf_text.read_pages, wide_columns(400), 600.0,
                 {"name": "x", "max_pages": 9, "outline": False}), daemon=True).start()
while sandbox._host is None:
    pass
print(sandbox._host.process.pid, flush=True)
sys.stdin.read()
"""


def test_the_host_and_its_parsers_end_when_their_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", RUNNER], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])})
    host = int(parent.stdout.readline())
    ends = time.monotonic() + 30
    while not children(host) and time.monotonic() < ends:           # the parser has been forked
        time.sleep(0.05)
    parsers = children(host)
    assert parsers, "the runner's parser should be running"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert gone({host} | parsers)


def every_child(pid: int) -> dict[int, str]:
    """Every process whose parent is `pid` (zombies too), with its state letter."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found[int(stat.parent.name)] = fields[0]
        except (OSError, IndexError, ValueError):
            pass
    return found


def no_child_left() -> bool:
    """The sandbox's host has no child (zombie or not) and this process no zombie."""
    return every_child(sandbox._host.process.pid) == {} and "Z" not in every_child(os.getpid()).values()


def test_a_finished_parse_leaves_no_child_behind():
    """The host reaps a child when it ends; `run` returns after that, not at the next request."""
    with pytest.raises(sandbox.Failed):
        sandbox.run(pdf_text.read_pages, b"%PDF-", 5.0, {})
    assert no_child_left()
    page = (ROOT / "data/site/pages/boiling-point.html").read_text(encoding="utf-8")
    assert "sea level" in html_text.extract(page, "http://127.0.0.1/boiling-point", 10.0)
    assert no_child_left()


def test_a_killed_parse_leaves_no_child_behind():
    with pytest.raises(sandbox.TooSlow):
        sandbox.run(pdf_text.read_pages, SLOW, 0.5, ARGS, preload=("pypdf",))
    assert no_child_left()


LIMITED = """
import resource, sys
from citecheck.web.fetch import html_text
print(resource.getrlimit(resource.RLIMIT_AS)[1])
print(html_text.extract(sys.stdin.read(), "http://127.0.0.1/boiling-point", 20.0))
"""


def test_a_parse_under_a_lower_inherited_memory_limit_still_reads_the_page():
    """`ulimit -v 1500000`: the child keeps the inherited hard limit (it cannot raise it) and parses."""
    limit = 1_500_000 * 1024

    def lower():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    page = (ROOT / "data/site/pages/boiling-point.html").read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", LIMITED], cwd=ROOT, input=page, capture_output=True,
                          text=True, timeout=120, preexec_fn=lower,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
    hard, text = done.stdout.split("\n", 1)
    assert int(hard) == limit and "sea level" in text


SOFT = """
import resource
from citecheck.source import sandbox
resource.setrlimit(resource.RLIMIT_AS, (1_000_000_000, resource.getrlimit(resource.RLIMIT_AS)[1]))
sandbox._limit("RLIMIT_AS", sandbox.MEMORY_CAP, sandbox.MEMORY_CAP)
print(*resource.getrlimit(resource.RLIMIT_AS))
"""


def test_a_lower_inherited_soft_limit_is_kept_too():
    done = subprocess.run([sys.executable, "-c", SOFT], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    expected = sandbox.MEMORY_CAP if hard == resource.RLIM_INFINITY else min(sandbox.MEMORY_CAP, hard)
    assert done.stdout.split() == ["1000000000", str(expected)], done.stderr
