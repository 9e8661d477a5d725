"""evaluation: label mapping, splits, evidence recall, and metric arithmetic on hand-checked inputs."""
import json
import math

import pytest

from citecheck import evaluation as ev
from citecheck.web.passages import split_passages


def test_label_mapping():
    assert ev.GOLD_OF == {"supported": "supported", "partially_supported": "not_supported",
                          "not_supported": "not_supported"}
    assert ev.PREDICTED_OF["choice"] == {"supports": "supported", "contradicts": "not_supported",
                                         "says_nothing": "not_supported"}
    assert ev.PREDICTED_OF["json"] == {"supported": "supported", "contradicted": "not_supported",
                                       "not_found": "not_supported"}


def test_with_predictions_marks_correct():
    records = [{"judge": "choice", "answer": "contradicts", "gold": "not_supported"},
               {"judge": "json", "answer": "supported", "gold": "not_supported"}]
    out = ev.with_predictions(records)
    assert [(r["predicted"], r["correct"]) for r in out] == [("not_supported", True), ("supported", False)]


def test_a_renamed_run_keeps_its_methods_label_space():
    records = [{"judge": "choice, MiniLM top 3", "method": "choice", "answer": "supports", "gold": "supported"},
               {"judge": "pooled, MiniLM top 3", "method": "pooled", "answer": "not_found", "gold": "supported"}]
    assert [r["predicted"] for r in ev.with_predictions(records)] == ["supported", "not_supported"]
    with pytest.raises(KeyError):
        ev.with_predictions([{"judge": "renamed, no method", "answer": "supports", "gold": "supported"}])


def test_split_rule():
    assert [ev.split_of(i) for i in range(4)] == ["tune", "report", "tune", "report"]


def test_draw_sample_is_seeded_and_split(tmp_path):
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps({"label": "supported", "claim": f"c{i}", "evidence": ["s"],
                                        "supporting_sentences": [[0]],
                                        "meta": {"id": f"d{i}", "claim_title": "t"}}) + "\n"
                            for i in range(20)))
    rows = ev.draw_sample(path, 3, seed=1)
    assert rows == ev.draw_sample(path, 3, seed=1)
    assert [r["line"] for r in rows] == sorted(r["line"] for r in rows)
    assert sum(r["split"] == "tune" for r in rows) == 3 and all(r["line"] % 2 == (r["split"] == "report")
                                                                 for r in rows)


def test_committed_sample_matches_its_readme():
    rows = ev.load_sample()
    assert len(rows) == 150 and {r["split"] for r in rows} == {"tune", "report"}
    assert all(r["split"] == ev.split_of(r["line"]) for r in rows)
    assert all(r["gold"] == ev.GOLD_OF[r["label"]] for r in rows)


def test_sentence_passages_maps_every_sentence():
    sentences = ["one two three", "four five", "six " * 5, "seven"]
    passages = split_passages(ev.wice_page(sentences), max_words=6)
    assert passages == ["one two three\n\nfour five", "six six six six six\n\nseven"]
    assert ev.sentence_passages(sentences, passages) == [{0}, {0}, {1}, {1}]


def test_sentence_cut_across_passages_belongs_to_both():
    sentences = ["a b", "c d e f g h"]
    passages = split_passages(ev.wice_page(sentences), max_words=4)
    assert passages == ["a b", "c d e f", "g h"]
    assert ev.sentence_passages(sentences, passages) == [{0}, {1, 2}]


def test_evidence_recalled_needs_a_whole_gold_set():
    where = [{0}, {1}, {1, 2}, {3}]
    assert ev.evidence_recalled([[0, 1]], where, shown=[1, 0])
    assert not ev.evidence_recalled([[0, 2]], where, shown=[0, 1])      # sentence 2 spills into passage 2
    assert ev.evidence_recalled([[], [3]], where, shown=[3])             # an empty set never counts alone
    assert not ev.evidence_recalled([[]], where, shown=[0, 1, 2, 3])


