"""Evaluation: how often the judge is right, how sure it is, and whether it was shown the evidence.

Rules:
- Data: WiCE dev rows. 0-based line index even -> "tune" (choose anything here: threshold, prompt),
  odd -> "report" (the numbers quoted). Nothing is chosen on the report split.
- Gold: WiCE `supported` -> supported; `partially_supported` and `not_supported` -> not_supported
  (a claim only partly backed by its citation is not backed).
- Predictions: WiCE has no "contradicts" class, so a judge's contradiction counts as not_supported:
  Choice supports -> supported, contradicts / says_nothing -> not_supported; JSON judge (after the
  guard) supported -> supported, contradicted / not_found -> not_supported.
- Page: the cited article's sentences joined by blank lines. Each judge method runs on it through
  `verify.trace_text` (JUDGE_METHOD set to the method): the same passages, retrieval, judge, guard and
  gate as verify, batch and /verify ship, whatever those become.
- Predictions: Choice keeps its relation (supports -> supported, else not_supported); every other
  method's row label (after the guard) supported -> supported, else not_supported. RFC pairs are
  3-class: supported -> supports, contradicted -> contradicts, not_found -> says_nothing.
- AUROC: the chance that a supported row's p_supported (the method's probability of support) is above
  a not-supported row's, ties counting one half.
- recall@k: a claim's evidence is recalled when at least one of its gold supporting-sentence sets lies
  wholly inside the top k passages. Claims with no non-empty gold set are left out.
- Calibration: confidence is the pipeline's (a guard downgrade has confidence 0); a verdict is
  correct when its binary label equals the gold one. ECE = sum over equal-width bins of
  (bin share) x |bin accuracy - bin mean confidence|.
- AUTO_ACCEPT: a verdict is accepted without review when the gate (`review.gate`) says so: confidence
  >= threshold, and nothing at a threshold of 1 (everything to a person). The threshold for a target
  precision is the smallest observed confidence at which the accepted verdicts' accuracy reaches the
  target with at least MIN_ACCEPTED of them; None when no threshold does. Only a confidence above the
  lowest observed one is a candidate (`candidates`): a threshold must send some tune verdict to a person,
  or the confidences gave no evidence that they order anything (docs/statistics.md).

Imports: the flows (`verify.trace_text`, `check`), judge, web, verdict, audit and below.
"""
from __future__ import annotations

import bisect
import json
import math
import random
from pathlib import Path

from .. import verify
from ..context import RunContext
from ..judge import methods as judge_methods
from ..paths import DATA
from ..verdict.review import gate
from ..web import passages as passages_stage
from ..web import retrieval

SAMPLE = DATA / "wice" / "sample.jsonl"
SPLITS = ("tune", "report")
GOLD_OF = {"supported": "supported", "partially_supported": "not_supported", "not_supported": "not_supported"}
LABEL_PREDICTED = {"supported": "supported", "contradicted": "not_supported", "not_found": "not_supported"}
PREDICTED_OF = {"choice": {"supports": "supported", "contradicts": "not_supported", "says_nothing": "not_supported"},
                **{name: LABEL_PREDICTED for name in judge_methods.METHODS if name != "choice"}}
"""WiCE's binary prediction from each method's answer: the Choice baseline answers a relation, every other
method a label."""
CLASSES = ("supported", "not_supported")
KS = (1, 3, 5)
RETRIEVERS = ("MiniLM", "BM25", "RRF")
"""The rankings compared: MiniLM cosine, BM25 (RETRIEVAL's two values) and their reciprocal-rank fusion."""
RRF_K = 60
"""Reciprocal-rank fusion's constant (Cormack et al. 2009), not fitted."""
N_BINS = 10
TARGET_PRECISION = 0.9
MIN_ACCEPTED = 10
"""Fewer accepted verdicts than this say nothing about precision (3 of 3 right is not 100 %)."""


# ---------------------------------------------------------------- data

