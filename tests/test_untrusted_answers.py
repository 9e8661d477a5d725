"""An LLM answer is untrusted input: it reads nothing the user did not name, and every read is bounded
before it starts (docs/answer-report.md, "Local files"; docs/configuration.md, the answer caps).

- A local file an answer cites is read only from `--documents DIR`: never a hidden file or folder, never
  a file that is not a source format, never a file beside the answer unless its folder is named. Nothing
  of such a file reaches stdout, stderr, the outputs or a judge (a stand-in judge records every body).
- A near miss in a local file shows at most the quote's own length of the file.
- A 10 GB sparse text file is refused on its size before a byte is read, by every entry point.
- ANSWER_MAX_MARKERS and ANSWER_MAX_REPORT_BYTES cap one answer: one line when hit.
"""
import json
import os
import resource
import subprocess
import sys

import pytest
from standins.jev import jev_standin
from test_mcp import REPLAY, text

from citecheck import answer, extract
from citecheck.extract.assemble import Claims
from citecheck.extract.markdown import MarkdownReader
from citecheck.extract.sentences import Sentences
from citecheck.paths import ROOT
from citecheck.vocabulary import DOCUMENT_NOT_NAMED, TOO_MANY_MARKERS

SECRET = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
"""A token in the user's home directory: no byte of it may leave."""
NEAR = SECRET[:-1] + "X"
"""The answer's near miss of it: a diff against the real file would print the real last character."""
COFFEE = "# Brewing\n\nWater boils at 100 °C at sea level. Brew coffee at 90 to 96 °C.\n"
HOME_ANSWER = f"""The token is set [1]. "oauth_token: {NEAR}" [1] "token {NEAR}" [2] "user: {NEAR}" [3]
"token: {NEAR}" [4] "Water boils at 100 °C at sea level." [5]

Sources:
[1] .config/gh/hosts.yml
[2] .secrets.txt
[3] notes.yml
[4] linked.md
[5] coffee.md
"""
SUPPORTS = {"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}
GIB = 1024 ** 3


@pytest.fixture
def home(tmp_path):
    """An answer saved in a home directory, beside the user's secrets and one document."""
    (tmp_path / ".config" / "gh").mkdir(parents=True)
    (tmp_path / ".config" / "gh" / "hosts.yml").write_text(f"github.com:\n    oauth_token: {SECRET}\n")
    (tmp_path / ".secrets.txt").write_text(f"token {SECRET}\n")
    (tmp_path / "notes.yml").write_text(f"user: {SECRET}\n")
    (tmp_path / "linked.md").symlink_to(tmp_path / ".secrets.txt")        # a visible name for a hidden file
    (tmp_path / "coffee.md").write_text(COFFEE, encoding="utf-8")
    (tmp_path / "answer.md").write_text(HOME_ANSWER, encoding="utf-8")
    return tmp_path


def run_cli(*args, env=None, cwd=None, max_memory=None):
    def limit():
        if max_memory:
            resource.setrlimit(resource.RLIMIT_AS, (max_memory, max_memory))
    return subprocess.run([sys.executable, "-m", "citecheck", *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=300,
                          preexec_fn=limit)


def leaked(*texts) -> bool:
    return any(SECRET in t or SECRET[-12:] in t for t in texts)


# ------------------------------------------------------------ only the documents the user named are read

@pytest.mark.parametrize("named", [False, True])
def test_check_answer_sends_no_byte_of_an_unnamed_file_to_the_judge_or_the_output(home, named, tmp_path):
    documents = ["--documents", home] if named else []
    with jev_standin(SUPPORTS) as server:
        done = run_cli("check-answer", home / "answer.md", "--json", *documents, "--out", tmp_path / "r.csv",
                       "--report", tmp_path / "r.html", cwd=home,
                       env={"TYPESAFE_ENDPOINT": server.url, "AUTO_ACCEPT": "0.8"})
        bodies = [request.body.decode("utf-8") for request in server.posts]
    report = json.loads(done.stdout)
    written = "".join((tmp_path / name).read_text(encoding="utf-8") for name in ("r.csv", "r.html"))
    assert not leaked(done.stdout, done.stderr, written, *bodies)
    rows = {m["source"].split(" §")[0]: (m["label"], m["reason"]) for m in report["markers"]}
    for name in (".config/gh/hosts.yml", ".secrets.txt", "notes.yml", "linked.md"):
        assert rows[name] == ("unchecked", DOCUMENT_NOT_NAMED)
    assert rows["coffee.md"] == (("supported", None) if named else ("unchecked", DOCUMENT_NOT_NAMED))
    assert len(bodies) == named                                   # the judge saw coffee.md alone, when named
    problems = [p for p in report["problems"] if DOCUMENT_NOT_NAMED in p or "not among" in p]
    tail = f"not among the documents of --documents {home}; not read; its citations are not checked"
    if named:
        assert [p.split(": ", 2)[1:] for p in report["problems"][:4]] == [
            [".config/gh/hosts.yml", f"a hidden file or folder, {tail}"],
            [".secrets.txt", f"a hidden file or folder, {tail}"],
            ["notes.yml", f"not a source document (.md, .markdown, .pdf, .txt), {tail}"],
            ["linked.md", f"a link to a hidden file or folder, {tail}"]]
    else:
        assert "line 5:1: .config/gh/hosts.yml: not among the named documents (none were named); name the " \
               "folder that holds it with --documents DIR (the answer's own folder: --documents .); its " \
               "citations are not checked" in problems[0]
    assert done.returncode == 1


def test_extract_and_check_answer_read_nothing_beside_the_answer_unless_its_folder_is_named(home, tmp_path):
    done = run_cli("extract", home / "answer.md", "--out", tmp_path / "out", cwd=home)
    assert done.returncode == 1 and not leaked(done.stdout, done.stderr)
    assert "file coffee.md" not in done.stdout
    assert [line.split(": ")[3] for line in done.stderr.splitlines()] == [
        ".config/gh/hosts.yml", ".secrets.txt", "notes.yml", "linked.md", "coffee.md"]
    named = run_cli("extract", "answer.md", "--out", tmp_path / "out", "--documents", ".", cwd=home)
    assert f"file coffee.md ({len(COFFEE)} characters, 1 section)" in named.stdout.splitlines()
    assert not leaked(named.stdout, named.stderr)
    assert not leaked((tmp_path / "out" / "citations.json").read_text(encoding="utf-8").replace(NEAR, ""))


def test_check_answer_without_a_source_reads_no_file_the_answer_names(home):
    (home / "one.md").write_text("The token is set [1].\n\nSources:\n[1] .secrets.txt\n", encoding="utf-8")
    done = run_cli("check", "--answer", home / "one.md", cwd=home)
    assert done.returncode == 1 and done.stdout == "" and not leaked(done.stderr)
    assert done.stderr.splitlines() == [
        f"citecheck check: error: {home / 'one.md'}: name the source with --source FILE (the answer cites "
        "the local file .secrets.txt; only a file you name is read)"]


def test_the_report_api_reads_local_files_only_from_the_folder_given(home, ctx):
    unnamed = answer.report(HOME_ANSWER, ctx)
    named = answer.report(HOME_ANSWER, ctx, folder=home)
    assert {m.reason for m in unnamed.markers} == {DOCUMENT_NOT_NAMED}
    assert [m.reason for m in named.markers if m.source != "coffee.md §Brewing"] == [DOCUMENT_NOT_NAMED] * 5
    assert not leaked(json.dumps(unnamed.to_dict()), json.dumps(named.to_dict()))


# ------------------------------------------------------------ a near miss shows at most the quote's length

def test_a_near_miss_in_a_local_file_shows_no_more_of_it_than_the_quote_is_long(tmp_path, ctx):
    (tmp_path / "hosts.txt").write_text(f"github.com: user: alice oauth_token: {SECRET} git_protocol: https "
                                        "other_field: value_here more stuff follows\n", encoding="utf-8")
    quote = f"token {NEAR} git"
    result = answer.report(f'It is set. "{quote}" [1]\n\nSources:\n[1] hosts.txt\n', ctx, folder=tmp_path)
    (marker,) = result.markers
    assert marker.status == "misquoted"
    assert len(marker.evidence_quote) <= len(quote)              # unbounded, it was 53 characters of 50
    added = "".join(part.split("+}")[0] for part in marker.diff.split("{+")[1:])
    assert len(added) <= len(quote)


# ------------------------------------------------------------ every read bounded before it starts

@pytest.fixture
def sparse(tmp_path):
    """A 10 GB text file that costs no disk: the size a read must refuse before it starts."""
    big = tmp_path / "big.txt"
    big.write_text("Water boils at 100 °C at sea level.\n", encoding="utf-8")
    os.truncate(big, 10 * 1024 ** 3)
    (tmp_path / "citations.json").write_text(json.dumps(
        [{"id": "1", "claim": "Water boils.", "quote": "Water boils at 100 °C", "section": None}]))
    (tmp_path / "answer.md").write_text('It boils. "Water boils at 100 °C" [1]\n\nSources:\n[1] big.txt\n')
    return tmp_path


OVER = "10,737,418,240 bytes, over the 67,108,864-byte limit for a file read as text; not read"


@pytest.mark.parametrize("args", [
    ("check", "--source", "big.txt", "--citations", "citations.json"),
    ("check", "--answer", "answer.md", "--source", "big.txt"),
    ("check-answer", "answer.md", "--source", "big.txt"),
    ("check-answer", "answer.md", "--documents", "."),
    ("extract", "answer.md", "--documents", ".", "--out", "out"),
])
def test_a_sparse_10_gb_text_file_is_one_line_in_bounded_memory(sparse, args):
    done = run_cli(*args, cwd=sparse, max_memory=GIB + GIB // 2)         # it was a MemoryError at 1.5 GiB
    assert done.returncode == 1 and "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert OVER in done.stdout + done.stderr, done.stderr     # check-answer says it among its problems
    assert all(len(line) < 300 for line in done.stderr.splitlines())


def test_the_mcp_tools_refuse_a_sparse_10_gb_text_file_in_one_line(sparse):
    import asyncio

    from mcp import ClientSession, StdioServerParameters, stdio_client
    limited = f"ulimit -v {(GIB + GIB // 2) // 1024}; exec {sys.executable} -m citecheck mcp --root {sparse}"
    params = StdioServerParameters(command="bash", args=["-c", limited], env=REPLAY, cwd=str(ROOT))
    calls = [("check_document", {"source": "big.txt", "citations_file": "citations.json"}),
             ("check_answer", {"answer_file": "answer.md", "source": "big.txt"})]

    async def talk():
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write), \
                ClientSession(read, write) as client:
            await client.initialize()
            return [await client.call_tool(name, arguments) for name, arguments in calls]
    for result in asyncio.run(talk()):
        assert result.is_error and OVER in text(result) and "\n" not in text(result).strip(), text(result)


# ------------------------------------------------------------ per-answer caps; memory per marker

def test_citations_past_answer_max_markers_are_one_problem_line(tmp_path):
    body = " ".join(f"Fact {n} holds [1]." for n in range(12))
    (tmp_path / "answer.md").write_text(f"{body}\n\nSources:\n[1] https://example.com/a\n", encoding="utf-8")
    done = run_cli("extract", tmp_path / "answer.md", "--out", tmp_path / "out",
                   env={"ANSWER_MAX_MARKERS": "5"})
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert "7 more citations from here on, over the 5 read from one answer (ANSWER_MAX_MARKERS): not " \
           "extracted or checked" in done.stderr
    assert len((tmp_path / "out" / "claims.jsonl").read_text().splitlines()) == 5
    result = extract.extract(f"{body}\n\nSources:\n[1] https://example.com/a\n", max_markers=5)
    assert [p.kind for p in result.problems] == [TOO_MANY_MARKERS]


def test_a_report_over_answer_max_report_bytes_is_one_line_and_nothing_written(tmp_path):
    (tmp_path / "answer.md").write_text("Fact one holds [1].\n\nSources:\n[1] https://example.com/a\n")
    done = run_cli("extract", tmp_path / "answer.md", "--out", tmp_path / "out",
                   env={"ANSWER_MAX_REPORT_BYTES": "20"})
    assert (done.returncode, done.stdout) == (1, "") and not (tmp_path / "out").exists()
    assert done.stderr == ("citecheck extract: error: claims.jsonl and citations.json would be 79 bytes, "
                           "over the 20-byte limit for one answer's report (ANSWER_MAX_REPORT_BYTES); "
                           "nothing written\n")
    done = run_cli("check-answer", tmp_path / "answer.md", env={"ANSWER_MAX_REPORT_BYTES": "20"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("citecheck check-answer: error: the report (its sentences and its markers' "
                                  "claims alone) would be ")


def test_the_citations_of_one_sentence_share_one_claim_string():
    sentence = "Water boils at one hundred degrees at sea level " * 40
    parsed = MarkdownReader().parse(f"{sentence}{'[1]' * 50}.\n\nSources:\n[1] coffee.md\n")
    claims = Claims(Sentences(parsed.text), parsed.anchors)
    made = {id(claims.of(anchor)[1]) for anchor in parsed.anchors}
    assert len(made) == 1                  # one string, not one copy a marker (a marker cost a sentence)
    citations = extract.extract(f"{sentence}{'[1]' * 50}.\n\nSources:\n[1] coffee.md\n").citations
    assert len({id(c["claim"]) for c in citations}) == 1


def test_the_mcp_tools_read_no_hidden_file_of_their_root(home):
    from citecheck.serve.mcp.inputs import Folder, ToolInputError
    folder = Folder.at(home)
    assert folder.file("source", "coffee.md") == (home / "coffee.md").resolve()
    for name in (".secrets.txt", ".config/gh/hosts.yml", "linked.md", str(home / ".secrets.txt")):
        with pytest.raises(ToolInputError, match="a hidden file or folder") as refused:
            folder.file("source", name)
        assert "\n" not in str(refused.value) and not leaked(str(refused.value))