def test_recall_at_k_counts():
    rows = [{"supporting_sentences": [[0]], "where": [{0}, {1}], "passages": ["p", "q"],
             "order": {"MiniLM": [1, 0], "BM25": [0, 1]}},
            {"supporting_sentences": [[1]], "where": [{0}, {1}], "passages": ["p", "q"],
             "order": {"MiniLM": [1, 0], "BM25": [0, 1]}},
            {"supporting_sentences": [[]], "where": [{0}], "passages": ["p"],
             "order": {"MiniLM": [0], "BM25": [0]}}]
    table = {(r["retriever"], r["k"]): (r["claims"], r["recalled"], r["whole_page"])
             for r in ev.recall_at_k(rows, ks=(1, 2))}
    assert table == {("MiniLM", 1): (2, 1, 0), ("MiniLM", 2): (2, 2, 2),
                     ("BM25", 1): (2, 1, 0), ("BM25", 2): (2, 2, 2)}


def test_rrf_order_sums_reciprocal_ranks_and_keeps_page_order_on_ties():
    # k = 1: passage 0 ranks 1st and 3rd -> 1/2 + 1/4; passage 1: 2nd, 1st -> 1/3 + 1/2; passage 2: 3rd, 2nd
    assert ev.rrf_order([[0, 1, 2], [1, 2, 0]], k=1) == [1, 0, 2]
    assert ev.rrf_order([[0, 1], [1, 0]], k=60) == [0, 1]            # a tie keeps page order
    assert ev.rrf_order([[2, 0, 1]]) == [2, 0, 1]                     # one ranking is itself


def test_bm25_order_prefers_matching_words_and_keeps_page_order_on_ties():
    passages = ["the cat sat", "dogs bark loudly", "a cat and a dog", "nothing here", "rain today"]
    order = ev.bm25_order("Cat!", passages)
    assert order == [0, 2, 1, 3, 4]          # the shorter passage first, then page order
    assert ev.bm25_order("zebra", passages) == [0, 1, 2, 3, 4]


def test_accuracy_and_baseline():
    gold = ["supported", "not_supported", "not_supported", "supported"]
    assert ev.accuracy(gold, ["supported", "supported", "not_supported", "not_supported"]) == 0.5
    assert ev.accuracy(gold, ["supported"] * 4) == 0.5
    assert math.isnan(ev.accuracy([], []))


def test_wilson_interval():
    lo, hi = ev.wilson(8, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)
    assert ev.wilson(0, 5)[0] == 0.0 and ev.wilson(5, 5)[1] == 1.0


def test_per_class_and_confusion():
    gold = ["supported", "supported", "not_supported", "not_supported", "not_supported"]
    pred = ["supported", "not_supported", "supported", "not_supported", "not_supported"]
    rows = {r["class"]: r for r in ev.per_class(gold, pred)}
    assert (rows["supported"]["precision"], rows["supported"]["recall"]) == (0.5, 0.5)
    assert (rows["not_supported"]["precision"], rows["not_supported"]["recall"]) == (2 / 3, 2 / 3)
    assert math.isnan(ev.per_class(gold, ["not_supported"] * 5)[0]["precision"])
    table = ev.confusion(gold, pred, ev.CLASSES, ev.CLASSES)
    assert table.values.tolist() == [[1, 1], [1, 2]]


def test_reliability_bins_and_ece():
    conf = [0.95, 0.95, 0.55, 0.55, 1.0, 0.0]
    correct = [True, False, True, True, True, False]
    bins = ev.reliability(conf, correct, n_bins=2)
    assert [(b["n"], b["accuracy"]) for b in bins] == [(1, 0.0), (5, 0.8)]
    assert bins[1]["confidence"] == pytest.approx(0.8)
    assert ev.ece(conf, correct, n_bins=2) == pytest.approx(0.0)
    # 10 bins: |0.5-0.95|*2/6 + |1-0.55|*2/6 + |1-1|*1/6 + |0-0|*1/6 = 0.3
    assert ev.ece(conf, correct) == pytest.approx(0.3)


