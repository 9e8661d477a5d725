"""Judge methods: the pooled method's control flow against the Jev stand-in (scripted per step), its
pooling arithmetic on hand-checked inputs, the call budget, off-contract steps, and the flows that use it."""
import json
import math

import pytest
from standins.jev import choice_answer, jev_standin

from citecheck import check, config, evaluation, verify
from citecheck.cache import Cache
from citecheck.config import Settings
from citecheck.judge import methods
from citecheck.evaluation import method_comparison as mc
from citecheck.judge.methods import decompose, pooled
from citecheck.judge.methods import sentences as units
from citecheck.source import sources
from citecheck.vocabulary import JUDGE_UNAVAILABLE

CLAIM = "Water boils at 100 °C at sea level."
PAGE = ("# Boiling\n\n"
        "At sea level, pure water boils at 100 °C. Salt barely changes that. The kettle clicks off.\n\n"
        "Denver is a mile high. Water there boils near 95 °C. Mountain huts are colder still. Ok.")
SUPPORTING = "At sea level, pure water boils at 100 °C."
YES = {"yes": 0.8, "no": 0.05, "unknown": 0.15}
UNKNOWN = {"yes": 0.05, "no": 0.05, "unknown": 0.9}
NO = {"yes": 0.05, "no": 0.75, "unknown": 0.2}


def scripted(by_text: dict, default=UNKNOWN):
    """A Jev script: the step's probabilities chosen by the sentence it shows (`default` otherwise)."""
    return lambda body: by_text.get(body["state"].get("text"), default)


@pytest.fixture
def pooled_ctx(make_ctx):
    def make(server, **changes):
        return make_ctx(typesafe_endpoint=server.url, judge_method="pooled", **changes)
    return make


# ---------------------------------------------------------------- sentences, ranking, coverage

def test_sentences_are_normalised_paragraph_sentences_of_three_words_or_more():
    got = units.sentences([PAGE])
    assert got[0] == SUPPORTING and "Ok." not in got and "# Boiling" not in got
    assert all(len(s.split()) >= units.MIN_WORDS for s in got)
    quoted = units.sentences(["He said “yes.” Then left the room."])
    assert quoted == ['He said "yes."', "Then left the room."]


def test_bm25_ranks_the_sentence_sharing_rare_claim_words_first_and_keeps_order_on_ties():
    texts = ["Denver is a mile high.", SUPPORTING, "The kettle clicks off."]
    assert units.ranked(CLAIM, texts)[0] == 1
    assert units.ranked("nothing shared", texts) == [0, 1, 2]


def test_coverage_counts_distinct_stemmed_content_words():
    assert units.coverage("Boiling kettles", "the kettles boiled") == 1.0      # boil, kettl
    assert units.coverage("Boiling kettles", "the kettle is boiling") == 0.5   # crude: kettl != kettle
    assert units.coverage("Water boils hot", "water") == pytest.approx(1 / 3)
    assert units.coverage("the of and", "anything") == 1.0


def answer(yes: float, no: float, unknown: float) -> dict:
    return {"yes": yes, "no": no, "unknown": unknown}


ON_TOPIC = [PAGE]                                                       # CLAIM's words are all on it
OFF_TOPIC = ["Quokkas sleep in burrows on small islands. They eat leaves at night."]


def label(asked: list[dict], passages=ON_TOPIC, claim=CLAIM) -> str:
    return pooled.pool(claim, passages, [(f"sentence {i}", p) for i, p in enumerate(asked)])[0]


def test_a_confident_no_is_contradicted_never_supported():
    no = answer(0.015, 0.97, 0.015)
    assert pooled.p_supported(no) == round(0.015 / 0.985, 4) < pooled.SUPPORT_AT
    assert label([no]) == label([no], OFF_TOPIC) == "contradicted"
    got, quote, confidence, summary = pooled.pool(CLAIM, ON_TOPIC, [("a b c", UNKNOWN), (SUPPORTING, no)])
    assert (got, quote, confidence) == ("contradicted", SUPPORTING, 0.97) and summary.decided
    # even where yes/(yes + unknown) alone would have been 0.5 >= SUPPORT_AT, and at any threshold
    assert pooled.label_of(summary, 1.0, support_at=0.0) == "contradicted"


