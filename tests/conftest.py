"""Shared fixtures: every test starts with no keys, no endpoints and a private cache file."""
from __future__ import annotations

import pytest

from citecheck import cache as cache_module
from citecheck import config

SCRUBBED = (*config.SECRETS, *config.DEFAULTS, "TYPESAFE_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No secret, endpoint or offline flag leaks in from the developer's shell; a fresh cache path."""
    for name in SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CITECHECK_CACHE", str(tmp_path / "json_cache.json"))
    monkeypatch.setenv("AUDIT_DB", str(tmp_path / "audit.db"))
    cache_module._default.clear()
    yield
    cache_module._default.clear()


@pytest.fixture(scope="module")
def fixture_site():
    """The fixture site (data/site) on an ephemeral 127.0.0.1 port, for one test module."""
    from citecheck import site
    with site.start(port=0) as running:
        yield running