def split_of(line: int) -> str:
    """Even 0-based line index -> tune, odd -> report."""
    return SPLITS[line % 2]


def draw_sample(source: str | Path, per_split: int, seed: int = 6) -> list[dict]:
    """`per_split` rows drawn at random (fixed seed) from each split of a WiCE jsonl, in file order."""
    lines = Path(source).read_text(encoding="utf-8").splitlines()
    rng = random.Random(seed)
    chosen = []
    for split in SPLITS:
        candidates = [i for i in range(len(lines)) if split_of(i) == split]
        chosen += rng.sample(candidates, per_split)
    rows = []
    for i in sorted(chosen):
        raw = json.loads(lines[i])
        rows.append({"line": i, "split": split_of(i), "id": raw["meta"]["id"], "label": raw["label"],
                     "claim": raw["claim"], "claim_title": raw["meta"]["claim_title"],
                     "supporting_sentences": raw["supporting_sentences"], "evidence": raw["evidence"]})
    return rows


def load_sample(path: str | Path = SAMPLE) -> list[dict]:
    """The committed WiCE sample, each row with its `gold` label added."""
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{**row, "gold": GOLD_OF[row["label"]]} for row in rows]


# ---------------------------------------------------------------- page, passages, retrieval

def wice_page(sentences: list[str]) -> str:
    """The article as the live-web flow would fetch it: one sentence per paragraph."""
    return "\n\n".join(" ".join(s.split()) for s in sentences)


def sentence_passages(sentences: list[str], passages: list[str]) -> list[set[int]]:
    """For each sentence, the indices of the passages holding its words (passages never drop words)."""
    ends, total = [], 0
    for passage in passages:
        total += len(passage.split())
        ends.append(total)
    out, start = [], 0
    for sentence in sentences:
        stop = start + len(sentence.split())
        out.append({j for j, end in enumerate(ends) if end > start and end - len(passages[j].split()) < stop})
        start = stop
    if start != total:
        raise ValueError(f"sentences hold {start} words but passages {total}")
    return out


def bm25_order(query: str, passages: list[str]) -> list[int]:
    """Passage indices by BM25 (rank-bm25's Okapi) score, best first; ties keep page order.

    Okapi's idf is zero for a word in exactly half the passages (rank-bm25 floors negative ones at a
    small epsilon), so on short pages common words barely count: that is the baseline as shipped."""
    return [i for i, _ in retrieval.rank(query, passages, k=max(len(passages), 1), how="bm25")]


def minilm_order(query: str, passages: list[str]) -> list[int]:
    """Passage indices by MiniLM cosine (the pipeline's own ranking), best first."""
    return [i for i, _ in retrieval.rank(query, passages, k=max(len(passages), 1), how="minilm")]


def rrf_order(orders: list[list[int]], k: int = RRF_K) -> list[int]:
    """Reciprocal-rank fusion: passages by the sum over rankings of 1 / (k + rank), rank from 1, best
    first; ties keep page order."""
    fused: dict[int, float] = {}
    for order in orders:
        for rank, i in enumerate(order, 1):
            fused[i] = fused.get(i, 0.0) + 1 / (k + rank)
    return sorted(fused, key=lambda i: (-round(fused[i], 12), i))


def evidence_recalled(gold_sets: list[list[int]], where: list[set[int]], shown: list[int]) -> bool:
    """True when some non-empty gold set of sentences lies wholly inside the shown passages."""
    shown_set = set(shown)
    return any(s and all(where[i] <= shown_set for i in s) for s in gold_sets)


def has_gold_evidence(row: dict) -> bool:
    return any(row["supporting_sentences"])


def prepare(row: dict) -> dict:
    """Passages, sentence -> passage map and the RETRIEVERS' rankings for one row (no judge call)."""
    shown_passages = passages_stage.split_passages(wice_page(row["evidence"]))
    order = {"MiniLM": minilm_order(row["claim"], shown_passages), "BM25": bm25_order(row["claim"], shown_passages)}
    return {**row, "passages": shown_passages, "where": sentence_passages(row["evidence"], shown_passages),
            "order": {**order, "RRF": rrf_order(list(order.values()))}}


