"""Property tests (Hypothesis) for the parsers of outside input and the matcher.

Each parser, given anything, either returns what its contract says or refuses with its own one-line
error; never another exception, never a string that is not text. The matcher's work is counted in
rapidfuzz calls (a budget in operations, not seconds: no timed assertions)."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citecheck import batch, matching
from citecheck.cache import Cache
from citecheck.config import Settings
from citecheck.context import RunContext
from citecheck.judge import judge_contract, judges
from citecheck.judge.judge_contract import OffContract
from citecheck.source import sources
from citecheck.source.text import not_text
from citecheck.vocabulary import JUDGE_LABELS, RELATIONS, STATUSES

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# text that includes lone surrogates, the JSON values built from it, and raw bytes
TEXT = st.text(st.characters(codec=None), max_size=40) | st.sampled_from(["\ud800", "a\udfffb", "", " ", "."])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | TEXT
JSON = st.recursive(SCALARS, lambda inner: (st.lists(inner, max_size=4)
                                               | st.dictionaries(TEXT, inner, max_size=4)),
                    max_leaves=12)


def is_printable(message: str) -> bool:
    return isinstance(message, str) and not_text(message) is None


def checked(check, *args):
    """check(*args), or None when it refuses with a printable OffContract (its only way to refuse)."""
    try:
        return check(*args)
    except OffContract as exc:
        assert is_printable(str(exc))
        return None


def dumps(value) -> str:
    # ascii: lone surrogates become \\udXXX escapes
    return json.dumps(value, ensure_ascii=True, allow_nan=True)


# ---------------------------------------------------------------- claims JSONL

CLAIM_LINE = st.fixed_dictionaries({"id": st.one_of(TEXT, st.integers(), st.booleans(), st.none()),
                                    "claim": st.one_of(TEXT, st.integers()),
                                    "urls": st.one_of(st.lists(TEXT, max_size=3), TEXT)})


@FUZZ
@given(st.lists(st.one_of(st.binary(max_size=60), CLAIM_LINE.map(lambda d: dumps(d).encode()),
                          JSON.map(lambda v: dumps(v).encode())), max_size=8))
def test_claims_jsonl_never_raises_and_keeps_only_text(lines):
    parsed = batch.parse_lines(lines)
    for claim in parsed.claims:
        assert claim.urls and all(not_text(s) is None for s in (claim.id, claim.claim, *claim.urls))
    for message in parsed.problems + parsed.notes:
        assert is_printable(message) and message.startswith("line ")
        assert 1 <= int(message.split(":")[0].removeprefix("line ")) <= len(lines)
    assert len({c.id for c in parsed.claims}) == len(parsed.claims)


# ---------------------------------------------------------------- citations file

CITATION = st.fixed_dictionaries({"id": st.one_of(TEXT, st.integers()), "claim": TEXT,
                                  "quote": st.one_of(st.none(), TEXT),
                                  "section": st.one_of(st.none(), TEXT, st.integers())})
DOC = sources.load("data/rfc7519.txt")


@FUZZ
@given(st.one_of(st.binary(max_size=80),
                 st.lists(st.one_of(CITATION, JSON), max_size=6).map(lambda v: dumps(v).encode()),
                 JSON.map(lambda v: dumps(v).encode())))
def test_a_citations_file_is_read_or_refused_in_one_line_naming_it(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("c") / "citations.json"
    path.write_bytes(data)
    try:
        loaded = sources.read_citations(path, DOC)
    except ValueError as exc:
        assert "citations.json" in str(exc) and is_printable(str(exc)) and "\n" not in str(exc)
        return
    for citation in loaded.citations:
        for key in sources.REQUIRED:
            assert not isinstance(citation[key], str) or not_text(citation[key]) is None
        matching.locate(citation["quote"], DOC, citation["section"])   # what check does next: no crash
    assert all(is_printable(m) for m in loaded.errors + loaded.warnings)


# ---------------------------------------------------------------- judge envelopes and answers

@FUZZ
@given(st.sampled_from(sorted(judge_contract.ENVELOPES)), JSON)
def test_an_envelope_is_its_text_or_off_contract(provider, body):
    if (out := checked(judge_contract.envelope, provider, body, "asked-model")) is None:
        return
    text, usage, model = out
    assert isinstance(text, str) and isinstance(model, str) and (usage is None or isinstance(usage, dict))


@FUZZ
@given(st.one_of(JSON, JSON.map(dumps), TEXT))
def test_a_verdict_is_on_contract_or_off_contract(content):
    if (verdict := checked(judge_contract.verdict, content)) is None:
        return
    assert verdict["label"] in JUDGE_LABELS and 0 <= verdict["confidence"] <= 1
    assert verdict["evidence_quote"] is None or not_text(verdict["evidence_quote"]) is None


PROBABILITIES = st.dictionaries(st.sampled_from(RELATIONS + ("maybe",)), st.floats(allow_nan=True),
                                max_size=4)


@FUZZ
@given(st.one_of(JSON, st.fixed_dictionaries({"relation": st.sampled_from(RELATIONS + ("maybe",)),
                                               "confidence": st.one_of(st.floats(), st.none()),
                                               "probabilities": PROBABILITIES})))
def test_a_choice_answer_is_on_contract_or_off_contract(answer):
    if (choice := checked(judges.check_relation, answer)) is None:
        return
    assert choice["relation"] in RELATIONS and 0 <= choice["confidence"] <= 1
    assert set(choice["probabilities"]) == set(RELATIONS)
    assert math.isclose(sum(choice["probabilities"].values()), 1, abs_tol=judge_contract.SUM_TOLERANCE)


@FUZZ
@given(st.sampled_from(sorted(judges.PROVIDERS)), JSON)
def test_the_json_judge_labels_any_provider_body_and_caches_only_valid_ones(
        tmp_path_factory, monkeypatch_body, provider, body):
    monkeypatch_body(provider, body)
    cache = Cache(tmp_path_factory.mktemp("cache") / "cache.json")
    settings_ = Settings(judge_provider=provider, openai_base_url="http://127.0.0.1:1/v1")
    ctx = RunContext.build(settings_.replace(secrets=Settings().secrets), cache)
    verdict = judges.json_judge("claim", ["passage"], ctx)
    assert verdict["label"] in JUDGE_LABELS
    for entry in cache.entries().values():
        judge_contract.verdict(entry["answer"]["content"])        # whatever was cached is on contract


@pytest.fixture
def monkeypatch_body(monkeypatch):
    """Replace the HTTP call of every provider: its response body is the given JSON value."""
    def use(provider, body):
        monkeypatch.setitem(judges.PROVIDERS, provider, lambda model, messages, settings: body)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    return use


# ---------------------------------------------------------------- the matcher

@FUZZ
@given(st.one_of(st.none(), TEXT, st.text(max_size=3000)),
       st.one_of(st.none(), st.sampled_from(["4.1.4", "13.2", "x"])))
def test_the_matcher_answers_any_quote_within_its_budget(monkeypatch_ratio, quote, section):
    match = matching.locate(quote, DOC, section, max_chars=2000)
    assert match.status in STATUSES
    assert monkeypatch_ratio["ratio"] <= len(DOC.sections) + matching.MAX_EDGES ** 2 + 1
    monkeypatch_ratio["ratio"] = 0


@pytest.fixture
def monkeypatch_ratio(monkeypatch):
    calls = {"ratio": 0}
    ratio = matching.fuzz.ratio

    def counted(*args, **kwargs):
        calls["ratio"] += 1
        return ratio(*args, **kwargs)

    monkeypatch.setattr(matching.fuzz, "ratio", counted)
    return calls
