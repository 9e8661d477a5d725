"""How the number reader's time grows with the text: 0.5, 1 and 2 MB of prose, and hostile texts (a digit run,
separators without end, number words without end), each printed with its seconds and the ratio to the
half-size text (about 2 means linear). A script that prints, never a timed test:

    PYTHONPATH=. .venv/bin/python benchmarks/bench_numbers.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from citecheck.matching import numbers  # noqa: E402

PROSE = ("At 3,000 metres above sea level water boils at roughly 90 °C; RFC 7519 section 4.1.4 was published "
         "in May 2015, between 80 % and 90 % of 1 204 patients (62,5 %) answered, zweiundzwanzig Schüler, "
         "двадцать пять человек, 1e3 users, 10⁶ cells, ½ cup, ٣ apples. ")
HOSTILE = {
    "prose": PROSE,
    "digit run": "7",
    "separators": "1,234.",
    "spaced groups": "123 ",
    "number words": "twenty-one hundred and ",
    "references": "section 4.1.",
    "hedges": "about more than ",
}


def seconds(text: str) -> tuple[float, int]:
    start = time.perf_counter()
    found = numbers.extract(text)
    return time.perf_counter() - start, len(found)


def main() -> int:
    print(f"{'text':<14} {'MB':>4} {'seconds':>8} {'numbers':>8} {'ratio':>6}")
    for name, unit in HOSTILE.items():
        previous = None
        for mb in (0.5, 1, 2):
            text = (unit * (int(mb * 1_000_000) // len(unit) + 1))[:int(mb * 1_000_000)]
            took, count = seconds(text)
            ratio = f"{took / previous:.2f}" if previous else "-"
            print(f"{name:<14} {mb:>4} {took:>8.3f} {count:>8} {ratio:>6}")
            previous = took
    return 0


if __name__ == "__main__":
    sys.exit(main())