def recall_at_k(prepared: list[dict], ks: tuple[int, ...] = KS) -> list[dict]:
    """One row per (retriever, k): claims with gold evidence, how many recalled, the share, and how
    many of those pages fit in k passages whole (recalled whatever the ranking)."""
    rows = [r for r in prepared if has_gold_evidence(r)]
    out = []
    for retriever in [name for name in RETRIEVERS if all(name in r["order"] for r in rows)]:
        for k in ks:
            hits = sum(evidence_recalled(r["supporting_sentences"], r["where"], r["order"][retriever][:k])
                       for r in rows)
            lo, hi = wilson(hits, len(rows))
            out.append({"retriever": retriever, "k": k, "claims": len(rows), "recalled": hits,
                        "recall": hits / len(rows) if rows else math.nan, "ci_low": lo, "ci_high": hi,
                        "whole_page": sum(len(r["passages"]) <= k for r in rows)})
    return out


# ---------------------------------------------------------------- the judges over one row

def judged(claim: str, text: str, method: str, ctx: RunContext, url: str = "text:") -> dict:
    """One judge method on one page text through `verify.trace_text` -> the record's judge fields."""
    return judged_of(verify.trace_text(claim, text, ctx.replace(judge_method=method), url), method)


def judged_of(trace: verify.Trace, method: str) -> dict:
    """A record's judge fields from a `verify.trace_text` trace of `method`; `signals` and `coverage` are
    what the method's own `label_of` reads, so `method_comparison.relabel` re-labels with that rule."""
    verdict, row = trace.judged or {}, trace.row
    answer = verdict.get("relation") or row["label"]
    if method == "choice" and "relation" not in verdict:
        answer = judge_methods.RELATION_OF[row["label"]]
    return {"judge": method, "method": method, "answer": answer, "confidence": row["confidence"],
            "p_supported": verdict.get("p_supported"), "reason": row["reason"], "model": verdict.get("model"),
            "calls": verdict.get("calls", 0), "evidence_quote": row["evidence_quote"],
            "coverage": verdict.get("coverage"), "signals": verdict.get("signals")}


def judge_row(row: dict, ctx: RunContext, methods: tuple[str, ...] = ("choice", "json")) -> list[dict]:
    """Each judge method on one WiCE row, as verify ships it (replayed from the cache), one record each."""
    base = {"id": row["id"], "split": row["split"], "label": row["label"], "gold": row["gold"]}
    page = wice_page(row["evidence"])
    return [{**base, **judged(row["claim"], page, m, ctx, f"wice:{row['id']}")} for m in methods]


def with_predictions(records: list[dict]) -> list[dict]:
    """Add the binary prediction and whether it is correct; a record's `method` (else its `judge`) names the
    label space, so a run shown under another name (e.g. "pooled, MiniLM top 3") keeps its method's."""
    out = []
    for r in records:
        predicted = PREDICTED_OF[r.get("method", r["judge"])][r["answer"]]
        out.append({**r, "predicted": predicted, "correct": predicted == r["gold"]})
    return out


# ---------------------------------------------------------------- metrics

def accuracy(gold: list[str], predicted: list[str]) -> float:
    return sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold) if gold else math.nan


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion (95 % by default)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def per_class(gold: list[str], predicted: list[str], classes: tuple[str, ...] = CLASSES) -> list[dict]:
    """Precision and recall of each class (nan when the class is never predicted / never gold)."""
    out = []
    for c in classes:
        tp = sum(g == c and p == c for g, p in zip(gold, predicted))
        n_pred, n_gold = predicted.count(c), gold.count(c)
        out.append({"class": c, "precision": tp / n_pred if n_pred else math.nan,
                    "recall": tp / n_gold if n_gold else math.nan, "predicted": n_pred, "gold": n_gold})
    return out


