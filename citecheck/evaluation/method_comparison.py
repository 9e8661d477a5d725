"""Judge methods side by side on labelled rows, each run as verify ships it (notebook 05, eval_judge.py).

Rules:
- The rows: the 36 RFC 7519 claim/section pairs (data/rfc_pairs.jsonl; 3 classes; odd lines report) and
  the 150-row WiCE sample (data/wice/sample.jsonl; binary: supported vs not; tune/report by
  `evaluation.split_of`). Held out (`heldout_items`): dev-split rows the sample does not hold, never
  used to choose anything. A row's page is the RFC section, or the WiCE evidence sentences joined.
- Each method judges a row through `verify.trace_text` with JUDGE_METHOD set to it (`evaluation.judged_of`),
  so the passages, retrieval, judge, guard and gate are the shipped ones.
- Cost per citation comes from the steps' cache entries: calls, prompt and output tokens, and the
  server's compute seconds (measured when recorded; the 2 cores were shared, so seconds vary).
- Anything chosen (the pooled method's SUPPORT_AT, the AUTO_ACCEPT threshold) is chosen on tune only;
  the report split is scored with what tune chose. `relabel` re-labels a record from its recorded
  `signals` with its method's own rule (`pooled.label_of` / `confidence_of`, decompose's, qa's): no
  second copy of a rule.
- Intervals: 95 % percentile bootstrap (RESAMPLES resamples, seed SEED) of each score, resampling the
  WiCE rows and the RFC pairs separately, with replacement; a resample where a score is undefined (e.g. one
  gold class only) is left out of that score's interval.
"""
from __future__ import annotations

import itertools
import json
import math
import random
import statistics
from pathlib import Path

from .. import evaluation as ev
from .. import verify
from ..cache import CacheMiss
from ..context import RunContext
from ..judge.methods import decompose, pooled, qa
from ..paths import ROOT
from ..source import sources

RFC_PAIRS = ROOT / "data" / "rfc_pairs.jsonl"
RFC_DOCUMENT = ROOT / "data" / "rfc7519.txt"
RFC_CLASSES = ("supports", "contradicts", "says_nothing")
RFC_OF = {"supported": "supports", "contradicted": "contradicts", "not_found": "says_nothing"}
COST = ("calls", "prompt_tokens", "output_tokens", "seconds")
RESAMPLES = 2000
SEED = 23


def rfc_items() -> list[dict]:
    """The RFC pairs: claim, gold class, the located section as the page; even lines tune, odd report."""
    document = sources.load(RFC_DOCUMENT)
    items = []
    for i, line in enumerate(RFC_PAIRS.read_text(encoding="utf-8").splitlines()):
        pair = json.loads(line)
        items.append({"dataset": "rfc", "id": pair["id"], "split": ev.SPLITS[i % 2], "gold": pair["label"],
                      "claim": pair["claim"], "text": document.sections[pair["section"]].text,
                      "section": pair["section"], "quote": pair["quote"]})
    return items


def wice_items() -> list[dict]:
    """The WiCE sample rows: claim, WiCE label, binary gold, the evidence sentences as the page."""
    return [{"dataset": "wice", "id": r["id"], "split": r["split"], "gold": r["gold"], "label": r["label"],
             "claim": r["claim"], "text": ev.wice_page(r["evidence"])} for r in ev.load_sample()]


def heldout_items(dev: Path, per_class: int, sample: Path = ev.SAMPLE) -> list[dict]:
    """WiCE rows of `dev` not in the committed sample (same claim and evidence), the first `per_class` of each
    WiCE label in file order, interleaved by rank (supported, partially, not; then the next of each), so a
    run stopped early stays balanced; split "heldout"."""
    seen = {(r["claim"], tuple(r["evidence"])) for r in ev.load_sample(sample)}
    by_label: dict[str, list[dict]] = {label: [] for label in ev.GOLD_OF}
    for line in dev.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        if (raw["claim"], tuple(raw["evidence"])) not in seen and len(by_label[raw["label"]]) < per_class:
            by_label[raw["label"]].append({"dataset": "wice", "id": raw["meta"]["id"], "split": "heldout",
                                           "gold": ev.GOLD_OF[raw["label"]], "label": raw["label"],
                                           "claim": raw["claim"], "text": ev.wice_page(raw["evidence"])})
    return [row for rank in itertools.zip_longest(*by_label.values()) for row in rank if row]


