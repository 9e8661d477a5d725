"""Parsers of untrusted bytes (pypdf, lxml, trafilatura) run in a child process that a deadline kills mid-page,
under a memory cap; only JSON comes back.

Rules:
- `run(function, payload, seconds, args)` returns `function(payload, args, progress)` computed in a child
  process. `function` is a module-level function of citecheck, named (module:qualname), never pickled;
  `args` and the result are JSON data; `progress(value)` reports how far the child got.
- Children are forked by one host process per parent (`python -m citecheck.source.sandbox`, started at the
  first call, without the parent's secrets). The host is single-threaded; it imports each function's
  module and `preload` once, so a fork starts with its parser loaded. The host ends, killing its
  children, when its parent does (its control socket closes).
- A child's address space is capped at MEMORY_CAP (RLIMIT_AS) and its CPU at the deadline plus 2 s
  (RLIMIT_CPU: it dies even if its parent is gone), each no higher than the soft and hard limits it
  inherits (`ulimit -v` below 2 GiB: that limit); it reads the payload from an anonymous in-memory file
  (memfd; an unlinked temporary file where there is none) and writes length-prefixed JSON frames (progress,
  then one result) to a pipe.
- The host reaps a child as soon as it ends (done or killed) and then closes its copy of the child's pipe;
  `run` returns or raises once that pipe has ended (waiting at most REAP_SECONDS), so no child of a
  finished parse is left, not even a zombie.
- A call runs in its caller's heavy lane (`cancellation.heavy`; the API's parse slots) and its deadline
  starts when the lane admits it.
- Outcomes: past `seconds` (wall clock from admission) the child is killed -> TooSlow (with the last
  progress); the caller cancelled (`cancellation`) -> killed, Cancelled; MemoryError or an answer over
  RESULT_MAX_BYTES -> TooBig; another exception -> Failed (type and first line); no answer (a crash,
  a signal) -> Crashed. The parent parses frames with `json.loads` alone: nothing a child sends is
  unpickled.
"""
from __future__ import annotations

import importlib
import json
import math
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import cancellation, config

MEMORY_CAP = 2 * 1024 ** 3
"""A child's address space (RLIMIT_AS): 2 GiB."""
RESULT_MAX_BYTES = 64 * 1024 ** 2
"""The largest answer a child may send (JSON bytes): 64 MiB."""
POLL_SECONDS = 0.25
"""How often a waiting parent checks for cancellation."""
REAP_SECONDS = 5.0
"""How long a parse's caller waits, after its answer or its kill, for the host to have reaped the child."""
_HEAD = struct.Struct(">I")


class SandboxError(Exception):
    """The child gave no result; str(error) is one line."""


class TooSlow(SandboxError):
    def __init__(self, seconds: float, progress):
        self.progress = progress
        super().__init__(f"stopped after {seconds:g} s")


class TooBig(SandboxError):
    pass


class Failed(SandboxError):
    pass


class Crashed(SandboxError):
    pass


# ---------------------------------------------------------------- the parent's side

