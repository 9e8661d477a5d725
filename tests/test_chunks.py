"""The chunks method (LLM-AggreFact's protocol) against the Jev stand-in, scripted per chunk: supported from
the best chunk with its BM25 sentence as the quote, not_found otherwise (never contradicted), the call
budget reserved first, an off-contract step labelled and not cached, and the row verify gives."""
import pytest
from standins.jev import choice_answer, jev_standin

from citecheck import verify
from citecheck.judge import methods
from citecheck.judge.methods import chunks

CLAIM = "Water boils at 100 °C at sea level."
SILENT = "Denver is a mile high. Mountain huts are colder still. The road closes in winter."
SUPPORTING = "At sea level, pure water boils at 100 °C."
HOLDING = f"The kettle clicks off. {SUPPORTING} Salt barely changes that."
OTHER = "Tea is brewed with hot water. Green tea likes it cooler. Black tea wants it boiling."
ABOVE = {"yes": min(chunks.SUPPORT_AT + 0.2, 0.99), "no": 1 - min(chunks.SUPPORT_AT + 0.2, 0.99)}
BELOW = {"yes": chunks.SUPPORT_AT - 0.1, "no": 1 - (chunks.SUPPORT_AT - 0.1)}
NO = {"yes": 0.02, "no": 0.98}


def scripted(by_document: dict, default=BELOW):
    """A Jev script: the step's probabilities chosen by the chunk it shows (`default` otherwise)."""
    return lambda body: by_document.get(body["state"]["document"], default)


@pytest.fixture
def chunks_ctx(make_ctx):
    def make(server, **changes):
        return make_ctx(typesafe_endpoint=server.url, judge_method="chunks", **changes)
    return make


def test_supported_from_the_best_chunk_quoting_its_bm25_sentence_and_every_step_cached(chunks_ctx):
    passages = [SILENT, HOLDING, OTHER]
    with jev_standin(script=scripted({HOLDING: ABOVE}), model="standin-jev") as server:
        ctx = chunks_ctx(server)
        verdict = methods.judge(CLAIM, passages, ctx)
        asked = [r.json() for r in server.requests]
        again = methods.judge(CLAIM, passages, ctx)
        assert len(server.requests) == len(asked)                      # the second run only replayed
    assert [b["state"] for b in asked] == [{"claim": CLAIM, "document": p} for p in passages]
    assert all(b["questions"] == {"supported": {"instructions": chunks.INSTRUCTIONS, "criteria": chunks.CRITERIA,
                                                "type": "choice"}} for b in asked)
    assert (verdict["label"], verdict["evidence_quote"]) == ("supported", SUPPORTING)
    assert verdict["p_supported"] == verdict["confidence"] == round(ABOVE["yes"], 4)
    assert verdict["calls"] == 3 and verdict["reason"] is None and again == verdict
    entries = ctx.cache.entries()
    assert all(entries[s["key"]]["model"] == "standin-jev" for s in verdict["steps"])


def test_below_support_at_is_not_found_and_a_confident_no_is_never_contradicted(chunks_ctx):
    with jev_standin(script=scripted({HOLDING: BELOW}, default=NO)) as server:
        verdict = methods.judge(CLAIM, [SILENT, HOLDING], chunks_ctx(server))
    assert (verdict["label"], verdict["evidence_quote"]) == ("not_found", None)
    assert verdict["p_supported"] == round(BELOW["yes"], 4)             # the max over chunks
    assert verdict["confidence"] == round(1 - BELOW["yes"], 4)
    with jev_standin(script=scripted({}, default=NO)) as server:
        verdict = methods.judge(CLAIM, [OTHER], chunks_ctx(server))     # not asked before: not replayed
    assert (verdict["label"], verdict["p_supported"], verdict["confidence"]) == ("not_found", 0.02, 0.98)


def test_support_at_is_inclusive_and_compared_at_4_decimals():
    at = chunks.SUPPORT_AT - 0.00004                                    # rounds to SUPPORT_AT
    label, quote, _, p = chunks.pool(CLAIM, [(HOLDING, {"yes": at, "no": 1 - at})])
    assert (label, quote, p) == ("supported", SUPPORTING, chunks.SUPPORT_AT)
    below = chunks.SUPPORT_AT - 0.0001
    assert chunks.pool(CLAIM, [(HOLDING, {"yes": below, "no": 1 - below})])[0] == "not_found"


def test_a_supporting_chunk_without_a_sentence_is_supported_without_a_quote():
    assert chunks.pool(CLAIM, [("Boils. Yes.", ABOVE)])[:2] == ("supported", None)


def test_over_the_call_budget_it_stops_before_any_call_and_says_why(chunks_ctx):
    with jev_standin(script=scripted({})) as server:
        verdict = methods.judge(CLAIM, [SILENT, HOLDING, OTHER], chunks_ctx(server, judge_call_budget=2))
        assert server.requests == []
    assert (verdict["label"], verdict["confidence"], verdict["calls"]) == ("not_found", 0.0, 0)
    assert verdict["reason"] == "judge_call_budget: chunks needs 3 model calls, JUDGE_CALL_BUDGET=2"


def test_an_off_contract_step_is_labelled_the_others_still_run_and_it_is_not_cached(chunks_ctx):
    bad = {"answers": {"supported": choice_answer({"yes": 0.5, "maybe": 0.5})}}
    with jev_standin(script=scripted({HOLDING: bad}, default=ABOVE)) as server:
        ctx = chunks_ctx(server)
        verdict = methods.judge(CLAIM, [SILENT, HOLDING, OTHER], ctx)
        assert len(server.requests) == 3
    assert (verdict["label"], verdict["confidence"]) == ("not_found", 0.0)
    assert verdict["reason"].startswith("judge_output_invalid: step 2: ")
    assert [s["answer"] is None for s in verdict["steps"]] == [False, True, False]
    assert [s["key"] in ctx.cache.entries() for s in verdict["steps"]] == [True, False, True]


def test_no_chunk_with_text_is_not_found_without_a_call(chunks_ctx):
    with jev_standin() as server:
        verdict = methods.judge(CLAIM, ["", "  \n"], chunks_ctx(server))
        assert server.requests == []
    assert (verdict["label"], verdict["confidence"], verdict["calls"]) == ("not_found", 0.0, 0)


def test_trace_text_gives_the_chunks_row_its_quote_passing_the_guard(chunks_ctx):
    page = f"# Boiling\n\n{HOLDING}\n\n{SILENT}"
    with jev_standin(script=lambda body: ABOVE if SUPPORTING in body["state"]["document"] else NO) as server:
        trace = verify.trace_text(CLAIM, page, chunks_ctx(server), url="text:page")
    assert trace.row["label"] == "supported" and trace.row["evidence_quote"] == SUPPORTING
    assert trace.judged["calls"] == len([p for p in trace.shown if p.strip()]) >= 1
