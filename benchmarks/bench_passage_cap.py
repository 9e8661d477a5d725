"""Which passages to encode when a page has more than MAX_PASSAGES: evidence recall@3 on the WiCE sample.

For each rule (page order: the first N; BM25: rank-bm25's Okapi top N; overlap: `retrieval.shortlist`, the
shipped rule) and cap N, MiniLM ranks only the kept passages and the claim's evidence counts as recalled
when a gold sentence set lies wholly in the top 3 (evaluation.evidence_recalled). Two page sets:
- "WiCE pages": each row's own cited article (2-90 passages; the caps that cut them are small);
- "long pages": the article hidden at a random place among 40 other rows' articles (~280 passages), the
  case the cap exists for.
Choose on the tune split, read the report split. MiniLM scores a passage independently of the others,
so every passage is encoded once and the rules are compared on the same scores.
Usage: .venv/bin/python benchmarks/bench_passage_cap.py  (about 6 minutes of MiniLM on 2 shared cores)
"""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from citecheck import evaluation
from citecheck.web import passages as passages_stage  # noqa: E402
from citecheck.web import retrieval, vectors

CAPS = {"WiCE pages": (3, 4, 6, 8, 16, 32), "long pages": (16, 32, 64)}
DISTRACTORS = 40


def bm25(query, passages, cap):
    return sorted(evaluation.bm25_order(query, passages)[:cap])


RULES = {"page order": lambda query, passages, cap: list(range(min(cap, len(passages)))),
         "BM25": bm25,
         "overlap (shipped)": retrieval.shortlist}


def pages(rows, kind, rng):
    """(row, passages, sentence -> passage indices) for each row with gold evidence."""
    for row in rows:
        if not evaluation.has_gold_evidence(row):
            continue
        own = passages_stage.split_passages(evaluation.wice_page(row["evidence"]))
        where = evaluation.sentence_passages(row["evidence"], own)
        if kind == "long pages":
            others = [o for o in rows if o["id"] != row["id"]]
            extra = [p for o in rng.sample(others, DISTRACTORS)
                     for p in passages_stage.split_passages(evaluation.wice_page(o["evidence"]))]
            at = rng.randrange(len(extra) + 1)
            own, where = extra[:at] + own + extra[at:], [{j + at for j in s} for s in where]
        yield row, own, where


def main():
    rows = evaluation.load_sample()
    rng = random.Random(3)
    built = {kind: list(pages(rows, kind, rng)) for kind in CAPS}
    unique = sorted({p for kind in built.values() for _, ps, _ in kind for p in ps})
    model = vectors.model()
    vectors = dict(zip(unique, model.encode(unique, normalize_embeddings=True, batch_size=32,
                                            show_progress_bar=False)))
    claims = {row["id"]: model.encode(row["claim"], normalize_embeddings=True) for row in rows}
    for kind, caps in CAPS.items():
        sizes = sorted(len(ps) for _, ps, _ in built[kind])
        print(f"\n{kind}: {len(sizes)} claims with gold evidence, {sizes[0]}-{sizes[-1]} passages a page")
        print(f"{'split':7} {'rule':18} " + " ".join(f"N={n:<5}" for n in caps) + " all")
        for split in evaluation.SPLITS:
            chosen = [b for b in built[kind] if b[0]["split"] == split]
            for name, rule in RULES.items():
                cells = []
                for cap in (*caps, None):
                    hits = 0
                    for row, ps, where in chosen:
                        kept = list(range(len(ps))) if cap is None else rule(row["claim"], ps, cap)
                        score = {i: round(float(vectors[ps[i]] @ claims[row["id"]]), 6) for i in kept}
                        top = sorted(kept, key=lambda i: (-score[i], i))[:retrieval.TOP_K]
                        hits += evaluation.evidence_recalled(row["supporting_sentences"], where, top)
                    cells.append(f"{hits / len(chosen):.3f}")
                print(f"{split:7} {name:18} " + "  ".join(cells))


if __name__ == "__main__":
    main()
