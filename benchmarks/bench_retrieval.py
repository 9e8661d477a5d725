"""Does encoding each text once change retrieval? A script that prints numbers.

    .venv/bin/python benchmarks/bench_retrieval.py                 # every committed page, WiCE's 150 rows
    .venv/bin/python benchmarks/bench_retrieval.py --wice 30

Data: every page the notebooks judged (the fetch entries of json_cache.json) against every claim of
data/claims*.jsonl, and each WiCE sample row against its own page. Two ways of encoding:
- joint (the old way): the claim and the page's passages encoded together, for every citation;
- once (`citecheck.web.vectors`, with its disk memory off): each page's passages encoded once, each claim
  once, reused across citations — what a batch, a notebook or a worker now does;
- apart: every page's passages encoded in a batch of their own and every claim alone, the most a
  remembered vector (made beside other texts, e.g. read from disk) can differ from a joint one here.
For each it prints the CPU seconds, and how the scores differ from joint: the largest difference, the
citations whose top 3 or full order changed, and the scores that round differently at 4 decimals.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import evaluation
from citecheck.web import passages, vectors  # noqa: E402


def datasets(wice_rows: int) -> dict[str, list[tuple[str, list[str]]]]:
    cache = json.loads((ROOT / "json_cache.json").read_text(encoding="utf-8"))
    pages = {
        e["answer"]["url"]: e["answer"]["markdown"]
        for e in cache.values()
        if e["function"].startswith("fetch.")
        and e["answer"].get("label") is None
        and e["answer"].get("markdown")
    }
    claims = [
        json.loads(line)["claim"]
        for name in ("claims.jsonl", "claims_more.jsonl")
        for line in (ROOT / "data" / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rows = [json.loads(line) for line in (ROOT / evaluation.SAMPLE).read_text(encoding="utf-8").splitlines()]
    return {
        "notebook pages x claims": [(c, passages.split_passages(t)) for c in claims for t in pages.values()],
        "WiCE rows": [
            (r["claim"], passages.split_passages(evaluation.wice_page(r["evidence"])))
            for r in rows[:wice_rows]
        ],
    }


def joint(items) -> list[list[float]]:
    out = []
    for query, texts in items:
        v = vectors.model().encode(
            [query, *texts], convert_to_tensor=True, normalize_embeddings=True, show_progress_bar=False
        )
        out.append((v[1:] @ v[0]).tolist())
    return out


def once(items) -> list[list[float]]:
    vectors.disk_enabled = False
    vectors._memory.clear()
    out = []
    for query, texts in items:
        v = vectors.encode([query, *texts])
        out.append((v[1:] @ v[0]).tolist())
    return out


def apart(items) -> list[list[float]]:
    def encode(texts):
        return vectors.model().encode(texts, convert_to_tensor=True, normalize_embeddings=True,
                                        show_progress_bar=False)

    pages = {tuple(texts): encode(list(texts)) for _, texts in items}
    return [(pages[tuple(texts)] @ encode([query])[0]).tolist() for query, texts in items]


def order(scores: list[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: -round(scores[i], 6))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wice", type=int, default=150, help="WiCE rows to use (of 150)")
    args = parser.parse_args()
    vectors.model().encode(["warm up"])
    print(
        "| data | citations | passages | encoding | CPU s | max score difference | top-3 changed "
        "| order changed | 4-decimal scores changed |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for name, items in datasets(args.wice).items():
        reference = None
        for label, encode in (("joint", joint), ("once", once), ("apart", apart)):
            cpu = time.process_time()
            scores = encode(items)
            cpu = time.process_time() - cpu
            reference = reference or scores
            pairs = [(x, y) for a, b in zip(scores, reference) for x, y in zip(a, b)]
            print(
                f"| {name} | {len(items)} | {sum(len(t) for _, t in items)} | {label} | {cpu:.1f} "
                f"| {max((abs(x - y) for x, y in pairs), default=0):.1e} "
                f"| {sum(order(a)[:3] != order(b)[:3] for a, b in zip(scores, reference))} "
                f"| {sum(order(a) != order(b) for a, b in zip(scores, reference))} "
                f"| {sum(round(x, 4) != round(y, 4) for x, y in pairs)} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
