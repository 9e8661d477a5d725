"""The pytest plugin (entry point `pytest11`): an LLM answer's citations asserted in a test suite.

Rules:
- `assert_holds(answer, source=FILE | documents=DIR, fail_on=("contradicted", "fabricated"))` runs the
  answer report (`answer.report`, what `check-answer` runs) and raises AssertionError when a marker or a
  sentence hits a `fail_on` verdict (FAIL_ON); the message is one line naming the hits, then the lines
  `check-answer` prints (headline, one per sentence, one per problem). It returns the report.
- A check that could not be made fails the test (`pytest.fail`, a failure, never an error or a pass):
  an offline cache miss names the call (function, model) and the claim it was for; a judge with no key
  names the missing variable (never a value). An answer or source that cannot be read: one line.
- The session's context (`citecheck_ctx`) is built once, on first use, from the environment
  (`Settings.from_env`, default files in pytest's rootdir); it replays offline when CITECHECK_OFFLINE=1,
  in CI (`config.in_ci`) or with `--citecheck-offline`; `--citecheck-cache PATH` names the cache export.
  `citecheck_cache` is its cache.
- pytest loads this module in every run where the package is installed: importing it imports pytest,
  the standard library and the vocabulary only; the rest loads when a test asks.
Imports: the foundation, `extract`, `judge`, `verdict`, `answer`.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import pytest

from .vocabulary import (CONTRADICTED, FABRICATED, FABRICATED_QUOTE, JUDGE_UNAVAILABLE, MISQUOTED, NO_SOURCE,
                         NOT_FOUND, UNCHECKED, UNCITED, UNREACHABLE)

if TYPE_CHECKING:
    from .answer import AnswerReport
    from .context import RunContext

FAIL_ON = (CONTRADICTED, FABRICATED, MISQUOTED, NOT_FOUND, UNREACHABLE, NO_SOURCE, UNCHECKED, UNCITED)
"""What `fail_on` may name: a marker's label (contradicted, not_found, unreachable, no_source, unchecked);
`fabricated`, a quote that is not in the source it cites (reason fabricated_quote); `misquoted`, a quote
found only nearly; `uncited`, a sentence asserting a checkable fact with no citation."""
DEFAULT_FAIL_ON = (CONTRADICTED, FABRICATED)

_SESSION: dict[str, Any] = {}
"""The pytest options (`cache`, `offline`, `root`) and, once built, the session's context (`ctx`)."""


def pytest_addoption(parser) -> None:
    group = parser.getgroup("citecheck", "citecheck: LLM answers' citations in tests")
    group.addoption("--citecheck-cache", metavar="PATH", default=None,
                    help="the cache export judge and crawl calls replay from (default: CITECHECK_CACHE, "
                         "else json_cache.json in the rootdir)")
    group.addoption("--citecheck-offline", action="store_true", default=False,
                    help="replay the cache only: a call it does not hold fails the test naming it (also "
                         "with CITECHECK_OFFLINE=1 or in CI)")


def pytest_configure(config) -> None:
    _SESSION.update(cache=config.getoption("citecheck_cache"), offline=config.getoption("citecheck_offline"),
                    root=Path(config.rootpath))


def pytest_unconfigure(config) -> None:
    ctx = _SESSION.get("ctx")
    _SESSION.clear()
    if ctx is not None:
        ctx.close()


def session_context() -> "RunContext":
    """The session's RunContext (module rules), built on first use; a bad setting fails the test."""
    if "ctx" not in _SESSION:
        from .config import Settings, in_ci
        from .context import RunContext
        try:
            settings = Settings.from_env(defaults_in=_SESSION.get("root", Path(".")))
        except ValueError as exc:
            pytest.fail(f"citecheck: {exc}", pytrace=False)
        why = ("--citecheck-offline" if _SESSION.get("offline") else "CI is set" if in_ci()
               else "CITECHECK_OFFLINE=1" if settings.offline else None)
        changes: dict[str, Any] = {"offline": True} if why else {}
        _SESSION["offline_because"] = why
        if _SESSION.get("cache"):
            changes["cache_path"] = Path(_SESSION["cache"])
        _SESSION["ctx"] = RunContext.build(settings.replace(**changes))
    return _SESSION["ctx"]


@pytest.fixture(scope="session")
def citecheck_ctx() -> "RunContext":
    """The session's RunContext: settings from the environment, offline replay in CI (module rules)."""
    return session_context()


@pytest.fixture(scope="session")
def citecheck_cache(citecheck_ctx):
    """The cache the session's calls replay from (and, live, record into)."""
    return citecheck_ctx.cache


class _Calls:
    """The run's cache, each call that could not be made noted: (function, model, request, error). Every
    method is watched (`call` and whatever it calls through), the first three arguments naming the call."""

    def __init__(self, cache):
        self._cache = cache
        self.failed: list[tuple[Any, Any, Any, Exception]] = []

    def __getattr__(self, name: str):
        found = getattr(self._cache, name)
        if not callable(found):
            return found

        def noted(*args, **options):
            try:
                return found(*args, **options)
            except _unmade() as exc:
                self.failed.append((*(list(args) + [None] * 3)[:3], exc))
                raise
        return noted


def _unmade() -> tuple[type[Exception], ...]:
    """The errors of a check that could not be made: an offline miss, a missing key, a judge down."""
    from .cache import CacheMiss
    from .config import MissingSetting
    from .judge.judges import JudgeUnavailable
    return CacheMiss, MissingSetting, JudgeUnavailable


def _fail_on(names: str | Iterable[str]) -> tuple[str, ...]:
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = [name for name in names if name not in FAIL_ON]
    if unknown:
        raise ValueError(f"fail_on: {', '.join(map(repr, unknown))} is not one of {', '.join(FAIL_ON)}")
    return names