def test_sweep_and_threshold_choice():
    conf = [0.2, 0.6, 0.6, 0.9, 0.9, 1.0]
    correct = [False, False, True, True, True, True]
    point = ev.at_threshold(conf, correct, 0.6)
    assert (point["accepted"], point["review"], point["accepted_accuracy"]) == (5, 1, 0.8)
    curve = ev.sweep(conf, correct, steps=4)
    assert [p["threshold"] for p in curve] == [0, 0.25, 0.5, 0.75, 1.0]
    assert [p["accepted"] for p in curve] == [6, 5, 5, 3, 0]      # AUTO_ACCEPT=1: everything to a person
    assert ev.choose_threshold(conf, correct, target=0.8, min_accepted=1) == 0.6
    assert ev.choose_threshold(conf, correct, target=0.9, min_accepted=1) == 0.9
    assert ev.choose_threshold(conf, correct, target=0.9, min_accepted=4) is None
    assert math.isnan(ev.at_threshold(conf, correct, 1.01)["accepted_accuracy"])
    assert ev.best_reachable(conf, correct, min_accepted=2) == {"threshold": 0.9, "accepted_accuracy": 1.0,
                                                                "accepted": 3}
    assert ev.best_reachable(conf, correct, min_accepted=7)["threshold"] is None


def _records(split, judge, pairs):
    """pairs of (confidence, correct) -> records with gold labels that make `correct` hold."""
    return [{"split": split, "judge": judge, "confidence": c, "correct": ok,
             "gold": "supported" if i % 2 else "not_supported"} for i, (c, ok) in enumerate(pairs)]


def test_tables_keep_tune_and_report_apart():
    tune = [(0.5, False)] * 5 + [(0.9, True)] * 10
    report = [(0.5, False)] * 4 + [(0.9, True)] * 3 + [(0.95, False)] * 1
    records = []
    for judge in ("choice", "json"):
        records += _records("tune", judge, tune) + _records("report", judge, report)
    chosen = {r["judge"]: r for r in ev.threshold_table(records, target=0.9, min_accepted=10)}
    assert chosen["choice"]["threshold"] == 0.9                      # chosen on tune (10/10 right)
    assert (chosen["choice"]["accepted"], chosen["choice"]["review"]) == (4, 4)   # applied to report
    assert chosen["choice"]["accepted_accuracy"] == 0.75 and chosen["choice"]["review_share"] == 0.5
    assert chosen["choice"]["tune_best"] == 1.0
    none = ev.threshold_table(records, target=0.99, min_accepted=11)[0]
    assert none["threshold"] is None and none["review_share"] == 1.0
    table = {(r["split"], r["judge"]): r for r in ev.accuracy_table(records)}
    assert table["report", "json"]["correct"] == 3 and table["report", "json"]["accuracy"] == 3 / 8
    assert table["report", "json"]["always_supported"] == 0.5 and table["report", "json"]["majority"] == 0.5


def test_relabel_reads_the_recorded_signals_with_the_methods_own_rule():
    from citecheck.evaluation import method_comparison as mc
    from citecheck.judge.methods import pooled
    no = pooled.summarise([{"yes": 0.015, "no": 0.97, "unknown": 0.015}]).as_dict()
    record = {"method": "pooled", "judge": "pooled", "reason": None, "answer": "supported", "confidence": 0.5,
              "p_supported": 0.5, "signals": no, "coverage": 0.0}
    assert {k: mc.relabel(record, 0.0)[k] for k in ("answer", "confidence")} == {"answer": "contradicted",
                                                                                "confidence": 0.97}
    undecided = {**record, "signals": pooled.summarise([{"yes": 0.3, "no": 0.1, "unknown": 0.6}]).as_dict()}
    assert mc.relabel(undecided, 0.3)["answer"] == "supported"             # 0.3 / 0.9 >= 0.3
    assert mc.relabel(undecided, 0.4)["answer"] == "not_found"             # coverage 0
    assert mc.relabel({**undecided, "coverage": 0.5}, 0.4)["answer"] == "contradicted"   # the tie-break
    assert mc.relabel({**record, "reason": "judge_unavailable"}, 0.0)["answer"] == "supported"   # as recorded
    assert mc.relabel({**record, "method": "json"}) == {**record, "method": "json"}


