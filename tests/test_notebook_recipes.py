"""The notebooks read as recipes: each opens with what the reader will be able to do and how long it takes, explains
each code cell before and after it, numbers its sections without a gap, stays under ~1,200 words of prose, names
verdicts and labels as the package spells them, and closes by mapping back to its objectives. The prose lives in
scripts/notebook_prose.json; the committed notebooks must hold it."""
from __future__ import annotations

import importlib.util
import re

import nbformat
import pytest

from citecheck import notebook, vocabulary

PATHS = notebook.notebook_paths()
MAX_WORDS = 1250
OBJECTIVES = re.compile(r"\*\*You will be able to:\*\*\n((?:- .*\n?(?:  .*\n?)*)+)")
CLOSING = re.compile(r"^## What you can now do\n\n((?:- .*\n?(?:  .*\n?)*)+)", re.M)
BULLET_LEAD = re.compile(r"^- \*\*(.+?)\*\*", re.M)
NUMBERED = re.compile(r"^## (\d+) · ", re.M)
SPAN = re.compile(r"`([^`\n]+)`|\*\*([^*\n]+?)\*\*|(?<![*\w])\*([^*\n]+?)\*(?![*\w])")
WORDS = re.compile(r"\w+")


def load_script():
    path = notebook.ROOT / "scripts" / "apply_notebook_prose.py"
    spec = importlib.util.spec_from_file_location("apply_notebook_prose", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown(path) -> list[str]:
    return [c.source for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "markdown"]


def words(path) -> int:
    return len(WORDS.findall("\n".join(markdown(path))))


def leads(block: str) -> list[str]:
    return BULLET_LEAD.findall(block)


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_the_first_markdown_cell_states_objectives_and_how_long_it_takes(path):
    first = markdown(path)[0]
    found = OBJECTIVES.search(first)
    assert found, f"{path.name}: no '**You will be able to:**' list in the opening cell"
    assert len(leads(found.group(1))) >= 2, f"{path.name}: objectives need a bold lead each, at least two"
    assert re.search(r"\*\*Time:\*\* about \d+ minutes to read; .*replays in .*minute", first), \
        f"{path.name}: the opening cell says how long it takes to read and to replay"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_the_last_markdown_cell_maps_back_to_the_objectives_and_points_on(path):
    cells = markdown(path)
    closing = CLOSING.search(cells[-1])
    assert closing, f"{path.name}: the last markdown cell has no '## What you can now do' list"
    assert leads(closing.group(1)) == leads(OBJECTIVES.search(cells[0]).group(1)), \
        f"{path.name}: the closing list must restate each objective's bold lead, in order"
    number = int(path.name[:2])
    following = [p for p in PATHS if int(p.name[:2]) == number + 1]
    expected = f"notebook {following[0].name[:2]}" if following else "last notebook"
    assert f"**Next:**" in cells[-1] and expected in cells[-1], f"{path.name}: the closing points to {expected}"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_markdown_prose_stays_under_the_word_limit(path):
    assert words(path) <= MAX_WORDS, f"{path.name}: {words(path)} words of markdown (at most {MAX_WORDS})"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_section_numbers_run_without_gaps(path):
    numbers = [int(n) for source in markdown(path) for n in NUMBERED.findall(source)]
    assert numbers == list(range(1, len(numbers) + 1)), f"{path.name}: section numbers {numbers}"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_every_code_cell_has_words_before_and_after_it(path):
    cells = nbformat.read(str(path), as_version=4).cells
    for n, cell in enumerate(cells):
        if cell.cell_type == "code":
            assert n > 0 and cells[n - 1].cell_type == "markdown", f"{path.name}: code cell {cell.id} has no words before it"
            assert n + 1 < len(cells) and cells[n + 1].cell_type == "markdown", \
                f"{path.name}: code cell {cell.id} has no words after it"


def spelled(word: str) -> str:
    return re.sub(r"[\s_-]+", "_", word.strip().lower())


VOCABULARY = {spelled(w): w for w in (*vocabulary.STATUSES, *vocabulary.RELATIONS, *vocabulary.VERDICTS,
                                      *vocabulary.LABELS, vocabulary.JUDGE_UNAVAILABLE)}


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_verdicts_and_labels_are_spelled_as_the_package_names_them(path):
    """A status, relation, verdict or label named in the prose is a code span with the package's spelling
    (`not_found`, not *not found*; `contradicted`, not *contradicted*)."""
    wrong = []
    for source in markdown(path):
        for code, strong, italic in SPAN.findall(source):
            word, emphasis = code or strong or italic, strong or italic
            if spelled(word) in VOCABULARY and (emphasis or word != VOCABULARY[spelled(word)]):
                wrong.append(f"*{word}*" if emphasis else f"`{word}`")
    assert wrong == [], f"{path.name}: write {', '.join(sorted(set(wrong)))} as the package spells them, in backticks"


def test_the_committed_notebooks_hold_the_prose_of_notebook_prose_json():
    changed, problems = load_script().run(check=True)
    assert (changed, problems) == ([], []), "run: python scripts/apply_notebook_prose.py"


# ---------------------------------------------------------------- the script that applies the prose

@pytest.fixture
def small(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# old title"),
                                         nbformat.v4.new_code_cell("print(1)"),
                                         nbformat.v4.new_markdown_cell("old words")])
    for cell, cell_id in zip(nb.cells, ("title", "code", "words")):
        cell["id"] = cell_id
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    (tmp_path / "nb").mkdir()
    nbformat.write(nb, str(tmp_path / "nb" / "x.ipynb"))
    return tmp_path