class _Host:
    """The forking host process and the parent's end of its control socket."""

    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = str(Path(__file__).resolve().parents[2])
        env = {k: v for k, v in config.child_env(quiet=True).items() if k not in config.SECRETS}
        env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
        self.process = subprocess.Popen(
            [sys.executable, "-m", "citecheck.source.sandbox", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=env, close_fds=True)
        theirs.close()
        self.socket, self.owner = ours, os.getpid()

    def send(self, message: dict, fds: list[int] = ()) -> None:
        socket.send_fds(self.socket, [json.dumps(message).encode()], list(fds))

    def close(self) -> None:
        self.socket.close()
        self.process.wait()


_host: _Host | None = None
_host_lock = threading.Lock()
_jobs = iter(range(1, sys.maxsize))


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message, cut at 160 characters."""
    first = (str(exc).strip().splitlines() or [""])[0][:160]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _send(message: dict, fds: list[int] = ()) -> None:
    """Send to the host (started, or restarted once if it died)."""
    global _host
    with _host_lock:
        for attempt in (1, 2):
            if _host is None or _host.owner != os.getpid() or _host.process.poll() is not None:
                _host = _Host()                                   # (a forked copy of this process gets its own)
            try:
                _host.send(message, fds)
                return
            except OSError:
                if attempt == 2:
                    raise
                _host = None


def shutdown() -> None:
    """Stop the host (it starts again at the next call)."""
    global _host
    with _host_lock:
        if _host is not None:
            _host.close()
            _host = None


def run(function: Callable, payload: bytes, seconds: float, args: dict | None = None, *,
        preload: tuple[str, ...] = (), memory: int = MEMORY_CAP):
    """`function(payload, args, progress)` in a child process, within `seconds` (module rules), in the
    caller's heavy lane (`cancellation.heavy`): the deadline starts once the lane lets it in."""
    with cancellation.heavy():
        return _run(function, payload, seconds, args, preload, memory)


def _run(function: Callable, payload: bytes, seconds: float, args: dict | None, preload: tuple[str, ...],
         memory: int):
    ends = time.monotonic() + seconds
    job = next(_jobs)
    head = json.dumps(args or {}).encode()
    read_end, write_end = os.pipe()
    try:
        with _anonymous_file() as carried:
            carried.write(_HEAD.pack(len(head)) + head)
            carried.write(payload)
            carried.flush()
            _send({"run": job, "function": f"{function.__module__}:{function.__qualname__}",
                   "preload": list(preload), "cpu": math.ceil(seconds) + 2, "memory": memory},
                  [carried.fileno(), write_end])
        os.close(write_end)
        write_end = None
        return _answer(job, read_end, ends, seconds)
    finally:
        if write_end is not None:
            os.close(write_end)
        _ended(read_end, REAP_SECONDS)
        os.close(read_end)


def _ended(fd: int, seconds: float) -> None:
    """Read the pipe to its end (the child gone and reaped: module rules), for at most `seconds`."""
    ends = time.monotonic() + seconds
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while (left := ends - time.monotonic()) > 0 and poller.poll(left * 1000):
        if not os.read(fd, 1 << 20):
            return


def _anonymous_file():
    """A file with no name: in memory (memfd) where the kernel has it, else an unlinked temporary file."""
    if hasattr(os, "memfd_create"):
        return open(os.memfd_create("citecheck-payload", os.MFD_CLOEXEC), "w+b")
    return tempfile.TemporaryFile()


def _answer(job: int, fd: int, ends: float, seconds: float):
    """Read the child's frames until its result, the deadline, a cancellation or the pipe's end."""
    buffer, progress = bytearray(), None
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    try:
        while True:
            while len(buffer) >= _HEAD.size:
                size = _HEAD.unpack_from(buffer)[0]
                if size > RESULT_MAX_BYTES:
                    raise TooBig(f"an answer over {RESULT_MAX_BYTES:,} bytes")
                if len(buffer) < _HEAD.size + size:
                    break
                try:
                    frame = json.loads(bytes(buffer[_HEAD.size:_HEAD.size + size]))
                except (ValueError, RecursionError):
                    frame = None
                del buffer[:_HEAD.size + size]
                if not isinstance(frame, dict):
                    raise Crashed("an answer that is not a JSON frame")
                if "progress" in frame:
                    progress = frame["progress"]
                    continue
                return _outcome(frame)
            left = ends - time.monotonic()
            if left <= 0:
                raise TooSlow(seconds, progress)
            cancellation.check()
            if poller.poll(min(left, POLL_SECONDS) * 1000):
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise Crashed("the parser stopped without an answer")
                buffer += chunk
    except BaseException:
        try:
            _send({"kill": job})
        except OSError:
            pass                                                  # no host: no child either
        raise


def _outcome(frame: dict):
    if "result" in frame:
        return frame["result"]
    if "memory" in frame:
        raise TooBig("over its memory cap" if frame["memory"] is True else str(frame["memory"]))
    raise Failed(str(frame.get("error", "an unreadable answer"))[:200])


# ---------------------------------------------------------------- the host and its children

def _frame(fd: int, value: dict) -> None:
    data = json.dumps(value).encode()
    if len(data) > RESULT_MAX_BYTES:
        data = json.dumps({"memory": f"an answer of {len(data):,} bytes, over {RESULT_MAX_BYTES:,}"}).encode()
    data = _HEAD.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data):]