def test_bootstrap_intervals_are_seeded_and_hold_the_point_estimate():
    from citecheck.evaluation import method_comparison as mc
    wice = [{"dataset": "wice", "gold": g, "answer": a, "method": "pooled", "judge": "pooled",
             "p_supported": p, "confidence": 0.7}
            for g, a, p in [("supported", "supported", 0.9), ("supported", "not_found", 0.2),
                            ("not_supported", "not_found", 0.1), ("not_supported", "supported", 0.6)] * 5]
    rfc = [{"dataset": "rfc", "gold": g, "answer": a} for g, a in [("supports", "supported"),
                                                                  ("contradicts", "not_found")] * 4]
    got = mc.intervals(wice + rfc, resamples=200, seed=1)
    assert got == mc.intervals(wice + rfc, resamples=200, seed=1)
    assert got != mc.intervals(wice + rfc, resamples=200, seed=2)
    point = mc.scored(wice + rfc)
    for dataset, score in (("wice", "balanced_accuracy"), ("wice", "auroc"), ("rfc", "accuracy")):
        low, high = got[dataset][score]
        assert low < point[dataset][score] < high
    assert got["wice"]["ece"][0] <= point["wice"]["ece"] <= got["wice"]["ece"][1]


def test_heldout_rows_leave_out_the_sample_and_alternate_the_labels(tmp_path):
    """Held-out rows: none of the sample's (claim, evidence), the first N of each WiCE label, interleaved."""
    from citecheck.evaluation import method_comparison as mc
    sample = ev.load_sample()
    known = {key: sample[0][key] for key in ("claim", "evidence", "label")}

    def row(n, label):
        return {"claim": f"claim {n}", "evidence": [f"sentence {n}."], "label": label, "meta": {"id": f"d{n}"}}

    dev = [known | {"meta": {"id": "in-sample"}}, row(1, "supported"), row(2, "supported"), row(3, "supported"),
           row(4, "not_supported"), row(5, "partially_supported")]
    path = tmp_path / "dev.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in dev) + "\n", encoding="utf-8")
    rows = mc.heldout_items(path, 2)
    assert [r["id"] for r in rows] == ["d1", "d5", "d4", "d2"]
    assert [r["gold"] for r in rows] == ["supported", "not_supported", "not_supported", "supported"]
    assert {r["split"] for r in rows} == {"heldout"}


def test_a_threshold_must_send_some_tune_verdict_to_a_person():
    """Accepting every tune row shows nothing about the confidence's order: the lowest is no candidate."""
    assert ev.candidates([0.3, 0.1, 0.3, 0.7]) == [0.3, 0.7]
    assert ev.choose_threshold([0.5] * 30, [True] * 30) is None
    assert ev.best_reachable([0.5] * 30, [True] * 30)["threshold"] is None
    assert ev.choose_threshold([0.2] * 5 + [0.9] * 12, [False] * 5 + [True] * 12) == 0.9


def test_auroc_and_reliability_equal_their_definitions_to_the_last_bit():
    """The sorted-search AUROC and the one-pass bins give the very floats of the pairwise and per-bin sums
    (ties, bin edges, 1.0, out-of-range and NaN confidences included)."""
    import math
    import random
    rng = random.Random(5)

    def pairwise(scores, positive):
        pos = [s for s, p in zip(scores, positive) if p]
        neg = [s for s, p in zip(scores, positive) if not p]
        return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))

    def per_bin(confidence, correct, n_bins):
        out = []
        for b in range(n_bins):
            lo, hi = b / n_bins, (b + 1) / n_bins
            inside = [(c, ok) for c, ok in zip(confidence, correct)
                      if lo <= c < hi or (b == n_bins - 1 and c == hi)]
            out.append((lo, hi, len(inside), sum(c for c, _ in inside), sum(ok for _, ok in inside)))
        return out
    edges = [b / 10 for b in range(11)] + [1.5, -0.1, math.nan]
    for _ in range(300):
        n = rng.randint(2, 60)
        scores = [rng.choice([rng.random(), rng.choice(edges), round(rng.random(), 1)]) for _ in range(n)]
        positive = [rng.random() < 0.4 for _ in range(n)]
        if any(positive) and not all(positive):
            assert ev.auroc(scores, positive) == pairwise(scores, positive)
        for n_bins in (10, 7):
            got, want = ev.reliability(scores, positive, n_bins), per_bin(scores, positive, n_bins)
            assert [(b["lo"], b["hi"], b["n"]) for b in got] == [w[:3] for w in want]
            assert all(b["confidence"] == w[3] / w[2] and b["accuracy"] == w[4] / w[2]
                       for b, w in zip(got, want) if w[2])