def test_a_confident_yes_is_supported_quoting_its_sentence():
    got, quote, confidence, summary = pooled.pool(CLAIM, OFF_TOPIC, [("a b c", UNKNOWN),
                                                                    (SUPPORTING, answer(0.95, 0.02, 0.03))])
    assert (got, quote) == ("supported", SUPPORTING)
    assert confidence == summary.p_supported == round(0.95 / 0.98, 4)


def test_a_confident_unknown_is_not_found_however_much_of_the_claim_is_shown():
    unknown = answer(0.02, 0.03, 0.95)
    assert pooled.coverage_of(CLAIM, ON_TOPIC) == 1.0
    got, quote, confidence, summary = pooled.pool(CLAIM, ON_TOPIC, [(SUPPORTING, unknown)])
    assert (got, quote) == ("not_found", None) and summary.decided
    assert confidence == round(1 - max(pooled.p_supported(unknown), 0.03), 4)


def test_coverage_breaks_the_tie_only_when_no_answer_was_decided():
    undecided = [answer(0.1, 0.3, 0.6), answer(0.05, 0.1, 0.85)]        # max 0.85 < DECIDED
    got, quote, confidence, summary = pooled.pool(CLAIM, ON_TOPIC, [("first", undecided[0]),
                                                                    ("second", undecided[1])])
    assert (got, quote) == ("contradicted", "first") and not summary.decided   # quote: the largest P(no)
    assert confidence == round(1 - max(summary.p_supported, 0.3), 4)
    assert label(undecided, OFF_TOPIC) == "not_found"                   # low coverage
    assert label(undecided + [answer(0.05, 0.05, 0.9)]) == "not_found"  # one decided answer: no tie to break


def test_contradicted_needs_the_no_to_beat_both_unknown_and_yes():
    assert label([answer(0.05, 0.5, 0.45)], OFF_TOPIC) == "contradicted"
    assert label([answer(0.0, 0.45, 0.55)], OFF_TOPIC) == "not_found"   # unknown beats no
    assert label([answer(0.3, 0.31, 0.39)], OFF_TOPIC) == "not_found"   # neither supported nor contradicted
    # yes over SUPPORT_AT but below the no there: not supported; the no beats both: contradicted
    assert pooled.p_supported(answer(0.4, 0.45, 0.15)) >= pooled.SUPPORT_AT
    assert label([answer(0.4, 0.45, 0.15)], OFF_TOPIC) == "contradicted"


def test_support_wins_over_a_no_on_another_sentence_and_the_quote_is_the_no_with_the_largest_p():
    asked = [("no", answer(0.0, 0.6, 0.4)), ("yes", answer(0.9, 0.05, 0.05)),
             ("louder", answer(0.0, 0.8, 0.2))]
    assert pooled.pool(CLAIM, ON_TOPIC, asked)[:2] == ("supported", "yes")
    got, quote, confidence, _ = pooled.pool(CLAIM, ON_TOPIC, [asked[0], asked[2]])
    assert (got, quote, confidence) == ("contradicted", "louder", 0.8)


def test_the_summary_holds_the_signals_and_relabels_to_the_same_verdict():
    asked = [answer(0.2, 0.1, 0.7), answer(0.35, 0.05, 0.6)]
    summary = pooled.summarise(asked)
    assert set(summary.as_dict()) == set(pooled.SIGNALS)
    assert (summary.best, summary.p_supported) == (1, round(0.35 / 0.95, 4))
    assert (summary.yes, summary.no_there) == (0.35, 0.05)
    assert (summary.no, summary.most_no, summary.decided) == (0.0, 0.1, False)
    assert pooled.label_of(summary.as_dict(), 0.0) == pooled.label_of(summary, 0.0) == "supported"
    assert pooled.label_of(summary, 0.0, support_at=0.5) == "not_found"
    assert pooled.label_of(summary, 0.5, support_at=0.5) == "contradicted"


def test_support_at_is_compared_at_4_decimals_as_it_was_chosen():
    at = pooled.SUPPORT_AT - 0.00004                                   # rounds to SUPPORT_AT
    got, _, _, summary = pooled.pool(CLAIM, [PAGE], [(SUPPORTING, {"yes": at, "no": 0.0, "unknown": 1 - at})])
    assert (got, summary.p_supported) == ("supported", pooled.SUPPORT_AT)
    below = pooled.SUPPORT_AT - 0.0001
    got, _, _, _ = pooled.pool(CLAIM, [PAGE], [(SUPPORTING, {"yes": below, "no": 0.0, "unknown": 1 - below})])
    assert got != "supported"


# ---------------------------------------------------------------- control flow against the Jev stand-in

