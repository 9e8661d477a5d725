"""How `check` and `extract` grow with their input (issue 25.4, 25.6): growth exponents from one run.

    .venv/bin/python benchmarks/bench_growth.py [check] [extract]

- check: RFC 7519 repeated 1x / 10x / 100x (each copy's sections renamed `4.1.4~n`), with data/citations.json's
  9 citations and 90 (ten copies, copy k citing the sections of document copy 10k: its quotes are found
  deep in the document, its fabricated and misquoted ones are searched through all of it).
  `check.check_citations` runs with a constant judge (no model: what is timed is locating and deciding).
  Prints CPU seconds per case, the growth exponent in the document's size (log t100/t10 / log 10, 1 is
  linear) and in the number of citations (log t90/t9 / log 10).
- extract: an answer of the Markdown reader's fixture (data/answers/markdown.md)
  repeated to 40 KB / 400 KB / 4 MB, read by `extract.read_answer` (format markdown): CPU seconds and the
  growth exponents (log t400K/t40K / log 10, log t4M/t400K / log 10).

Run it on another checkout (PYTHONPATH=/that/checkout) for a before/after with the same inputs.
"""
from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from citecheck import check  # noqa: E402
from citecheck.context import RunContext  # noqa: E402
from citecheck.source import sources  # noqa: E402
from citecheck.source.document import Document, Section  # noqa: E402


def cpu(fn) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def exponent(small: float, large: float, factor: float) -> float:
    return math.log(max(large, 1e-4) / max(small, 1e-4)) / math.log(factor)


def repeated(document: Document, copies: int) -> Document:
    """The document `copies` times over, copy n's sections named `id~n` (copy 0 keeps its names)."""
    sections = {}
    for n in range(copies):
        for key, section in document.sections.items():
            name = key if n == 0 else f"{key}~{n}"
            sections[name] = Section(name, section.title, section.text)
    return Document(document.name, "\n".join([document.text] * copies), sections)


def citations_for(base: list[dict], copies: int, document_copies: int) -> list[dict]:
    """`copies` copies of the citations, copy k citing the sections of document copy 10k (mod its copies)."""
    out = []
    for k in range(copies):
        at = (10 * k) % document_copies
        for c in base:
            section = c["section"] if at == 0 or c["section"] is None else f"{c['section']}~{at}"
            out.append({**c, "id": f"{c['id']}-{k}", "section": section})
    return out


def bench_check() -> None:
    rfc = sources.load(ROOT / "data/rfc7519.txt", "rfc")
    base = json.loads((ROOT / "data/citations.json").read_text())
    ctx = RunContext.build()
    judge = lambda claim, source: {"relation": "supports", "confidence": 0.9}  # noqa: E731
    times: dict[tuple[int, int], float] = {}
    print("check_citations, CPU seconds (constant judge):")
    print(f"  {'document':>9} {'9 citations':>12} {'90 citations':>13}  exponent in citations")
    for size in (1, 10, 100):
        document = repeated(rfc, size)
        for count in (9, 90):
            citations = citations_for(base, count // len(base), size)
            times[size, count] = cpu(lambda: check.check_citations(document, citations, ctx, judge=judge))
        print(f"  {size:>8}x {times[size, 9]:12.3f} {times[size, 90]:13.3f}  "
              f"{exponent(times[size, 9], times[size, 90], 10):.2f}")
    for count in (9, 90):
        print(f"  {count} citations: exponent in the document's size 1x->10x "
              f"{exponent(times[1, count], times[10, count], 10):.2f}, 10x->100x "
              f"{exponent(times[10, count], times[100, count], 10):.2f}")


def bench_extract() -> None:
    from citecheck.extract.command import read_answer
    ctx = RunContext.build()
    unit = (ROOT / "data/answers/markdown.md").read_text(encoding="utf-8") + "\n\n"
    sizes = {"40 KB": 40_000, "400 KB": 400_000, "4 MB": 4_000_000}
    times = {}
    print("extract (markdown), CPU seconds:")
    for name, size in sizes.items():
        path = ROOT / "build" / f"bench-growth-{name.replace(' ', '')}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(unit.encode("utf-8") * (size // len(unit.encode("utf-8"))))
        result = [None]
        times[name] = cpu(lambda: result.__setitem__(0, read_answer(str(path), "markdown", ctx, [])))
        print(f"  {name:>7}: {times[name]:8.3f} s  ({len(result[0].claims)} claims, "
              f"{len(result[0].citations)} quoted citations, {len(result[0].problems)} problems)")
        path.unlink()
    print(f"  exponent 40 KB->400 KB {exponent(times['40 KB'], times['400 KB'], 10):.2f}, "
          f"400 KB->4 MB {exponent(times['400 KB'], times['4 MB'], 10):.2f}")


def main(argv: list[str]) -> None:
    for name in argv or ["check", "extract"]:
        {"check": bench_check, "extract": bench_extract}[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