def confusion(gold: list[str], predicted: list[str], rows: tuple[str, ...], cols: tuple[str, ...]):
    """Counts as a DataFrame: gold in rows, prediction in columns (every class shown, even at zero)."""
    import pandas as pd
    table = pd.DataFrame(0, index=pd.Index(rows, name="gold"), columns=pd.Index(cols, name="judge"))
    for g, p in zip(gold, predicted, strict=True):
        table.loc[g, p] += 1
    return table


def reliability(confidence: list[float], correct: list[bool], n_bins: int = N_BINS) -> list[dict]:
    """Equal-width confidence bins [lo, hi) (the last includes 1): count, mean confidence, accuracy."""
    edges = [b / n_bins for b in range(n_bins + 1)]
    held: list[list] = [[] for _ in range(n_bins)]
    for c, ok in zip(confidence, correct, strict=True):       # one pass; each bin keeps the input's order
        b = bisect.bisect_right(edges, c, hi=n_bins) - 1       # the last lo <= c (NaN: none fits below)
        if 0 <= b < n_bins - 1 or (b == n_bins - 1 and c <= edges[-1]):
            held[b].append((c, ok))
    return [{"lo": edges[b], "hi": edges[b + 1], "n": len(inside),
             "confidence": sum(c for c, _ in inside) / len(inside) if inside else math.nan,
             "accuracy": sum(ok for _, ok in inside) / len(inside) if inside else math.nan}
            for b, inside in enumerate(held)]


def ece(confidence: list[float], correct: list[bool], n_bins: int = N_BINS) -> float:
    """Expected calibration error over equal-width bins."""
    n = len(confidence)
    return sum(b["n"] / n * abs(b["accuracy"] - b["confidence"])
               for b in reliability(confidence, correct, n_bins) if b["n"]) if n else math.nan


def at_threshold(confidence: list[float], correct: list[bool], threshold: float) -> dict:
    """Accepted (by the gate at `threshold`) vs sent to review, and the accepted verdicts' accuracy."""
    accepted = [ok for c, ok in zip(confidence, correct, strict=True) if gate(c, threshold)]
    n = len(confidence)
    return {"threshold": threshold, "accepted": len(accepted), "accepted_correct": sum(accepted),
            "review": n - len(accepted),
            "accepted_share": len(accepted) / n if n else math.nan,
            "accepted_accuracy": sum(accepted) / len(accepted) if accepted else math.nan}


def sweep(confidence: list[float], correct: list[bool], steps: int = 100) -> list[dict]:
    """at_threshold for thresholds 0, 1/steps, ..., 1."""
    return [at_threshold(confidence, correct, i / steps) for i in range(steps + 1)]


def candidates(confidence: list[float]) -> list[float]:
    """The thresholds tune can support: its observed confidences above the lowest (see module rules)."""
    return sorted(set(confidence))[1:]


def choose_threshold(confidence: list[float], correct: list[bool], target: float = TARGET_PRECISION,
                     min_accepted: int = MIN_ACCEPTED) -> float | None:
    """Smallest candidate confidence whose accepted verdicts reach `target` accuracy (see module rules)."""
    for t in candidates(confidence):
        point = at_threshold(confidence, correct, t)
        if point["accepted"] >= min_accepted and point["accepted_accuracy"] >= target:
            return t
    return None


def best_reachable(confidence: list[float], correct: list[bool], min_accepted: int = MIN_ACCEPTED) -> dict:
    """The highest accepted-verdict accuracy any threshold reaches with at least `min_accepted`
    accepted, and the lowest threshold that reaches it ({threshold: None} when none qualifies)."""
    best = {"threshold": None, "accepted_accuracy": math.nan, "accepted": 0}
    for t in candidates(confidence):
        point = at_threshold(confidence, correct, t)
        better = best["threshold"] is None or point["accepted_accuracy"] > best["accepted_accuracy"]
        if point["accepted"] >= min_accepted and better:
            best = {k: point[k] for k in best}
    return best


