"""Judge levels (issue 23, items 3 and 4): every method through the flows with a perfect judge (the
pipeline's ceiling) and a capable judge (a strong model's answers), each a stand-in on 127.0.0.1 reached
through the real typesafe-sdk and httpx clients (tests/standins/oracle.py, capable.py; gold: tests/levels.py).

- Perfect judge (Choice endpoint + OpenAI configured): 100 % on the RFC pairs (verify.trace_text on the
  section, and check) and on the planted stories (notebook 01's citations through check, the fixture
  site's stories through verify_claim and batch), every method; on WiCE's report half, every row is right
  except where the method was never shown a gold sentence (a retrieval miss, listed in the message).
- Capable judge, per method and per configured judge (Choice endpoint only, OpenAI only, Anthropic only,
  Ollama only): a supported / contradicted / silent claim comes out supported / contradicted / not_found;
  the foundation case (an exact quote, the judge's no at 0.97) is contradicted, never supported.
- A case that fails for a pipeline reason, not the stand-in's, is a strict xfail naming it (KNOWN).
"""
from __future__ import annotations

import pytest
from standins.capable import capable_standin, fixed
from standins.oracle import oracle_standin

import levels as L
from citecheck.web import fixture_site as site

KNOWN: dict[tuple[str, str, str], str] = {}
"""(flow, method, case id) -> why the pipeline (not the stand-in) gets it wrong: strict xfails."""


def cases(flow: str, ids: list[str], methods=L.METHODS):
    """(method, id) params, a strict xfail where KNOWN names the case."""
    out = []
    for method in methods:
        for case in ids:
            why = KNOWN.get((flow, method, case))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(method, case, id=f"{method}-{case}", marks=marks))
    return out


RFC = {r["id"]: r for r in L.rfc_rows()}
CHECKS = {c["id"]: c for c in L.check_rows()}
SITE = {case[0]: case for case in L.SITE_CASES}
BATCH = sorted(L.BATCH_GOLD)


@pytest.fixture(scope="module")
def perfect():
    with oracle_standin(L.stories()) as server:
        yield server


@pytest.fixture(scope="module")
def site_server():
    with site.start(port=0) as running:
        yield running


@pytest.fixture(scope="module")
def level(perfect, site_server, tmp_path_factory):
    """Per method: the perfect judge's context and each flow's results, computed once."""
    directory = tmp_path_factory.mktemp("levels")
    memo: dict = {}

    class Level:
        def ctx(self, method):
            if method not in memo:
                memo[method] = {"ctx": L.context(directory, "both", perfect.url, method)}
            return memo[method]["ctx"]

        def once(self, method, what, compute):
            self.ctx(method)
            if what not in memo[method]:
                memo[method][what] = compute()
            return memo[method][what]

        def rfc_checked(self, method):
            citations = [{"id": r["id"], "claim": r["claim"], "quote": r["quote"], "section": r["section"]}
                         for r in RFC.values()]
            return self.once(method, "rfc_check", lambda: {row["id"]: row for row in L.checked(
                self.ctx(method), L.rfc_document(), citations)})

        def stories_checked(self, method):
            return self.once(method, "check", lambda: {row["id"]: row for row in L.checked(
                self.ctx(method), L.rfc_document(), list(CHECKS.values()))})

        def batched(self, method):
            claims = L.batch_file(directory, site_server.base_url)
            return self.once(method, "batch", lambda: {(r["id"], r["path"]): r for r in L.batched(
                self.ctx(method), claims, site_server.base_url)})

    return Level()


# ---------------------------------------------------------------- perfect judge

@pytest.mark.parametrize("method,pair", cases("rfc", list(RFC)))
def test_perfect_judge_gets_every_rfc_pair_through_verify(level, method, pair):
    row = RFC[pair]
    got = L.traced(level.ctx(method), row["claim"], row["text"], f"rfc:{pair}")
    assert got["label"] == row["gold"], got


@pytest.mark.parametrize("method,pair", cases("rfc-check", list(RFC)))
def test_perfect_judge_gets_every_rfc_pair_through_check(level, method, pair):
    got = level.rfc_checked(method)[pair]
    assert got["verdict"] == L.verdict_of(RFC[pair]["gold"]), got


@pytest.mark.parametrize("method,cid", cases("check", list(CHECKS)))
def test_perfect_judge_gets_notebook_01s_citations_through_check(level, method, cid):
    got = level.stories_checked(method)[cid]
    assert got["verdict"] == CHECKS[cid]["gold"], got


