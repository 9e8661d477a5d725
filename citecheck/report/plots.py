"""Plots of verdicts and confidences, for both flows.

Rules:
- One colour per label, the same in every notebook; labels always in the vocabulary's order.
- Figures are built with matplotlib's object API (not pyplot), so a cell shows each one exactly
  once and re-runs render identical PNGs.
- The AUTO_ACCEPT line is drawn on every confidence plot and the review region below it is shaded.
- Every figure carries its alt text as its label (`alt_text(fig)`): what it shows, in words and with
  its numbers, so a reader who cannot see the image loses nothing (notebooks and the HTML report use it).
- Point names never sit on top of each other: a label's points run left to right by confidence, and the
  names of points at about the same height are stacked one line apart.
"""
from __future__ import annotations

import base64
import io
from collections import Counter
from typing import Iterable

from matplotlib.figure import Figure

from ..verdict.review import EVERYTHING_TO_A_PERSON
from ..vocabulary import LABELS, VERDICTS  # noqa: F401 - the notebooks name plots.LABELS


def drawn(threshold: float | None) -> float:
    """The AUTO_ACCEPT line drawn: None (none in force for the model: its verdicts to a person) at 1."""
    return EVERYTHING_TO_A_PERSON if threshold is None else threshold


def described(fig: Figure, text: str) -> Figure:
    """`fig` with `text` as its alt text."""
    fig.set_label(text)
    return fig


def alt_text(fig: Figure) -> str:
    """The figure's alt text (its title when none was set)."""
    if fig.get_label():
        return fig.get_label()
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return "; ".join(titles) or "a figure"


