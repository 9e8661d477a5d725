"""The number rule measured: chosen on tune, reported on report, and its effect on WiCE per judge level.

    PYTHONPATH=. .venv/bin/python scripts/number_rule.py              # the labelled set and WiCE, ~2 min
    PYTHONPATH=. .venv/bin/python scripts/number_rule.py --no-wice    # the labelled set only, seconds

- Data: data/numbers/pairs.jsonl (README there): claim/evidence pairs labelled same, changed or absent.
  Split by a fixed rule: the last byte of sha256(id) even -> tune, odd -> report.
- Chosen on tune only: HEDGE (the relative tolerance of a hedged number) among HEDGES, by the F1 of
  `number_mismatch` (gold changed or absent; predicted `numbers.MISMATCHES`), ties to the smaller.
- Reported on report: precision and recall (Wilson 95 % intervals) of the mismatch rule (the downgrade)
  and of the contradiction rule (predicted `changed` vs gold changed: what `check` contradicts with no
  model), overall and per language; the report rows it gets wrong.
- WiCE (data/wice/sample.jsonl, rows whose claim states a number): `verify.trace_text` with the shipped
  method at three judge levels: perfect (the oracle stand-in, tests/standins/oracle.py, answering from
  tests/levels.py's gold), capable (the capable stand-in: 0.90-0.99 on the right option) and the local
  recordings (json_cache.json replayed offline, no store). Before = the guarded verdict, after = the row;
  printed: supported before, downgraded by the rule, of those gold supported (hurt) / not (saved), and the
  binary accuracy before and after.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from citecheck import evaluation, verify  # noqa: E402
from citecheck.config import Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402
from citecheck.matching import numbers  # noqa: E402
from citecheck.verdict.guard import guard  # noqa: E402
from citecheck.vocabulary import NUMBER_MISMATCH, SUPPORTED  # noqa: E402

PAIRS = ROOT / "data" / "numbers" / "pairs.jsonl"
HEDGES = (0.0, 0.02, 0.05, 0.1, 0.2)
POSITIVE = ("changed", "absent")


def split_of(item_id: str) -> str:
    return "tune" if hashlib.sha256(item_id.encode("utf-8")).digest()[-1] % 2 == 0 else "report"


def load() -> list[dict]:
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{**row, "split": split_of(row["id"])} for row in rows]


def predicted(row: dict, hedge: float, holds: bool) -> str:
    return numbers.compare(row["claim"], row["evidence"], hedge, holds).status


def counts(rows: list[dict], gold, said) -> tuple[int, int, int]:
    tp = sum(1 for r in rows if gold(r) and said(r))
    fp = sum(1 for r in rows if said(r) and not gold(r))
    return tp, fp, sum(1 for r in rows if gold(r) and not said(r))


def pr_line(name: str, tp: int, fp: int, fn: int) -> str:
    p_lo, p_hi = evaluation.wilson(tp, tp + fp)
    r_lo, r_hi = evaluation.wilson(tp, tp + fn)
    precision = f"{tp / (tp + fp):.3f}" if tp + fp else "n/a"
    recall = f"{tp / (tp + fn):.3f}" if tp + fn else "n/a"
    return (f"{name:<34} precision {precision} [{p_lo:.3f}, {p_hi:.3f}] ({tp}/{tp + fp})   "
            f"recall {recall} [{r_lo:.3f}, {r_hi:.3f}] ({tp}/{tp + fn})")


def f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def rule(rows: list[dict]) -> float:
    tune, report = [r for r in rows if r["split"] == "tune"], [r for r in rows if r["split"] == "report"]
    print(f"labelled pairs: {len(rows)} (tune {len(tune)}, report {len(report)}); labels "
          f"{dict(Counter(r['label'] for r in rows))}; languages {dict(Counter(r['lang'] for r in rows))}")
    print("\nTUNE: F1 of number_mismatch by HEDGE and RANGE_HOLDS")
    scored = []
    for holds in (False, True):
        for hedge in HEDGES:
            for r in tune:
                r["said"] = predicted(r, hedge, holds)
            tp, fp, fn = counts(tune, lambda r: r["label"] in POSITIVE,
                                lambda r: r["said"] in numbers.MISMATCHES)
            scored.append((round(f1(tp, fp, fn), 6), -holds, -hedge))
            print(f"  HEDGE {hedge:<5} RANGE_HOLDS {holds!s:<5} F1 {f1(tp, fp, fn):.3f}  "
                  f"(tp {tp}, fp {fp}, fn {fn})")
    _, holds, hedge = max(scored)
    holds, hedge = bool(-holds), -hedge
    shipped = (hedge, holds) == (numbers.HEDGE, numbers.RANGE_HOLDS)
    print(f"chosen on tune (ties: no range rule, smaller HEDGE): HEDGE = {hedge}, RANGE_HOLDS = {holds} "
          f"({'the shipped values' if shipped else 'NOT the shipped values'})")
    for r in report:
        r["said"] = predicted(r, hedge, holds)
    print(f"\nREPORT ({len(report)} pairs): Wilson 95 % intervals")
    mismatch = (lambda r: r["label"] in POSITIVE, lambda r: r["said"] in numbers.MISMATCHES)
    changed = (lambda r: r["label"] == "changed", lambda r: r["said"] == numbers.CHANGED)
    print(pr_line("number_mismatch (downgrade)", *counts(report, *mismatch)))
    print(pr_line("changed (no-model contradiction)", *counts(report, *changed)))
    for lang in sorted({r["lang"] for r in report}):
        part = [r for r in report if r["lang"] == lang]
        print(pr_line(f"  {lang} ({len(part)}) mismatch", *counts(part, *mismatch)))
    wrong = [r for r in report if (r["label"] in POSITIVE) != (r["said"] in numbers.MISMATCHES)
             or (r["said"] == numbers.CHANGED) != (r["label"] == "changed")]
    print(f"report rows a rule gets wrong ({len(wrong)}; gold changed said absent: no contradiction, "
          "still a downgrade):")
    for r in wrong:
        print(f"  {r['id']} gold {r['label']} said {r['said']}: {r['claim']}")
    return hedge


# ---------------------------------------------------------------- WiCE, per judge level

def wice_effect() -> None:
    import levels as L
    from standins.capable import capable_standin
    from standins.oracle import oracle_standin
    rows = [r for r in evaluation.load_sample() if numbers.extract(r["claim"])]
    print(f"\nWiCE sample: {len(rows)} of 150 rows state a number in the claim "
          f"(gold supported {sum(r['gold'] == SUPPORTED for r in rows)})")
    print(f"{'level':<10} {'supported before':>16} {'downgraded':>10} {'hurt':>5} {'saved':>5} "
          f"{'accuracy before':>15} {'after':>6}")
    with tempfile.TemporaryDirectory() as directory:
        stories = L.stories()
        with oracle_standin(stories) as server:
            effect("perfect", rows, L.context(Path(directory), "both", server.url, "pooled"))
        with capable_standin(stories) as server:
            effect("capable", rows, L.context(Path(directory), "both", server.url, "pooled"))
    local = RunContext.build(Settings.from_env({"CITECHECK_OFFLINE": "1", "CITECHECK_CACHE_STORE": "off",
                                                "CITECHECK_CACHE": str(ROOT / "json_cache.json")}))
    effect("local", rows, local)


def effect(level: str, rows: list[dict], ctx: RunContext) -> None:
    before_right = after_right = supported = down = hurt = missed = 0
    listed = []
    for row in rows:
        try:
            trace = verify.trace_text(row["claim"], evaluation.wice_page(row["evidence"]), ctx,
                                      f"wice:{row['id']}")
        except Exception as exc:              # noqa: BLE001 - a replay miss is counted, not fatal
            missed += 1
            print(f"  {level} {row['id']}: {type(exc).__name__}", file=sys.stderr)
            continue
        before = guard(trace.judged, trace.shown)["label"] if trace.judged else trace.row["label"]
        after = trace.row["label"]
        gold = row["gold"] == SUPPORTED
        supported += before == SUPPORTED
        if trace.row["reason"] == NUMBER_MISMATCH:
            down += 1
            hurt += gold
            listed.append(f"    {row['id']} gold {row['gold']}: {trace.row['numbers']}")
        before_right += (before == SUPPORTED) == gold
        after_right += (after == SUPPORTED) == gold
    n = len(rows) - missed
    note = f"  ({missed} not replayed)" if missed else ""
    print(f"{level:<10} {supported:>16} {down:>10} {hurt:>5} {down - hurt:>5} "
          f"{before_right / n:>15.3f} {after_right / n:>6.3f}   n={n}{note}")
    print("\n".join(listed))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-wice", action="store_true", help="the labelled set only")
    args = parser.parse_args(argv)
    start = time.monotonic()
    rule(load())
    if not args.no_wice:
        wice_effect()
    print(f"\n({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
