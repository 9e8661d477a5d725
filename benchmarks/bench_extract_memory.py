"""`extract`'s memory on a large one-paragraph answer: its peak over the interpreter, per byte of input.

A script that prints numbers, not a test:

    .venv/bin/python benchmarks/bench_extract_memory.py                 # 4 MiB, one paragraph
    .venv/bin/python benchmarks/bench_extract_memory.py --mib 1 --trace # tracemalloc's top allocation sites

The answer is bench_growth's one paragraph of prose (sentences with abbreviations, one `[1]` marker each)
repeated to `--mib` MiB, then its source line: the shape that costs pysbd and the claims most. It is read
by `extract.command.read_answer` (format markdown, the default ANSWER_MAX_* limits) in a fresh process
whose pipeline is imported first. The figure is that process's peak resident memory (VmHWM) less its
resident memory before the file is read (the interpreter, the imports), over the file's size: the target
is at most 10. `--trace` also runs it under tracemalloc and prints Python's allocation peak and the
lines that held the most at that peak.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
MIB = 1024 * 1024

CHILD = r"""
import json, re, sys, tracemalloc
sys.path[:0] = [{root!r}]
from citecheck.context import RunContext
from citecheck.extract.command import read_answer
import citecheck.extract.markdown, citecheck.extract.sentences, pysbd   # noqa: imported before the clock
def status(name):
    return int(re.search(name + r":\s+(\d+)", open("/proc/self/status").read())[1]) * 1024
ctx = RunContext.build()
before = status("VmRSS")
if {trace}:
    tracemalloc.start(8)
result = read_answer({path!r}, "markdown", ctx, [])
out = {{"before": before, "peak": status("VmHWM"), "claims": len(result.claims),
        "problems": len(result.problems)}}
if {trace}:
    out["traced_peak"] = tracemalloc.get_traced_memory()[1]
    top = tracemalloc.take_snapshot().statistics("lineno")[:8]
    out["top"] = [f"{{s.size / 2**20:7.1f}} MiB  {{s.traceback}}" for s in top]
print(json.dumps(out))
"""


def answer(mib: float) -> bytes:
    """bench_growth's one paragraph repeated to `mib` MiB, then its source line."""
    from bench_growth import PARAGRAPH
    unit = PARAGRAPH.encode("utf-8")
    return unit * int(mib * MIB // len(unit)) + b"\n\n[1]: http://127.0.0.1:8731/articles/boiling-point\n"


def measured(mib: float = 4.0, trace: bool = False) -> dict:
    """One read in a fresh process: its numbers, with `ratio` = (peak - before) / input bytes."""
    with tempfile.TemporaryDirectory(prefix="bench-extract-") as folder:
        path = Path(folder) / "answer.md"
        path.write_bytes(answer(mib))
        size = path.stat().st_size
        code = CHILD.format(root=str(ROOT), path=str(path), trace=trace)
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if child.returncode != 0:
        raise RuntimeError(" ".join(child.stderr.strip().splitlines()[-1:]))
    out = json.loads(child.stdout.strip().splitlines()[-1])
    return {**out, "input": size, "ratio": (out["peak"] - out["before"]) / size}


def peak_ratio(mib: float = 4.0) -> float:
    """The target's measure: (peak resident memory - before) / input, for a `mib` MiB one-paragraph answer."""
    return measured(mib)["ratio"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=4.0)
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    m = measured(args.mib)
    print(f"{m['input'] / MIB:.1f} MiB one-paragraph answer ({m['claims']} claims, "
          f"{m['problems']} problems); load average {load}")
    print(f"resident before {m['before'] / MIB:.0f} MiB, peak {m['peak'] / MIB:.0f} MiB: "
          f"{(m['peak'] - m['before']) / MIB:.0f} MiB over the interpreter = {m['ratio']:.1f}x the input "
          "(target <= 10x)")
    if args.trace:
        t = measured(args.mib, trace=True)
        print(f"tracemalloc peak {t['traced_peak'] / MIB:.0f} MiB ({t['traced_peak'] / t['input']:.1f}x); "
              "held at the end:")
        print("\n".join(t["top"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
