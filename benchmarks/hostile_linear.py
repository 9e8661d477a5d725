"""Linear readers under hostile text: full-size cases, printed as numbers.

    .venv/bin/python benchmarks/hostile_linear.py [markdown] [batch]

- markdown: each pathological repeat at 1 MB and at ANSWER_MAX_BYTES (4 MiB) through the Markdown
  reader: seconds, the growth exponent log(t4/t1)/log(4) (1 is linear, 2 quadratic) and the child's peak
  memory at 4 MiB. `bench_hostile.py` can import `bench_markdown` / `bench_batch`.
- batch: a 5 MB claim (over CLAIM_MAX_CHARS), a line nested 100k deep, a 5,000-digit id, read by
  `batch.claims.parse_lines`: seconds until each is a labelled problem.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from citecheck.batch.claims import parse_lines  # noqa: E402
from citecheck.config import Settings  # noqa: E402

PATTERNS = ["[^", "[", "](", "`", "``a`", "*", "**a", "[[", "[a](", "[a](x (", "![", "![a](", "[x][",
            "<http://a ", "http://a(", "[a](http://x(", "[1]", "[1,", "\\[", "[^`[(*](`"]
_CHILD = """
import re, sys, time
from citecheck.extract.markdown import MarkdownReader
text = "x " + sys.argv[1] * (int(sys.argv[2]) // len(sys.argv[1]))
start = time.perf_counter()
MarkdownReader().parse(text)
peak = re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read())[1]   # this process's own peak
print(time.perf_counter() - start, int(peak) // 1024)
"""


def _parse_in_child(pattern: str, size: int) -> tuple[float, int]:
    """(seconds, peak MiB) of one parse in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _CHILD, pattern, str(size)], capture_output=True, text=True,
                          check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    seconds, mib = done.stdout.split()
    return float(seconds), int(mib)


def bench_markdown() -> None:
    full = Settings().answer_max_bytes
    print(f"Markdown reader, pattern repeated to 1 MiB and to ANSWER_MAX_BYTES ({full / 2**20:.0f} MiB):")
    worst = 0.0
    for pattern in PATTERNS:
        small, _ = _parse_in_child(pattern, full // 4)
        large, mib = _parse_in_child(pattern, full)
        exponent = math.log(max(large, 1e-3) / max(small, 1e-3)) / math.log(4)
        worst = max(worst, large)
        print(f"  {pattern!r:>18}: {small:6.2f} s -> {large:6.2f} s  exponent {exponent:4.2f}  peak {mib} MiB")
    print(f"  worst at {full / 2**20:.0f} MiB: {worst:.2f} s")


def bench_batch() -> None:
    limit = Settings().claim_max_chars
    lines = {"5 MB claim": json.dumps({"id": 1, "claim": "c" * 5_000_000, "urls": ["http://a/"]}).encode(),
             "100k-deep line": b'{"id": 1, "claim": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
             "5,000-digit id": b'{"id": ' + b"9" * 5000 + b', "claim": "c", "urls": ["http://a/"]}'}
    print(f"batch lines (CLAIM_MAX_CHARS {limit}, depth cap 64):")
    for name, line in lines.items():
        start = time.perf_counter()
        parsed = parse_lines([line])
        print(f"  {name}: {time.perf_counter() - start:.3f} s -> {parsed.problems[0]}")


def main(argv: list[str]) -> None:
    chosen = argv or ["markdown", "batch"]
    for name in chosen:
        {"markdown": bench_markdown, "batch": bench_batch}[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