def items(splits: tuple[str, ...] = ev.SPLITS) -> list[dict]:
    """RFC pairs, then WiCE rows, of the given splits."""
    return [item for item in rfc_items() + wice_items() if item["split"] in splits]


def usage_of(entries: dict, steps: list[dict]) -> dict:
    """Prompt and output tokens and compute seconds of a verdict's steps, from their cache entries."""
    used = [entries.get(step.get("key")) for step in steps]
    usages = [entry.get("usage") or {} for entry in used if entry]

    def total(*names):
        return sum(next((u[n] for n in names if u.get(n)), 0) for u in usages)
    return {"prompt_tokens": total("input_tokens", "prompt_tokens"),
            "output_tokens": total("output_tokens", "completion_tokens"),
            "seconds": round(sum(entry.get("seconds") or 0 for entry in used if entry), 3)}


def judge_item(item: dict, method: str, ctx: RunContext) -> dict:
    """One row judged by one method -> a record (row fields, judge fields, cost); a cache miss offline
    is a record with `missing` set, never a guess."""
    fields = {k: item[k] for k in ("dataset", "id", "split", "gold")}
    try:
        trace = verify.trace_text(item["claim"], item["text"], ctx.replace(judge_method=method),
                                  f"{item['dataset']}:{item['id']}")
    except CacheMiss:
        return {**fields, "judge": method, "method": method, "missing": True}
    return {**fields, **ev.judged_of(trace, method),
            **usage_of(ctx.cache.entries(), (trace.judged or {}).get("steps", []))}


def relabel(record: dict, support_at: float = pooled.SUPPORT_AT) -> dict:
    """A record's recorded answers under its method's rule (pooled and decompose at `support_at`); a record
    without signals (a reason, no call, another method) is returned as it is."""
    signals, method = record.get("signals"), record.get("method", record.get("judge"))
    if record.get("reason") or not signals:
        return record
    if method == "pooled":
        label = pooled.label_of(signals, record["coverage"], support_at)
        confidence = pooled.confidence_of(signals, label)
    elif method == "decompose":
        label = decompose.label_of(signals, record["coverage"], support_at)
        confidence = decompose.confidence_of(signals, record["coverage"], support_at)
    elif method == "qa":
        label = qa.label_of(signals)
        confidence = qa.confidence_of(signals, label)
    else:
        return record
    return {**record, "answer": label, "confidence": confidence}


def scored(records: list[dict]) -> dict:
    """{"wice": binary metrics, "rfc": 3-class metrics} of one method's records (missing ones left out)."""
    records = [r for r in records if not r.get("missing")]
    out = {}
    wice = ev.with_predictions([r for r in records if r["dataset"] == "wice"])
    if wice:
        gold, predicted = [r["gold"] for r in wice], [r["predicted"] for r in wice]
        recalls = {c["class"]: c["recall"] for c in ev.per_class(gold, predicted)}
        out["wice"] = {"n": len(wice), "accuracy": ev.accuracy(gold, predicted),
                       "balanced_accuracy": statistics.fmean(recalls[c] for c in ev.CLASSES),
                       "supported_recall": recalls["supported"],
                       "auroc": ev.auroc([r["p_supported"] or 0.0 for r in wice], [g == "supported" for g in gold]),
                       "ece": ev.ece([r["confidence"] for r in wice], [r["correct"] for r in wice])}
    rfc = [r for r in records if r["dataset"] == "rfc"]
    if rfc:
        gold = [r["gold"] for r in rfc]
        predicted = [r["answer"] if r["answer"] in RFC_CLASSES else RFC_OF[r["answer"]] for r in rfc]
        out["rfc"] = {"n": len(rfc), "accuracy": ev.accuracy(gold, predicted),
                      **{f"recall_{c['class']}": c["recall"] for c in ev.per_class(gold, predicted, RFC_CLASSES)}}
    return out


