"""`python -m citecheck <command>`: each sub-command lives in the module of its stage.

Rule: a module named here provides `add_arguments(parser)` and `run(args, ctx) -> int`; the module is
imported only when its command runs. The run context (settings read from the environment, once) is
built here, passed down and closed when the command ends (its HTTP clients). Known failures print one
line on stderr and exit non-zero.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import config

COMMANDS = {
    "check": ("citecheck.check", "check citations against a source document (Choice judge)"),
    "verify": ("citecheck.verify", "verify one claim against its cited URLs (live-web flow)"),
    "batch": ("citecheck.batch", "verify a JSONL batch and print citation precision"),
    "extract": ("citecheck.extract.command", "turn an LLM answer into claims.jsonl and citations.json"),
    "check-answer": ("citecheck.answer.command", "report on one LLM answer: each marker, each sentence, "
                                                 "uncited claims, citation precision and recall"),
    "replay": ("citecheck.web.fetch.storage", "print a stored page by its rid (Crawlbase Storage API)"),
    "serve": ("citecheck.serve.api", "serve the /verify HTTP API (and /review when REVIEW_TOKEN is set)"),
    "mcp": ("citecheck.serve.mcp.server", "serve the checks to an assistant (MCP tools over stdio)"),
    "calibrate": ("citecheck.evaluation.calibrate", "choose AUTO_ACCEPT from the reviewed rows of the audit DB"),
    "judge-server": ("citecheck.judge.local_judge.server", "start the local judge on 127.0.0.1"),
    "cache": ("citecheck.cache.command", "export the cache store to json_cache.json, or count both"),
    "record": ("citecheck.record", "record the cache with the local judge and re-execute the notebooks"),
}


def _known_errors() -> tuple[type[BaseException], ...]:
    from .cache import CacheError
    from .judge.judges import JudgeUnavailable
    return (config.MissingSetting, CacheError, JudgeUnavailable, ValueError, FileNotFoundError, OSError)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="citecheck", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    if not argv or argv[0] not in COMMANDS:
        parser.print_help(sys.stderr if argv else sys.stdout)
        return 2 if argv and argv[0] not in ("-h", "--help") else 0
    module = importlib.import_module(COMMANDS[argv[0]][0])
    command = argparse.ArgumentParser(prog=f"citecheck {argv[0]}", description=COMMANDS[argv[0]][1])
    module.add_arguments(command)
    args = command.parse_args(argv[1:])
    try:
        from .context import RunContext
        with RunContext.from_env() as ctx:              # the run's clients close when it ends
            return int(module.run(args, ctx) or 0)
    except _known_errors() as exc:
        print(config.printable(f"citecheck {argv[0]}: error: {config.redact(str(exc))}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
