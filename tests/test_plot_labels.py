"""Confidence plots whose names never collide: no name covers another name, a marker or the plot's
own words, each stays inside the axes and nearest its own point — on the notebooks' own data (read back from
the committed figures' alt text) and on crowded made-up data; the title never lists an id that is plotted."""
from __future__ import annotations

import random
import re

import nbformat
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Annotation, Text

from citecheck import notebook
from citecheck.report import plots
from citecheck.vocabulary import LABELS, VERDICTS

ALT = re.compile(r"^(?P<title>.*?): one point per item at its label and confidence, with "
                 r"(?:the AUTO_ACCEPT line at (?P<threshold>[\d.]+) \(below it a person reviews\)"
                 r"|no threshold in force \(a person reviews every one\))\. (?P<points>.*?)\."
                 r"(?: No model asked \((?P<missing>\d+)\): (?P<unplotted>.*)\.)?$")


def notebook_plots() -> list[tuple[str, re.Match]]:
    """(notebook, alt text match) for every confidence plot in the committed notebooks."""
    found = []
    for path in notebook.notebook_paths():
        for cell in nbformat.read(path, as_version=4).cells:
            for out in cell.get("outputs", []):
                match = ALT.match("".join(out.get("data", {}).get("text/plain", "")))
                if match:
                    found.append((path.stem, match))
    return found


PLOTS = notebook_plots()


def points_of(match: re.Match) -> list[tuple[str, str, float]]:
    """(label, name, confidence) per plotted point, as the alt text gives them."""
    out = []
    for part in match["points"].split("; "):
        label, items = part.split(": ", 1)
        out += [(label, *item.rsplit(" ", 1)) for item in items.split(", ")]
    return [(label, name, float(confidence)) for label, name, confidence in out]


def boxes(fig) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(names, their boxes, their points, marker boxes, the plot's own words' boxes, the axes box) in pixels."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.canvas.draw()
    ax = fig.axes[0]
    extent = lambda text: list(Text.get_window_extent(text, renderer).extents)   # noqa: E731 (the text, no leader)
    notes = [t for t in ax.texts if isinstance(t, Annotation)]
    words = [t for t in ax.texts if not isinstance(t, Annotation)]
    centres = ax.transData.transform(np.vstack([c.get_offsets() for c in ax.collections]))
    radius = plots.MARKER_AREA ** 0.5 / 2 * fig.dpi / 72
    named = ax.transData.transform(np.array([n.xy for n in notes]).reshape(-1, 2))
    return ([n.get_text() for n in notes], np.array([extent(n) for n in notes]).reshape(-1, 4), named,
            np.hstack([centres - radius, centres + radius]), np.array([extent(w) for w in words]).reshape(-1, 4),
            np.array(ax.get_window_extent(renderer).extents))


def overlaps(a, b) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0 and min(a[3], b[3]) - max(a[1], b[1]) > 0


def collisions(fig, *, nearest: bool = True) -> list[str]:
    """Every name that covers another name, a marker or the plot's words, leaves the axes, or (`nearest`)
    sits nearer another point than its own with no leader line to say whose it is."""
    names, notes, named, markers, words, frame = boxes(fig)
    leaders = [t.arrow_patch is not None for t in fig.axes[0].texts if isinstance(t, Annotation)]
    centres = (markers[:, :2] + markers[:, 2:]) / 2
    found = []
    for i, (name, box) in enumerate(zip(names, notes)):
        found += [f"{name} covers {names[j]}" for j in range(i + 1, len(names)) if overlaps(box, notes[j])]
        found += [f"{name} covers a marker at {m[:2].round()}" for m in markers if overlaps(box, m)]
        found += [f"{name} covers the plot's words" for w in words if overlaps(box, w)]
        if box[0] < frame[0] or box[1] < frame[1] or box[2] > frame[2] or box[3] > frame[3]:
            found.append(f"{name} leaves the axes")
        gaps = np.hypot(np.clip(np.maximum(box[0] - centres[:, 0], centres[:, 0] - box[2]), 0, None),
                        np.clip(np.maximum(box[1] - centres[:, 1], centres[:, 1] - box[3]), 0, None))
        own = int(np.argmin(np.hypot(*(centres - named[i]).T)))
        if nearest and not leaders[i] and gaps.min() < gaps[own]:
            found.append(f"{name} sits nearer another point than its own")
    return found


def test_the_notebooks_have_confidence_plots():
    assert {stem[:2] for stem, _ in PLOTS} >= {"01", "02", "03"}, [stem for stem, _ in PLOTS]


@pytest.mark.parametrize("stem,match", PLOTS, ids=[f"{stem}-{n}" for n, (stem, _) in enumerate(PLOTS)])
def test_no_name_collides_on_the_notebooks_own_data(stem, match):
    order = VERDICTS if "verdict" in match["title"] else LABELS
    rows = [{"id": name, "label": label, "confidence": confidence} for label, name, confidence in points_of(match)]
    threshold = float(match["threshold"]) if match["threshold"] else None
    fig = plots.confidence_by_label(rows, threshold, label_key="label", order=order,
                                    title=match["title"])
    assert collisions(fig) == []
    assert sorted(boxes(fig)[0]) == sorted(name for _, name, _ in points_of(match))        # every point named


