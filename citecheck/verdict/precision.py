"""Citation precision: how often a batch's citations hold up.

Rules:
- citation precision = supported / all citations; reachable precision = supported / (all -
  unreachable), n/a when nothing was reachable. Printed as `name=0.2222 (2/9)`.
"""
from __future__ import annotations

from ..vocabulary import LABELS, SUPPORTED, UNREACHABLE


def counts(rows: list[dict]) -> dict:
    """{citations, supported, contradicted, not_found, unreachable}."""
    labels = [row["label"] for row in rows]
    return {"citations": len(labels), **{label: labels.count(label) for label in LABELS}}


def _ratio(numerator: int, denominator: int) -> str:
    value = f"{numerator / denominator:.4f}" if denominator else "n/a"
    return f"{value} ({numerator}/{denominator})"


def ratios(rows: list[dict]) -> dict[str, tuple[int, int]]:
    """{"citation": (supported, all), "reachable": (supported, all - unreachable)}: the numbers behind
    precision_lines, for the CI gate."""
    c = counts(rows)
    return {"citation": (c[SUPPORTED], c["citations"]),
            "reachable": (c[SUPPORTED], c["citations"] - c[UNREACHABLE])}


def precision_lines(rows: list[dict]) -> list[str]:
    """The two headline lines: supported / all, and supported / (all - unreachable) or n/a."""
    c = counts(rows)
    reachable = c["citations"] - c[UNREACHABLE]
    return [f"citation_precision={_ratio(c[SUPPORTED], c['citations'])}",
            f"reachable_precision={_ratio(c[SUPPORTED], reachable)}"]