@pytest.mark.parametrize("method,case", cases("verify", list(SITE)))
def test_perfect_judge_gets_the_fixture_sites_stories_through_verify(level, site_server, method, case):
    _, claim, path, gold = SITE[case]
    got = L.site_verified(level.ctx(method), site_server.base_url, claim, path)
    assert got["label"] == gold, got


@pytest.mark.parametrize("method,case", cases("batch", [f"{i}:{p}" for i, p in BATCH]))
def test_perfect_judge_gets_the_claims_files_through_batch(level, method, case):
    rows = level.batched(method)
    cid, path = case.split(":", 1)
    got = rows.get((cid, path)) or next(iter(rows.values()))
    assert got["label"] == L.BATCH_GOLD[(cid, path)], got


@pytest.mark.parametrize("method", L.METHODS)
def test_perfect_judge_settles_the_batch_rows_no_judge_reads(level, method):
    """The pages fetch settles (404, 410, soft 404, homepage redirect, empty page) get the route's label."""
    rows = [r for r in level.batched(method).values() if (r["id"], r["path"]) not in L.BATCH_GOLD]
    assert rows and all(r["label"] == r["gold"] for r in rows), rows


@pytest.mark.parametrize("method", L.METHODS)
def test_perfect_judge_on_wice_report_is_wrong_only_where_retrieval_missed(level, perfect, method):
    ctx = level.ctx(method)
    wrong, misses = [], []
    for row in (r for r in L.wice_rows() if r["split"] == "report"):
        perfect.oracle.forget()
        got = L.traced(ctx, row["claim"], row["text"], f"wice:{row['id']}")
        shown = perfect.oracle.shown_gold(row["claim"])
        if row["label"] == "supported" and not shown:
            misses.append(row["id"])
        if L.binary(got["label"]) != row["gold"]:
            wrong.append(row["id"])
    assert set(wrong) <= set(misses), f"wrong {wrong}; gold never shown (retrieval) {misses}"
    assert perfect.oracle.unknown_claims == set()


def test_the_oracle_knows_every_claim_it_was_asked_about(level, perfect):
    """A question about a claim in no story would be answered 'unknown' by default: none was."""
    perfect.oracle.forget()
    for method in L.METHODS:
        row = RFC["R01"]
        L.traced(level.ctx(method), row["claim"], row["text"], "rfc:R01")
    assert perfect.oracle.asked and perfect.oracle.unknown_claims == set()


# ---------------------------------------------------------------- capable judge

@pytest.fixture(scope="module")
def capable_level(tmp_path_factory):
    directory = tmp_path_factory.mktemp("capable")
    with capable_standin(L.CAPABLE_STORIES) as server, \
            capable_standin(L.FOUNDATION_STORIES, fixed(0.97)) as foundation:
        yield {"dir": directory, "capable": server, "foundation": foundation, "ctx": {}}


def capable_ctx(level, which, provider, method):
    key = (which, provider, method)
    if key not in level["ctx"]:
        level["ctx"][key] = L.context(level["dir"], provider, level[which].url, method)
    return level["ctx"][key]


def capable_cases(ids):
    return [pytest.param(method, provider, case, id=f"{method}-{provider}-{case}",
                         marks=[pytest.mark.xfail(strict=True, reason=KNOWN[("capable", method, case)])]
                         if ("capable", method, case) in KNOWN else [])
            for method in L.METHODS for provider in L.PROVIDERS for case in ids]


@pytest.mark.parametrize("method,provider,case", capable_cases(list(L.CAPABLE_CASES)))
def test_capable_judge_answer_is_the_methods_answer(capable_level, method, provider, case):
    claim, gold = L.CAPABLE_CASES[case]
    got = L.traced(capable_ctx(capable_level, "capable", provider, method), claim, L.CAPABLE_PAGE)
    assert got["label"] == gold, got
    assert capable_level["capable"].oracle.unknown_claims == set()


@pytest.mark.parametrize("method,provider,case", capable_cases(["foundation"]))
def test_a_confident_no_on_an_exact_quote_is_contradicted(capable_level, method, provider, case):
    ctx = capable_ctx(capable_level, "foundation", provider, method)
    row = L.checked(ctx, L.rfc_document(), [dict(L.FOUNDATION)])[0]
    assert row.get("status") in (None, "found")
    assert row["verdict"] == "contradicted", row
    section = L.rfc_document().sections[L.FOUNDATION["section"]].text
    got = L.traced(ctx, L.FOUNDATION["claim"], section)
    assert got["label"] == "contradicted", got