def _answer_text(answer: Any, fmt: str, max_bytes: int) -> tuple[str, str]:
    """(the answer's text, its name): a path (os.PathLike, or a one-line str naming a file) is read as
    `check-answer` reads its file; other text is the answer itself; a dict or list is a provider's JSON
    response."""
    from .extract import read_text
    if isinstance(answer, (dict, list)):
        return json.dumps(answer, ensure_ascii=False), "answer"
    if isinstance(answer, str) and not _names_file(answer):
        return answer, "answer"
    if not isinstance(answer, (str, os.PathLike)):
        raise TypeError(f"answer: a path, the answer's text or a provider's JSON response, not "
                        f"{type(answer).__name__}")
    return read_text(answer, fmt, max_bytes=max_bytes), Path(answer).name


def _names_file(text: str) -> bool:
    try:
        return "\n" not in text and len(text) < 4096 and Path(text).is_file()
    except (OSError, ValueError):
        return False


def _hits(report: "AnswerReport", fail_on: tuple[str, ...]) -> list[str]:
    """'m4 contradicted', 'sentence 5 uncited', ...: what in the report is one of `fail_on`."""
    out = []
    for m in report.markers:
        found = [m.label] if m.label in fail_on else []
        found += [FABRICATED] * (FABRICATED in fail_on and m.reason == FABRICATED_QUOTE)
        found += [MISQUOTED] * (MISQUOTED in fail_on and m.status == MISQUOTED)
        out += [f"{m.id} {'/'.join(found)}"] * bool(found)
    return out + [f"sentence {s.sentence} {UNCITED}" for s in report.sentences
                  if UNCITED in fail_on and s.kind == UNCITED]


def _claims_of(request: Any, markers: list) -> list[str]:
    """The answer's claims (with their marker and source) a cached call's request was made for: a claim or
    a cited URL the request holds."""
    held = json.dumps(request, ensure_ascii=False)
    out = []
    for m in markers:
        url = getattr(m.source, "url", None)
        if (m.claim and json.dumps(m.claim, ensure_ascii=False)[1:-1] in held) or (url and url in held):
            out.append(f"{m.claim} ({m.id}" + (f" -> {url})" if url else ")"))
    return list(dict.fromkeys(out))


def _unmade_message(name: str, failed: list, markers: list, offline: bool) -> str:
    from .config import printable, redact
    lines = [f"citecheck: {name}: {len(failed)} check(s) could not be made, so nothing was asserted:"]
    if offline:
        because = _SESSION.get("offline_because")
        lines.append(f"(offline replay{f': {because}' if because else ''}; record a call live once, with a "
                     "judge configured, and commit the cache export)")
    for function, model, request, exc in failed:
        lines.append(f"- the call: {function}, model {model}" if function else "- the check")
        lines += [f"  the claim: {claim}" for claim in _claims_of(request, markers)]
        lines.append(f"  why: {exc}")
    return printable(redact("\n".join(lines)), lines=True)


def assert_holds(answer: Any, *, source: str | os.PathLike | None = None,
                 documents: str | os.PathLike | None = None, fail_on: str | Iterable[str] = DEFAULT_FAIL_ON,
                 fmt: str = "auto", source_format: str | None = None,
                 ctx: "RunContext | None" = None) -> "AnswerReport":
    """Assert that an answer's citations hold (module rules): the answer report of `answer` (a file, the
    answer's text or a provider's JSON response) with `source` (the document its quoted citations cite, as
    check-answer --source) or `documents` (the folder of the local files it names, as --documents); raises
    AssertionError with the report's lines when a marker or sentence is one of `fail_on`. `ctx`: the
    session's (`citecheck_ctx`) when not given."""
    __tracebackhide__ = True
    from .answer import report
    from .answer.command import _source
    from .answer.outputs import text
    from .answer.read import read
    from .context import RunContext
    from .verdict.review import Gate
    fail_on = _fail_on(fail_on)
    ctx = session_context() if ctx is None else ctx
    try:
        body, name = _answer_text(answer, fmt, ctx.settings.answer_max_bytes)
        document, sent = _source(str(source), source_format, ctx) if source is not None else (None, None)
    except (OSError, ValueError) as exc:
        pytest.fail(f"citecheck: {exc}", pytrace=False)
    calls = _Calls(ctx.cache)
    result, failed = None, calls.failed
    with RunContext.build(ctx.settings, cache=calls) as run:
        try:
            result = report(body, run, fmt=fmt, name=name, source=document,
                            documents=[sent] if sent is not None else (), threshold=Gate.of(ctx.settings),
                            folder=documents, folder_name=f"documents={documents}")
        except _unmade() as exc:
            failed = failed or [(None, None, None, exc)]
        except (OSError, ValueError) as exc:
            pytest.fail(f"citecheck: {name}: {exc}", pytrace=False)
    if result is not None and not failed:
        failed = [(None, None, None, f"{m.id} ({m.claim}): {m.label}, {JUDGE_UNAVAILABLE}")
                  for m in result.markers if m.reason == JUDGE_UNAVAILABLE]
    if failed:
        markers = read(body, fmt, [sent] if sent is not None else (), ctx.settings.answer_max_markers).markers
        pytest.fail(_unmade_message(name, failed, markers, ctx.settings.offline), pytrace=False)
    hits = _hits(result, fail_on)
    if hits:
        raise AssertionError(f"citecheck: {name}: {len(hits)} of fail_on ({', '.join(fail_on)}): "
                             f"{', '.join(hits)}\n" + text(result))
    return result
