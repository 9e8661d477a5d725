"""`check` degrades, never goes silent: no judge still prints every row; the format follows the file."""
import json
import os
import subprocess
import sys

import pytest
from standins.jev import jev_standin

from citecheck import check
from citecheck.judge import judges
from citecheck.source import sources
from citecheck.vocabulary import JUDGE_UNAVAILABLE, VERDICTS

DOC_MD = """# Boiling

Water boils at 100 °C at sea level. At higher altitude it boils at a lower temperature.

## Freezing

Water freezes at 0 °C under standard pressure.
"""
CITATIONS = [
    {"id": "A1", "claim": "Water boils at 100 °C at sea level.", "quote": "Water boils at 100 °C at sea level.",
     "section": "Boiling", "expected": "verified"},
    {"id": "A2", "claim": "At altitude water boils hotter.",
     "quote": "At higher altitude it boils at a higher temperature.", "section": "Boiling",
     "expected": "contradicted"},
    {"id": "A3", "claim": "Water boils at 50 °C.", "quote": "Water boils at 50 degrees on Mars, always.",
     "section": "Boiling", "expected": "fabricated"},
    {"id": "A4", "claim": "Water freezes at 0 °C.", "quote": None, "section": "Freezing"},
]
NO_JUDGE = {  # every way a newcomer meets "no judge"
    "no key": {},
    "offline miss": {"CITECHECK_OFFLINE": "1"},
    "unreachable": {"TYPESAFE_ENDPOINT": "http://127.0.0.1:9", "JUDGE_TIMEOUT": "5"},
}


@pytest.fixture
def own(tmp_path):
    """A user's own Markdown document and a mixed citations file (found, misquoted, missing, claim-only)."""
    (tmp_path / "notes.md").write_text(DOC_MD, encoding="utf-8")
    (tmp_path / "citations.json").write_text(json.dumps(CITATIONS), encoding="utf-8")
    return tmp_path


def run_cli(*args, env=None):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "citecheck", *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


def table_rows(stdout: str) -> dict[str, list[str]]:
    lines = stdout.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("id ")))
    return {line.split()[0]: line.split() for line in lines[header + 1:] if line.split()[0].startswith("A")
            and " misquoted in " not in line}


@pytest.mark.parametrize("how", list(NO_JUDGE))
def test_no_judge_prints_every_row_with_the_deterministic_verdicts(own, how):
    done = run_cli("check", "--source", str(own / "notes.md"), "--citations", str(own / "citations.json"),
                   env=NO_JUDGE[how])
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    rows = table_rows(done.stdout)
    assert list(rows) == ["A1", "A2", "A3", "A4"]
    assert rows["A3"][1:] == ["missing", "-", "-", "fabricated", "auto", "-"]      # method: no model asked
    assert rows["A2"][1:] == ["misquoted", "-", "-", JUDGE_UNAVAILABLE, "review", "-"]
    assert rows["A1"][-3:] == rows["A4"][-3:] == [JUDGE_UNAVAILABLE, "review", "-"]
    assert "A2 misquoted in Boiling (score 93.2): At higher altitude it boils at a [-higher-] {+lower+} " \
           "temperature." in done.stdout.splitlines()
    hint = done.stderr.strip().splitlines()
    assert len(hint) == 1 and hint[0].startswith("citecheck check: judge unavailable for 3 of 4 citations "
                                                 "(A1, A2, A4), labelled judge_unavailable: ")


def test_no_judge_json_holds_every_row(own):
    done = run_cli("check", "--source", str(own / "notes.md"), "--citations", str(own / "citations.json"),
                   "--json")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    rows = json.loads(done.stdout)
    assert [(r["id"], r["verdict"]) for r in rows] == [("A1", JUDGE_UNAVAILABLE), ("A2", JUDGE_UNAVAILABLE),
                                                       ("A3", "fabricated"), ("A4", JUDGE_UNAVAILABLE)]
    assert rows[1]["diff"] == "At higher altitude it boils at a [-higher-] {+lower+} temperature."
    assert all(r["confidence"] is None and r["auto"] is (r["verdict"] == "fabricated") for r in rows)
    assert [r["method"] for r in rows] == [None] * 4                                  # no model answered


def test_judge_unavailable_is_no_verdict():
    assert JUDGE_UNAVAILABLE not in VERDICTS and check.UNJUDGED["auto"] is False


@pytest.fixture
def doc(own):
    return sources.load(own / "notes.md", "markdown")


def test_one_failure_never_aborts_the_others(ctx, doc):
    def judge(claim, source):
        if claim.startswith("At altitude"):
            raise judges.JudgeUnavailable("judge timed out")
        return {"relation": "supports", "confidence": 0.9}
    unavailable = []
    rows = check.check_citations(doc, CITATIONS, ctx, judge=judge, threshold=0.8, unavailable=unavailable)
    assert [r["verdict"] for r in rows] == ["verified", JUDGE_UNAVAILABLE, "fabricated", "verified"]
    assert unavailable == [("A2", "judge timed out")]