def _child(function: Callable, carried: int, out: int, cpu: int, memory: int) -> None:
    """In the forked child: cap, read, compute, answer; never returns."""
    status = 1
    try:
        _limit("RLIMIT_CPU", cpu, cpu + 1)
        _limit("RLIMIT_AS", memory, memory)
        try:
            with os.fdopen(carried, "rb") as file:
                file.seek(0)
                size = _HEAD.unpack(file.read(_HEAD.size))[0]
                args = json.loads(file.read(size))
                payload = file.read()
            _frame(out, {"result": function(payload, args, lambda value: _frame(out, {"progress": value}))})
        except MemoryError:
            payload = None
            _frame(out, {"memory": True})
        except Exception as exc:                                  # noqa: BLE001 - reported, one line
            _frame(out, {"error": one_line(exc)})
        status = 0
    finally:
        os._exit(status)


def _limit(name: str, soft: int, hard: int) -> None:
    """Set resource limit `name` to (soft, hard), each no higher than the one inherited: a hard limit an
    unprivileged process cannot raise, a soft one the operator chose."""
    import resource
    which = getattr(resource, name)
    inherited = resource.getrlimit(which)

    def capped(value: int, limit: int) -> int:
        return value if limit == resource.RLIM_INFINITY else min(value, limit)
    hard = capped(hard, inherited[1])
    resource.setrlimit(which, (min(capped(soft, inherited[0]), hard), hard))


def _resolve(name: str, preload: list[str]) -> Callable:
    module, _, qualname = name.partition(":")
    if not module.startswith("citecheck."):
        raise ValueError(f"not a citecheck function: {name}")
    for extra in preload:
        importlib.import_module(extra)
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


@dataclass
class _Forked:
    """A forked child as the host holds it: its pid, its pipe to the parent, and a pidfd that polls readable
    when it ends (None where the kernel has none: then the host polls every POLL_SECONDS)."""
    pid: int
    out: int
    ended: int | None

    def close(self) -> None:
        os.close(self.out)
        if self.ended is not None:
            os.close(self.ended)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _reap(live: dict[int, _Forked], poller, wait: bool = False) -> None:
    """Reap every child that has ended (with `wait`: every child, after it ends), closing what the host
    held for it."""
    for job, child in list(live.items()):
        try:
            done = os.waitpid(child.pid, 0 if wait else os.WNOHANG)[0]
        except ChildProcessError:
            done = child.pid
        if done:
            if child.ended is not None:
                poller.unregister(child.ended)
            child.close()
            del live[job]


def serve(control: socket.socket) -> None:
    """The host's loop: fork a child per run request, kill on request, reap each child when it ends (module
    rules); end, killing and reaping its children, with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)                  # the parent decides (a terminal's ^C)
    live: dict[int, _Forked] = {}                                 # job -> its child
    poller = select.poll()
    poller.register(control, select.POLLIN)
    while True:
        blind = any(child.ended is None for child in live.values())
        ready = {fd for fd, _ in poller.poll(POLL_SECONDS * 1000 if blind else None)}
        _reap(live, poller)
        if control.fileno() not in ready:
            continue
        try:
            message, fds, _flags, _address = socket.recv_fds(control, 65536, 2)
        except OSError:
            message, fds = b"", []
        if not message:
            for child in live.values():
                os.kill(child.pid, signal.SIGKILL)
            _reap(live, poller, wait=True)
            return
        request = json.loads(message)
        if "kill" in request:
            if request["kill"] in live:                           # not reaped yet: the pid is still its own
                os.kill(live[request["kill"]].pid, signal.SIGKILL)
            continue
        carried, out = fds
        try:
            function = _resolve(request["function"], request["preload"])
        except Exception as exc:                                  # noqa: BLE001 - the caller's error, reported
            _frame(out, {"error": f"{type(exc).__name__}: {exc}"})
            os.close(carried)
            os.close(out)
            continue
        pid = os.fork()
        if pid == 0:
            control.close()
            for other in live.values():                           # others' pipes end with their children
                other.close()
            _child(function, carried, out, request["cpu"], request["memory"])
        os.close(carried)
        live[request["run"]] = forked = _Forked(pid, out, _pidfd(pid))
        if forked.ended is not None:
            poller.register(forked.ended, select.POLLIN)


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
