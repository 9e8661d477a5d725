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

R11 = ("the section's contradicting sentence ('…all claims that are not understood by implementations "
       "MUST be ignored.') shares no rare word with the claim ('understand', 'rejected'): BM25 ranks it last "
       "(6th of 6), and pooled asks the top 4 sentences, decompose and qa the top 3; the judge never sees it")
KNOWN: dict[tuple[str, str, str], str] = {(dataset, method, "R11"): R11
                                          for dataset in ("rfc verify", "rfc check")
                                          for method in ("pooled", "decompose", "qa")}
"""(dataset, method, case id) -> why the pipeline (not the stand-in) gets it wrong: strict xfails. Capable
cases are keyed ("capable", method, "provider:case")."""


def param(dataset: str, method: str, case: str, *values: str) -> pytest.param:
    """One case's parameters, a strict xfail where KNOWN names it."""
    why = KNOWN.get((dataset, method, case))
    return pytest.param(*values, id="-".join(values),
                        marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [])


def cases(dataset: str, ids: list[str]) -> list:
    """(method, id) params of one dataset."""
    return [param(dataset, method, case, method, case) for method in L.METHODS for case in ids]


RFC = [r["id"] for r in L.rfc_rows()]
STORIES = {"n01 check": [c["id"] for c in L.check_rows()], "site verify": [c[0] for c in L.SITE_CASES],
           "batch judged": [f"{i}:{p}" for i, p in sorted(L.BATCH_GOLD)]}


@pytest.fixture(scope="module")
def perfect():
    with oracle_standin(L.stories()) as server:
        yield server


@pytest.fixture(scope="module")
def results(perfect, tmp_path_factory):
    """(method, judge) -> dataset -> case -> {gold, answer}, computed once: every flow over the perfect
    judge configured as Choice endpoint + OpenAI ("both"); the RFC pairs through verify for a judge alone."""
    directory = tmp_path_factory.mktemp("levels")
    memo: dict = {}

    def of(method: str, provider: str = "both") -> dict:
        if (method, provider) not in memo:
            datasets = (tuple(d for d in L.DATASETS if d != "wice tune") if provider == "both"
                        else ("rfc verify",))
            with site.start(port=0) as running:
                ctx = L.context(directory, provider, perfect.url, method)
                memo[(method, provider)] = L.perfect_results(ctx, perfect.oracle, running.base_url, directory,
                                                             datasets)
        return memo[(method, provider)]
    return of


# ---------------------------------------------------------------- perfect judge

@pytest.mark.parametrize("method,pair", cases("rfc verify", RFC))
def test_perfect_judge_gets_every_rfc_pair_through_verify(results, method, pair):
    got = results(method)["rfc verify"][pair]
    assert got["answer"] == got["gold"], got


@pytest.mark.parametrize("method,pair", cases("rfc verify", RFC))
def test_perfect_judge_alone_on_openai_gets_every_rfc_pair(results, method, pair):
    """Every Choice question as JSON to OpenAI, its probabilities read from the logprobs."""
    got = results(method, "openai")["rfc verify"][pair]
    assert got["answer"] == got["gold"], got


@pytest.mark.parametrize("method,pair", cases("rfc check", RFC))
def test_perfect_judge_gets_every_rfc_pair_through_check(results, method, pair):
    got = results(method)["rfc check"][pair]
    assert got["answer"] == got["gold"], got


@pytest.mark.parametrize("dataset,method,case", [param(dataset, method, case, dataset, method, case)
                                                  for dataset, ids in STORIES.items()
                                                  for method in L.METHODS for case in ids])
def test_perfect_judge_gets_the_notebooks_planted_stories(results, dataset, method, case):
    """Notebook 01's citations through check; the fixture site's stories through verify_claim and batch."""
    got = results(method)[dataset][case]
    assert got["answer"] == got["gold"], got


@pytest.mark.parametrize("method", L.METHODS)
def test_perfect_judge_settles_the_batch_rows_no_judge_reads(results, method):
    """The pages fetch settles (404, 410, soft 404, homepage redirect, empty page) get the route's label."""
    rows = results(method)["batch settled"]
    assert rows and all(r["answer"] == r["gold"] for r in rows.values()), rows


@pytest.mark.parametrize("method", L.METHODS)
def test_perfect_judge_on_wice_report_is_wrong_only_where_retrieval_or_the_number_rule_hid_it(results, method):
    rows = results(method)["wice report"]
    wrong = [cid for cid, r in rows.items() if r["answer"] != r["gold"]]
    misses, numbers = L.retrieval_misses(rows), L.number_downgrades(rows)
    assert set(wrong) <= set(misses) | set(numbers), \
        f"wrong {wrong}; gold never shown (retrieval) {misses}; claim number not shown {numbers}"
    agree = len(rows) - len(wrong)
    assert agree / len(rows) >= 0.95 or len(wrong) == len(misses)
    assert not any(r["unknown"] for r in rows.values())       # the oracle knew every claim it was asked


# ---------------------------------------------------------------- capable judge

@pytest.fixture(scope="module")
def capable(tmp_path_factory):
    """(method, judge) -> case -> {gold, answer}, computed once per pair."""
    directory = tmp_path_factory.mktemp("capable")
    memo: dict = {}
    with capable_standin(L.CAPABLE_STORIES) as server, \
            capable_standin(L.FOUNDATION_STORIES, fixed(0.97)) as foundation:
        def of(method: str, provider: str) -> dict:
            if (method, provider) not in memo:
                memo[(method, provider)] = L.capable_results(
                    L.context(directory, provider, server.url, method),
                    L.context(directory, provider, foundation.url, method))
                assert server.oracle.unknown_claims == set() == foundation.oracle.unknown_claims
            return memo[(method, provider)]
        yield of


