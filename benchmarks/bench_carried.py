"""A carried quote (a web citation's own text) matched on a 5 MB page: seconds and status per quote length.

The page is RFC 7519 in the middle of 5 MB of its own words in a seeded random order; each quote is a span
of the RFC (from its middle) with one letter changed, so the right answer is `misquoted`; the last row is a
1,000-character quote of shuffled words that stands nowhere (`missing`). Each row times `carried_match`,
the web flow's match (page text, normalisation, `matching.locate`). Compare two trees by running it with
each on PYTHONPATH. Run: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_carried.py
"""
from __future__ import annotations

import random
import time
from pathlib import Path

from citecheck import matching
from citecheck.verify import carried_match, page_of

PAGE_CHARS = 5_000_000


def one_off(text: str) -> str:
    """`text` with the letter nearest its middle changed."""
    i = len(text) // 2
    while not text[i].isalpha():
        i += 1
    return text[:i] + ("q" if text[i] != "q" else "z") + text[i + 1:]


def main() -> None:
    rfc = Path(__file__).resolve().parent.parent.joinpath("data/rfc7519.txt").read_text(encoding="utf-8")
    rng = random.Random(7)
    words = rfc.split()
    filler = " ".join(rng.choice(words) for _ in range(PAGE_CHARS // 5))
    half = (PAGE_CHARS - len(rfc) - 4) // 2
    page = filler[:half] + "\n\n" + rfc + "\n\n" + filler[half:PAGE_CHARS - len(rfc) - 4]
    middle = len(rfc) // 2
    cases = [(f"{n} chars, one letter off", one_off(rfc[middle:middle + n])) for n in (300, 1000, 4999)]
    cases.append(("1000 chars, invented", " ".join(rng.sample(words, 400))[:1000]))
    print(f"page: {len(page):,} characters")
    print(f"{'quote':28} {'status':10} {'seconds':>8}")
    where = page_of("https://example.org/page", page)
    for name, quote in cases:
        started = time.perf_counter()
        match = carried_match([quote], where, matching.NEAR_MISS_MAX_CHARS)
        print(f"{name:28} {match.status:10} {time.perf_counter() - started:8.2f}")


if __name__ == "__main__":
    main()
