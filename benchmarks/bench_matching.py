"""The near-miss search's cost by quote length on RFC 7519: prints seconds per `locate`; `--cutoff`: the
search with and without the best score so far as its cutoff, side by side.

A near miss is a span of the largest section (or of the body, across sections) with every 7th word
changed; the last row is a 5 MB quote, past NEAR_MISS_MAX_CHARS. Run: python benchmarks/bench_matching.py

    python benchmarks/bench_matching.py --cutoff [--copies 100] [--rounds 3]

`--cutoff`: RFC 7519 `--copies` times over (sections renamed per copy), every non-verbatim quote of
`bench_growth`'s 90 citations (ten copies of data/citations.json: 20 quotes) and of tests/near_misses.py
(20 more), each located with the cutoff and without it (rapidfuzz's score_cutoff taken away), the two
interleaved `--rounds` times; prints CPU seconds, the partial_ratio alignments each made, whether every
result (status, section, score, closest span, diff, place) is the same, and the speed-up.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path

from citecheck import matching
from citecheck.source import sources

ROOT = Path(__file__).resolve().parent.parent


def near_miss(text: str, n: int) -> str:
    words, out = text.split(), []
    for i, word in enumerate(words):
        out.append(word + "x" if i % 7 == 3 else word)
        if sum(map(len, out)) + len(out) >= n:
            break
    return " ".join(out)


def main() -> None:
    doc = sources.load("data/rfc7519.txt", "rfc")
    section = matching.normalise(max(doc.sections.values(), key=lambda s: len(s.text)).text)
    body = matching.normalise(doc.text)[20000:]
    cases = [(f"in one section, {n} chars", near_miss(section, n)) for n in (100, 250, 1000, 2500)]
    cases += [(f"across sections, {n} chars", near_miss(body, n)) for n in (1000, 5000)]
    cases.append(("5 MB, not verbatim", "no such sentence " * 300_000))
    print(f"{'quote':28} {'status':10} {'score':>6} {'seconds':>8}")
    for name, quote in cases:
        started = time.perf_counter()
        match = matching.locate(quote, doc, None)
        print(f"{name:28} {match.status:10} {match.score if match.score is not None else '-':>6} "
              f"{time.perf_counter() - started:8.2f}")


def cutoff_quotes(copies: int) -> tuple[matching.Sections, list[tuple[str, str | None]]]:
    """The document `copies` times over and the 40 non-verbatim (quote, cited section) pairs (module doc)."""
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests")]
    import json

    import near_misses
    from bench_growth import citations_for
    document = near_misses.document(copies)
    base = json.loads((ROOT / "data" / "citations.json").read_text(encoding="utf-8"))
    citations = citations_for(base, 10, copies)
    pairs = [(c["quote"], c["section"]) for c in citations
             if matching.has_content(c["quote"]) and matching.locate(c["quote"], document).status != "found"]
    return matching.Sections(document), pairs + near_misses.quotes(document)


def _located(sections: matching.Sections, pairs: list, cut: bool) -> tuple[float, int, list]:
    """(CPU seconds, alignments, results) of locating every pair, with or without the cutoff."""
    fuzz, calls = matching.fuzz, [0]

    def alignment(s1, s2, score_cutoff=None):
        calls[0] += 1
        return fuzz.partial_ratio_alignment(s1, s2, score_cutoff=score_cutoff if cut else None)
    matching.fuzz = types.SimpleNamespace(partial_ratio_alignment=alignment, ratio=fuzz.ratio)
    try:
        started = time.process_time()
        results = [matching.locate(quote, sections, cited) for quote, cited in pairs]
        return time.process_time() - started, calls[0], results
    finally:
        matching.fuzz = fuzz


def cutoff_ratio(copies: int = 100, rounds: int = 3, show=print) -> float:
    """Seconds without the cutoff / seconds with it (medians of interleaved rounds); raises when any
    result differs."""
    sections, pairs = cutoff_quotes(copies)
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for number in range(1, rounds + 1):
        results = {}
        for cut in (False, True):
            spent, calls, results[cut] = _located(sections, pairs, cut)
            seconds[cut].append(spent)
            show(f"round {number}  {'with' if cut else 'without':7} cutoff  {spent:6.2f} CPU s  "
                 f"{calls:,} alignments")
        if results[True] != results[False]:
            raise SystemExit("the cutoff changed a result")
    before, after = statistics.median(seconds[False]), statistics.median(seconds[True])
    show(f"{len(pairs)} non-verbatim quotes over RFC 7519 x{copies}: every result the same; "
         f"without {before:.2f} s, with {after:.2f} s: {before / after:.2f}x")
    return before / after


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cutoff", action="store_true")
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    cutoff_ratio(arguments.copies, arguments.rounds) if arguments.cutoff else main()
