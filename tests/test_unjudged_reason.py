"""Every unjudged row carries the reason the CLI prints: with no judge, `check.check_citations` rows (what a
notebook shows) and `check --json` say why no judge answered, in the words of `check`'s hint line."""
import json

from standins.jev import jev_standin
from test_check import CITATIONS, own, run_cli  # noqa: F401 - own is a fixture

from citecheck import check
from citecheck.source import sources
from citecheck.vocabulary import JUDGE_UNAVAILABLE

LABELLED = f"labelled {JUDGE_UNAVAILABLE}: "


def test_with_no_judge_each_unjudged_row_says_what_the_cli_hint_says(own, ctx):
    doc = sources.load(own / "notes.md", "markdown")
    unavailable = []
    rows = check.check_citations(doc, CITATIONS, ctx, unavailable=unavailable)
    hint = check.unavailable_hint(unavailable, len(CITATIONS))
    reasons = {r["id"]: r["reason"] for r in rows}
    assert reasons["A3"] is None                                        # fabricated: no model was asked
    assert reasons["A1"] == reasons["A2"] == reasons["A4"] == hint.split(LABELLED, 1)[1]
    assert "TYPESAFE_API_KEY" in reasons["A1"] and "OPENAI_API_KEY" in reasons["A1"]   # how to configure one


def test_check_json_carries_the_reason_the_stderr_hint_ends_with(own, tmp_path):
    done = run_cli("check", "--source", str(own / "notes.md"), "--citations", str(own / "citations.json"), "--json",
                   env={"CITECHECK_CACHE": str(tmp_path / "empty.json")})
    rows = {r["id"]: r for r in json.loads(done.stdout)}
    [hint] = done.stderr.strip().splitlines()
    assert "reason" not in rows["A3"]
    assert {rows[i]["reason"] for i in ("A1", "A2", "A4")} == {hint.split(LABELLED, 1)[1]}


def test_after_an_outage_a_cache_miss_gives_the_outage_as_its_reason(make_ctx, own):
    """The judge stopped answering: the rows after it were only looked up in the cache, but a miss there is
    the outage's doing, so they say the outage, not 'not in the cache and CITECHECK_OFFLINE=1'."""
    doc = sources.load(own / "notes.md", "markdown")
    with jev_standin(status=503) as down:
        rows = check.check_citations(doc, CITATIONS, make_ctx(typesafe_endpoint=down.url))
    first, after = rows[0]["reason"], rows[1]["reason"]
    assert rows[1]["verdict"] == JUDGE_UNAVAILABLE and first and after == first
    assert "CITECHECK_OFFLINE" not in after


def test_a_judged_row_has_no_reason(make_ctx, own):
    doc = sources.load(own / "notes.md", "markdown")
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as good:
        rows = check.check_citations(doc, CITATIONS, make_ctx(typesafe_endpoint=good.url))
    assert [r["reason"] for r in rows] == [None] * 4
