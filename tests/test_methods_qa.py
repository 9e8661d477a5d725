"""The question-answer method against the stand-ins: scripted answers per step, off-contract ones too."""
import json

import pytest
from standins.jev import jev_standin
from standins.judge import judge_standin

from citecheck import verify
from citecheck.evaluation import method_comparison as mc
from citecheck.judge import methods
from citecheck.judge.methods import qa
from citecheck.judge.methods import sentences as units

CLAIM = "Water boils at 100 °C at sea level."
PAGE = ("# Boiling\n\n"
        "At sea level, pure water boils at 100 °C. Salt barely changes that. The kettle clicks off.\n\n"
        "Denver is a mile high. Water there boils near 95 °C. Mountain huts are colder still. Ok.")
QUESTION = {"question": "At what temperature does water boil at sea level?", "answer": "100 °C"}


def replies(question=QUESTION, answer="100 °C"):
    """The JSON stand-in's script: step 1 (the question) or step 2 (the source's answer), by the system prompt."""
    def content(body):
        system = body["messages"][0]["content"]
        if system == qa.QUESTION_SYSTEM:
            return question if isinstance(question, str) else json.dumps(question)
        return answer if isinstance(answer, str) and answer.startswith("{") else json.dumps({"answer": answer})
    return content


@pytest.fixture
def qa_ctx(make_ctx):
    with judge_standin() as generator:
        def make(jev, question=QUESTION, answer="100 °C", **changes):
            generator.script.reset()
            generator.script.content = replies(question, answer)
            generator.requests.clear()
            return make_ctx(typesafe_endpoint=jev.url, openai_base_url=generator.url + "/v1", judge_method="qa",
                            **changes), generator
        yield make


def same(p):
    return lambda body: {"same": p, "different": 1 - p}


def test_same_answers_support_and_the_quote_is_the_sentence_holding_the_answer(qa_ctx):
    with jev_standin(script=same(0.9)) as jev:
        ctx, generator = qa_ctx(jev)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
        (asked,) = [r.json()["state"] for r in jev.requests]
    assert len(generator.requests) == 2 and verdict["calls"] == 3
    assert asked == {"question": QUESTION["question"], "answer_1": "100 °C", "answer_2": "100 °C"}
    assert verdict["label"] == "supported" and verdict["p_supported"] == 0.9 and verdict["confidence"] == 0.9
    assert verdict["evidence_quote"] == "At sea level, pure water boils at 100 °C."
    assert verdict["evidence_quote"] in units.sentences([PAGE])
    text = generator.requests[1].json()["messages"][1]["content"]
    assert text.startswith("Text:\n") and text.endswith("Question: " + QUESTION["question"])


def test_stated_and_different_is_a_contradiction(qa_ctx):
    with jev_standin(script=same(0.2)) as jev:
        verdict = methods.judge(CLAIM, [PAGE], qa_ctx(jev, answer="95 °C")[0])
    assert verdict["label"] == "contradicted" and verdict["confidence"] == 0.8 and verdict["p_supported"] == 0.2
    assert verdict["evidence_quote"] == "Water there boils near 95 °C." and verdict["source_answer"] == "95 °C"


def test_not_stated_is_not_found_without_the_third_call(qa_ctx):
    with jev_standin(script=same(0.9)) as jev:
        verdict = methods.judge(CLAIM, [PAGE], qa_ctx(jev, answer=None)[0])
        assert jev.requests == []
    assert (verdict["label"], verdict["confidence"], verdict["calls"], verdict["reason"]) == ("not_found", 0.0, 2, None)


def test_an_answer_that_is_not_on_the_page_is_downgraded_by_the_guard(qa_ctx):
    with jev_standin(script=same(0.9)) as jev:
        trace = verify.trace_text(CLAIM, PAGE, qa_ctx(jev, answer="one hundred degrees")[0])
    assert trace.judged["evidence_quote"] == "one hundred degrees"
    assert trace.row["label"] == "not_found" and trace.row["reason"] == "evidence_quote_not_in_source"


@pytest.mark.parametrize("question, answer, why", [
    ("not json", "100 °C", "step 1: "),
    (json.dumps({"question": "", "answer": "x"}), "100 °C", "step 1: question: not a question and an answer"),
    (QUESTION, '{"answer": 7}', 'step 2: answer: not {"answer": a string or null}'),
])
def test_an_off_contract_step_is_a_labelled_row_and_nothing_off_contract_is_cached(qa_ctx, question, answer, why):
    with jev_standin(script=same(0.9)) as jev:
        ctx, _ = qa_ctx(jev, question=question, answer=answer)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
        assert jev.requests == []
    assert verdict["label"] == "not_found" and verdict["reason"].startswith("judge_output_invalid: " + why)
    assert all(entry["function"] != "judge.question/openai" or question == QUESTION
               for entry in ctx.cache.entries().values())


def test_the_budget_is_reserved_before_the_first_call(qa_ctx):
    with jev_standin(script=same(0.9)) as jev:
        ctx, generator = qa_ctx(jev, judge_call_budget=2)
        verdict = methods.judge(CLAIM, [PAGE], ctx)
    assert generator.requests == [] and verdict["reason"] == "judge_call_budget: qa needs 3 model calls, JUDGE_CALL_BUDGET=2"


def test_every_step_is_cached_with_its_model_and_replays_offline(qa_ctx):
    with jev_standin(script=same(0.9)) as jev:
        ctx, generator = qa_ctx(jev)
        first = methods.judge(CLAIM, [PAGE], ctx)
    again = methods.judge(CLAIM, [PAGE], ctx.replace(offline=True))
    assert {k: again[k] for k in ("label", "evidence_quote", "confidence")} == \
        {k: first[k] for k in ("label", "evidence_quote", "confidence")}
    functions = sorted(e["function"] for e in ctx.cache.entries().values())
    assert functions == ["judge.answer/openai", "judge.question/openai", "typesafe.system_one"]
    assert all(e["model"] and e["recorded"] for e in ctx.cache.entries().values())


def test_contradicted_needs_the_judges_different_and_the_rule_relabels_recorded_signals(qa_ctx):
    assert qa.label_of({"same": 0.5, "different": 0.5}) == "supported"           # the midpoint supports
    assert qa.label_of({"same": 0.3, "different": 0.7}) == "contradicted"
    assert qa.label_of({"same": 0.3, "different": 0.3}) == "not_found"       # no different, no contradiction
    assert qa.confidence_of({"same": 0.3, "different": 0.7}, "contradicted") == 0.7
    assert qa.confidence_of({"same": 0.3, "different": 0.3}, "not_found") == 0.7
    with jev_standin(script=same(0.49)) as jev:                      # the contract: the two sum to 1
        verdict = methods.judge(CLAIM, [PAGE], qa_ctx(jev, answer="95 °C")[0])
    assert (verdict["label"], verdict["confidence"], verdict["signals"]) == (
        "contradicted", 0.51, {"same": 0.49, "different": 0.51})
    record = {"method": "qa", "reason": None, "answer": "?", "confidence": None,
              "signals": verdict["signals"]}
    assert mc.relabel(record) == {**record, "answer": "contradicted", "confidence": 0.51}
