"""Plots of verdicts and confidences, for both flows.

Rules:
- One colour per label, the same in every notebook; labels always in the vocabulary's order.
- Figures are built with matplotlib's object API (not pyplot), so a cell shows each one exactly
  once and re-runs render identical PNGs.
- The AUTO_ACCEPT in force is a labelled line on every confidence plot, the review region below it shaded;
  with none in force (None: every verdict to a person) no line is drawn, the whole plot is the review
  region and the plot says "no threshold in force" (never a line at 1 that reads as a setting).
- Every figure carries its alt text as its label (`alt_text(fig)`): what it shows, in words and with
  its numbers, so a reader who cannot see the image loses nothing (notebooks and the HTML report use it).
- Point names never cover a point, another name or the plot's own words (`place_names`): each name takes,
  greedily (the most crowded points first), the free spot nearest its point among candidates around it,
  scored against every marker and placed name in display coordinates; a name moved away from its point
  gets a leader line (so does one as near another point as its own). Over NAMED_MAX points, none is named.
  A label's points run left to right by confidence. An item no model was asked about is
  not plotted: the title names it unless another citation of the same name is plotted.
"""
from __future__ import annotations

import base64
import io
from collections import Counter
from typing import Iterable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..verdict.review import EVERYTHING_TO_A_PERSON
from ..vocabulary import LABELS, VERDICTS  # noqa: F401 - the notebooks name plots.LABELS


NONE_IN_FORCE = "no threshold in force"
"""What a plot says when no AUTO_ACCEPT is in force (every verdict to a person)."""


def drawn(threshold: float | None) -> float:
    """Where the review region ends: the threshold, or 1 when none is in force (every verdict reviewed)."""
    return EVERYTHING_TO_A_PERSON if threshold is None else threshold


def gate_words(threshold: float | None) -> str:
    """The threshold as a plot names it: 'AUTO_ACCEPT = 0.8', or NONE_IN_FORCE."""
    return NONE_IN_FORCE if threshold is None else f"AUTO_ACCEPT = {threshold:g}"


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


MARKER_AREA = 36
"""The confidence plot's marker size (points squared, matplotlib's `s`)."""
NAME_FONT = 8
NAMED_MAX = 60
"""A confidence plot with more points than this names none (a crowd of names reads as nothing, and placing
them takes seconds); its alt text still lists every point."""
ANGLES = np.radians([45, -45, 135, -135, 0, 180, 90, -90,
                     22.5, -22.5, 157.5, -157.5, 67.5, -67.5, 112.5, -112.5])
"""Where a name may sit around its point, in order of preference: up and right first."""
RINGS = (1.0, 2.0, 3.0, 4.0, 5.5, 7.0, 9.0, 11.0)
"""Distances tried, in gaps (a marker's radius and 2 points); beyond the first a leader line is drawn."""
COVERED, OUTSIDE, RULED, LEADER = 1e6, 1e5, 20, 25
"""What a candidate spot costs: covering a marker, a name or the plot's words (per pixel²; a leader line: per
sample that crosses one, per leader it crosses), spilling out of the axes or lying on a drawn line (per
pixel²), needing a leader line."""
PADDING = 1.5
"""Pixels kept clear around each name."""
PASSES = 4
"""Greedy placement, then up to this many passes re-placing each name that still covers something."""


