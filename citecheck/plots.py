"""Plots of verdicts and confidences, for both flows.

Rules:
- One colour per label, the same in every notebook; labels always in the vocabulary's order.
- Figures are built with matplotlib's object API (not pyplot), so a cell shows each one exactly
  once and re-runs render identical PNGs.
- The AUTO_ACCEPT line is drawn on every confidence plot and the review region below it is shaded.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from matplotlib.figure import Figure

COLOURS = {
    # source-document flow
    "verified": "#2e7d32", "contradicted": "#c62828", "unsupported": "#ef6c00", "fabricated": "#6a1b9a",
    # live-web flow
    "supported": "#2e7d32", "not_found": "#757575", "unreachable": "#37474f",
}
VERDICTS = ("verified", "contradicted", "unsupported", "fabricated")
LABELS = ("supported", "contradicted", "not_found", "unreachable")


def label_counts(values: Iterable[str], order: tuple[str, ...] = VERDICTS, title: str = "Verdicts") -> Figure:
    """Bar chart: how many items got each label (every label in `order` is shown, even at zero)."""
    counts = Counter(values)
    fig = Figure(figsize=(6.0, 3.0))
    ax = fig.add_subplot()
    bars = ax.bar(order, [counts.get(label, 0) for label in order],
                  color=[COLOURS.get(label, "#999999") for label in order])
    ax.bar_label(bars, padding=2)
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.set_ylim(0, max(counts.values(), default=0) + 1.5)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def confidence_by_label(rows: list[dict], threshold: float, *, label_key: str = "verdict",
                        order: tuple[str, ...] = VERDICTS, name_key: str = "id",
                        title: str = "Judge confidence by verdict") -> Figure:
    """One point per item at (label, confidence), named; AUTO_ACCEPT line; review region shaded.

    Items without a confidence (no model was asked) are listed under the title instead of plotted.
    """
    fig = Figure(figsize=(7.5, 3.8))
    ax = fig.add_subplot()
    ax.axhspan(0, threshold, color="#fff3e0", zorder=0)
    ax.axhline(threshold, color="#e65100", linestyle="--", linewidth=1)
    ax.text(len(order) - 0.55, threshold + 0.015, f"AUTO_ACCEPT = {threshold:g}", ha="right",
            va="bottom", color="#e65100")
    ax.text(len(order) - 0.55, 0.02, "review by a person", ha="right", va="bottom", color="#e65100")
    unplotted, per_label = [], Counter()
    for row in rows:
        label, confidence = row[label_key], row.get("confidence")
        if confidence is None:
            unplotted.append(str(row[name_key]))
            continue
        x = order.index(label) + 0.12 * (per_label[label] % 3 - 1)
        per_label[label] += 1
        ax.scatter([x], [confidence], color=COLOURS.get(label, "#999999"), s=36, zorder=3)
        ax.annotate(str(row[name_key]), (x, confidence), xytext=(5, 2), textcoords="offset points", fontsize=8)
    ax.set_xticks(range(len(order)), order)
    ax.set_xlim(-0.6, len(order) - 0.4)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("confidence")
    subtitle = f"\nno model asked: {', '.join(unplotted)}" if unplotted else ""
    ax.set_title(title + subtitle)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
