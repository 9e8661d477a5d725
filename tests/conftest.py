"""Shared fixtures: every test starts with no keys, no endpoints and a private cache file.

Unit tests build a run context (`ctx`, `make_ctx`); only tests of an entry point (the CLI, the API's
`serve`, the notebook executor) set environment variables, because reading them is the entry point's job.
"""
from __future__ import annotations

import pytest

from citecheck import config
from citecheck.config import Secrets, Settings
from citecheck.context import RunContext

FLOW_METHOD = "one_pass"
"""Tests script one judge call per citation (the one-pass baselines), in a context or through an entry
point's environment. The shipped default (pooled) runs where a test says so: tests/test_methods.py and the
notebook, README and CI-step reproductions, which replay what a reader runs (they unset JUDGE_METHOD)."""
SCRUBBED = (*config.SECRETS, *config.DEFAULTS, "TYPESAFE_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
OWN_SITES = {"ignore_robots": True, "host_concurrency": 64, "host_rate": 1000.0}
"""The stand-in origins and the fixture site are our own sites: robots.txt is not read and the per-host limit
is lifted, as CITECHECK_IGNORE_ROBOTS=1 would for a reader's own sites. tests/test_robots.py and
tests/test_politeness.py build contexts with the shipped politeness instead."""
OWN_SITES_ENV = {"CITECHECK_IGNORE_ROBOTS": "1", "HOST_CONCURRENCY": "64", "HOST_RATE": "1000"}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No secret, endpoint or offline flag leaks in from the developer's shell; a fresh cache path."""
    for name in SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CITECHECK_CACHE", str(tmp_path / "json_cache.json"))
    monkeypatch.setenv("AUDIT_DB", str(tmp_path / "audit.db"))
    monkeypatch.setenv("JUDGE_METHOD", FLOW_METHOD)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))      # the CLI's cache home elsewhere
    for name, value in OWN_SITES_ENV.items():
        monkeypatch.setenv(name, value)
    yield


@pytest.fixture
def make_ctx(tmp_path):
    """make_ctx(secrets={...}, **settings) -> a RunContext over a private cache and audit DB."""
    def make(secrets: dict | None = None, **changes) -> RunContext:
        settings = Settings(cache_path=tmp_path / "json_cache.json", audit_db=tmp_path / "audit.db",
                            secrets=Secrets(secrets or {}), judge_method=FLOW_METHOD, **OWN_SITES)
        return RunContext.build(settings.replace(**changes))
    return make


@pytest.fixture
def ctx(make_ctx):
    """The default context: documented defaults, no secrets, a private cache."""
    return make_ctx()


class Run:
    """The context one test runs in; its fixtures replace `ctx` as they point it at stand-ins."""

    def __init__(self, ctx: RunContext):
        self.ctx = ctx


@pytest.fixture
def run(ctx):
    return Run(ctx)


@pytest.fixture(scope="module")
def fixture_site():
    """The fixture site (data/site) on an ephemeral 127.0.0.1 port, for one test module."""
    from citecheck.web import fixture_site as site
    with site.start(port=0) as running:
        yield running


@pytest.fixture(autouse=True, scope="session")
def committed_cache_is_never_written():
    """No test may write the committed json_cache.json (tests record into their own temp caches)."""
    from citecheck.paths import ROOT
    path = ROOT / "json_cache.json"
    before = path.read_bytes() if path.exists() else None
    yield
    after = path.read_bytes() if path.exists() else None
    assert after == before, "a test wrote the committed json_cache.json"