def _overlaps(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Per box (c x 4: x0, y0, x1, y1), the summed area (pixels²) it shares with each of `others` (k x 4)."""
    b, o = boxes[:, None, :], others[None, :, :]
    wide = np.minimum(b[..., 2], o[..., 2]) - np.maximum(b[..., 0], o[..., 0])
    high = np.minimum(b[..., 3], o[..., 3]) - np.maximum(b[..., 1], o[..., 1])
    return (np.clip(wide, 0, None) * np.clip(high, 0, None)).sum(axis=1)


def _distances(boxes: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Per box (c x 4) and point (n x 2), the distance (pixels) from the point to the box (0 inside it)."""
    x, y = points[None, :, 0], points[None, :, 1]
    dx = np.maximum(np.maximum(boxes[:, None, 0] - x, x - boxes[:, None, 2]), 0)
    dy = np.maximum(np.maximum(boxes[:, None, 1] - y, y - boxes[:, None, 3]), 0)
    return np.hypot(dx, dy)


def _along(start: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Points (c x 8 x 2) along each line from `start` (2, or c x 2) to `ends` (c x 2), clear of the marker
    at `start`."""
    start = np.broadcast_to(start, ends.shape)
    return start[:, None, :] + np.linspace(0.2, 0.95, 8)[None, :, None] * (ends - start)[:, None, :]


def _inside(samples: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Per candidate, how many of its points (c x m x 2) fall inside any of `boxes` (k x 4)."""
    x, y = samples[..., 0, None], samples[..., 1, None]
    within = (x > boxes[:, 0]) & (x < boxes[:, 2]) & (y > boxes[:, 1]) & (y < boxes[:, 3])
    return within.any(axis=2).sum(axis=1)


def _crossing(start: np.ndarray, ends: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Per line from `start` to each of `ends` (c x 2), how many of `segments` (k x 2 x 2) it crosses."""
    def turn(a, b, c):                                   # the sign of the turn a -> b -> c
        return np.sign((b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1])
                       - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0]))
    p, q, a, b = start[None, None, :], ends[:, None, :], segments[None, :, 0], segments[None, :, 1]
    return ((turn(a, b, p) * turn(a, b, q) < 0) & (turn(p, q, a) * turn(p, q, b) < 0)).sum(axis=1)


def _extent(artist, renderer) -> np.ndarray:
    bbox = artist.get_window_extent(renderer)
    return np.array([bbox.x0, bbox.y0, bbox.x1, bbox.y1])


class _Names:
    """The state of one `place_names` run, in display pixels: the points, the obstacles, each name's
    candidate spots (RINGS x ANGLES) and the spot chosen so far."""

    def __init__(self, ax, xs, ys, names, avoid, rules):
        fig = ax.figure
        if not isinstance(fig.canvas, FigureCanvasAgg):
            FigureCanvasAgg(fig)
        renderer = fig.canvas.get_renderer()
        self.ax, self.names, self.scale = ax, names, fig.dpi / 72             # pixels per point
        self.centre = ax.transData.transform(np.column_stack([xs, ys]).reshape(-1, 2))
        self.radius = MARKER_AREA ** 0.5 / 2 * self.scale
        self.markers = np.hstack([self.centre - self.radius, self.centre + self.radius])
        self.words = np.array([_extent(text, renderer) for text in avoid]).reshape(-1, 4)
        self.frame = _extent(ax, renderer)[None, :]
        self.ruled = np.array([[self.frame[0, 0], y - 1, self.frame[0, 2], y + 1] for y in
                               (ax.transData.transform((0, rule))[1] for rule in rules)]).reshape(-1, 4)
        self.sizes = [self._size(name, renderer) for name in names]
        self.spots = [self._candidates(i) for i in range(len(names))]
        self.first_ring = np.arange(len(RINGS) * len(ANGLES)) < len(ANGLES)
        self.preference = (np.arange(len(RINGS) * len(ANGLES))
                           + 10 * np.repeat(np.arange(len(RINGS)), len(ANGLES)))       # near, then up-right
        self.placed = np.full((len(names), 4), np.nan)
        self.chosen: dict[int, tuple[int, float, bool]] = {}                  # name -> (spot, cost, leader)
        self.leaders: dict[int, np.ndarray] = {}                              # name -> its leader (2 x 2)

    def _size(self, name: str, renderer) -> np.ndarray:
        probe = self.ax.text(0, 0, name, fontsize=NAME_FONT)
        box = _extent(probe, renderer)
        probe.remove()
        return box[2:] - box[:2]

    def _candidates(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(boxes c x 4, offsets c x 2, anchors c x 2 of -1/0/1): for each ring and angle, the box whose
        nearest side or corner is that far from point i in that direction."""
        gap = self.radius + 2 * self.scale
        ring, angle = (a.ravel() for a in np.meshgrid(np.array(RINGS) * gap, ANGLES, indexing="ij"))
        ux, uy = np.cos(angle), np.sin(angle)
        anchors = np.column_stack([np.where(np.abs(ux) < 0.3, 0, np.sign(ux)),
                                   np.where(np.abs(uy) < 0.3, 0, np.sign(uy))])
        offsets = np.column_stack([ux * ring, uy * ring])
        low = self.centre[i] + offsets - self.sizes[i] * (1 - anchors) / 2   # anchor 1: the box starts there
        return np.hstack([low, low + self.sizes[i]]), offsets, anchors

    def place(self, i: int) -> None:
        """Give name i its cheapest spot, given every other name's (module constants say what costs)."""
        boxes, centre = self.spots[i][0], self.centre[i]
        elsewhere = [j for j in range(len(self.names)) if j != i and j in self.chosen]
        others = self.placed[elsewhere] + np.array([-PADDING, -PADDING, PADDING, PADDING])
        leaders = np.array([self.leaders[j] for j in elsewhere if j in self.leaders]).reshape(-1, 2, 2)
        away = _distances(boxes, self.centre)
        lead = ~self.first_ring | (np.delete(away, i, axis=1).min(axis=1, initial=np.inf)
                                   <= away[:, i] + 2 * self.radius)             # off ring 1, or ambiguous
        ends = np.clip(centre, boxes[:, :2], boxes[:, 2:])
        line_crossings = (_inside(_along(centre, ends), np.vstack([others, np.delete(self.markers, i, axis=0),
                                                                   self.words]))
                          + _crossing(centre, ends, leaders))
        dots = _along(leaders[:, 0], leaders[:, 1]).reshape(-1, 2) if len(leaders) else np.zeros((0, 2))
        drawn = np.hstack([dots - 0.5, dots + 0.5])   # other leaders, as 1-pixel boxes
        covered = (_overlaps(boxes, others) + _overlaps(boxes, self.markers) + _overlaps(boxes, self.words)
                   + _overlaps(boxes, drawn))
        cost = (COVERED * (covered + lead * line_crossings)
                + OUTSIDE * (np.prod(self.sizes[i]) - _overlaps(boxes, self.frame))
                + RULED * _overlaps(boxes, self.ruled) + LEADER * lead + self.preference)
        best = int(np.argmin(cost))
        self.placed[i], self.chosen[i] = boxes[best], (best, float(cost[best]), bool(lead[best]))
        self.leaders.pop(i, None)
        if lead[best]:
            self.leaders[i] = np.array([centre, ends[best]])

    def annotate(self, i: int, xy: tuple[float, float]):
        best, _cost, lead = self.chosen[i]
        (dx, dy), (hx, vy) = self.spots[i][1][best], self.spots[i][2][best]
        leader = dict(arrowstyle="-", color="#9e9e9e", linewidth=0.6, shrinkA=0,
                      shrinkB=MARKER_AREA ** 0.5 / 2) if lead else None
        return self.ax.annotate(self.names[i], xy, xytext=(dx / self.scale, dy / self.scale),
                                textcoords="offset points", ha={1: "left", 0: "center", -1: "right"}[int(hx)],
                                va={1: "bottom", 0: "center", -1: "top"}[int(vy)], fontsize=NAME_FONT,
                                arrowprops=leader, zorder=4)


def place_names(ax, xs: list[float], ys: list[float], names: list[str], *, avoid=(), rules=()) -> list:
    """Annotate each point (xs[i], ys[i]) with names[i] where it covers no marker, no other name, no leader
    line and none of the texts in `avoid`, inside the axes, off the horizontal lines at the heights `rules`
    where it can (module rules). A name off its first ring, or as near another point as its own, gets a
    leader line. Call it once the layout is final (tight_layout): it measures in display pixels. Returns the
    annotations, in the points' order."""
    layout = _Names(ax, xs, ys, names, avoid, rules)
    centre = layout.centre
    near = ((centre[:, None, :] - centre[None, :, :]) ** 2).sum(axis=2) < (6 * layout.radius) ** 2
    order = sorted(range(len(names)), key=lambda i: (-int(near[i].sum()), i))      # the most crowded first
    for i in order:
        layout.place(i)
    for _ in range(PASSES):
        covering = [i for i in order if layout.chosen[i][1] >= COVERED]
        if not covering:
            break
        for i in covering:
            layout.place(i)
    return [layout.annotate(i, (xs[i], ys[i])) for i in range(len(names))]


def unplotted_note(rows: list[dict], plotted: list[dict], name_key: str) -> tuple[int, str]:
    """(how many rows no model was asked about, 'c4 and 5 citations of plotted ids'): the names that have
    no plotted point, listed once; the rest counted, since their names are on the plot already."""
    on_plot = {str(row[name_key]) for row in plotted}
    missing = [str(row[name_key]) for row in rows if row.get("confidence") is None]
    named = list(dict.fromkeys(name for name in missing if name not in on_plot))
    more = sum(name in on_plot for name in missing)
    words = ", ".join(named) + (" and " if named and more else "") + (
        f"{more} citation{'s' * (more != 1)} of plotted ids" if more else "")
    return len(missing), words


def confidence_by_label(rows: list[dict], threshold: float | None, *, label_key: str = "verdict",
                        order: tuple[str, ...] = VERDICTS, name_key: str = "id",
                        title: str = "Judge confidence by verdict") -> Figure:
    """One point per item at (label, confidence), named (`place_names`) and spread side by side within
    its label; AUTO_ACCEPT line; review region shaded.

    Items without a confidence (no model was asked) are not plotted: the title says how many, naming the
    ones whose name has no point (`unplotted_note`).
    """
    fig, given, threshold = Figure(figsize=(7.5, 3.8)), threshold, drawn(threshold)
    ax = fig.add_subplot()
    ax.axhspan(0, threshold, color="#fff3e0", zorder=0)
    if given is not None:
        ax.axhline(threshold, color="#e65100", linestyle="--", linewidth=1)
    words = [ax.text(len(order) - 0.55, threshold + 0.015, gate_words(given) + ("" if given is not None else
                     ": every verdict to a person"), ha="right", va="bottom", color="#e65100"),
             ax.text(len(order) - 0.55, 0.02, "review by a person", ha="right", va="bottom", color="#e65100")]
    plotted = sorted((row for row in rows if row.get("confidence") is not None),
                     key=lambda r: r["confidence"])
    size, seen, xs = Counter(row[label_key] for row in plotted), Counter(), []
    for row in plotted:
        label = row[label_key]
        step = min(0.16, 0.75 / size[label])         # every point of a label gets its own x
        xs.append(order.index(label) + step * (seen[label] - (size[label] - 1) / 2))
        seen[label] += 1
    ax.scatter(xs, [row["confidence"] for row in plotted], s=MARKER_AREA, zorder=3,
               color=[COLOURS.get(row[label_key], "#999999") for row in plotted])
    ax.set_xticks(range(len(order)), order)
    ax.set_xlim(-0.6, len(order) - 0.4)
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("confidence")
    missing, unplotted = unplotted_note(rows, plotted, name_key)
    ax.set_title(title + (f"\nno model asked ({missing}): {unplotted}" if missing else ""))
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    if len(plotted) <= NAMED_MAX:
        place_names(ax, xs, [row["confidence"] for row in plotted], [str(row[name_key]) for row in plotted],
                    avoid=words, rules=[threshold] if given is not None else [])
    points = "; ".join(f"{label}: " + ", ".join(f"{row[name_key]} {row['confidence']:.3f}" for row in rows
                                                 if row[label_key] == label and row.get("confidence") is not None)
                       for label in order if size[label])
    gate = (f"with the AUTO_ACCEPT line at {threshold:g} (below it a person reviews)" if given is not None
            else f"with {NONE_IN_FORCE} (a person reviews every one)")
    return described(fig, f"{title}: one point per item at its label and confidence, {gate}. "
                          f"{points or 'No points'}."
                          + (f" No model asked ({missing}): {unplotted}." if missing else ""))


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
    drawn only where at least `min_accepted` verdicts are accepted. The AUTO_ACCEPT in force is a dashed
    line (none when none is), a target precision, when given, a dotted one; each is named in the legend."""
    fig, given, threshold = Figure(figsize=(7.5, 3.4)), threshold, drawn(threshold)
    left, right = fig.subplots(1, 2, sharex=True)
    for n, (series, points) in enumerate(curves.items()):
        colour = SERIES_COLOURS[n % len(SERIES_COLOURS)]
        xs = [p["threshold"] for p in points]
        accuracy = [p["accepted_accuracy"] if p["accepted"] >= min_accepted else float("nan") for p in points]
        left.plot(xs, accuracy, color=colour, label=series)
        right.plot(xs, [p["accepted_share"] for p in points], color=colour, label=series)
    accuracy_label = "accuracy of accepted" + (f" (≥ {min_accepted})" if min_accepted > 1 else "")
    for ax, ylabel in ((left, accuracy_label), (right, "share accepted")):
        if given is not None:
            ax.axvline(threshold, color="#e65100", linestyle="--", linewidth=1,
                       label=f"in force: {threshold:g}")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("AUTO_ACCEPT")
        ax.set_ylabel(ylabel)
        ax.spines[["top", "right"]].set_visible(False)
    if target is not None:
        left.axhline(target, color="#757575", linestyle=":", linewidth=1, label=f"target {target:g}")
    left.legend(loc="lower left", frameon=False)
    if given is None:
        right.set_title(NONE_IN_FORCE, color="#e65100", fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    here = {series: max((p for p in points if p["threshold"] <= threshold), key=lambda p: p["threshold"],
                        default=None) for series, points in curves.items()}
    at = "; ".join(f"{series}: {p['accepted_share']:.0%} accepted, accuracy {p['accepted_accuracy']:.2f}"
                   for series, p in here.items() if p is not None and p["accepted"])
    lines = f" Dotted: the target {target:g}." if target is not None else ""
    now = (f"At AUTO_ACCEPT = {threshold:g} (dashed, in force): {at or 'none accepted'}." if given is not None
           else f"No line for the gate: {NONE_IN_FORCE}, every verdict to a person.")
    return described(fig, f"{title}: accuracy of the accepted verdicts (left) and the share accepted (right) "
                          f"as AUTO_ACCEPT goes from 0 to 1.{lines} {now}")


def review_share_curve(points: list[dict], threshold: float | None,
                       title: str = "Citations a person must read") -> Figure:
    """Share of citations sent to review ({threshold, share, to_review}) as a step line over the
    threshold, with the current AUTO_ACCEPT dashed and its count written beside it."""
    fig, given, threshold = Figure(figsize=(6.0, 3.0)), threshold, drawn(threshold)
    ax = fig.add_subplot()
    ax.step([p["threshold"] for p in points], [p["share"] for p in points], where="post", color=SERIES_COLOURS[0])
    here = None
    if given is not None:
        ax.axvline(threshold, color="#e65100", linestyle="--", linewidth=1)
        here = max((p for p in points if p["threshold"] <= threshold), key=lambda p: p["threshold"],
                   default=None)
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
    now = f"At AUTO_ACCEPT = {threshold:g}{at}." if given is not None else f"{NONE_IN_FORCE.capitalize()}."
    return described(fig, f"{title}: share of citations sent to a person as AUTO_ACCEPT goes from 0 to 1, "
                          f"rising to {points[-1]['share']:.0%} at 1. {now}"
                          if points else f"{title}: no citations.")