def intervals(records: list[dict], resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """{"wice": {score: (low, high)}, "rfc": {...}}: 95 % bootstrap intervals of `scored`'s scores (module
    rules)."""
    records = [r for r in records if not r.get("missing")]
    rng = random.Random(seed)
    groups = [[r for r in records if r["dataset"] == d] for d in ("wice", "rfc")]
    draws: dict[str, dict[str, list[float]]] = {}
    for _ in range(resamples):
        sample = [rng.choice(g) for g in groups for _ in g]
        for dataset, scores in scored(sample).items():
            for name, value in scores.items():
                if name != "n" and not math.isnan(value):
                    draws.setdefault(dataset, {}).setdefault(name, []).append(value)

    def percentile(values: list[float], q: float) -> float:
        values = sorted(values)
        at = q * (len(values) - 1)
        low, high = math.floor(at), math.ceil(at)
        return values[low] + (values[high] - values[low]) * (at - low)
    return {d: {name: (percentile(v, 0.025), percentile(v, 0.975)) for name, v in scores.items()}
            for d, scores in draws.items()}


def choose_support_at(tune: list[dict]) -> float:
    """SUPPORT_AT maximising mean(WiCE-tune balanced accuracy, RFC-tune 3-class accuracy) over the observed
    p_supported values: the midpoint of the lowest and highest optimal candidate."""
    candidates = sorted({r["p_supported"] for r in tune if r.get("p_supported") is not None})
    best, optimal = -1.0, []
    for t in candidates:
        s = scored([relabel(r, t) for r in tune])
        value = statistics.fmean([s["wice"]["balanced_accuracy"], s["rfc"]["accuracy"]])
        if value > best + 1e-12:
            best, optimal = value, [t]
        elif abs(value - best) <= 1e-12:
            optimal.append(t)
    return (min(optimal) + max(optimal)) / 2


def cost(records: list[dict]) -> dict:
    """Mean calls, prompt and output tokens and compute seconds per citation."""
    found = [r for r in records if not r.get("missing")]
    return {k: statistics.fmean(r.get(k) or 0 for r in found) if found else math.nan for k in COST}


def comparison(records: list[dict], split: str = "report") -> list[dict]:
    """One row per method on `split`: the WiCE and RFC scores, the AUTO_ACCEPT chosen on tune for
    evaluation.TARGET_PRECISION with its review share on `split`, and the cost per citation."""
    rows = []
    for method in ev.judges_of(records):
        mine = [r for r in records if r["judge"] == method]
        part = [r for r in mine if r["split"] == split]
        s = scored(part)
        wice = ev.with_predictions([r for r in mine if r["dataset"] == "wice" and not r.get("missing")])
        (gate,) = ev.threshold_table(wice) or ({},)
        rfc = s.get("rfc", {})
        rows.append({"method": method, **{f"wice_{k}": v for k, v in s.get("wice", {}).items()},
                     "rfc_n": rfc.get("n", 0), "rfc_accuracy": rfc.get("accuracy", math.nan),
                     **{f"rfc_{c}": rfc.get(f"recall_{c}", math.nan) for c in RFC_CLASSES},
                     "auto_accept": 1.0 if gate.get("threshold") is None else gate["threshold"],
                     "review_share": gate.get("review_share", math.nan),
                     "missing": sum(1 for r in part if r.get("missing")), **cost(part)})
    return rows