def data_uri(fig: Figure) -> str:
    """A matplotlib figure as a data: URI (no software metadata, so re-runs are byte-identical)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _numbers(values: dict) -> str:
    return ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in values.items())


COLOURS = {
    # source-document flow
    "verified": "#2e7d32", "contradicted": "#c62828", "unsupported": "#ef6c00", "fabricated": "#6a1b9a",
    # live-web flow
    "supported": "#2e7d32", "not_found": "#757575", "unreachable": "#37474f",
}


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
    return described(fig, f"{title}: bar chart of how many got each label: "
                          + _numbers({label: counts.get(label, 0) for label in order}) + ".")


def confidence_by_label(rows: list[dict], threshold: float | None, *, label_key: str = "verdict",
                        order: tuple[str, ...] = VERDICTS, name_key: str = "id",
                        title: str = "Judge confidence by verdict") -> Figure:
    """One point per item at (label, confidence), named and spread side by side within its label;
    AUTO_ACCEPT line; review region shaded.

    Items without a confidence (no model was asked) are listed under the title instead of plotted.
    """
    fig, threshold = Figure(figsize=(7.5, 3.8)), drawn(threshold)
    ax = fig.add_subplot()
    ax.axhspan(0, threshold, color="#fff3e0", zorder=0)
    ax.axhline(threshold, color="#e65100", linestyle="--", linewidth=1)
    ax.text(len(order) - 0.55, threshold + 0.015, f"AUTO_ACCEPT = {threshold:g}", ha="right",
            va="bottom", color="#e65100")
    ax.text(len(order) - 0.55, 0.02, "review by a person", ha="right", va="bottom", color="#e65100")
    plotted = [row for row in rows if row.get("confidence") is not None]
    unplotted = list(dict.fromkeys(str(row[name_key]) for row in rows if row.get("confidence") is None))
    size, seen = Counter(row[label_key] for row in plotted), Counter()
    last: dict[str, tuple[float, int]] = {}          # label -> (confidence, name level) of its previous point
    for row in sorted(plotted, key=lambda r: r["confidence"]):
        label, confidence = row[label_key], row["confidence"]
        step = min(0.12, 0.7 / size[label])          # every point of a label gets its own x
        x = order.index(label) + step * (seen[label] - (size[label] - 1) / 2)
        seen[label] += 1
        before = last.get(label)
        level = (before[1] + 1) % 3 if before and confidence - before[0] < 0.06 else 0
        last[label] = (confidence, level)
        ax.scatter([x], [confidence], color=COLOURS.get(label, "#999999"), s=36, zorder=3)
        ax.annotate(str(row[name_key]), (x, confidence), xytext=(3, 3 + 9 * level), textcoords="offset points",
                    fontsize=8)
    ax.set_xticks(range(len(order)), order)
    ax.set_xlim(-0.6, len(order) - 0.4)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("confidence")
    missing = len(rows) - len(plotted)
    subtitle = f"\nno model asked ({missing}): {', '.join(unplotted)}" if unplotted else ""
    ax.set_title(title + subtitle)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    points = "; ".join(f"{label}: " + ", ".join(f"{row[name_key]} {row['confidence']:.2f}" for row in plotted
                                                 if row[label_key] == label)
                       for label in order if size[label])
    return described(fig, f"{title}: one point per item at its label and confidence, with the AUTO_ACCEPT "
                          f"line at {threshold:g} (below it a person reviews). {points or 'No points'}."
                          + (f" No model asked ({missing}): {', '.join(unplotted)}." if unplotted else ""))


SERIES_COLOURS = ("#1565c0", "#ad1457", "#00838f", "#6d4c41")
"""Colours for compared series (judges, retrievers), in the order the series are given."""


def grouped_bars(table: dict[str, dict], *, xlabel: str, ylabel: str, title: str) -> Figure:
    """Bars grouped by x value, one colour per series: `table` maps series -> {x: value in 0..1}."""
    fig = Figure(figsize=(6.0, 3.0))
    ax = fig.add_subplot()
    xs = sorted({x for values in table.values() for x in values})
    width = 0.8 / max(len(table), 1)
    for n, (series, values) in enumerate(table.items()):
        offsets = [i + (n - (len(table) - 1) / 2) * width for i in range(len(xs))]
        bars = ax.bar(offsets, [values.get(x, 0) for x in xs], width, label=series,
                      color=SERIES_COLOURS[n % len(SERIES_COLOURS)])
        ax.bar_label(bars, fmt="%.2f", padding=2, fontsize=8)
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.12)
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    bars = "; ".join(f"{series}: " + ", ".join(f"{x} {values.get(x, 0):.2f}" for x in xs)
                     for series, values in table.items())
    return described(fig, f"{title}: grouped bars of {ylabel} by {xlabel}. {bars}.")


def reliability_diagram(bins: dict[str, list[dict]], title: str = "Reliability") -> Figure:
    """One panel per series: accuracy of each confidence bin ({lo, hi, n, accuracy}) against the
    diagonal a perfectly calibrated judge would follow; each bar is labelled with its count."""
    fig = Figure(figsize=(7.5, 3.4))
    axes = fig.subplots(1, len(bins), sharey=True, squeeze=False)[0]
    for n, (ax, (series, rows)) in enumerate(zip(axes, bins.items())):
        ax.plot([0, 1], [0, 1], color="#9e9e9e", linestyle="--", linewidth=1)
        filled = [b for b in rows if b["n"]]
        bars = ax.bar([(b["lo"] + b["hi"]) / 2 for b in filled], [b["accuracy"] for b in filled],
                      [b["hi"] - b["lo"] for b in filled], color=SERIES_COLOURS[n % len(SERIES_COLOURS)],
                      edgecolor="white", alpha=0.85)
        ax.bar_label(bars, labels=[f"n={b['n']}" for b in filled], padding=2, fontsize=7)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.12)
        ax.set_xlabel("confidence")
        ax.set_title(series)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].set_ylabel("accuracy in bin")
    fig.suptitle(title)
    fig.tight_layout()
    panels = "; ".join(f"{series}: " + ", ".join(f"{b['lo']:.1f}-{b['hi']:.1f} n={b['n']} accuracy "
                                                  f"{b['accuracy']:.2f}" for b in rows if b["n"])
                       for series, rows in bins.items())
    return described(fig, f"{title}: accuracy of each confidence bin against the diagonal of a perfectly "
                          f"calibrated judge. {panels}.")


def threshold_sweep(curves: dict[str, list[dict]], threshold: float | None, *, target: float | None = None,
                    min_accepted: int = 1, title: str = "What AUTO_ACCEPT buys") -> Figure:
    """Left: accuracy of the accepted verdicts; right: share accepted, as the threshold goes 0 -> 1.

    One line per series (points {threshold, accepted, accepted_accuracy, accepted_share}); accuracy is
    drawn only where at least `min_accepted` verdicts are accepted. The current AUTO_ACCEPT is the
    dashed line, and a target precision, when given, a dotted one."""
    fig, threshold = Figure(figsize=(7.5, 3.4)), drawn(threshold)
    left, right = fig.subplots(1, 2, sharex=True)
    for n, (series, points) in enumerate(curves.items()):
        colour = SERIES_COLOURS[n % len(SERIES_COLOURS)]
        xs = [p["threshold"] for p in points]
        accuracy = [p["accepted_accuracy"] if p["accepted"] >= min_accepted else float("nan") for p in points]
        left.plot(xs, accuracy, color=colour, label=series)
        right.plot(xs, [p["accepted_share"] for p in points], color=colour, label=series)
    accuracy_label = "accuracy of accepted" + (f" (≥ {min_accepted})" if min_accepted > 1 else "")
    for ax, ylabel in ((left, accuracy_label), (right, "share accepted")):
        ax.axvline(threshold, color="#e65100", linestyle="--", linewidth=1)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("AUTO_ACCEPT")
        ax.set_ylabel(ylabel)
        ax.spines[["top", "right"]].set_visible(False)
    if target is not None:
        left.axhline(target, color="#757575", linestyle=":", linewidth=1)
    left.legend(loc="lower left", frameon=False)
    fig.suptitle(title)
    fig.tight_layout()
    here = {series: max((p for p in points if p["threshold"] <= threshold), key=lambda p: p["threshold"],
                        default=None) for series, points in curves.items()}
    at = "; ".join(f"{series}: {p['accepted_share']:.0%} accepted, accuracy {p['accepted_accuracy']:.2f}"
                   for series, p in here.items() if p is not None and p["accepted"])
    return described(fig, f"{title}: accuracy of the accepted verdicts (left) and the share accepted (right) "
                          f"as AUTO_ACCEPT goes from 0 to 1. At AUTO_ACCEPT = {threshold:g}: "
                          f"{at or 'none accepted'}.")


def review_share_curve(points: list[dict], threshold: float | None,
                       title: str = "Citations a person must read") -> Figure:
    """Share of citations sent to review ({threshold, share, to_review}) as a step line over the
    threshold, with the current AUTO_ACCEPT dashed and its count written beside it."""
    fig, threshold = Figure(figsize=(6.0, 3.0)), drawn(threshold)
    ax = fig.add_subplot()
    ax.step([p["threshold"] for p in points], [p["share"] for p in points], where="post", color=SERIES_COLOURS[0])
    ax.axvline(threshold, color="#e65100", linestyle="--", linewidth=1)
    here = max((p for p in points if p["threshold"] <= threshold), key=lambda p: p["threshold"], default=None)
    if here is not None:
        ax.annotate(f"AUTO_ACCEPT = {threshold:g}: {here['to_review']} to review ({here['share']:.0%})",
                    (threshold, here["share"]), xytext=(-6, 8), textcoords="offset points", ha="right",
                    color="#e65100")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("AUTO_ACCEPT")
    ax.set_ylabel("share of citations to review")
    ax.set_title(title)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    at = f": {here['to_review']} to review ({here['share']:.0%})" if here is not None else ""
    return described(fig, f"{title}: share of citations sent to a person as AUTO_ACCEPT goes from 0 to 1, "
                          f"rising to {points[-1]['share']:.0%} at 1. At AUTO_ACCEPT = {threshold:g}{at}."
                          if points else f"{title}: no citations.")
