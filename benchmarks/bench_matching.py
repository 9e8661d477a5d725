"""The near-miss search's cost by quote length on RFC 7519: prints seconds per `locate`.

A near miss is a span of the largest section (or of the body, across sections) with every 7th word
changed; the last row is a 5 MB quote, past NEAR_MISS_MAX_CHARS. Run: python benchmarks/bench_matching.py
"""
from __future__ import annotations

import time

from citecheck import matching
from citecheck.source import sources


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


if __name__ == "__main__":
    main()
