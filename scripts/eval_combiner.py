"""Would a stacked, calibrated combiner over the pooled method's signals rank WiCE claims better? Chosen on tune.

    CITECHECK_OFFLINE=1 .venv/bin/python scripts/eval_combiner.py

Every WiCE sample row is judged by the pooled method as verify ships it (`verify.trace_text`, replayed from
the cache: no model is asked). Signals per row, all from that one trace: the best yes, the best no and the
least unknown over its asked sentences, the mean yes, its P(supported), the claim's topical coverage of the
shown passages, and how many of the claim's numbers are missing from them. A logistic regression
(scikit-learn, standardised inputs) over each candidate set of signals is scored by 5-fold stratified
cross-validation on the **tune** split (seed 0), against pooled's own P(supported) on tune. A combiner is
chosen only if it beats that; only what is chosen is fitted on all of tune and scored on report.
"""
from __future__ import annotations

import os
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from citecheck import evaluation as ev
from citecheck import verify
from citecheck.config import Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402
from citecheck.evaluation import method_comparison as mc  # noqa: E402
from citecheck.judge.methods import pooled  # noqa: E402

SIGNALS = ("best_yes", "best_no", "least_unknown", "mean_yes", "p_supported", "coverage", "numbers_missing")
CANDIDATES = (("best_yes",), ("best_yes", "best_no"), ("best_yes", "best_no", "least_unknown"),
              ("p_supported", "coverage"), ("best_yes", "best_no", "coverage"),
              ("best_yes", "best_no", "coverage", "numbers_missing"), SIGNALS)
NUMBER = re.compile(r"\d[\d,.]*")


def signals(item: dict, ctx: RunContext) -> dict:
    """One WiCE row's pooled trace -> its signals."""
    trace = verify.trace_text(item["claim"], item["text"], ctx.replace(judge_method="pooled"), f"wice:{item['id']}")
    asked = [step["answer"][pooled.NAME]["probabilities"] for step in trace.judged["steps"]]
    shown = " ".join(trace.shown)
    return {"best_yes": max(p["yes"] for p in asked), "best_no": max(p["no"] for p in asked),
            "least_unknown": min(p["unknown"] for p in asked), "mean_yes": statistics.fmean(p["yes"] for p in asked),
            "p_supported": trace.judged["p_supported"], "coverage": trace.judged.get("coverage") or 0.0,
            "numbers_missing": sum(n not in shown for n in set(NUMBER.findall(item["claim"])))}


def main() -> None:
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    ctx = RunContext.build(Settings.from_env())
    rows = [(item, signals(item, ctx)) for item in mc.wice_items()]
    split = np.array([item["split"] for item, _ in rows])
    gold = np.array([item["gold"] == "supported" for item, _ in rows])
    tune, report = split == "tune", split == "report"

    def matrix(names):
        return np.array([[s[n] for n in names] for _, s in rows])

    def model():
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0))

    def auroc(scores, mask):
        return ev.auroc(list(scores), list(gold[mask]))

    reference = matrix(("p_supported",))[:, 0]
    on_tune, on_report = auroc(reference[tune], tune), auroc(reference[report], report)
    print(f"pooled P(supported): tune AUROC {on_tune:.3f}")
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    scored = []
    for names in CANDIDATES:
        cv = cross_val_predict(model(), matrix(names)[tune], gold[tune], cv=folds, method="predict_proba")[:, 1]
        scored.append((auroc(cv, tune), names))
        print(f"combiner over {', '.join(names)}: tune 5-fold AUROC {scored[-1][0]:.3f}")
    best, names = max(scored)
    if best <= on_tune:
        print(f"chosen on tune: none (best combiner {best:.3f} does not beat pooled's own {on_tune:.3f}); "
              f"pooled on report: AUROC {on_report:.3f}")
        return
    fitted = model().fit(matrix(names)[tune], gold[tune])
    chosen = auroc(fitted.predict_proba(matrix(names)[report])[:, 1], report)
    print(f"chosen on tune: {', '.join(names)}; report AUROC {chosen:.3f} (pooled {on_report:.3f})")


if __name__ == "__main__":
    main()
