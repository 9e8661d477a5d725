"""Answers that cite local files: a Markdown source list names a file, and `extract`,
`check --answer` and `check-answer` find it beside the answer (or in --documents DIR), confined to that
folder, and check the answer's quotes and claims against it; one line per marker that points nowhere."""
import json
import os
import subprocess
import sys

import pytest
from standins.jev import jev_standin

from citecheck import answer, cli, extract
from citecheck.check import best_section, names_file
from citecheck.source import sources

COFFEE = """# Coffee notes

## Brewing

Water boils at 100 °C at sea level. Brew coffee with water just off the boil, at 90 to 96 °C.

## Storage

Keep roasted beans in an airtight jar, away from light, and grind them just before brewing.
"""
ANSWER = """Water boils at 100 °C at sea level [1]. "Water boils at 100 °C at sea level." [1]

Sources:
[1] coffee.md
"""
SUPPORTS = {"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}


@pytest.fixture
def folder(tmp_path):
    """The issue's example: an answer and the file it cites, side by side."""
    (tmp_path / "coffee.md").write_text(COFFEE, encoding="utf-8")
    (tmp_path / "answer.md").write_text(ANSWER, encoding="utf-8")
    return tmp_path


def run_cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "citecheck", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=120)


def judged_sources(server) -> list[str]:
    """The source text the stand-in judge was shown, call by call."""
    return [request.json()["state"]["source"] for request in server.posts]


# ------------------------------------------------------------ the example, end to end

def test_extract_turns_the_example_into_two_quoted_citations_of_the_file(folder):
    done = run_cli("extract", folder / "answer.md", "--out", folder / "out", "--documents", folder)
    assert done.returncode == 0 and done.stderr == ""
    assert f"file coffee.md ({len(COFFEE)} characters, 2 sections)" in done.stdout.splitlines()
    citations = json.loads((folder / "out" / "citations.json").read_text(encoding="utf-8"))
    assert citations == [
        {"id": "q1", "claim": "Water boils at 100 °C at sea level.", "quote": None, "section": None,
         "file": "coffee.md"},
        {"id": "q2", "claim": "Water boils at 100 °C at sea level.",
         "quote": "Water boils at 100 °C at sea level.",
         "section": None, "file": "coffee.md"}]
    assert (folder / "out" / "claims.jsonl").read_text() == ""


def test_check_answer_finds_the_file_the_answer_names_and_judges_quote_and_claim(folder):
    with jev_standin(SUPPORTS) as server:
        done = run_cli("check", "--answer", folder / "answer.md", "--source", folder / "coffee.md", "--json",
                       env={"TYPESAFE_ENDPOINT": server.url, "AUTO_ACCEPT": "0.8"})
        shown = judged_sources(server)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["id"], r["status"], r["verdict"]) for r in rows] == [("q1", "section-only", "verified"),
                                                                    ("q2", "found", "verified")]
    assert rows[1]["section"] == "Brewing"
    brewing = COFFEE.split("## Brewing\n\n")[1].split("\n\n## Storage")[0]
    assert shown == [brewing]      # the claim with no quote: the section BM25 ranks first; the quote's claim
    #                                is the same sentence: the same judge call (answered from the cache)


def test_check_answer_with_the_same_file_as_source_and_with_another(folder):
    tea = "# Tea\n\nGreen tea is brewed at 80 °C.\n"
    (folder / "tea.md").write_text(tea, encoding="utf-8")
    with jev_standin(SUPPORTS) as server:
        same = run_cli("check", "--answer", folder / "answer.md", "--source", folder / "coffee.md",
                       env={"TYPESAFE_ENDPOINT": server.url, "AUTO_ACCEPT": "0.8"})
    assert same.returncode == 0, same.stderr
    assert same.stdout.splitlines()[0] == f"{len(COFFEE)} characters, 2 sections, 2 citations"
    other = run_cli("check", "--answer", folder / "answer.md", "--source", folder / "tea.md")
    assert other.returncode == 1 and other.stdout.splitlines()[0] == f"{len(tea)} characters, 1 section, 2 citations"
    assert other.stderr.splitlines() == [
        "citecheck check: citation q1: cites the file coffee.md, not the source (tea.md): skipped",
        "citecheck check: citation q2: cites the file coffee.md, not the source (tea.md): skipped",
        f"citecheck check: no usable citations in {folder / 'answer.md'}"]


