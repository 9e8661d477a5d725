"""The verdict pipeline at two judge levels: a perfect judge and a capable one.

A script that prints tables, not a timed test:

    PYTHONPATH=. .venv/bin/python benchmarks/bench_levels.py                  # both levels, WiCE report half
    PYTHONPATH=. .venv/bin/python benchmarks/bench_levels.py --wice report tune
    PYTHONPATH=. .venv/bin/python benchmarks/bench_levels.py --level capable
    PYTHONPATH=. .venv/bin/python benchmarks/bench_levels.py --perfect-judge openai   # perfect, OpenAI only

- Perfect: the oracle stand-in (tests/standins/oracle.py) answers every question from gold; each method
  (JUDGE_METHOD) runs through check, verify (trace_text on the page text, verify_claim on the fixture
  site) and batch (the claims files on the fixture site). The table is method x dataset agreement with
  gold, with counts; WiCE is binary and lists the rows whose gold sentence the method was never shown
  (retrieval misses), with agreement on the rows where it was.
- Capable: the capable stand-in (tests/standins/capable.py, 0.90-0.99 on the right option) for each
  method and each configured judge alone (Choice endpoint, OpenAI, Anthropic, Ollama): the supported,
  contradicted and silent claims and the foundation case (a no at 0.97 on an exact quote) in check and
  verify. The table counts right cells; every wrong cell is listed with what came out.
Everything runs on 127.0.0.1 with fresh temporary caches (never the repository's); about 1-2 minutes on
2 shared cores.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import levels as L  # noqa: E402
from standins.capable import capable_standin, fixed  # noqa: E402
from standins.oracle import oracle_standin  # noqa: E402

from citecheck.web import fixture_site  # noqa: E402


def perfect(directory: Path, wice: tuple[str, ...], provider: str) -> None:
    datasets = tuple(d for d in L.DATASETS if not d.startswith("wice") or d.split()[1] in wice)
    rows, misses = [], []
    with oracle_standin(L.stories()) as server, fixture_site.start(port=0) as site:
        for method in L.METHODS:
            ctx = L.context(directory, provider, server.url, method)
            results = L.perfect_results(ctx, server.oracle, site.base_url, directory, datasets)
            row = {"method": method}
            for dataset, cases in results.items():
                agree = sum(r["answer"] == r["gold"] for r in cases.values())
                row[dataset] = L.fmt_cell(agree, len(cases))
                if dataset.startswith("wice"):
                    missed = L.retrieval_misses(cases)
                    shown = [r for cid, r in cases.items() if cid not in missed]
                    right = sum(r["answer"] == r["gold"] for r in shown)
                    row[f"{dataset} shown"] = L.fmt_cell(right, len(shown))
                    misses.append(f"{method} {dataset}: gold never shown for {len(missed)} supported row(s): "
                                  f"{', '.join(missed) or '-'}")
                wrong = [f"{cid} ({r['gold']} -> {r['answer']})" for cid, r in cases.items()
                         if r["answer"] != r["gold"] and not (dataset.startswith("wice"))]
                if wrong:
                    misses.append(f"{method} {dataset}: wrong {', '.join(wrong)}")
            rows.append(row)
    columns = ["method", *(c for c in rows[0] if c != "method")]
    print(f"PERFECT judge ({provider}): agreement with gold, right/n")
    print(L.table(rows, columns))
    print("\n".join(misses))


def capable(directory: Path) -> None:
    rows, wrong = [], []
    with capable_standin(L.CAPABLE_STORIES) as server, \
            capable_standin(L.FOUNDATION_STORIES, fixed(0.97)) as foundation:
        for method in L.METHODS:
            row = {"method": method}
            for provider in L.PROVIDERS:
                results = L.capable_results(L.context(directory, provider, server.url, method),
                                            L.context(directory, provider, foundation.url, method))
                right = sum(r["answer"] == r["gold"] for r in results.values())
                answered = {r["method"] for r in results.values() if r.get("method") not in (None, method)}
                by = f" (by {', '.join(sorted(answered))})" if answered else ""
                row[provider] = f"{right}/{len(results)}{by}"
                missed = [f"{case} -> {r['answer']}" for case, r in results.items()
                          if r["answer"] != r["gold"]]
                if missed:
                    wrong.append(f"{method} x {provider}: {'; '.join(missed)}")
            rows.append(row)
    print("CAPABLE judge: right cells of supported, contradicted, silent, foundation check, "
          "foundation verify\n"
          "(by: the method that answered when not the one set; one_pass is each flow's baseline)")
    print(L.table(rows, ["method", *L.PROVIDERS]))
    print("\n".join(wrong) or "every cell right")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", choices=("perfect", "capable", "both"), default="both")
    parser.add_argument("--wice", nargs="*", choices=("report", "tune"), default=["report"],
                        help="WiCE halves for the perfect judge (default: report)")
    parser.add_argument("--perfect-judge", choices=("both", *L.PROVIDERS), default="both",
                        help="how the perfect judge is configured (default both: Choice endpoint + OpenAI)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        if args.level in ("perfect", "both"):
            perfect(Path(directory), tuple(args.wice), args.perfect_judge)
            print()
        if args.level in ("capable", "both"):
            capable(Path(directory))
    print(f"\n({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