def test_pooled_asks_the_top_sentences_one_call_each_and_caches_every_step(pooled_ctx):
    with jev_standin(script=scripted({SUPPORTING: YES}), model="standin-jev") as server:
        ctx = pooled_ctx(server)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
        asked = [r.json() for r in server.requests]
        again = methods.judge(CLAIM, [PAGE], ctx)
        assert len(server.requests) == len(asked)                     # the second run only replayed
    top = pooled.top_sentences(CLAIM, [PAGE])
    assert [b["state"] for b in asked] == [{"claim": CLAIM, "text": t} for t in top]
    assert len(top) == pooled.SENTENCES and top[0] == SUPPORTING
    assert all(b["questions"]["rel"]["instructions"] == pooled.INSTRUCTIONS for b in asked)
    assert verdict["label"] == "supported" and verdict["evidence_quote"] == SUPPORTING
    assert verdict["calls"] == pooled.SENTENCES and verdict["reason"] is None and again == verdict
    entries = ctx.cache.entries()
    assert {s["key"] for s in verdict["steps"]} <= set(entries)
    assert all(entries[s["key"]]["model"] == "standin-jev" and entries[s["key"]]["recorded"]
               for s in verdict["steps"])


def test_an_off_contract_step_is_labelled_the_other_steps_still_run_and_it_is_not_cached(pooled_ctx):
    top = pooled.top_sentences(CLAIM, [PAGE])
    bad = {"answers": {"rel": choice_answer({"yes": 0.5, "maybe": 0.5})}}
    with jev_standin(script=scripted({top[1]: bad})) as server:
        ctx = pooled_ctx(server)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
        assert len(server.requests) == len(top)
    assert verdict["label"] == "not_found" and verdict["confidence"] == 0.0
    assert verdict["reason"].startswith("judge_output_invalid: step 2: ")
    assert [s["answer"] is None for s in verdict["steps"]] == [False, True, False, False]
    assert verdict["steps"][1]["key"] not in ctx.cache.entries()
    assert sum(s["key"] in ctx.cache.entries() for s in verdict["steps"]) == len(top) - 1


def test_a_missing_answer_is_off_contract_too(pooled_ctx):
    with jev_standin(script=lambda body: {"answers": {}}) as server:
        verdict = methods.judge(CLAIM, [PAGE], pooled_ctx(server))
    assert verdict["reason"].startswith(
        "judge_output_invalid: step 1: no choice answer for the question 'rel'")


def test_over_the_call_budget_it_stops_before_any_call_and_says_why(pooled_ctx):
    with jev_standin(script=scripted({})) as server:
        verdict = methods.judge(CLAIM, [PAGE], pooled_ctx(server, judge_call_budget=2))
        assert server.requests == []
    assert verdict["label"] == "not_found" and verdict["confidence"] == 0.0
    assert verdict["reason"] == (f"judge_call_budget: pooled needs {pooled.SENTENCES} model calls, "
                                 "JUDGE_CALL_BUDGET=2")


def test_no_sentence_to_ask_is_not_found_without_a_call(pooled_ctx):
    with jev_standin() as server:
        verdict = methods.judge(CLAIM, ["Ok. Fine."], pooled_ctx(server))
        assert server.requests == []
    assert (verdict["label"], verdict["confidence"], verdict["calls"]) == ("not_found", 0.0, 0)


# ---------------------------------------------------------------- the flows: verify, check, evaluation

def test_trace_text_gives_the_pooled_row_with_its_quote_through_the_guard(pooled_ctx):
    with jev_standin(script=scripted({SUPPORTING: YES})) as server:
        trace = verify.trace_text(CLAIM, PAGE, pooled_ctx(server), url="text:page")
    assert trace.row["label"] == "supported" and trace.row["evidence_quote"] == SUPPORTING
    assert trace.row["url"] == "text:page" and trace.row["auto"] is False      # the model has no AUTO_ACCEPT
    assert trace.row["auto_note"].startswith(f"uncalibrated: no AUTO_ACCEPT for {trace.judged['model']} in ")
    assert trace.shown and trace.judged["calls"] == pooled.SENTENCES


def test_an_unreachable_judge_is_a_labelled_row(make_ctx):
    ctx = make_ctx(typesafe_endpoint="http://127.0.0.1:9", judge_method="pooled", judge_timeout=5)
    row = verify.trace_text(CLAIM, PAGE, ctx).row
    assert (row["label"], row["reason"], row["confidence"]) == ("not_found", "judge_unavailable", None)


