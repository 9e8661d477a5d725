"""One label per claim from the labels of its citations.

Rule (fixed, in this order): one contradiction outweighs every supporting citation — any
contradicted → contradicted; else any supported → supported; else every citation unreachable →
unreachable; else not_found. A claim with no citations is not_found. Only labels enter the rule:
the judge's confidence never does.
"""
from __future__ import annotations

from collections.abc import Iterable

LABELS = ("supported", "contradicted", "not_found", "unreachable")


def overall(labels: Iterable[str]) -> str:
    """The claim's label from its citations' labels (see module rule)."""
    labels = list(labels)
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown citation label(s) {unknown}; expected one of {', '.join(LABELS)}")
    if "contradicted" in labels:
        return "contradicted"
    if "supported" in labels:
        return "supported"
    if labels and all(label == "unreachable" for label in labels):
        return "unreachable"
    return "not_found"