# ---------------------------------------------------------------- tables over judge records

def judges_of(records: list[dict]) -> tuple[str, ...]:
    """The judge methods in `records`, in first-seen order."""
    return tuple(dict.fromkeys(r["judge"] for r in records))


def auroc(scores: list[float], positive: list[bool]) -> float:
    """P(a positive's score > a negative's), ties one half; nan without both kinds."""
    pos = [s for s, p in zip(scores, positive, strict=True) if p]
    neg = [s for s, p in zip(scores, positive, strict=True) if not p]
    if not pos or not neg:
        return math.nan
    below = sorted(b for b in neg if b == b)                  # a NaN is above and below nothing
    halves = sum(bisect.bisect_left(below, a) + bisect.bisect_right(below, a) for a in pos if a == a)
    return halves / 2 / (len(pos) * len(neg))                # (wins + ties / 2) / pairs, the same float


def _select(records: list[dict], split: str, judge: str) -> list[dict]:
    return [r for r in records if r["split"] == split and r["judge"] == judge]


def accuracy_table(records: list[dict]) -> list[dict]:
    """Per split and judge: rows, accuracy with its 95 % Wilson interval, and the two baselines
    (always "supported"; always the majority gold class of that split)."""
    out = []
    for split in SPLITS:
        for judge in judges_of(records):
            rows = _select(records, split, judge)
            gold = [r["gold"] for r in rows]
            right = sum(r["correct"] for r in rows)
            lo, hi = wilson(right, len(rows))
            out.append({"split": split, "judge": judge, "rows": len(rows), "correct": right,
                        "accuracy": right / len(rows) if rows else math.nan, "ci_low": lo, "ci_high": hi,
                        "always_supported": accuracy(gold, ["supported"] * len(gold)),
                        "majority": max((gold.count(c) for c in CLASSES), default=0) / len(gold)
                        if gold else math.nan})
    return out


def calibration_table(records: list[dict], n_bins: int = N_BINS) -> list[dict]:
    """Per split and judge: ECE, mean confidence and accuracy."""
    out = []
    for split in SPLITS:
        for judge in judges_of(records):
            rows = _select(records, split, judge)
            conf, ok = [r["confidence"] for r in rows], [r["correct"] for r in rows]
            out.append({"split": split, "judge": judge, "rows": len(rows), "ece": ece(conf, ok, n_bins),
                        "mean_confidence": sum(conf) / len(conf) if conf else math.nan,
                        "accuracy": sum(ok) / len(ok) if ok else math.nan})
    return out


def threshold_table(records: list[dict], target: float = TARGET_PRECISION,
                    min_accepted: int = MIN_ACCEPTED) -> list[dict]:
    """Per judge: the threshold chosen on the tune split for `target`, and what it does on the report
    split (accepted, sent to review, accepted accuracy with its Wilson interval)."""
    out = []
    for judge in judges_of(records):
        tune, report = _select(records, "tune", judge), _select(records, "report", judge)
        conf, ok = [r["confidence"] for r in tune], [r["correct"] for r in tune]
        t, reach = choose_threshold(conf, ok, target, min_accepted), best_reachable(conf, ok, min_accepted)
        row = {"judge": judge, "target": target, "tune_best": reach["accepted_accuracy"], "threshold": t}
        if t is None:
            out.append({**row, "accepted": 0, "review": len(report), "review_share": 1.0,
                        "accepted_accuracy": math.nan, "ci_low": math.nan, "ci_high": math.nan})
            continue
        point = at_threshold([r["confidence"] for r in report], [r["correct"] for r in report], t)
        lo, hi = wilson(point["accepted_correct"], point["accepted"])
        out.append({**row, "accepted": point["accepted"], "review": point["review"],
                    "review_share": point["review"] / len(report) if report else math.nan,
                    "accepted_accuracy": point["accepted_accuracy"], "ci_low": lo, "ci_high": hi})
    return out