def test_the_fetch_free_flow_gives_the_row_verify_gives_for_a_fixture_page(fixture_site, pooled_ctx):
    url = fixture_site.url("/articles/boiling-point")
    with jev_standin(script=scripted({}, default=YES)) as server:
        ctx = pooled_ctx(server).replace(allow_private=True)
        live = verify.trace_citation(CLAIM, url, ctx)
        fetch_free = verify.trace_text(CLAIM, live.page.markdown, ctx, url=url)
    assert live.row["label"] == "supported"
    same = ("label", "evidence_quote", "confidence", "reason", "auto")
    assert {k: fetch_free.row[k] for k in same} == {k: live.row[k] for k in same}
    assert fetch_free.shown == live.shown


def test_the_evaluation_measures_the_method_through_trace_text(pooled_ctx):
    with jev_standin(script=scripted({SUPPORTING: YES})) as server:
        ctx = pooled_ctx(server)
        got = evaluation.judged(CLAIM, PAGE, "pooled", ctx)
        row = verify.trace_text(CLAIM, PAGE, ctx).row
    assert got["answer"] == row["label"] == "supported" and got["confidence"] == row["confidence"]
    assert got["calls"] == pooled.SENTENCES and 0.5 < got["p_supported"] <= 1


def test_check_uses_the_chosen_method_and_an_off_contract_step_is_judge_unavailable(pooled_ctx, tmp_path):
    (tmp_path / "notes.md").write_text(PAGE + "\n", encoding="utf-8")
    doc = sources.load(tmp_path / "notes.md", "markdown")
    citation = {"id": "A1", "claim": CLAIM, "quote": SUPPORTING, "section": "Boiling"}
    with jev_standin(script=scripted({SUPPORTING: YES})) as server:
        (row,) = check.check_citations(doc, [citation], pooled_ctx(server), threshold=0.8)
    assert (row["relation"], row["verdict"]) == ("supports", "verified")
    with jev_standin(script=lambda body: {"answers": {}}) as server:
        unavailable = []
        ctx = pooled_ctx(server, cache_path=tmp_path / "fresh.json")
        (row,) = check.check_citations(doc, [citation], ctx, unavailable=unavailable)
    assert row["verdict"] == JUDGE_UNAVAILABLE and "judge_output_invalid" in unavailable[0][1]


def test_the_shipped_default_is_the_method_chosen_on_tune():
    assert Settings().judge_method == "pooled"
    assert Settings.from_env({}).judge_method == "pooled"


def test_one_pass_keeps_each_flows_baseline(make_ctx):
    ctx = make_ctx(judge_method="one_pass")
    assert methods.chosen(ctx, "json").name == "json" and methods.chosen(ctx, "choice").name == "choice"
    assert methods.chosen(ctx.replace(judge_method="pooled"), "json").name == "pooled"


def test_settings_validate_the_method_and_the_budget():
    assert Settings.from_env({"JUDGE_METHOD": "Pooled", "JUDGE_CALL_BUDGET": "3"}).judge_call_budget == 3
    with pytest.raises(ValueError, match="JUDGE_METHOD must be one of one_pass, choice, json, pooled, decom"):
        Settings.from_env({"JUDGE_METHOD": "vibes"})
    with pytest.raises(ValueError, match="JUDGE_CALL_BUDGET"):
        Settings.from_env({"JUDGE_CALL_BUDGET": "0"})
    assert set(config.JUDGE_METHODS) == set(methods.NAMES)


def test_auroc_on_hand_checked_scores():
    assert evaluation.auroc([0.9, 0.8, 0.3, 0.1], [True, False, True, False]) == 0.75
    assert evaluation.auroc([0.5, 0.5], [True, False]) == 0.5
    assert math.isnan(evaluation.auroc([0.5], [True]))


# ---------------------------------------------------------------- decomposition (facts, then one step each)

FACTS = ["Water boils at 100 °C.", "Water boils at sea level."]


@pytest.fixture
def decompose_ctx(make_ctx):
    from standins.judge import judge_standin
    with judge_standin() as facts_server:
        facts_server.script.reset()

        def make(jev, facts=FACTS, content=None, **changes):
            facts_server.script.content = content if content is not None else json.dumps({"facts": facts})
            facts_server.requests.clear()
            return make_ctx(typesafe_endpoint=jev.url, openai_base_url=facts_server.url + "/v1",
                            judge_method="decompose", **changes), facts_server
        yield make


