"""The CI gate: the exit status a build fails on, after everything has been printed.

Rules:
- Exit statuses of `check`, `batch` and `extract`: 0 all good; 1 bad input (one line on stderr) or
  problems reported (a line, citation or marker skipped or suspect: the rest still ran); 2 a usage error
  (argparse); GATE_FAILED (3) the gate the command was given failed. When the gate fails it wins over
  problems (it is the question the build asked); a passing gate leaves the problems' 1.
- `check --fail-on V,V,...` fails when any checked citation's verdict is one of V (contradicted,
  fabricated, unsupported) or, for `misquoted`, its quote's status is.
- `batch --fail-under X [--on citation|reachable]` fails when that precision is below X. The default is
  citation precision: a dead or refused link is a citation the reader cannot use, so it counts against
  the answer; reachable precision forgives it. A reachable precision of n/a (nothing reachable) fails.
- The gate's verdict is one line on stderr ("gate passed: ..." or "gate failed: ...").
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from ..vocabulary import MISQUOTED, VERDICTS

PROBLEMS = 1
GATE_FAILED = 3
FAIL_ON = (*VERDICTS[1:], MISQUOTED)
"""What `check --fail-on` accepts: every verdict but verified, and the misquoted status."""
PRECISIONS = ("citation", "reachable")


@dataclass(frozen=True)
class Gate:
    failed: bool
    message: str


def fail_on_list(text: str) -> tuple[str, ...]:
    """argparse type of --fail-on: comma-separated names from FAIL_ON."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in FAIL_ON]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: name one or more of {', '.join(FAIL_ON)} "
                                         "(comma-separated)")
    return names


def fraction(text: str) -> float:
    """argparse type of --fail-under: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1")
    return value


def verdict_gate(rows: list[dict], fail_on: tuple[str, ...]) -> Gate:
    """Fails when a row's verdict (or misquoted status) is in `fail_on`; names the rows."""
    def hit(row: dict) -> str | None:
        if row["verdict"] in fail_on:
            return row["verdict"]
        return MISQUOTED if MISQUOTED in fail_on and row["status"] == MISQUOTED else None
    hits = [(row["id"], hit(row)) for row in rows if hit(row)]
    listed = " or ".join(fail_on)
    if not hits:
        return Gate(False, f"gate passed: no citation is {listed} ({len(rows)} checked)")
    shown = ", ".join(f"{cid} {why}" for cid, why in hits)
    return Gate(True, f"gate failed: {len(hits)} of {len(rows)} citations are {listed}: {shown}")


def precision_gate(ratios: dict[str, tuple[int, int]], threshold: float, on: str) -> Gate:
    """Fails when ratios[on] = (supported, counted) is below `threshold`, or has nothing counted."""
    supported, counted = ratios[on]
    name = f"{on}_precision"
    if not counted:
        return Gate(True, f"gate failed: {name} is n/a (no citation counted), the gate needs {threshold:g}")
    value = supported / counted
    verdict = "failed" if value < threshold else "passed"
    sign = "<" if value < threshold else ">="
    shown = f"{name}={value:.4f} ({supported}/{counted}) {sign} {threshold:g}"
    return Gate(value < threshold, f"gate {verdict}: {shown}")


def finish(command: str, problems: bool, gate: Gate | None) -> int:
    """Print the gate's line and return the exit status (module rules)."""
    if gate is not None:
        print(f"citecheck {command}: {gate.message}", file=sys.stderr)
        if gate.failed:
            return GATE_FAILED
    return PROBLEMS if problems else 0