CAPABLE = [*L.CAPABLE_CASES, "foundation check", "foundation verify"]


@pytest.mark.parametrize("method,provider,case", [
    param("capable", method, f"{provider}:{case}", method, provider, case)
    for method in L.METHODS for provider in L.PROVIDERS for case in CAPABLE])
def test_capable_judges_answer_is_the_methods_answer(capable, method, provider, case):
    """supported / contradicted / silent -> supported / contradicted / not_found; the foundation case (an
    exact quote, the judge's no at 0.97, yes and unknown 0.015) is contradicted in check and verify."""
    got = capable(method, provider)[case]
    assert got["answer"] == got["gold"], got


# ---------------------------------------------------------------- the stand-ins themselves

def test_the_oracle_answers_each_question_kind_from_gold():
    from standins.oracle import Gold, Oracle
    oracle = Oracle(Gold([{"claim": "Water boils at 100 °C.", "support": [L.SEA_LEVEL]},
                          {"claim": "Water boils at 50 °C.", "against": [L.SEA_LEVEL]}]))
    wrapped = L.SEA_LEVEL.replace(" pure ", "\n   pure ")
    sentence = ("yes", "no", "unknown")
    assert oracle.right({"claim": "Water boils at 100 °C.", "text": wrapped}, sentence) == "yes"
    assert oracle.right({"claim": "Water boils at 50 °C.", "text": L.SEA_LEVEL}, sentence) == "no"
    assert oracle.right({"claim": "Water boils at 50 °C.", "text": L.SALT}, sentence) == "unknown"
    assert oracle.right({"claim": "Water boils at 50 °C.", "source": f"x. {L.SEA_LEVEL}"},
                        ("supports", "contradicts", "says_nothing")) == "contradicts"
    assert oracle.right({"claim": "Water boils at 100 °C.", "document": f"x. {wrapped}"}, ("yes", "no")) == "yes"
    assert oracle.right({"claim": "Water boils at 50 °C.", "document": L.SEA_LEVEL}, ("yes", "no")) == "no"
    verdict = oracle.verdict("Water boils at 100 °C.", [L.SALT, f"Intro. {wrapped} More."])
    assert verdict == {"label": "supported", "evidence_quote": wrapped, "confidence": 1.0}   # the wrap kept
    answer = oracle.qa_answer("Water boils at 100 °C.", wrapped)["answer"]
    assert len(answer) <= 80 and answer in L.SEA_LEVEL
    assert oracle.right({"question": "Water boils at 100 °C.", "answer_1": "yes", "answer_2": answer},
                        ("same", "different")) == "same"
    assert oracle.unknown_claims == set() and oracle.shown_gold("Water boils at 100 °C.")
    oracle.right({"claim": "Never told.", "text": "x"}, ("yes", "no", "unknown"))
    assert oracle.unknown_claims == {"Never told."}


def test_the_capable_profile_puts_090_to_099_on_the_right_option():
    from standins.capable import capable as profile
    for n in range(40):
        probs = profile("no", ("yes", "no", "unknown"), f"question {n}")
        assert 0.9 <= probs["no"] <= 0.99 and max(probs, key=probs.get) == "no"
        assert abs(sum(probs.values()) - 1) < 1e-3
    assert fixed(0.97)("no", ("yes", "no", "unknown")) == {"yes": 0.015, "no": 0.97, "unknown": 0.015}


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/api/chat"])
def test_the_stand_in_speaks_each_providers_choice_envelope(path):
    """A Choice question as JSON (schema "choice"): OpenAI's reply carries the options' logprobs on the
    answer's own token; Anthropic's is the forced tool's input; Ollama's the message content."""
    import json
    import math

    import httpx
    options = {"type": "string", "enum": ["yes", "no", "unknown"]}
    schema = {"type": "object", "properties": {"answer": options,
                                               "confidence": {"type": "number"}}}
    state = json.dumps({"claim": L.SALT_CLAIM, "text": L.SALT}, indent=1)
    messages = [{"role": "system", "content": "Is the `claim` true according to the `text`?\n- yes: ..."},
                {"role": "user", "content": state}]
    response_format = {"type": "json_schema", "json_schema": {"name": "choice", "schema": schema}}
    body = {"/v1/chat/completions": {"messages": messages, "logprobs": True, "top_logprobs": 5,
                                     "response_format": response_format},
            "/v1/messages": {"system": messages[0]["content"], "messages": messages[1:],
                             "tools": [{"name": "record_choice", "input_schema": schema}]},
            "/api/chat": {"messages": messages, "format": schema}}[path]
    with capable_standin(L.CAPABLE_STORIES, fixed(0.97)) as server:
        reply = httpx.post(server.url + path, json=body).json()
    if path == "/v1/messages":
        assert reply["content"][0]["name"] == "record_choice"
        assert reply["content"][0]["input"] == {"answer": "no", "confidence": 0.97}
        return
    content = reply["choices"][0]["message"]["content"] if "choices" in reply else reply["message"]["content"]
    assert json.loads(content) == {"answer": "no", "confidence": 0.97}
    if "choices" in reply:
        token = next(t for t in reply["choices"][0]["logprobs"]["content"] if t["token"] == "no")
        top = {t["token"]: math.exp(t["logprob"]) for t in token["top_logprobs"]}
        assert top == pytest.approx({"no": 0.97, "yes": 0.015, "unknown": 0.015})
        assert "".join(t["token"] for t in reply["choices"][0]["logprobs"]["content"]) == content
