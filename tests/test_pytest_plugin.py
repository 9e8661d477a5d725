"""The pytest plugin: its example (docs/examples/) passes offline from json_cache.json, a failing assertion
prints the lines `check-answer` prints, and a check that could not be made (an offline miss, no judge) is a
test failure naming the call, never an error. Each pytest runs in a child with the plugin named by `-p`
and autoloading off, so the tests hold whether or not the package's entry point is installed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

import citecheck
from citecheck.config import Settings
from citecheck.context import RunContext
from citecheck.paths import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "test_citations_example.py"
ANSWERS = ROOT / "data" / "answers"
PLUGIN = "citecheck.pytest_plugin"
MOON = ("Water boils at 37 °C on the Moon [1].\n\n"
        "[1]: http://127.0.0.1:8731/articles/boiling-point\n")
"""An answer whose page is in the cache (fetch.direct) but whose claim was never judged."""


def child_env(**changes: str | None) -> dict[str, str]:
    """This environment (no keys: conftest scrubbed them), replaying the committed cache with the judge
    method a reader runs; `changes` set or (None) remove variables."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "CITECHECK_CACHE": str(ROOT / "json_cache.json"), "CITECHECK_OFFLINE": "1",
           "CITECHECK_CACHE_STORE": "off"}
    for name in ("JUDGE_METHOD", "CI", "AUDIT_DB"):
        env.pop(name, None)
    for name, value in changes.items():
        env.pop(name, None) if value is None else env.__setitem__(name, value)
    return env


def run_pytest(*args: str, env: dict[str, str], plugin: bool = True) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", *(["-p", PLUGIN] if plugin else []), "-p", "no:cacheprovider",
               "-q", "--rootdir", str(ROOT), *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def summary(done: subprocess.CompletedProcess) -> str:
    """pytest's closing line ("1 failed, 2 passed in 0.42s"): an error would be counted there."""
    return done.stdout.strip().splitlines()[-1]


def failure_lines(output: str) -> list[str]:
    """The lines pytest shows of a failure's message (its `E   ` lines), their prefix removed."""
    return [line[1:].strip() for line in output.splitlines() if line.startswith("E ")]


