"""One label per claim from the labels of its citations.

Rule (fixed, in this order): one contradiction outweighs every supporting citation — any
contradicted → contradicted; else any supported → supported; else every citation unreachable →
unreachable; else not_found. A claim with no citations is not_found. Only labels enter the rule:
the judge's confidence never does.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..vocabulary import CONTRADICTED, LABELS, NOT_FOUND, SUPPORTED, UNREACHABLE


def overall(labels: Iterable[str]) -> str:
    """The claim's label from its citations' labels (see module rule)."""
    labels = list(labels)
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown citation label(s) {unknown}; expected one of {', '.join(LABELS)}")
    if CONTRADICTED in labels:
        return CONTRADICTED
    if SUPPORTED in labels:
        return SUPPORTED
    if labels and all(label == UNREACHABLE for label in labels):
        return UNREACHABLE
    return NOT_FOUND
