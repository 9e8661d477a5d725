"""Hostile text for the readers and printers: scaled-down bombs with the
shape of the full-size ones in benchmarks/hostile_linear.py, asserted on outcomes (a labelled line, a
refused entry, an escaped character, a process that finishes inside a CPU budget it would exceed if
any pattern were quadratic)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citecheck import cli, extract
from citecheck.batch.claims import parse_lines, read_claims
from citecheck.batch.inputs import is_claims_file
from citecheck.check import format_table
from citecheck.config import printable
from citecheck.extract import documents
from citecheck.source import sources, text
from citecheck.extract.markdown import MarkdownReader
from citecheck.web.fetch import storage

ROOT = Path(__file__).resolve().parent.parent

PATTERNS = ["[^", "[", "](", "`", "``a`", "*", "**a", "[[", "[a](", "[a](x (", "![", "![a](", "[x][",
            "<http://a ", "http://a(", "[a](http://x(", "[1]", "[1,", "\\[", "[^`[(*](`"]
"""Pathological repeats: each one was, or could be, a regex that rescans the rest of the line."""

BOMB_SCRIPT = """
import random, resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
from citecheck.extract.markdown import MarkdownReader
patterns = sys.argv[1:]
rng = random.Random(24)
texts = [p * (200_000 // len(p)) for p in patterns]
texts += ["".join(rng.choice(patterns) for _ in range(60_000))[:200_000] for _ in range(4)]
for text in texts:
    parsed = MarkdownReader().parse("x " + text)
    assert len(parsed.text) <= len(text) + 2
print(len(texts))
"""


def test_the_markdown_reader_reads_200_kb_of_every_pathological_repeat_within_a_cpu_budget():
    """At 200 KB a quadratic pattern needs minutes of CPU (`[^` took 24.6 s at 80 KB; backticks hours):
    the child is killed at 60 CPU-seconds. Linear, all of them take about a second together."""
    done = subprocess.run([sys.executable, "-c", BOMB_SCRIPT, *PATTERNS], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(len(PATTERNS) + 4)]


def test_code_spans_pair_runs_of_equal_length_and_an_unclosed_run_is_text():
    assert MarkdownReader().parse("Use ``a`b`` and `c`.").text == "Use a`b and c."
    assert extract.extract("A ``b` [1]", "markdown").problems[0].kind == "dangling_marker"   # not code
    assert extract.extract("A `[1]` b.", "markdown").problems == []                      # inside code


def line(**fields) -> bytes:
    return json.dumps(fields).encode()


def test_a_hostile_batch_line_is_one_labelled_problem_and_the_rest_runs(tmp_path):
    good = line(id="ok", claim="Water boils.", urls=["http://a.example/"])
    lines = [b'{"id": "deep", "claim": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
             b'{"id": ' + b"9" * 5000 + b', "claim": "c", "urls": ["http://a.example/"]}',
             line(id="big", claim="c" * 2001, urls=["http://a.example/"]),
             good]
    parsed = parse_lines(lines)
    assert [c.id for c in parsed.claims] == ["ok"]
    assert parsed.problems == ["line 1: JSON nested deeper than 64 levels",
                               "line 2: a number too long to read",
                               'line 3: "claim" is 2,001 characters, over CLAIM_MAX_CHARS (2,000)']
    (tmp_path / "c.jsonl").write_bytes(b"\n".join([line(id="x", claim="c" * 11, urls=["http://a/"]), good]))
    assert read_claims(tmp_path / "c.jsonl", max_chars=10).problems[0].endswith("over CLAIM_MAX_CHARS (10)")


def test_a_deep_first_line_is_not_sniffed_into_a_recursion(tmp_path):
    (tmp_path / "claims.txt").write_bytes(b"[" * 60_000 + b"\n")
    assert is_claims_file(tmp_path / "claims.txt") is False


def test_a_json_answer_nested_past_the_cap_is_one_line():
    with pytest.raises(extract.AnswerFormatError, match=r"nested deeper than 64 levels"):
        extract.extract('{"content": ' + "[" * 65 + "]" * 65 + "}", "anthropic")
    with pytest.raises(extract.AnswerFormatError, match=r"JSON not read"):
        extract.extract('{"id": ' + "9" * 5000 + "}", "anthropic")


def test_documents_are_read_only_from_inside_their_folder(tmp_path):
    """`..`, absolute paths, links out (to a file, to /dev/zero), FIFOs and folders: each a problem
    naming the entry, never opened (a FIFO would hang the read, /dev/zero exhaust memory)."""
    (tmp_path / "outside.txt").write_text("SECRET-CONTENT")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Ay.")
    (folder / "in.txt").symlink_to("a.txt")
    (folder / "out.txt").symlink_to(tmp_path / "outside.txt")
    (folder / "zero").symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo")
    (folder / "sub").mkdir()
    entries = ["a.txt", "in.txt", "../outside.txt", str(tmp_path / "outside.txt"), "out.txt", "zero", "fifo",
               "sub", "missing.txt"]
    (folder / documents.MANIFEST).write_text("\n".join(entries))
    cited = documents.read_documents(folder)
    assert cited.documents == ["Ay.", "Ay."] + [None] * 7
    assert [p.where.rsplit(":", 1)[1] for p in cited.problems] == [str(n) for n in range(3, 10)]
    assert all(entry in p.message for entry, p in zip(entries[2:], cited.problems))
    assert "SECRET" not in repr(cited)
    (folder / documents.MANIFEST).unlink()
    listed = documents.read_documents(folder)
    assert listed.names == ["a.txt", "fifo", "in.txt", "out.txt", "zero"]
    assert listed.documents == ["Ay.", None, "Ay.", None, None]


ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x1bc\r\u202e"


def test_a_fifo_or_device_swapped_in_after_the_check_is_refused_on_the_open_descriptor(tmp_path):
    """`confined` checks names; `read_document` checks what it opened, so a FIFO put in the file's place
    between the two is one problem, not a read that hangs (nor /dev/zero read until memory runs out)."""
    fifo = tmp_path / "0-doc.txt"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(ValueError, match="is a (FIFO|device), not a file"):
            documents.read_document(path)


def test_a_text_file_over_the_limit_is_refused_without_being_read_whole(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 1001)
    with pytest.raises(ValueError, match="over the 1,000-byte limit"):
        text.read_file(big, "big.txt", max_bytes=1000)
    assert text.read_file(big, "big.txt", max_bytes=1001) == b"x" * 1001


def test_a_citations_file_nested_past_the_cap_is_one_line(tmp_path, capsys):
    deep = tmp_path / "citations.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        sources.read_citations(deep)
    code = cli.main(["check", "--source", str(ROOT / "data/rfc7519.txt"), "--citations", str(deep)])
    assert code == 1 and capsys.readouterr().err.strip().splitlines() == [
        "citecheck check: error: citations.json is nested deeper than 64 levels; not a citations file"]


def test_printable_escapes_every_terminal_control_and_keeps_text():
    shown = printable(f"id{ESCAPES} é\tok")
    assert shown == "id\\x1b[2J\\x1b]0;pwned\\x07\\x1bc\\x0d\\u202e é\tok"
    assert printable("a\nb", lines=True) == "a\nb" and printable("a\nb") == "a\\x0ab"


def test_check_table_cells_are_escaped():
    table = format_table([{"id": "A1" + ESCAPES, "quote": "q\x1b[31m"}], ("id", "quote"))
    assert "\x1b" not in table and "\r" not in table and "A1\\x1b[2J" in table


def test_extract_prints_an_answers_control_characters_escaped(tmp_path, capsys):
    answer = tmp_path / "a.md"
    answer.write_text("Water boils [see][x\x1bcy].\n", encoding="utf-8")
    code = cli.main(["extract", str(answer), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 1 and "reference [x\\x1bcy] is not defined" in err
    assert "\x1b" not in out + err


def test_an_answer_with_thousands_of_problems_prints_the_first_hundred_and_a_count(tmp_path, capsys):
    answer = tmp_path / "a.md"
    answer.write_text("".join(f"Claim {n} [see][r{n}].\n" for n in range(5000)), encoding="utf-8")
    code = cli.main(["extract", str(answer), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.splitlines()
    assert code == 1 and len(err) == 101
    assert "reference [r0] is not defined" in err[0] and "reference [r99] is not defined" in err[99]
    assert err[100].endswith("4,900 more problems not shown (the first 100 are above)")


def test_replay_prints_the_page_redacted_and_escaped(monkeypatch, capsys):
    monkeypatch.setenv("CRAWLBASE_TOKEN", "canary-token-1234")
    monkeypatch.setattr(storage, "replay", lambda rid, settings: "<p>token=canary-token-1234\x1b[2J</p>\n")
    assert cli.main(["replay", "rid1"]) == 0
    out = capsys.readouterr().out
    assert "canary-token-1234" not in out and "<CRAWLBASE_TOKEN>" in out and "\\x1b[2J" in out
