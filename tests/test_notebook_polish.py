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


# ---------------------------------------------------------------- the polish list, one test per item

MAX_CODE_LINE = 110
WHOLE_QUOTES = {("02_live_web.ipynb", "a1bfd853"), ("01_source_document.ipynb", "6838ddca"),
                ("02_live_web.ipynb", "ae368bc4"), ("05_judge_methods.ipynb", "d2b95353")}
"""Cells that print the sentences a judge was asked, or the quote it gave: the reader needs them whole."""
WHOLE_TABLES = {("01_source_document.ipynb", "fbb25cfd"), ("03_batch_precision.ipynb", "c98dbb50"),
                ("06_llm_answers.ipynb", "438eae26")}
"""Tables of claims and quotes: no column is cut to a width."""
BLOCK = 8
"""Lines in a row that, printed by two cells of one notebook, are the same output shown twice."""


def cell(path, cell_id):
    return next(c for c in nbformat.read(path, as_version=4).cells if c.get("id") == cell_id)


def text_of(code_cell) -> str:
    """What a code cell prints and shows as text (streams, text/plain)."""
    return "\n".join(joined(out.get("text")) + joined(out.get("data", {}).get("text/plain"))
                     for out in code_cell.get("outputs", []))


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_no_code_line_is_longer_than_110_characters(path):
    long = [(c.id, len(line)) for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
            for line in c.source.splitlines() if len(line) > MAX_CODE_LINE]
    assert not long, f"{path.name}: code lines over {MAX_CODE_LINE} characters (cell id, length): {long}"


@pytest.mark.parametrize("name, cell_id", sorted(WHOLE_QUOTES))
def test_quotes_the_reader_needs_are_printed_whole(name, cell_id):
    printed = text_of(cell(notebook.NOTEBOOKS / name, cell_id))
    assert printed.strip() and "…" not in printed, f"{name} {cell_id} cuts a quote: {printed}"
    quoted = [re.split(r" \| |asked: |judge's quote : ", line, maxsplit=1)[1].strip()
              for line in printed.splitlines() if re.search(r"^yes .* \| |asked: |^judge's quote : ", line)]
    cut = [q for q in quoted if " " in q and not q.startswith("#") and q[-1] not in '.!?)"']
    assert quoted and not cut, f"{name} {cell_id} prints a sentence cut short: {cut}"


@pytest.mark.parametrize("name, cell_id", sorted(WHOLE_TABLES))
def test_tables_of_claims_and_quotes_cut_no_column(name, cell_id):
    shown = cell(notebook.NOTEBOOKS / name, cell_id)
    html = "".join(joined(out.get("data", {}).get("text/html")) for out in shown.get("outputs", []))
    assert "<td>" in html and not re.search(r"\w\.\.\.</td>", html), f"{name} {cell_id} cuts a cell"


def test_the_set_up_cell_cuts_no_column():
    import pandas as pd
    before = pd.get_option("display.max_colwidth")
    try:
        pd.set_option("display.max_colwidth", 50)
        notebook.setup()
        assert pd.get_option("display.max_colwidth") is None
    finally:
        pd.set_option("display.max_colwidth", before)


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_no_output_block_is_shown_twice_in_a_notebook(path):
    seen = {}
    for c in nbformat.read(path, as_version=4).cells:
        lines = [line.rstrip() for line in text_of(c).splitlines() if line.strip()]
        for i in range(len(lines) - BLOCK + 1):
            block = "\n".join(lines[i:i + BLOCK])
            first = seen.setdefault(block, c.id)
            assert first == c.id, f"{path.name}: cells {first} and {c.id} both show:\n{block}"


def test_notebook_02_prints_its_json_once_and_ends_on_one_line():
    nb02 = notebook.NOTEBOOKS / "02_live_web.ipynb"
    cli_lines = text_of(cell(nb02, "66f6ad2c")).strip().splitlines()
    assert cli_lines[0].startswith("citecheck verify: ") and "True" in cli_lines[-1]
    assert all(line.startswith("    ") for line in cli_lines[1:-1]), "one stderr line, wrapped at words"
    assert text_of(cell(nb02, "bb4da7eb")).strip() == "settled by the page, as the fixture expects: 8/8; judged: 6"


def test_notebook_05_tables_fit_the_display_width():
    """A table wider than pandas' display width is printed in pieces (a trailing backslash), and scrolls
    off the page in HTML: notebook 05 keeps every table narrow enough to be seen whole."""
    for c in nbformat.read(notebook.NOTEBOOKS / "05_judge_methods.ipynb", as_version=4).cells:
        for out in c.get("outputs", []):
            is_table = "<table" in joined(out.get("data", {}).get("text/html"))
            table = joined(out.get("data", {}).get("text/plain")) if is_table else ""
            wrapped = [line for line in table.splitlines() if line.rstrip().endswith("\\") or len(line) > 140]
            assert not wrapped, f"cell {c.id}: a table wider than the page:\n" + "\n".join(wrapped)


def test_long_printed_lines_wrap_at_word_boundaries():
    """A narrow reader never sees a word cut in two: the CLI's long lines are wrapped at spaces, indented."""
    line = ("citecheck check: 7 verdict(s) to a person, uncalibrated: no AUTO_ACCEPT for some-model in "
            "data/gate.json: run `calibrate --model some-model --write` or set AUTO_ACCEPT")
    out = notebook.wrapped(line + "\nshort\n", width=60)
    lines = out.splitlines()
    assert all(len(x) <= 60 for x in lines) and lines[-1] == "short" and out.endswith("\n")
    assert " ".join(x.strip() for x in lines[:-1]) == line and "--model" in out
    assert notebook.wrapped("no newline at the end") == "no newline at the end"


WRAPPED = [p for p in PATHS if p.name[:2] <= "06"]
"""Notebook 07's CLI output wraps the same way once it is re-executed (it shows `cli` output too)."""


@pytest.mark.parametrize("path", WRAPPED, ids=[p.name for p in WRAPPED])
def test_the_clis_gate_notes_are_wrapped_at_words(path):
    """The CLI's long stderr lines (the gate's notes: `calibrate --model ...`) are never cut mid-word."""
    for n, out in code_outputs(path):
        for line in joined(out.get("text")).splitlines():
            if line.startswith("citecheck ") and "AUTO_ACCEPT" in line:
                assert len(line) <= notebook.WIDTH, f"{path.name} cell {n}: {line[:80]}..."
