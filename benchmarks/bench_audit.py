"""Cost of one audit write: the rollback journal with a full sync per commit (before) against
WAL with synchronous=NORMAL (`audit.connect` now), side by side in one run.

    .venv/bin/python benchmarks/bench_audit.py [rows] [rounds]      # default 200 rows, 3 rounds

Each round writes `rows` citations one at a time through `audit.write_citation` (each its own commit, as a
batch does) into a fresh DB of each kind, interleaved so both see the same machine load; the DBs live
under build/ (the repository's disk, not a RAM disk). Prints the median wall and CPU ms per row of
each mode and their ratios.
"""
from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import audit  # noqa: E402
from citecheck.audit import migrations  # noqa: E402


def rollback_journal(path: Path) -> sqlite3.Connection:
    """The audit DB as `audit.connect` opened it before WAL: the default rollback journal, synchronous=FULL."""
    conn = sqlite3.connect(str(path), timeout=30)
    migrations.migrate(conn, str(path))
    conn.row_factory = sqlite3.Row
    return conn


def per_row(connect, path: Path, rows: int) -> tuple[float, float]:
    """(wall ms, CPU ms) per write of `rows` citations into a new DB at `path`."""
    conn = connect(path)
    wall, cpu = time.perf_counter(), time.process_time()
    for n in range(rows):
        audit.write_citation(conn, "bench", f"c{n}", "a claim " * 10,
                             {"url": f"https://example.org/{n}", "label": "supported", "confidence": 0.8,
                              "evidence_quote": "a quote " * 10, "passages": ["a passage " * 150] * 3})
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    conn.close()
    return 1000 * wall / rows, 1000 * cpu / rows


def main(argv: list[str]) -> None:
    rows = int(argv[0]) if argv else 200
    rounds = int(argv[1]) if len(argv) > 1 else 3
    modes = {"rollback journal, FULL (before)": rollback_journal, "WAL, NORMAL (audit.connect)": audit.connect}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in modes}
    (ROOT / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as work:
        for n in range(rounds):
            for name, connect in modes.items():
                times[name].append(per_row(connect, Path(work) / f"{n}-{len(times[name])}-{id(connect)}.db", rows))
    medians = {name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
               for name, values in times.items()}
    print(f"audit writes, {rows} rows a round, median of {rounds} interleaved rounds:")
    for name, (wall, cpu) in medians.items():
        print(f"  {name:32} {wall:7.3f} ms wall  {cpu:7.3f} ms CPU per row")
    (before_wall, before_cpu), (after_wall, after_cpu) = medians.values()
    print(f"  before / after: wall {before_wall / after_wall:.1f}x, CPU {before_cpu / after_cpu:.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