@pytest.mark.parametrize("stem,match", PLOTS, ids=[f"{stem}-{n}" for n, (stem, _) in enumerate(PLOTS)])
def test_the_title_lists_no_id_that_is_plotted(stem, match):
    if match["unplotted"]:
        listed = re.sub(r"(^| and )\d+ citations? of plotted ids$", "", match["unplotted"])
        assert not {name for name in listed.split(", ") if name} & {name for _, name, _ in points_of(match)}


def test_unplotted_rows_of_a_plotted_id_are_counted_not_named():
    rows = [{"id": "c1", "label": "supported", "confidence": 0.6}, {"id": "c1", "label": "unreachable"},
            {"id": "c4", "label": "unreachable"}, {"id": "c4", "label": "unreachable"},
            {"id": "m4", "label": "not_found"}, {"id": "m4", "label": "contradicted", "confidence": 0.76}]
    fig = plots.confidence_by_label(rows, None, label_key="label", order=LABELS)
    assert fig.axes[0].get_title().endswith("no model asked (4): c4 and 2 citations of plotted ids")
    assert plots.alt_text(fig).endswith("No model asked (4): c4 and 2 citations of plotted ids.")
    only_plotted = plots.confidence_by_label(rows[:2], 0.8, label_key="label", order=LABELS)
    assert only_plotted.axes[0].get_title().endswith("no model asked (1): 1 citation of plotted ids")


@pytest.mark.parametrize("seed", range(6))
def test_crowded_points_near_the_plots_words_do_not_collide(seed):
    """Up to 8 points a label bunched within 0.03 of one confidence, some at 1.0 under 'AUTO_ACCEPT = 1' and
    near 0 over 'review by a person', names of up to 5 characters."""
    rng = random.Random(seed)
    rows = []
    for label in LABELS:
        centre = rng.choice([0.02, 0.5, 0.8, 1.0])
        rows += [{"id": "".join(rng.choice("abcxyz0123") for _ in range(rng.randint(1, 5))), "label": label,
                  "confidence": min(1.0, max(0.0, centre + rng.uniform(-0.015, 0.015)))}
                 for _ in range(rng.randint(1, 8))]
    fig = plots.confidence_by_label(rows, 1.0, label_key="label", order=LABELS)
    assert collisions(fig, nearest=False) == []


# ---------------------------------------------------------------- the gate as the plots draw it

def lines_of(ax) -> list:
    """The straight lines drawn across an axes (axhline / axvline), not the data."""
    return [line for line in ax.get_lines()
            if len(set(line.get_xdata())) == 1 or len(set(line.get_ydata())) == 1]


def test_no_threshold_in_force_draws_no_line_and_says_so():
    """None in force is not a threshold of 1: no line, the words 'no threshold in force' (plot, alt text)."""
    rows = [{"id": "C1", "label": "supported", "confidence": 0.6}]
    fig = plots.confidence_by_label(rows, None, label_key="label", order=LABELS)
    words = [t.get_text() for t in fig.axes[0].texts]
    assert not lines_of(fig.axes[0]) and not any("AUTO_ACCEPT = 1" in w for w in words)
    assert any(w.startswith(plots.NONE_IN_FORCE) for w in words)
    assert plots.NONE_IN_FORCE in plots.alt_text(fig)
    set_one = plots.confidence_by_label(rows, 0.8, label_key="label", order=LABELS)
    assert len(lines_of(set_one.axes[0])) == 1 and "AUTO_ACCEPT line at 0.8" in plots.alt_text(set_one)


def test_the_sweep_names_every_line_it_draws_and_draws_none_for_no_threshold():
    points = [{"threshold": t / 10, "accepted": 10 - t, "accepted_accuracy": 0.7,
               "accepted_share": 1 - t / 10} for t in range(11)]
    none = plots.threshold_sweep({"judge": points}, None, target=0.9)
    left, right = none.axes
    assert not [line for line in lines_of(left) + lines_of(right) if line.get_linestyle() == "--"]
    assert plots.NONE_IN_FORCE in plots.alt_text(none) and "AUTO_ACCEPT = 1" not in plots.alt_text(none)
    legend = [t.get_text() for t in left.get_legend().get_texts()]
    assert legend == ["judge", "target 0.9"]
    set_half = plots.threshold_sweep({"judge": points}, 0.5, target=0.9)
    legend = [t.get_text() for t in set_half.axes[0].get_legend().get_texts()]
    assert legend == ["judge", "in force: 0.5", "target 0.9"]
    unnamed = [line for line in set_half.axes[0].get_lines() if line.get_label().startswith("_")]
    assert unnamed == [], "every line of the left panel is named in its legend"


def test_the_review_share_curve_says_no_threshold_in_force():
    points = [{"threshold": t / 10, "share": t / 10, "to_review": t} for t in range(11)]
    fig = plots.review_share_curve(points, None)
    assert not [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
    assert plots.alt_text(fig).endswith("No threshold in force.")