def by_fact(answers: dict, default=UNKNOWN):
    return lambda body: answers.get(body["state"]["claim"], default)


def test_decompose_checks_every_fact_and_names_the_one_that_failed(decompose_ctx):
    with jev_standin(script=by_fact({FACTS[0]: YES})) as jev:
        ctx, facts_server = decompose_ctx(jev)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
        asked = [r.json()["state"] for r in jev.requests]
    assert len(facts_server.requests) == 1 and [s["claim"] for s in asked] == FACTS
    assert all(s["text"].split("\n")[0] in units.sentences([PAGE]) for s in asked)
    assert verdict["failed_fact"] == FACTS[1]
    assert verdict["label"] == "not_found"             # a decided unknown: on-topic words do not contradict
    assert verdict["evidence_quote"] is None and verdict["calls"] == 3
    assert [f["fact"] for f in verdict["facts"]] == FACTS


@pytest.mark.parametrize("second, label, confidence", [
    (NO, "contradicted", 0.75),                                      # the judge's no on a fact
    ({"yes": 0.1, "no": 0.2, "unknown": 0.7}, "contradicted", 0.8),  # undecided: coverage breaks the tie
    ({"yes": 0.02, "no": 0.03, "unknown": 0.95}, "not_found", 0.97)])  # 1 - max(0.0206, 0.03)
def test_decompose_reads_each_fact_with_the_pooled_rule(decompose_ctx, second, label, confidence):
    with jev_standin(script=by_fact({FACTS[0]: YES, FACTS[1]: second})) as jev:
        verdict = methods.judge(CLAIM, [PAGE], decompose_ctx(jev)[0])
    assert (verdict["label"], verdict["confidence"], verdict["failed_fact"]) == (label, confidence, FACTS[1])
    assert (verdict["evidence_quote"] in units.sentences([PAGE])) is (label == "contradicted")
    assert verdict["signals"] == [pooled.summarise([YES]).as_dict(), pooled.summarise([second]).as_dict()]
    record = {"method": "decompose", "reason": None, "answer": "?", "confidence": None,
              "signals": verdict["signals"], "coverage": verdict["coverage"]}
    relabelled = mc.relabel(record)
    assert (relabelled["answer"], relabelled["confidence"]) == (label, confidence)


def test_decompose_a_no_on_any_fact_beats_a_weaker_unknown():
    facts = [pooled.summarise([NO]).as_dict(), pooled.summarise([{"yes": 0.01, "no": 0.01, "unknown": 0.98}])]
    assert decompose.decide(facts, 1.0) == ("contradicted", 0)
    assert decompose.label_of([pooled.summarise([YES])] * 2, 0.0) == "supported"


def test_decompose_supports_only_when_every_fact_is_supported(decompose_ctx):
    with jev_standin(script=by_fact({}, default=YES)) as jev:
        verdict = methods.judge(CLAIM, [PAGE], decompose_ctx(jev)[0])
    assert verdict["label"] == "supported" and verdict["failed_fact"] is None
    assert verdict["p_supported"] == min(f["p_supported"] for f in verdict["facts"])


def test_decompose_off_contract_facts_and_the_budget(decompose_ctx):
    with jev_standin(script=by_fact({}, default=YES)) as jev:
        verdict = methods.judge(CLAIM, [PAGE], decompose_ctx(jev, content="not json")[0])
        assert jev.requests == []
        assert verdict["reason"] == "judge_output_invalid: step 1: facts: not JSON"
        ctx, _ = decompose_ctx(jev, facts=["x"] * 5)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
        assert verdict["reason"].startswith("judge_output_invalid: step 1: facts: 5 facts, at most 4")
        ctx, _ = decompose_ctx(jev, judge_call_budget=2)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
        assert jev.requests == []
    assert verdict["reason"] == "judge_call_budget: decompose needs 3 model calls, JUDGE_CALL_BUDGET=2"


def test_the_choice_method_records_the_key_choice_judge_caches(make_ctx):
    with jev_standin({"supports": 0.7, "contradicts": 0.1, "says_nothing": 0.2}) as server:
        ctx = make_ctx(typesafe_endpoint=server.url, judge_method="choice")
        verdict = methods.judge(CLAIM, [PAGE], ctx)
    assert verdict["label"] == "supported" and verdict["evidence_quote"] == PAGE
    assert [s["key"] for s in verdict["steps"]] == list(ctx.cache.entries())
