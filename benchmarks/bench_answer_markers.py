"""Memory per citation marker of an LLM answer, local-file markers against URL markers, and the time
`extract` and `check-answer` take on large answers (a script that prints numbers).

    .venv/bin/python benchmarks/bench_answer_markers.py [--markers 4000] [--sentence-chars 4000]

- per marker: tracemalloc's peak while `extract.extract` reads an answer whose long sentences each carry
  many markers (one `[1]` after another: the worst case, a sentence copied per marker), divided by the
  markers; with ANSWER_MAX_MARKERS lifted, so every marker is read, and at its default (1000).
- time: `citecheck extract` and `check-answer --documents DIR` (no judge: every judge call is
  judge_unavailable at once) on a Markdown answer of about 400 KB (56,000 markers citing one local
  file), in a subprocess; its output's size in bytes.
Run it on two checkouts to compare before and after (`PYTHONPATH=<checkout>`).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or Path(__file__).resolve().parent.parent)
sys.path[:0] = [str(ROOT)]

from citecheck import extract  # noqa: E402

SENTENCE = "Water boils at one hundred degrees \u2014 at sea level, the notes say "
COFFEE = "# Brewing\n\nWater boils at 100 \u00b0C at sea level. Brew coffee at 90 to 96 \u00b0C.\n"


def answer(markers: int, per_sentence: int, sentence_chars: int, local: bool) -> str:
    """Sentences of about `sentence_chars` characters, each followed by `per_sentence` markers."""
    sentence = (SENTENCE * (sentence_chars // len(SENTENCE) + 1))[:sentence_chars].strip()
    body = " ".join(f"{sentence} {'[1]' * per_sentence}." for _ in range(markers // per_sentence))
    source = "coffee.md" if local else "https://example.com/boiling"
    return f"{body}\n\nSources:\n[1] {source}\n"


def per_marker(text: str, markers: int, max_markers: int) -> tuple[float, float, int]:
    """(peak bytes per marker, seconds, citations read) of extract.extract on `text`."""
    tracemalloc.start()
    started = time.perf_counter()
    capped = {"max_markers": max_markers} if hasattr(extract, "MAX_MARKERS") else {}   # before: no cap
    result = extract.extract(text, "markdown", **capped)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / markers, seconds, len(result.citations) + sum(len(c["urls"]) for c in result.claims)


def timed(*args: str, cwd: Path) -> tuple[float, int]:
    """(seconds, bytes printed and written) of one `python -m citecheck` run."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "citecheck", *args], cwd=cwd, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "CITECHECK_OFFLINE": "1",
                               "CITECHECK_CACHE_STORE": "off"}, timeout=3600)
    seconds = time.perf_counter() - started
    written = sum(p.stat().st_size for p in (cwd / "out").glob("*")) if (cwd / "out").exists() else 0
    return seconds, len(done.stdout) + written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markers", type=int, default=4000)
    parser.add_argument("--sentence-chars", type=int, default=4000)
    args = parser.parse_args()
    print(f"checkout: {ROOT.name}; {args.markers:,} markers, sentences of {args.sentence_chars:,} characters")
    for per_sentence in (200, 1000):
        row = {}
        for kind in ("url", "local"):
            text = answer(args.markers, per_sentence, args.sentence_chars, kind == "local")
            row[kind] = per_marker(text, args.markers, args.markers)
        ratio = row["local"][0] / row["url"][0]
        print(f"{per_sentence:>5} markers a sentence, every marker read: URL {row['url'][0]:,.0f} B/marker "
              f"({row['url'][1]:.2f} s), local file {row['local'][0]:,.0f} B/marker "
              f"({row['local'][1]:.2f} s); "
              f"local / URL = {ratio:.2f}")
    text = answer(args.markers, 200, args.sentence_chars, True)
    if hasattr(extract, "MAX_MARKERS"):
        capped = per_marker(text, args.markers, extract.MAX_MARKERS)
        print(f"  at ANSWER_MAX_MARKERS={extract.MAX_MARKERS}: {capped[2]:,} citations read, "
              f"{capped[0]:,.0f} B/marker of the answer's {args.markers:,}, {capped[1]:.2f} s")
    with tempfile.TemporaryDirectory() as folder:
        here = Path(folder)
        (here / "coffee.md").write_text(COFFEE, encoding="utf-8")
        big = answer(56_000, 200, 800, True)                 # ~400 KB, 56,000 local-file markers
        (here / "answer.md").write_text(big, encoding="utf-8")
        size = len(big.encode())
        seconds, out = timed("extract", "answer.md", "--out", "out", "--documents", ".", cwd=here)
        print(f"extract on a {size:,}-byte answer (56,000 local-file markers): {seconds:.1f} s, "
              f"{out:,} bytes out")
        seconds, out = timed("check-answer", "answer.md", "--json", "--documents", ".", cwd=here)
        print(f"check-answer --json on it: {seconds:.1f} s, {out:,} bytes out")


if __name__ == "__main__":
    main()