def test_with_no_judge_check_answer_prints_both_rows_unjudged(folder):
    done = run_cli("check", "--answer", "answer.md", "--source", "coffee.md", cwd=folder,
                   env={"PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 1
    assert [line.split()[:2] + line.split()[-3:] for line in done.stdout.splitlines()[2:]] == [
        ["q1", "section-only", "judge_unavailable", "review", "-"], ["q2", "found", "judge_unavailable", "review", "-"]]
    (hint,) = done.stderr.splitlines()
    assert hint.startswith("citecheck check: judge unavailable for 2 of 2 citations (q1, q2)")


def test_a_claim_with_no_quote_is_judged_against_the_section_bm25_ranks_first(folder):
    coffee = sources.load(folder / "coffee.md", "markdown")
    assert best_section("Keep the beans in an airtight jar.", coffee, "bm25") == "Storage"
    assert best_section("Water boils at 100 °C.", coffee, "bm25") == "Brewing"


def test_check_with_citations_still_needs_a_source(folder):
    done = run_cli("check", "--citations", folder / "citations.json")
    assert (done.returncode, done.stderr) == (2, "citecheck check: error: --source FILE is needed with --citations\n")


def test_check_with_the_extracted_citations_keeps_the_claim_with_no_quote(folder):
    run_cli("extract", folder / "answer.md", "--out", folder / "out")
    done = run_cli("check", "--citations", folder / "out" / "citations.json", "--source", folder / "coffee.md",
                   "--json")
    assert [(r["id"], r["status"]) for r in json.loads(done.stdout)] == [("q1", "section-only"), ("q2", "found")]


def test_check_answer_report_judges_each_marker_against_its_file(folder, monkeypatch, capsys):
    with jev_standin(SUPPORTS) as server:
        monkeypatch.setenv("TYPESAFE_ENDPOINT", server.url)
        monkeypatch.setenv("AUTO_ACCEPT", "0.8")
        code = cli.main(["check-answer", str(folder / "answer.md"), "--json", "--documents", str(folder)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    report = json.loads(out)
    assert [(m["id"], m["sentence"], m["source"], m["label"], m["status"], m["quote"]) for m in report["markers"]] == [
        ("m1", 1, "coffee.md §Brewing", "supported", "section-only", None),
        ("m2", 2, "coffee.md §Brewing", "supported", "found", "Water boils at 100 °C at sea level.")]
    assert report["summary"]["citation_precision"] == 1.0 and report["problems"] == []


def test_check_answer_report_with_no_judge_says_judge_unavailable(folder, ctx):
    result = answer.report(ANSWER, ctx, folder=folder)
    assert [(m.label, m.reason, m.status) for m in result.markers] == [
        ("not_found", "judge_unavailable", "section-only"), ("not_found", "judge_unavailable", "found")]
    unfound = answer.report(ANSWER, ctx)                    # no documents named: the file is not read
    assert [(m.label, m.reason) for m in unfound.markers] == [("unchecked", "document_not_named")] * 2


# ------------------------------------------------------------ files that cannot be read: one line each

BAD = """Water boils at 100 °C at sea level [1]. Salt raises it [2]. Beans keep [3]. Tea cools [4]. Milk [5].

Sources:
[1] coffee.md
[2] missing.md
[3] ../outside.md
[4] drafts.md
[5] link.md
"""


@pytest.fixture
def bad(tmp_path):
    here = tmp_path / "answer"
    here.mkdir()
    (here / "coffee.md").write_text(COFFEE, encoding="utf-8")
    (tmp_path / "outside.md").write_text("# Secret\n\nNot for the answer.\n", encoding="utf-8")
    (here / "drafts.md").mkdir()
    (here / "link.md").symlink_to(tmp_path / "outside.md")
    (here / "answer.md").write_text(BAD, encoding="utf-8")
    return here


def test_a_missing_file_one_outside_a_directory_and_a_link_out_are_one_line_each(bad):
    done = run_cli("extract", bad / "answer.md", "--out", bad / "out", "--documents", bad)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-4:] == [f"citecheck extract: {bad / 'answer.md'}: {line}" for line in (
        f"line 5:1: missing.md: no such file in --documents {bad}; its citations are not checked",
        "line 6:1: ../outside.md: outside the documents folder (absolute or '..'); not read; its citations are "
        "not checked",
        "line 7:1: drafts.md is a directory, not a file; its citations are not checked",
        "line 8:1: link.md: a link out of the documents folder; not read; its citations are not checked")]
    assert [c["file"] for c in json.loads((bad / "out" / "citations.json").read_text())] == [
        "coffee.md", "missing.md", "../outside.md", "drafts.md", "link.md"]       # the rest still extracted
    assert "Not for the answer" not in done.stdout + done.stderr


def test_check_answer_marks_unread_files_unchecked_and_checks_the_rest(bad, ctx):
    result = answer.report(BAD, ctx, folder=bad)
    assert [(m.id, m.label) for m in result.markers] == [("m1", "not_found")] + [
        (f"m{n}", "unchecked") for n in range(2, 6)]
    assert result.markers[1].reason == f"missing.md: no such file in --documents {bad}"
    assert len(result.reading) == 4 and result.bad_input()


def test_check_without_source_reads_no_file_and_says_what_to_do(bad):
    done = run_cli("check", "--answer", bad / "answer.md")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"citecheck check: error: {bad / 'answer.md'}: name the source with --source FILE (the answer cites 5 "
        "local files: coffee.md, missing.md, ../outside.md, drafts.md, link.md; `citecheck check-answer "
        f"{bad / 'answer.md'} --documents DIR` checks each marker against its own file)")
    (bad / "answer.md").write_text("Tea cools [1].\n\nSources:\n[1] missing.md\n", encoding="utf-8")
    done = run_cli("check", "--answer", bad / "answer.md")
    assert done.stderr.splitlines()[-1] == (                # one file, beside the answer: still not read
        f"citecheck check: error: {bad / 'answer.md'}: name the source with --source FILE (the answer cites "
        "the local file missing.md; only a file you name is read)")


def test_documents_dir_is_where_the_names_resolve(bad, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "missing.md").write_text("# Salt\n\nSalt raises the boiling point a little.\n", encoding="utf-8")
    done = run_cli("extract", bad / "answer.md", "--out", bad / "out", "--documents", docs)
    assert "missing.md" not in done.stderr
    assert "line 4:1: coffee.md: no such file in --documents " in done.stderr


# ------------------------------------------------------------ reading: names, quotes, one line per marker

def citations(text):
    return [(c["claim"], c["quote"], c["file"]) for c in extract.extract(text, "markdown").citations]


@pytest.mark.parametrize("entry, name", [
    ("[1] coffee.md", "coffee.md"), ("1. notes/coffee.md - Coffee notes", "notes/coffee.md"),
    ("[1] Coffee notes, coffee.md.", "coffee.md"), ("[1] [Coffee notes](<My Notes.md>)", "My Notes.md"),
    ("[1] [Coffee notes](notes/coffee.md)", "notes/coffee.md"),
    ("[1] <My Notes.md>", "My Notes.md"), ("[1] `coffee.txt`", "coffee.txt"),
])
def test_a_list_entry_names_a_file(entry, name):
    assert citations(f"Water boils [1].\n\nSources:\n{entry}\n") == [("Water boils.", None, name)]


def test_a_definition_names_a_file_only_when_the_name_comes_first():
    assert citations("Water boils [1].\n\n[1]: coffee.md\n") == [("Water boils.", None, "coffee.md")]
    for prose in ("[Warning]: do not edit config.yaml by hand.\n", "[Note]: `npm install` first.\n"):
        kept = extract.extract(prose, "markdown")
        assert kept.citations == [] and kept.problems == [] and kept.claims == []


def test_not_file_names():
    for entry in ("[1] v1.2", "[1] Smith, J. 2020", "[1] <mailto:a@b.example>", "[1] [x](#top)", "[1] <My notes>",
                  "[1] `npm install`"):
        result = extract.extract(f"Water boils [1].\n\nSources:\n{entry}\n", "markdown")
        assert result.citations == [] and [p.kind for p in result.problems] == ["dangling_marker"]


def test_the_quote_is_the_block_quote_or_the_quoted_passage_the_marker_follows():
    text = ("The notes say \u201cwater boils at 100 \u00b0C\u201d [1].\n\n"
            "> Water boils at 100 °C\n> at sea level. [1]\n\n"
            '"Water boils," the notes say [1].\n\n'
            'The notes call it "hot" [1].\n\n'
            "[1]: coffee.md\n")
    assert [quote for _, quote, _ in citations(text)] == [
        "water boils at 100 °C", "Water boils at 100 °C at sea level.",
        None,                        # the quoted passage does not stand right before the marker
        None]                        # "hot" has too little content to be a quote (matching.has_content)


def test_a_block_quote_is_quoted_piece_by_piece_and_a_passage_serves_at_most_four_markers():
    text = ("> Water boils at sea level. [1] Beans keep in a jar. [1][1]\n\n"
            '"Water boils at sea level" [1][1][1][1][1]\n\n[1]: coffee.md\n')
    assert [quote for _, quote, _ in citations(text)] == [
        "Water boils at sea level.", "Beans keep in a jar.", "Beans keep in a jar.",
        *["Water boils at sea level"] * 4, None]


def test_the_issues_pair_of_contradictory_lines_is_gone():
    text = "Water boils at 100 °C [1]. Coffee is hot [2].\n\nSources:\n[1] coffee.md\n[2] https://a.example/c\n"
    result = extract.extract(text, "markdown")
    assert result.problems == [] and result.files == {"coffee.md": "line 4:1"}
    assert [c["urls"] for c in result.claims] == [["https://a.example/c"]]


@pytest.mark.parametrize("text, line", [
    ("Water boils [1].\n",
     "line 1:13: marker [1] has no source (the answer has no numbered sources: end it with a list such as "
     "`[1] https://...` or `[1] notes.md`)"),
    ("Water boils [1] and [2].\n\nSources:\n[1] Smith 2020\n[2] https://a.example/b\n",
     "line 1:13: marker [1] cites source [1] (line 4:1), which gives neither a URL nor a file name: add its "
     "http(s) URL or the name of a file beside the answer"),
    ("Water boils [1].\n\nSources:\n[2] https://a.example/b\n[3] https://a.example/c\n[5] https://a.example/e\n",
     "line 1:13: marker [1] has no source (the numbered sources are [2], [3], [5])"),
    ("Water boils [1].\n\n[2]: https://a.example/b\n",
     "line 1:13: marker [1] has no source (the only numbered source is [2])"),
])
def test_a_marker_that_points_nowhere_is_one_line(text, line):
    problems = [str(p) for p in extract.extract(text, "markdown").problems if p.kind != "uncited_source"]
    assert problems == [line]


def test_an_entry_with_neither_url_nor_file_that_nothing_cites_is_one_line():
    result = extract.extract("Water boils [1].\n\nSources:\n[1] https://a.example/b\n[2] Smith 2020\n", "markdown")
    assert [str(p) for p in result.problems] == [
        "line 5:1: source [2] gives neither a URL nor a file name: add its http(s) URL or the name of a file "
        "beside the answer; nothing cites it"]


def test_names_file_matches_the_end_of_the_source_path(tmp_path):
    assert names_file(tmp_path / "notes" / "coffee.md", "coffee.md")
    assert names_file(tmp_path / "notes" / "coffee.md", "notes/coffee.md")
    assert names_file(tmp_path / "notes" / "coffee.md", "./notes/coffee.md")
    assert not names_file(tmp_path / "notes" / "coffee.md", "other/coffee.md")
    assert not names_file(tmp_path / "coffee.md", "../coffee.md")
