"""Redaction on a 10k-citation batch: the secret variables read once per row against once per cell.

A script that prints numbers, not a timed test:

    .venv/bin/python benchmarks/bench_redact.py                     # 10000 citations, 3 rounds
    .venv/bin/python benchmarks/bench_redact.py --citations 2000 --rounds 5

Each round runs the same batch twice, in turn: `config.redactor` as shipped (the environment read once per
CSV row and audit record) and as it was before (every cell and field reading it again: `per_cell`). The
batch is one whose check answers at once (a replay's rows, no page or judge work), journalled in its audit
DB and written to its CSV report as `citecheck batch` does, with two secrets set (every text is scanned for
them). The figure is this process's CPU per citation (all its threads); the ratio is per cell / per row.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

FAKE_SECRETS = {"OPENAI_API_KEY": "sk-bench-not-a-real-key-0123456789",
                "CRAWLBASE_TOKEN": "cb-bench-fake-token-42"}


def answered(claim: str, url: str) -> dict:
    """A row as a replay returns it."""
    return {"url": url, "label": "supported", "confidence": 0.9, "evidence_quote": "boils at 100 °C",
            "final_url": url, "original_status": 200, "rid": "r1", "method": "one_pass"}


@contextlib.contextmanager
def per_cell():
    """`config.redactor` as it was: each text read the environment again."""
    from citecheck import config
    shipped = config.redactor
    config.redactor = lambda: (lambda text: config.Secrets.from_env().redact(text))
    try:
        yield
    finally:
        config.redactor = shipped


def batch_cpu(citations: int, concurrency: int = 4) -> float:
    """CPU seconds of one batch of `citations` (journal and CSV report) in this process."""
    from bench_batch import write_claims

    from citecheck import batch
    from citecheck.config import Settings
    from citecheck.context import RunContext
    with tempfile.TemporaryDirectory(prefix="bench-redact-") as folder:
        work = Path(folder)
        write_claims(work / "claims.jsonl", citations, "http://bench.invalid")
        ctx = RunContext.build(Settings(cache_path=work / "cache.json", audit_db=work / "audit.db"))
        started = time.process_time()
        result = batch.run_batch(work / "claims.jsonl", ctx, verify=answered, concurrency=concurrency)
        batch.write_csv(result.rows, work / "report.csv")
        return time.process_time() - started


def ratio(citations: int = 10000, rounds: int = 3) -> tuple[float, float, float]:
    """(ms per citation read per cell, ms per citation read per row, their ratio): the best of `rounds`
    interleaved rounds each."""
    os.environ.update(FAKE_SECRETS)
    best = {"cell": float("inf"), "row": float("inf")}
    for _ in range(rounds):
        with per_cell():
            best["cell"] = min(best["cell"], batch_cpu(citations))
        best["row"] = min(best["row"], batch_cpu(citations))
    cell, row = (1000 * best[key] / citations for key in ("cell", "row"))
    return cell, row, cell / row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--citations", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.citations} citations, {args.rounds} interleaved rounds (best of each); "
          f"{os.cpu_count()} CPUs, load average {load} at the start")
    cell, row, times = ratio(args.citations, args.rounds)
    print("| redaction reads the environment | CPU ms / citation |\n|---|---:|")
    print(f"| once per cell (before) | {cell:.3f} |\n| once per row | {row:.3f} |\n\nratio {times:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