def write_spec(folder, spec: dict):
    import json
    (folder / "prose.json").write_text(json.dumps({"x.ipynb": spec}), encoding="utf-8")
    return folder / "prose.json"


def test_the_script_sets_inserts_and_deletes_markdown_and_a_second_run_changes_nothing(small):
    apply = load_script()
    prose = write_spec(small, {"set": {"title": "# new title"},
                               "insert_after": {"code": [{"id": "after-code", "source": "what it printed"}]},
                               "delete": ["words"]})
    before = nbformat.read(str(small / "nb" / "x.ipynb"), as_version=4).cells[1]
    assert apply.run(prose, small / "nb") == (["x.ipynb"], [])
    cells = nbformat.read(str(small / "nb" / "x.ipynb"), as_version=4).cells
    assert [(c.id, c.cell_type, c.source) for c in cells] == [
        ("title", "markdown", "# new title"), ("code", "code", "print(1)"), ("after-code", "markdown", "what it printed")]
    assert cells[1] == before
    text = (small / "nb" / "x.ipynb").read_bytes()
    assert apply.run(prose, small / "nb") == ([], [])
    assert (small / "nb" / "x.ipynb").read_bytes() == text
    assert apply.run(prose, small / "nb", check=True) == ([], [])


def test_the_script_never_touches_a_code_cell_and_names_each_id_it_cannot_apply(small):
    apply = load_script()
    prose = write_spec(small, {"set": {"code": "not code any more", "nowhere": "lost", "title": "# kept going"},
                               "insert_after": {"gone": [{"id": "new", "source": "x"}]},
                               "delete": ["code"]})
    changed, problems = apply.run(prose, small / "nb")
    assert changed == ["x.ipynb"]
    assert problems == ["x.ipynb: cell code is a code cell, not markdown (set skipped)",
                        "x.ipynb: cell nowhere not found (set skipped)",
                        "x.ipynb: cell gone not found (insert_after skipped)",
                        "x.ipynb: cell code is a code cell, not markdown (delete skipped)"]
    cells = nbformat.read(str(small / "nb" / "x.ipynb"), as_version=4).cells
    assert [(c.id, c.source) for c in cells] == [("title", "# kept going"), ("code", "print(1)"), ("words", "old words")]
    assert cells[1].outputs[0]["text"] == "1\n"


def test_check_mode_writes_nothing_and_reports_what_would_change(small, capsys):
    apply = load_script()
    prose = write_spec(small, {"set": {"words": "new words"}})
    text = (small / "nb" / "x.ipynb").read_bytes()
    assert apply.main(["--check", "--prose", str(prose), "--notebooks", str(small / "nb")]) == 1
    assert capsys.readouterr().out == "would change: x.ipynb\n"
    assert (small / "nb" / "x.ipynb").read_bytes() == text


def slug(heading: str) -> str:
    """A Markdown heading's anchor, as GitHub and JupyterLab make it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_every_link_to_a_page_of_the_repository_leads_to_it_and_its_section(path):
    for source in markdown(path):
        for target, anchor in re.findall(r"\]\(([^)#:]+)(?:#([^)]*))?\)", source):
            page = path.parent / target
            assert page.exists(), f"{path.name} links to {target}, which does not exist"
            if anchor:
                headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
                assert anchor in {slug(h) for h in headings}, f"{path.name} links to {target}#{anchor}: no such section"
