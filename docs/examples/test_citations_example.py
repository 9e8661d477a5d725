"""An LLM answer's citations asserted in a test suite with the citecheck pytest plugin (docs/pytest.md).

Run from the repository root; every page and judge call replays from json_cache.json, as in CI:

    CITECHECK_OFFLINE=1 pytest docs/examples/test_citations_example.py

(`-p citecheck.pytest_plugin` too in a checkout whose package is not installed; `--runxfail` shows the
failure the last test expects, as pytest prints it.)
"""
from pathlib import Path

import pytest

import citecheck

DATA = Path(__file__).resolve().parents[2] / "data"
ANSWERS = DATA / "answers"


def test_the_web_answer_quotes_only_what_its_pages_say():
    """Every text the answer says it quotes (Anthropic's `cited_text`) is on the page it cites; its wrong
    pages are not what this test asks about, so it passes with them and returns the report."""
    report = citecheck.assert_holds(answer=ANSWERS / "anthropic_web.json", fail_on=("fabricated",))
    assert report.lines()[0] == "citation_precision=0.2500 (1/4)"


def test_every_quote_of_the_rfc_answer_is_checked(citecheck_ctx):
    """The RFC answer checked against the document it was sent (`source=`, as check-answer --source), in the
    session's context: no marker points nowhere or is left unchecked."""
    report = citecheck.assert_holds(answer=ANSWERS / "anthropic_rfc.json", source=DATA / "rfc7519.txt",
                                    fail_on=("no_source", "unchecked"), ctx=citecheck_ctx)
    assert report.precision() == (3, 8)


@pytest.mark.xfail(raises=AssertionError, strict=True,
                   reason="m4 cites a page that says the opposite; m5's quote is not on its page")
def test_the_walk_through_answer_holds():
    """Notebook 06's walk-through answer, with the default fail_on (contradicted, fabricated)."""
    citecheck.assert_holds(answer=ANSWERS / "anthropic_report.json")
