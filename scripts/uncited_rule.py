"""Precision and recall of the uncited-claims rule (`citecheck.answer.uncited.asserts_fact`) on the labelled
samples data/uncited/ (English, then French, German and Russian: `<lang>_tune`, `<lang>_report`), per half,
with Wilson 95 % intervals, beside two simpler rules measured in the same run.

    .venv/bin/python scripts/uncited_rule.py

A sentence labelled `claim` is a positive: precision = rule-said-claim and labelled claim / rule-said-claim;
recall = the same / labelled claim. The rule was chosen on `tune`; `report` is the number to quote. No model
is asked, nothing is fetched.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck.answer.uncited import asserts_fact  # noqa: E402
from citecheck.evaluation import wilson  # noqa: E402

RULES = {
    "asserts_fact (the rule)": asserts_fact,
    "every sentence": lambda text: True,
    "a digit or a name": lambda text: bool(re.search(r"\d", text))
    or any(word[:1].isupper() for word in text.split()[1:]),
}


def ratio(hits: int, n: int) -> str:
    if not n:
        return "n/a (0/0)"
    lo, hi = wilson(hits, n)
    return f"{hits / n:.3f} ({hits}/{n}) [{lo:.3f}, {hi:.3f}]"


def measure(rows: list[dict], rule) -> tuple[str, str]:
    said = [rule(row["text"]) for row in rows]
    gold = [row["label"] == "claim" for row in rows]
    both = sum(s and g for s, g in zip(said, gold))
    return ratio(both, sum(said)), ratio(both, sum(gold))


def main() -> None:
    for lang in ("", "fr_", "de_", "ru_"):          # English, then each language's sample (docs/languages.md)
        for half in ("tune", "report"):
            show(f"{lang}{half}")


def show(half: str) -> None:
    text = (ROOT / "data/uncited" / f"{half}.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    claims = sum(row["label"] == "claim" for row in rows)
    print(f"{half}: {len(rows)} sentences, {claims} claims")
    for name, rule in RULES.items():
        precision, recall = measure(rows, rule)
        print(f"  {name:<24} precision {precision}  recall {recall}")


if __name__ == "__main__":
    main()
