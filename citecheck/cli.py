"""`citecheck <command>` (or `python -m citecheck <command>`): the commands a user runs.

Rules:
- A module named in COMMANDS provides `add_arguments(parser)` and `run(args, ctx) -> int`; it is imported
  only when its command runs. The run context (settings read from the environment, once) is built here,
  passed down and closed when the command ends (its HTTP clients).
- The top-level help says what each command does for a user (COMMANDS' second field); `--version`
  prints the package's version; an unknown command is one line naming the closest one, exit 2.
- Known failures print one line on stderr and exit 1: the message a module raised, or, for a file that
  cannot be read (missing, a directory, no permission), one sentence naming the path (`error_line`).
- Run from the cookbook (the repository root, or a folder holding a copy of its json_cache.json), the cache
  is that json_cache.json and its store; run anywhere else, the cache lives in the user cache directory
  (`config.user_cache`) unless CITECHECK_CACHE / CITECHECK_CACHE_STORE say otherwise: nothing is written
  where the user runs it unless asked for.
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from pathlib import Path

from . import __version__, config, paths

DESCRIPTION = "citecheck: check whether an LLM's citations hold up."
COMMANDS = {
    "check": ("citecheck.check", "check an answer's quotes against a document you have"),
    "verify": ("citecheck.verify", "check one claim against the web pages it cites"),
    "batch": ("citecheck.batch", "check many claims' URLs; print how many citations hold up"),
    "extract": ("citecheck.extract.command", "turn an LLM answer into the files batch and check read"),
    "check-answer": ("citecheck.answer.command", "check one LLM answer: every marker, sentence and source"),
    "replay": ("citecheck.web.fetch.storage", "print a crawled page as the judge read it, by its rid"),
    "serve": ("citecheck.serve.api", "run the /verify HTTP API (and the /review page)"),
    "mcp": ("citecheck.serve.mcp.server", "let an assistant (Claude Desktop, Code) run these checks"),
    "calibrate": ("citecheck.evaluation.calibrate", "choose AUTO_ACCEPT from the verdicts people reviewed"),
    "evaluate": ("citecheck.evaluation.evaluate", "measure your judge on labelled rows; earn AUTO_ACCEPT"),
    "judge-server": ("citecheck.judge.local_judge.server", "run the local judge model here (no key needed)"),
    "cache": ("citecheck.cache.command", "merge recorded calls into json_cache.json, or count them"),
    "record": ("citecheck.record", "re-record the cache with the local judge; rerun notebooks"),
}
"""command -> (module, what it does for a user): at most 58 characters, one line of an 80-column help."""
EPILOG = ("Run `citecheck COMMAND --help` for a command's options. Without a judge, check\n"
          "and verify still print every row: what string matching and the pages settle,\n"
          "the rest labelled judge_unavailable.")
USAGE = 2
"""The exit status of a command line that names no command this CLI has."""


def _known_errors() -> tuple[type[BaseException], ...]:
    from .cache import CacheError
    from .judge.judges import JudgeUnavailable
    return (config.MissingSetting, CacheError, JudgeUnavailable, ValueError, OSError)


def error_line(exc: BaseException) -> str:
    """The message of a known failure: a file that cannot be read as one sentence naming its path
    (`paths.unreadable`; not the raw `[Errno 21] Is a directory: '...'`), anything else as raised."""
    return (isinstance(exc, OSError) and paths.unreadable(exc)) or str(exc)


def unknown_command(word: str) -> str:
    """One line for a command line whose first word is no command: the closest command, if one is close."""
    if word.startswith("-"):
        return f"citecheck: unknown option {word!r}; `citecheck --help` lists the commands"
    close = difflib.get_close_matches(word, COMMANDS, n=1)
    if close:
        return (f"citecheck: unknown command {word!r}: did you mean {close[0]}? "
                "(`citecheck --help` lists them)")
    return f"citecheck: unknown command {word!r}; the commands are {', '.join(COMMANDS)}"


class _Help(argparse.RawDescriptionHelpFormatter):
    """The top-level help: each command's words on its own line. argparse measures the command names two
    columns less indented than it prints them, so the longest (`check-answer`) would wrap: start wider."""

    def __init__(self, prog: str):
        super().__init__(prog, max_help_position=20)
        self._action_max_length = max(map(len, COMMANDS)) + 4


def top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=_Help)
    parser.add_argument("--version", action="version", version=f"citecheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def settings() -> config.Settings:
    """The CLI's settings: the cookbook's cache in the repository root (or in a folder holding a copy of
    its json_cache.json), else the user cache directory."""
    here = Path.cwd()
    cookbook = here.resolve() == paths.ROOT or (here / config.DEFAULTS["CITECHECK_CACHE"]).is_file()
    return config.Settings.from_env(cache_in=None if cookbook else config.user_cache())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "--version"):
        try:
            top_parser().parse_args(argv or ["--help"])
        except SystemExit as exc:           # --help and --version print, then exit 0
            return int(exc.code or 0)
    if argv[0] not in COMMANDS:
        print(unknown_command(argv[0]), file=sys.stderr)
        return USAGE
    module = importlib.import_module(COMMANDS[argv[0]][0])
    command = argparse.ArgumentParser(prog=f"citecheck {argv[0]}", description=COMMANDS[argv[0]][1])
    module.add_arguments(command)
    args = command.parse_args(argv[1:])
    try:
        from .context import RunContext
        with RunContext.build(settings()) as ctx:          # the run's clients close when it ends
            return int(module.run(args, ctx) or 0)
    except _known_errors() as exc:
        line = f"citecheck {argv[0]}: error: {config.redact(error_line(exc))}"
        print(config.printable(line), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
