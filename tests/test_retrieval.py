"""retrieval: the real MiniLM on small inputs."""
import sys

import pytest

from citecheck.web import retrieval, vectors

PAGE = [
    "The museum opens at nine and closes at five on weekdays.",
    "At sea level, pure water boils at 100 degrees Celsius.",
    "Our newsletter arrives every Tuesday; unsubscribe at any time.",
    "Water's boiling point falls as altitude rises because air pressure drops.",
    "Parking is free for visitors after six in the evening.",
]


def test_importing_does_not_load_the_model():
    import subprocess
    code = ("import citecheck.web.retrieval, sys; "
            "assert citecheck.web.vectors._model is None; "
            "assert 'sentence_transformers' not in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_the_evidence_ranks_first_and_top_3_is_returned():
    top = retrieval.top_passages("Water boils at 100 °C at sea level", PAGE, how="minilm")
    assert len(top) == 3
    assert top[0] == PAGE[1]
    assert PAGE[3] in top


def test_scores_are_cosine_similarities_best_first():
    ranked = retrieval.rank("Water boils at 100 °C at sea level", PAGE, k=5, how="minilm")
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0001 for s in scores)
    assert sorted(i for i, _ in ranked) == list(range(5))


def test_ties_keep_page_order():
    same = "Parking is free for visitors after six in the evening."
    page = [same, "At sea level, pure water boils at 100 degrees Celsius.", same, same]
    ranked = retrieval.rank("When is parking free?", page, k=4, how="minilm")
    assert [i for i, _ in ranked] == [0, 2, 3, 1]


def test_fewer_passages_than_k_and_none():
    assert retrieval.top_passages("claim", ["only one"], how="minilm") == ["only one"]
    assert retrieval.top_passages("claim", [], how="minilm") == []


def test_k_below_one_is_an_error():
    with pytest.raises(ValueError, match="k must be"):
        retrieval.rank("claim", PAGE, k=0, how="minilm")


def test_model_is_loaded_once():
    assert vectors.model() is vectors.model()


def test_shortlist_keeps_every_passage_of_a_short_page():
    assert retrieval.shortlist("claim", PAGE, cap=5) == [0, 1, 2, 3, 4]
    assert retrieval.shortlist("claim", [], cap=5) == []


def test_shortlist_keeps_the_passages_sharing_most_words_with_the_claim_in_page_order():
    claim = "Water boils at 100 degrees at sea level"
    assert retrieval.shortlist(claim, PAGE, cap=1) == [1]                 # shares 7 distinct words
    assert retrieval.shortlist(claim, PAGE, cap=2) == [0, 1]          # 0 and 3 share one word: page order
    assert retrieval.shortlist(claim, PAGE[::-1], cap=2) == [1, 3]    # the same passages, found by content


def test_shortlist_ties_keep_page_order_and_words_are_case_blind():
    page = ["KETTLE descaling", "nothing here", "kettle Descaling again", "kettle descaling"]
    assert retrieval.shortlist("Kettle descaling", page, cap=2) == [0, 2]


def test_shortlist_cap_below_one_is_an_error():
    with pytest.raises(ValueError, match="cap must be"):
        retrieval.shortlist("claim", PAGE, cap=0)


# ---------------------------------------------------------------- RETRIEVAL=bm25

BM25_PAGE = ["Kettles and pans in a kitchen.", "At sea level water boils at 100 degrees.",
             "Denver is a mile high.", "Pans again, and kettles."]


def test_bm25_ranks_the_passage_sharing_the_rare_claim_words_first_with_its_scores():
    ranked = retrieval.rank("water boils at sea level", BM25_PAGE, how="bm25")
    assert [i for i, _ in ranked][:1] == [1] and len(ranked) == 3
    scores = retrieval.bm25_scores("water boils at sea level", BM25_PAGE)
    assert [s for _, s in ranked] == sorted(scores, reverse=True)[:3]


def test_bm25_ties_keep_page_order_and_an_unknown_rule_is_an_error():
    assert [i for i, _ in retrieval.rank("nothing shared", BM25_PAGE, k=4, how="bm25")] == [0, 1, 2, 3]
    assert retrieval.rank("x", [], how="bm25") == []
    with pytest.raises(ValueError, match="how must be one of minilm, bm25"):
        retrieval.rank("x", BM25_PAGE, how="tfidf")


def test_the_setting_is_validated_once_and_verify_shows_what_it_ranks(make_ctx):
    from citecheck import evaluation, verify
    from citecheck.config import Settings
    from citecheck.web import passages
    assert Settings.from_env({}).retrieval == "bm25"
    assert Settings.from_env({"RETRIEVAL": "MiniLM"}).retrieval == "minilm"
    assert Settings.from_env({"RETRIEVAL": "BM25"}).retrieval == "bm25"
    with pytest.raises(ValueError, match="RETRIEVAL must be one of minilm, bm25; got 'vibes'"):
        Settings.from_env({"RETRIEVAL": "vibes"})
    page = "\n\n".join(" ".join([text] * 30) for text in BM25_PAGE)        # four passages
    claim = "At sea level water boils at 100 degrees."
    cut = passages.split_passages(page)
    from standins.judge import judge_standin
    with judge_standin() as judge:
        trace = verify.trace_text(claim, page, make_ctx(retrieval="bm25", openai_base_url=judge.url + "/v1"))
        shown = judge.requests[0].json()["messages"][-1]["content"]
    assert all(p in shown for p in trace.shown)
    assert trace.shown == [cut[i] for i in evaluation.bm25_order(claim, cut)[:3]]
