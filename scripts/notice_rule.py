"""Precision and recall of the notice rules (`citecheck.web.notices.find`) on the labelled notice pages of
data/notices/notices.jsonl, per half, with Wilson 95 % intervals.

    .venv/bin/python scripts/notice_rule.py

Two questions, each a positive class: SETTLING (a page the rules label retracted, withdrawn or expression of
concern: the citation is never supported) and CORRECTION (a correction notice shown beside the verdict).
precision = said-and-labelled / said; recall = said-and-labelled / labelled; `kind` counts settling pages
given their exact kind. The half of a row is fixed by sha256 of its wording group (`half`): a notice wording
on several articles stays in one half. The rules were chosen on `tune`; `report` is the number to quote.
No model is asked, nothing is fetched.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck.evaluation import wilson  # noqa: E402
from citecheck.vocabulary import CORRECTION, NO_NOTICE, SETTLING_NOTICES  # noqa: E402
from citecheck.web.notices import find  # noqa: E402

DATA = ROOT / "data/notices/notices.jsonl"
HALVES = ("tune", "report")


def group(row: dict) -> str:
    """The wording group: a notice row's id up to its '-' (one wording, several articles), else its id."""
    return row["id"].split("-")[0]


def half(row: dict) -> str:
    """tune when the first byte of sha256(group) is even, else report."""
    return HALVES[hashlib.sha256(group(row).encode()).digest()[0] % 2]


def rows(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def predicted(row: dict) -> str:
    notice = find(row["first_screen"])
    return notice.kind if notice else NO_NOTICE


def scores(sample: list[dict]) -> dict[str, tuple[int, int, int]]:
    """{question: (both, said, labelled)} for settling and correction; kind: (exact, settling, settling)."""
    said = [predicted(row) for row in sample]
    gold = [row["label"] for row in sample]
    out = {}
    for name, kinds in (("settling", SETTLING_NOTICES), ("correction", {CORRECTION})):
        s, g = [p in kinds for p in said], [x in kinds for x in gold]
        out[name] = (sum(a and b for a, b in zip(s, g)), sum(s), sum(g))
    settling = [(p, x) for p, x in zip(said, gold) if x in SETTLING_NOTICES and p in SETTLING_NOTICES]
    out["kind"] = (sum(p == x for p, x in settling), len(settling), len(settling))
    return out


def _share(hits: int, n: int) -> str:
    lo, hi = wilson(hits, n)
    return f"{hits / n:.3f} ({hits}/{n}) [{lo:.3f}, {hi:.3f}]" if n else "n/a (0/0)"


def main() -> None:
    data = rows()
    for name in HALVES:
        sample = [row for row in data if half(row) == name]
        labels = {label: sum(row["label"] == label for row in sample)
                  for label in sorted({r["label"] for r in data})}
        print(f"{name}: {len(sample)} pages {labels}")
        for question, (both, said, labelled) in scores(sample).items():
            if question == "kind":
                print(f"  settling pages given their exact kind: {_share(both, said)}")
            else:
                print(f"  {question:<10} precision {_share(both, said)}  recall {_share(both, labelled)}")
        for row in sample if name == "tune" else ():      # the report half's misses are not looked at
            guess = predicted(row)
            if guess != row["label"]:
                print(f"    miss {row['id']} ({row['lang']}, {row['source']}): labelled {row['label']}, "
                      f"rules say {guess}")


if __name__ == "__main__":
    main()
