"""What a reader sees in the committed notebooks: every figure has alt text, no printed table says NaN, the
set-up cell says which model answered and when, every notebook ends with a summary in words, and printed text is
one output per stream."""
import re

import nbformat
import pytest

from citecheck import notebook
from citecheck.report import plots

PATHS = notebook.notebook_paths()
IMG = re.compile(r'<img src="data:image/png;base64,[^"]+" alt="([^"]*)">')


def code_outputs(path):
    for n, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "code":
            for out in cell.get("outputs", []):
                yield n, out


def joined(value) -> str:
    return "".join(value) if isinstance(value, list) else value or ""


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_every_figure_is_an_image_with_alt_text_and_no_bare_png(path):
    for n, out in code_outputs(path):
        data = out.get("data", {})
        assert "image/png" not in data, f"cell {n}: a figure without alt text"
        for alt in IMG.findall(joined(data.get("text/html"))):
            assert len(alt) > 40 and any(c.isdigit() for c in alt), f"cell {n}: alt text says too little: {alt!r}"
            assert joined(data.get("text/plain")).strip() == alt.replace("&quot;", '"').replace("&#x27;", "'") \
                .replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_no_printed_table_says_nan(path):
    for n, out in code_outputs(path):
        text = joined(out.get("text")) + joined(out.get("data", {}).get("text/plain"))
        html = joined(out.get("data", {}).get("text/html"))
        assert not re.search(r"\bNaN\b", text + html), f"cell {n} prints NaN"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_a_notebook_ends_in_words(path):
    cells = nbformat.read(path, as_version=4).cells
    last_words = next(c for c in reversed(cells) if c.cell_type == "markdown" or c.source.strip())
    assert last_words.cell_type == "markdown" or "headline" in last_words.source, path.name


@pytest.mark.parametrize("path", [p for p in PATHS if not p.name.startswith("04_")], ids=lambda p: p.name)
def test_the_set_up_cell_says_who_answered_and_when(path):
    first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    printed = "".join(joined(o.get("text")) for o in first.get("outputs", []))
    assert re.search(r"answers by \S+, recorded 20\d\d-\d\d-\d\d", printed), printed


def test_tidy_rounds_and_shows_a_missing_value_as_a_dash():
    shown = notebook.tidy([{"a": 0.123456, "b": None}, {"a": None, "b": "x"}])
    assert shown.to_dict("records") == [{"a": 0.123, "b": "—"}, {"a": "—", "b": "x"}]


def test_alt_text_names_what_each_plot_shows_with_its_numbers():
    counts = plots.label_counts(["verified", "fabricated", "verified"], title="Verdicts")
    assert plots.alt_text(counts) == ("Verdicts: bar chart of how many got each label: verified 2, contradicted 0, "
                                      "unsupported 0, fabricated 1.")
    rows = [{"id": "C1", "verdict": "verified", "confidence": 0.9},
            {"id": "c5", "verdict": "verified", "confidence": None},
            {"id": "c5", "verdict": "verified", "confidence": None}]
    scatter = plots.confidence_by_label(rows, 0.8)
    assert "verified: C1 0.900" in plots.alt_text(scatter) and "No model asked (2): c5." in plots.alt_text(scatter)
    assert scatter.axes[0].get_title().endswith("no model asked (2): c5")      # a name listed once


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_no_printed_text_is_split_across_outputs(path):
    previous = None
    for n, out in code_outputs(path):
        if out["output_type"] == "stream" and previous and previous[0] == n and previous[1] == out["name"]:
            pytest.fail(f"{path.name} cell {n}: one {out['name']} split in two outputs")
        previous = (n, out["name"]) if out["output_type"] == "stream" else None


def test_consecutive_chunks_of_one_stream_are_saved_as_one_output():
    import nbformat

    from citecheck.notebook import join_streams
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(11, 'passages')")])
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="11"),
                           nbformat.v4.new_output("stream", name="stdout", text=" passages\n"),
                           nbformat.v4.new_output("stream", name="stderr", text="warning\n"),
                           nbformat.v4.new_output("stream", name="stdout", text="more\n")]
    outs = join_streams(nb).cells[0].outputs
    assert [(o.name, o.text) for o in outs] == [("stdout", "11 passages\n"), ("stderr", "warning\n"),
                                               ("stdout", "more\n")]
