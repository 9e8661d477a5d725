"""Evidence recall@k of each ranking of the shown passages, per split: how RETRIEVAL was chosen.

    .venv/bin/python scripts/retrieval_recall.py                                  # the committed sample
    .venv/bin/python scripts/retrieval_recall.py --wice ../shared/data/wice/dev.jsonl   # the whole dev split

A row's page is its article, one sentence per paragraph, cut into passages as verify cuts a page; a claim
is recalled at k when one of its gold evidence sets lies wholly inside the k best passages (notebook 04,
section 3). Rankings: evaluation.RETRIEVERS (MiniLM cosine, BM25, their reciprocal-rank fusion). Split:
the row's 0-based line in the WiCE dev file, even -> tune (where the ranking is chosen), odd -> report.
No model is asked.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from citecheck import evaluation as ev  # noqa: E402


def rows_of(path: Path) -> list[dict]:
    """The file's rows with their split: the sample's `line`, or the row's own line in a dev file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [{**row, "split": ev.split_of(row.get("line", n))}
            for n, row in ((n, json.loads(line)) for n, line in enumerate(lines) if line.strip())]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--wice", type=Path, default=ROOT / ev.SAMPLE, help="a WiCE-format JSONL file")
    args = parser.parse_args(argv)
    prepared = [ev.prepare(row) for row in rows_of(args.wice)]
    print(f"{'split':7} {'ranking':7} {'k':>2} {'claims':>6} {'recalled':>8} {'recall':>6}  95 % interval")
    for split in ev.SPLITS:
        for r in ev.recall_at_k([row for row in prepared if row["split"] == split]):
            print(f"{split:7} {r['retriever']:7} {r['k']:>2} {r['claims']:>6} {r['recalled']:>8} "
                  f"{r['recall']:>6.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]")


if __name__ == "__main__":
    main()