def test_after_the_live_judge_fails_the_rest_only_replay_the_cache(make_ctx, doc):
    """One outage costs one call's timeouts, not one per citation; cached answers still replay."""
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as good:
        ctx = make_ctx(typesafe_endpoint=good.url)
        check.check_citations(doc, CITATIONS[3:], ctx)      # A4 is now in the cache
    with jev_standin(status=503) as down:
        ctx = make_ctx(typesafe_endpoint=down.url)
        unavailable = []
        rows = check.check_citations(doc, CITATIONS, ctx, unavailable=unavailable)
        asked = {r.json()["state"]["claim"] for r in down.requests}
    assert asked == {CITATIONS[0]["claim"]}
    assert [r["verdict"] for r in rows] == [JUDGE_UNAVAILABLE, JUDGE_UNAVAILABLE, "fabricated", "verified"]
    assert [cid for cid, _ in unavailable] == ["A1", "A2"]


def test_all_citations_invalid_is_one_line_each_and_no_traceback(own):
    bad = own / "bad.json"
    bad.write_text(json.dumps([{"id": "X1", "claim": "x"}, {"id": "X2", "claim": "y", "quote": None,
                                                            "section": "Nope"}]))
    for extra in ([], ["--json"]):
        done = run_cli("check", "--source", str(own / "notes.md"), "--citations", str(bad), *extra)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.splitlines() == [
            "citecheck check: citation X1: missing field 'quote'",
            "citecheck check: citation X2: field 'section' names unknown section 'Nope' in notes.md",
            f"citecheck check: no usable citations in {bad}"]
    assert json.loads(done.stdout) == []


def test_format_table_of_no_rows_is_the_header():
    assert check.format_table([]) == "  ".join(check.COLUMNS)


def test_expected_column_and_agreement_line(own):
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as server:
        done = run_cli("check", "--source", str(own / "notes.md"), "--citations", str(own / "citations.json"),
                       "--expected", env={"TYPESAFE_ENDPOINT": server.url, "AUTO_ACCEPT": "0.8"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].split() == [*check.COLUMNS, "expected"]
    assert check.COLUMNS == ("id", "status", "relation", "confidence", "verdict", "auto", "method")
    assert table_rows(done.stdout)["A2"][-3:] == ["review", "choice", "contradicted"]
    assert table_rows(done.stdout)["A4"][-3:] == ["auto", "choice", "-"]
    assert table_rows(done.stdout)["A3"][-3:] == ["auto", "-", "fabricated"]        # no model asked
    assert lines[-1] == "verdict == expected: 2/3 (of the 3 citations that name one)"


# ---------------------------------------------------------------- the source format follows the file

@pytest.mark.parametrize("name, text, fmt", [
    ("notes.md", DOC_MD, "markdown"),
    ("notes.MARKDOWN", DOC_MD, "markdown"),
    ("rfc.txt", open("data/rfc7519.txt", encoding="utf-8").read(), "rfc"),
    ("plain.txt", "One paragraph.\n\nAnother one.\n", "text"),
    ("notes", "Request for Comments: 9999\n", "rfc"),
])
def test_detect_format(tmp_path, name, text, fmt):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert sources.detect_format(path) == fmt


def test_pdf_extension_is_left_to_the_pdf_format():
    """`.pdf` maps to 'pdf' only where FORMATS has it (citecheck.source.pdf_text's loader); never to a text split."""
    assert sources.EXTENSION_FORMATS[".pdf"] == "pdf"


def test_markdown_source_needs_no_format_flag_and_format_overrides(own):
    done = run_cli("check", "--source", str(own / "notes.md"), "--citations", str(own / "citations.json"))
    assert done.stdout.startswith(f"{len(DOC_MD.replace(chr(13), '')):,} characters, 2 sections, 4 citations")
    done = run_cli("check", "--source", str(own / "notes.md"), "--citations", str(own / "citations.json"),
                   "--format", "rfc")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == ("citecheck check: error: notes.md: no sections found with --format rfc; "
                                   "--format markdown finds 2 sections")


def test_no_sections_hint_names_the_format_that_works(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("Just a paragraph.\n\nAnd another.\n")
    with pytest.raises(ValueError, match=r"plain.txt: no sections found with --format rfc; "
                                         r"--format text finds 2 sections$"):
        sources.load(plain, "rfc")
    empty = tmp_path / "empty.md"
    empty.write_text("\n\n")
    with pytest.raises(ValueError, match="no sections found with --format markdown; the file has no text$"):
        sources.load(empty, "markdown")
