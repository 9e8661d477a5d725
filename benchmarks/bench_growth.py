"""How `check` and `extract` grow with their input: growth exponents from one run.

    .venv/bin/python benchmarks/bench_growth.py [check] [extract]

- check: RFC 7519 repeated 1x / 10x / 100x (each copy's sections renamed `4.1.4~n`), with data/citations.json's
  9 citations and 90 (ten copies, copy k citing the sections of document copy 10k: its quotes are found
  deep in the document, its fabricated and misquoted ones are searched through all of it).
  `check.check_citations` runs with a constant judge (no model: what is timed is locating and deciding).
  Prints CPU seconds per case, the growth exponent in the document's size (log t100/t10 / log 10, 1 is
  linear) and in the number of citations (log t90/t9 / log 10).
- extract: data/answers/markdown.md repeated, and one paragraph of prose (the shape that costs pysbd most,
  its one source defined after it), each at 40 KB / 400 KB / 4 MB (`--upto N`: only sizes up to N bytes),
  read by `extract.read_answer` (format markdown): CPU seconds and the growth exponent between sizes
  (log t_large/t_small / log 10; 1 is linear).

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


PARAGRAPH = ("At sea level, pure water boils at 100 °C (212 °F). Dr. Smith measured it, e.g. at 3,000 m, "
             "i.e. higher up! Recipes say the same [1]. ")
SIZES = {"40 KB": 40_000, "400 KB": 400_000, "4 MB": 4_000_000}


def shapes() -> dict[str, tuple[str, str]]:
    """Each answer shape: (the unit repeated, what follows the repeats)."""
    return {"markdown answer": ((ROOT / "data/answers/markdown.md").read_text(encoding="utf-8") + "\n\n", ""),
            "one paragraph": (PARAGRAPH, "\n\n[1]: http://127.0.0.1:8731/articles/boiling-point\n")}


def bench_extract(upto: int) -> None:
    from citecheck.extract.command import read_answer
    ctx = RunContext.build()
    for shape, (unit, tail) in shapes().items():
        times = {}
        print(f"extract (markdown), {shape}, CPU seconds:")
        for name, size in SIZES.items():
            if size > upto:
                continue
            path = ROOT / "build" / f"bench-growth-{size}.md"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(unit.encode("utf-8") * (size // len(unit.encode("utf-8"))) + tail.encode("utf-8"))
            result = [None]
            times[name] = cpu(lambda: result.__setitem__(0, read_answer(str(path), "markdown", ctx, [])))
            path.unlink()
            print(f"  {name:>7}: {times[name]:8.3f} s  ({len(result[0].claims)} claims, "
                  f"{len(result[0].problems)} problems)", flush=True)
        names = list(times)
        for small, large in zip(names, names[1:]):
            print(f"  exponent {small} -> {large}: {exponent(times[small], times[large], 10):.2f}")


def main(argv: list[str]) -> None:
    upto = max(SIZES.values())
    if "--upto" in argv:                 # e.g. --upto 400000 where a 4 MB answer would take hours
        at = argv.index("--upto")
        upto, argv = int(argv[at + 1]), argv[:at] + argv[at + 2:]
    for name in argv or ["check", "extract"]:
        bench_check() if name == "check" else bench_extract(upto)


if __name__ == "__main__":
    main(sys.argv[1:])