def test_the_example_passes_offline_from_the_committed_cache():
    done = run_pytest(str(EXAMPLE), env=child_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert summary(done).startswith("2 passed, 1 xfailed in")


def test_a_failing_assertion_prints_the_lines_check_answer_prints():
    env = child_env()
    cli = subprocess.run([sys.executable, "-m", "citecheck", "check-answer",
                          str(ANSWERS / "anthropic_report.json")],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert cli.returncode == 0, cli.stderr[-2000:]
    report = cli.stdout.splitlines()
    assert report[0] == "citation_precision=0.4000 (2/5)" and len(report) > 10
    done = run_pytest(str(EXAMPLE), "--runxfail", env=env)      # the expected failure, as it prints
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert summary(done).startswith("1 failed, 2 passed in")
    shown = failure_lines(done.stdout)
    assert shown[0] == ("AssertionError: citecheck: anthropic_report.json: 2 of fail_on (contradicted, "
                        "fabricated): m4 contradicted, m5 fabricated")
    assert shown[1:1 + len(report)] == report


@pytest.mark.parametrize("offline", ["variable", "ci", "option"])
def test_an_offline_miss_is_a_failure_naming_the_call_and_the_claim(tmp_path, offline):
    test = tmp_path / "test_moon.py"
    test.write_text(f"import citecheck\n\ndef test_moon():\n    citecheck.assert_holds(answer={MOON!r})\n",
                    encoding="utf-8")
    live = {"CITECHECK_OFFLINE": None, "CITECHECK_CACHE_STORE": None}
    elsewhere = str(tmp_path / "json_cache.json")       # the option names the cache (else its page misses)
    env = {"variable": child_env(), "ci": child_env(**live, CI="true"),
           "option": child_env(**live, CITECHECK_CACHE=elsewhere)}[offline]
    options = ["--citecheck-offline", "--citecheck-cache", str(ROOT / "json_cache.json")]
    done = run_pytest(str(test), *(options if offline == "option" else []), env=env)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert summary(done).startswith("1 failed in") and "Traceback" not in done.stdout
    because = {"variable": "CITECHECK_OFFLINE=1", "ci": "CI is set", "option": "--citecheck-offline"}[offline]
    assert f"(offline replay: {because};" in done.stdout
    assert "- the call: typesafe.system_one, model " in done.stdout
    moon = "Water boils at 37 °C on the Moon. (m1 -> http://127.0.0.1:8731/articles/boiling-point)"
    assert f"  the claim: {moon}" in done.stdout
    assert "is not in json_cache.json" in done.stdout


def test_no_judge_is_a_failure_naming_the_variable_never_a_value(tmp_path):
    test = tmp_path / "test_rfc.py"
    test.write_text("import citecheck\n\ndef test_rfc():\n"
                    f"    citecheck.assert_holds(answer={str(ANSWERS / 'anthropic_rfc.json')!r},\n"
                    f"                           source={str(ROOT / 'data' / 'rfc7519.txt')!r})\n",
                    encoding="utf-8")
    secret = "crawl-token-never-shown-0123456789"
    env = child_env(CITECHECK_OFFLINE=None, CITECHECK_CACHE_STORE=None,
                    CITECHECK_CACHE=str(tmp_path / "json_cache.json"), CRAWLBASE_TOKEN=secret)
    done = run_pytest(str(test), env=env)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert summary(done).startswith("1 failed in") and "Traceback" not in done.stdout
    assert ("- the call: typesafe.system_one, model " in done.stdout
            and "  the claim: A JWT must not be accepted for processing on or after its expiration time. (m1)"
            in done.stdout and "  why: TYPESAFE_API_KEY is not set: " in done.stdout)
    assert "offline replay" not in done.stdout
    assert secret not in done.stdout + done.stderr


def test_pyproject_declares_the_entry_point_under_the_module_name():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    assert declared["pytest11"] == {PLUGIN: PLUGIN}


def test_the_installed_entry_point_loads_the_plugin_and_p_names_the_same_plugin(tmp_path):
    """An installed distribution declaring pyproject's entry point (a dist-info on the path): pytest loads
    the plugin with no `-p`, and `-p citecheck.pytest_plugin` as well is the same plugin, not a second."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    info = tmp_path / "site" / "citecheck_cookbook-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: citecheck-cookbook\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[pytest11]\n" + "".join(f"{name} = {target}\n" for name, target in declared["pytest11"].items()))
    test = tmp_path / "test_ctx.py"
    test.write_text("def test_ctx(citecheck_ctx, citecheck_cache):\n"
                    "    assert citecheck_ctx.settings.offline and citecheck_cache is citecheck_ctx.cache\n")
    env = {**child_env(PYTEST_DISABLE_PLUGIN_AUTOLOAD=None), "PYTHONPATH": f"{ROOT}{os.pathsep}{info.parent}"}
    for plugin in (False, True):
        done = run_pytest(str(test), env=env, plugin=plugin)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        assert "1 passed" in done.stdout


def test_import_citecheck_stays_light_and_assert_holds_loads_on_use():
    code = ("import sys, citecheck\n"
            "print(sorted(m for m in ('pytest', 'citecheck.pytest_plugin') if m in sys.modules))\n"
            "citecheck.assert_holds\n"
            "print(sorted(m for m in ('pytest', 'citecheck.pytest_plugin') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=child_env(), timeout=60)
    assert done.stdout.splitlines() == ["[]", "['citecheck.pytest_plugin', 'pytest']"], done.stderr


def test_loading_the_plugin_imports_no_stage_of_citecheck():
    """pytest loads the plugin in every run where the package is installed: it costs the vocabulary only."""
    code = ("import sys, citecheck.pytest_plugin\n"
            "print(sorted(m for m in sys.modules if m.startswith('citecheck')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=child_env(), timeout=60)
    assert done.stdout.split() == ["['citecheck',", "'citecheck.pytest_plugin',", "'citecheck.vocabulary']"]


# ------------------------------------------------------------------ in this process, a context of our own

@pytest.fixture
def replay() -> RunContext:
    """The committed cache, replayed only, with the documented defaults (what a no-key run reads)."""
    return RunContext.build(Settings(cache_path=ROOT / "json_cache.json", cache_store="off", offline=True))


def test_fail_on_names_misquoted_and_uncited(replay):
    with pytest.raises(AssertionError, match=r"1 of fail_on \(misquoted\): m8 misquoted\n"):
        citecheck.assert_holds(ANSWERS / "anthropic_rfc.json", source=ROOT / "data" / "rfc7519.txt",
                               fail_on="misquoted", ctx=replay)
    with pytest.raises(AssertionError, match=r"1 of fail_on \(uncited\): sentence 5 uncited\n"):
        citecheck.assert_holds(ANSWERS / "anthropic_report.json", fail_on=["uncited"], ctx=replay)


def test_an_answer_as_text_or_a_response_object_is_the_answer_its_file_is(replay):
    path = ANSWERS / "anthropic_web.json"
    by_path = citecheck.assert_holds(path, fail_on=(), ctx=replay)
    by_object = citecheck.assert_holds(json.loads(path.read_text(encoding="utf-8")), fail_on=(), ctx=replay)
    by_name = citecheck.assert_holds(str(path), fail_on=(), ctx=replay)
    assert by_path.to_dict()["markers"] == by_object.to_dict()["markers"] == by_name.to_dict()["markers"]
    assert by_path.lines() == ["citation_precision=0.2500 (1/4)", "citation_recall=0.3333 (1/3)"]


def test_bad_input_is_one_line(replay, tmp_path):
    with pytest.raises(ValueError, match="'wrong' is not one of contradicted, fabricated"):
        citecheck.assert_holds(ANSWERS / "anthropic_web.json", fail_on=("wrong",), ctx=replay)
    with pytest.raises(pytest.fail.Exception, match="^citecheck: answer file not found: .*missing.json$"):
        citecheck.assert_holds(tmp_path / "missing.json", ctx=replay)
    with pytest.raises(TypeError, match="answer: a path, the answer's text or a provider's JSON response"):
        citecheck.assert_holds(42, ctx=replay)


def test_documents_names_the_folder_of_the_local_files_an_answer_cites(replay, tmp_path):
    """Without `documents`, the local file the answer names is never read (its marker unchecked); with it, the
    file is checked, and offline the judge call it needs (never recorded) fails the test naming the claim."""
    (tmp_path / "coffee.md").write_text("# Coffee\n\nKeep roasted beans in an airtight jar.\n")
    answer = "Roasted beans keep best in an airtight jar [1].\n\n[1] coffee.md\n"
    with pytest.raises(AssertionError, match=r": m1 unchecked\n"):
        citecheck.assert_holds(answer, fail_on=("unchecked",), ctx=replay)
    named = r"the claim: Roasted beans keep best in an airtight jar\. \(m1\)\n"
    with pytest.raises(pytest.fail.Exception, match=named):
        citecheck.assert_holds(answer, documents=tmp_path, fail_on=("unchecked",), ctx=replay)
