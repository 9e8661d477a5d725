"""The CLI speaks to users: --version, an unknown command in one line with the closest one, help that
says what each command does, "did you mean" for a misspelt section, a path that is not a readable file in one
line, messages that read as sentences."""
from __future__ import annotations

import errno
import json
import re
import shutil
import socket
import subprocess
from pathlib import Path

import nbformat
import pytest

import citecheck
from citecheck import cli
from citecheck.cache import Cache
from citecheck.judge.judges import NO_JUDGE_HINT
from citecheck.paths import ROOT
from citecheck.source import sources
from citecheck.web import netguard

DOC = "# Boiling\n\nWater boils at 100 °C at sea level.\n\n# Freezing\n\nWater freezes at 0 °C.\n"


def run(capsys, *argv) -> tuple[int, list[str], list[str]]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


@pytest.fixture
def own(tmp_path):
    (tmp_path / "notes.md").write_text(DOC, encoding="utf-8")
    (tmp_path / "citations.json").write_text(json.dumps([
        {"id": "A1", "claim": "Water boils at 100 °C.", "quote": "Water boils at 100 °C at sea level.",
         "section": "Boiling"}]), encoding="utf-8")
    return tmp_path


def test_version_prints_the_package_version(capsys):
    assert run(capsys, "--version") == (0, [f"citecheck {citecheck.__version__}"], [])


def test_an_unknown_command_is_one_line_with_the_closest_command(capsys):
    assert run(capsys, "chek", "--source", "x") == (
        2, [], ["citecheck: unknown command 'chek': did you mean check? (`citecheck --help` lists them)"])
    code, out, err = run(capsys, "frobnicate")
    assert code == 2 and out == [] and len(err) == 1 and "the commands are check, verify, batch" in err[0]
    assert run(capsys, "--verbose")[2] == ["citecheck: unknown option '--verbose'; `citecheck --help` lists the "
                                           "commands"]


def test_the_help_says_what_each_command_does_for_a_user(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "--help")
    text = "\n".join(out)
    assert code == 0 and err == [] and len(out) < 30 and max(map(len, out)) <= 80
    assert [line.split()[0] for line in out if line.startswith("    ")] == list(cli.COMMANDS)   # one line each
    assert "module of its stage" not in text and "check whether an LLM's citations hold up" in text
    for name, (_module, says) in cli.COMMANDS.items():
        assert name in text and says in " ".join(text.split()), name
    assert run(capsys)[:2] == (code, out)                       # no command: the same help


@pytest.mark.parametrize("role", ["--source", "--citations", "--answer", "batch", "extract"])
def test_a_directory_is_one_line(capsys, own, role):
    folder = own / "folder"
    folder.mkdir()
    argv = {"--source": ["check", "--source", folder, "--citations", own / "citations.json"],
            "--citations": ["check", "--source", own / "notes.md", "--citations", folder],
            "--answer": ["check", "--source", own / "notes.md", "--answer", folder],
            "batch": ["batch", folder], "extract": ["extract", folder]}[role]
    code, _out, err = run(capsys, *argv)
    assert code == 1 and len(err) == 1 and "Errno" not in err[0], err
    assert re.search(r"is a directory, not a file$", err[0]), err                  # one wording
    assert err[0].startswith(f"citecheck {argv[0]}: error: "), err


def test_an_unreadable_file_is_one_line(capsys, own, monkeypatch):
    """As root every file is readable: the permission error comes from the open, as it would."""
    import os
    unreadable, real_open = own / "notes.md", os.open

    def refuse(path, *args, **kwargs):
        if Path(path) == unreadable:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", refuse)
    code, _out, err = run(capsys, "check", "--source", unreadable, "--citations", own / "citations.json")
    assert (code, err) == (1, [f"citecheck check: error: {unreadable} cannot be read (permission denied)"])


def test_error_line_names_the_path_in_a_sentence():
    assert cli.error_line(IsADirectoryError(errno.EISDIR, "Is a directory", "data")) == \
        "data is a directory, not a file"
    assert cli.error_line(IsADirectoryError(errno.EISDIR, "Is a directory", 12)) == "[Errno 21] Is a directory: 12"
    assert cli.error_line(ValueError("as raised")) == "as raised"


def test_a_missing_claims_file_is_a_sentence(capsys, tmp_path):
    assert run(capsys, "batch", tmp_path / "none.jsonl")[::2] == (
        1, [f"citecheck batch: error: {tmp_path / 'none.jsonl'} does not exist"])


def test_a_misspelt_section_gets_the_closest_one(tmp_path):
    (tmp_path / "notes.md").write_text(DOC, encoding="utf-8")
    document = sources.load(tmp_path / "notes.md", "markdown")
    (tmp_path / "c.json").write_text(json.dumps([
        {"id": n, "claim": "c", "quote": None, "section": section}
        for n, section in (("A1", "Boilng"), ("A2", "freezing"), ("A3", "Melting"))]), encoding="utf-8")
    assert sources.read_citations(tmp_path / "c.json", document).errors == [
        "citation A1: field 'section' names unknown section 'Boilng' in notes.md; did you mean 'Boiling'?",
        "citation A2: field 'section' names unknown section 'freezing' in notes.md; did you mean 'Freezing'?",
        "citation A3: field 'section' names unknown section 'Melting' in notes.md"]


def test_an_rfc_section_title_points_to_its_number():
    document = sources.load(ROOT / "data/rfc7519.txt", "rfc")
    assert sources.closest_section("4.1.44", document) == "; did you mean '4.1.4'?"
    assert sources.closest_section("Expiration Time Claim", document) == "; did you mean '4.1.4'?"


def test_no_judge_reads_as_a_sentence(capsys, own):
    code, out, err = run(capsys, "check", "--source", own / "notes.md", "--citations", own / "citations.json")
    assert code == 1 and out[0] == f"{len(DOC)} characters, 2 sections, 1 citation"         # singular when one
    assert len(err) == 1 and err[0].endswith("TYPESAFE_API_KEY is not set: " + NO_JUDGE_HINT)
    assert ": or" not in err[0] and NO_JUDGE_HINT.startswith("set it, or ")


# ---------------------------------------------------------------- tidy defaults: outputs under build/ or ignored

WRITES = re.compile(r"(?:--out|--db|--report|--audit-db)[ =](\S+)|AUDIT_DB=(\S+)|[^2&]>\s*([^\s&]\S*)")


def written_by_the_docs() -> set[str]:
    """Every file a documented command writes: the value of --out, --db, --report, --audit-db, AUDIT_DB and
    a shell redirection, in the code blocks of README.md and docs/ (placeholders such as DIR left out)."""
    found = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in re.findall(r"```[a-z]*\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for match in WRITES.finditer(block):
                path = next(group for group in match.groups() if group).strip("[]`'\"")
                if not path.isupper() and not path.startswith(("$", "-", "/dev/")) and "." in Path(path).name:
                    found.add(path)
    return found


def ignored(paths: list[str]) -> set[str]:
    done = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True, text=True)
    return set(done.stdout.splitlines())


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_what_the_cookbook_and_jupyterlab_write_is_ignored():
    documented = written_by_the_docs()
    assert documented, "found no documented command that writes a file: the scanner is broken"
    made = [*documented, "audit.db", "audit.db-wal", "cluster.db-shm", "report.csv", "report.html",
            "json_cache.sqlite", "json_cache.sqlite-wal", "build/perplexity/claims.jsonl",
            "notebooks/.ipynb_checkpoints/01_source_document-checkpoint.ipynb", ".ipynb_checkpoints/x.ipynb",
            "notebooks/.virtual_documents/x.py"]
    assert set(made) - ignored(made) == set()
    kept = ["notebooks/01_source_document.ipynb", "data/claims.jsonl", "json_cache.json", "citecheck/cli.py"]
    assert ignored(kept) == set()


# ---------------------------------------------------------------- the distribution: a free name, the command kept

def test_the_distribution_name_is_not_the_registrys_other_citecheck_and_the_command_is_citecheck():
    """`citecheck` on the package registry is an unrelated project (0.3.0): `pip install citecheck` would
    install someone else's code. The distribution is citecheck-cookbook; the import name and the command
    stay `citecheck`, and the version is written once (citecheck.__version__)."""
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == "citecheck-cookbook"
    assert project["project"]["scripts"] == {"citecheck": "citecheck.cli:main"}
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "citecheck.__version__"}


# ---------------------------------------------------------------- offline said once

def dns(monkeypatch, answers: dict[str, int | str]):
    """A fake DNS for netguard: host -> an address, or the getaddrinfo error number it fails with."""
    def resolve(host: str, port: int) -> list[str]:
        answer = answers[host]
        if isinstance(answer, int):
            raise socket.gaierror(answer, "fake DNS")
        return [answer]
    monkeypatch.setattr(netguard, "resolver", resolve)


OFFLINE_LINE = ("no DNS server answered in this run ({n} host name lookups): this machine looks offline. Those "
                "citations are unreachable (dns_failure) and not cached; run again once it is online")


def test_verify_offline_says_so_once_and_caches_nothing(capsys, monkeypatch, tmp_path):
    dns(monkeypatch, {"a.example": socket.EAI_AGAIN, "b.example": socket.EAI_AGAIN})
    code, out, err = run(capsys, "verify", "--claim", "Water boils at 100 °C.",
                         "--url", "https://a.example/x", "--url", "https://b.example/y")
    rows = json.loads("\n".join(out))["citations"]
    assert code == 0 and [(r["label"], r["reason"]) for r in rows] == [("unreachable", "dns_failure")] * 2
    assert err == ["citecheck verify: " + OFFLINE_LINE.format(n=2)]
    assert len(Cache(tmp_path / "json_cache.json")) == 0                    # transient: tried again next run


def test_batch_offline_says_so_once(capsys, monkeypatch, tmp_path):
    dns(monkeypatch, {"a.example": socket.EAI_AGAIN, "b.example": socket.EAI_AGAIN})
    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps({"id": f"c{n}", "claim": "Water boils at 100 °C.", "urls": urls}) + "\n"
                              for n, urls in enumerate([["https://a.example/x", "https://b.example/y"],
                                                        ["https://a.example/z"]])), encoding="utf-8")
    code, out, err = run(capsys, "batch", claims, "--db", tmp_path / "batch.db")
    assert code == 0 and out == ["citation_precision=0.0000 (0/3)", "reachable_precision=n/a (0/0)"]
    assert err == ["citecheck batch: " + OFFLINE_LINE.format(n=3)]


@pytest.mark.parametrize("other", ["203.0.113.9", socket.EAI_NONAME], ids=["resolves", "no such name"])
def test_one_dns_answer_means_online(capsys, monkeypatch, other):
    """A host that resolves (here to a reserved address: refused, nothing is sent) or a DNS answer that a
    name does not exist shows a DNS server answered: dead links, not an offline machine."""
    dns(monkeypatch, {"a.example": socket.EAI_AGAIN, "b.example": other})
    code, _out, err = run(capsys, "verify", "--claim", "Water boils at 100 °C.",
                          "--url", "https://a.example/x", "--url", "https://b.example/y")
    assert code == 0 and err == []


# ---------------------------------------------------------------- the polish list: 3 decimals, auto as booleans

def test_the_check_table_prints_three_decimals_as_the_notebooks_do():
    from citecheck import check, notebook
    row = {"id": "A1", "status": "found", "relation": "supports", "confidence": 0.82349, "verdict": "verified",
           "auto": False, "method": "pooled"}
    assert check.format_table([row]).splitlines()[1].split()[3] == "0.823"
    assert notebook.tidy([{"confidence": 0.82349}]).loc[0, "confidence"] == 0.823


def test_reviewed_rows_carry_auto_as_a_boolean(tmp_path):
    from citecheck import audit
    from citecheck.audit import reviews
    conn = audit.connect(tmp_path / "audit.db")
    for n, (auto, label) in enumerate([(True, "supported"), (False, "contradicted"), (None, "not_found")]):
        row = audit.write_citation(conn, "b", f"c{n}", "claim", {"url": "http://x/", "label": label,
                                                                 "confidence": 0.5, "auto": auto})
        reviews.record(conn, reviews.Decision("b", f"c{n}", "http://x/", row["decided_at"], None, "confirm", label,
                                              "", "Ann"), audit.utc_now())
    assert [r["auto"] for r in reviews.reviewed(conn)] == [True, False, None]
    conn.close()


def test_notebook_03_shows_auto_as_booleans():
    from citecheck import notebook
    path = next(p for p in notebook.notebook_paths() if p.name.startswith("03_"))
    shown = ["".join(out.get("data", {}).get("text/plain", ""))
             for cell in nbformat.read(path, as_version=4).cells for out in cell.get("outputs", [])]
    tables = [text for text in shown if "reviewed_label" in text]
    assert tables
    for table in tables:
        header, *lines = table.splitlines()
        at = header.split().index("auto") + 1                   # the index column has no header
        assert {line.split()[at] for line in lines} <= {"True", "False", "None"}, table


def test_check_answer_offline_says_so_once(capsys, monkeypatch, tmp_path):
    dns(monkeypatch, {"a.example": socket.EAI_AGAIN})
    answer = tmp_path / "answer.md"
    answer.write_text("Water boils at 100 °C at sea level [1].\n\n[1] https://a.example/x\n", encoding="utf-8")
    _code, _out, err = run(capsys, "check-answer", answer)
    assert err == ["citecheck check-answer: " + OFFLINE_LINE.format(n=1).replace("lookups", "lookup")]


# ---------------------------------------------------------------- bringing a judge: the rough edges

COFFEE = "# Coffee notes\n\n## Brewing\n\nWater boils at 100 °C at sea level. Brew just off the boil.\n"
COFFEE_ANSWER = ('Water boils at 100 °C at sea level [1]. "Water boils at 100 °C at sea level." [1]\n\n'
                 "Sources:\n[1] coffee.md\n")


def check_own(capsys, own: Path) -> tuple[int, list[str], list[str]]:
    """`check` of the own notes against their citations file."""
    return run(capsys, "check", "--source", own / "notes.md", "--citations", own / "citations.json")


@pytest.fixture
def coffee(tmp_path):
    (tmp_path / "coffee.md").write_text(COFFEE, encoding="utf-8")
    (tmp_path / "answer.md").write_text(COFFEE_ANSWER, encoding="utf-8")
    return tmp_path


def test_check_and_check_answer_exit_alike_with_the_same_hint_when_no_judge_answered(capsys, coffee):
    """No judge configured, an answer with no reading problem: both exit 1 and end with one hint line of the
    same form, naming every judge variable."""
    code, _out, err = run(capsys, "check-answer", coffee / "answer.md", "--documents", coffee)
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith("citecheck check-answer: judge unavailable for 2 of 2 citations (")
    code_check, _out, err_check = run(capsys, "check", "--answer", coffee / "answer.md",
                                      "--source", coffee / "coffee.md")
    assert code_check == 1
    assert err_check[-1].startswith("citecheck check: judge unavailable for 2 of 2 citations (")
    labelled = "labelled judge_unavailable: TYPESAFE_API_KEY is not set: " + NO_JUDGE_HINT
    assert err[0].endswith(labelled) and err_check[-1].endswith(labelled)


def test_an_unreachable_endpoint_is_named_by_its_variable_not_told_to_set_a_key_that_is_set(
        capsys, own, monkeypatch):
    with socket.socket() as sock:                       # a port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value-0001")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    code, _out, err = check_own(capsys, own)
    assert code == 1
    assert "could not be reached" in err[-1] and "OPENAI_BASE_URL" in err[-1]
    assert "set OPENAI_API_KEY" not in err[-1] and "sk-test-secret" not in "\n".join(err)


def test_a_refused_key_that_is_set_is_said_so(make_ctx):
    from standins.judge import judge_standin

    from citecheck.judge import judges
    with judge_standin() as server:
        server.script.status = 401
        ctx = make_ctx(secrets={"OPENAI_API_KEY": "sk-test-secret-value-0001"},
                       openai_base_url=server.url + "/v1", judge_retries=0)
        with pytest.raises(judges.JudgeUnavailable) as err:
            judges.json_judge("c", ["p"], ctx)
    message = str(err.value)
    assert "OPENAI_API_KEY was refused" in message and "set OPENAI_API_KEY" not in message
    assert "sk-test-secret" not in message


def test_the_misquote_line_is_printed_whenever_a_row_is_misquoted(capsys, own, monkeypatch):
    """Judged or not, a misquoted row gets its diff line under the table."""
    from standins.jev import jev_standin
    (own / "citations.json").write_text(json.dumps([
        {"id": "A1", "claim": "Water boils at 100 °C.", "quote": "Water boils at 101 °C at sea level.",
         "section": "Boiling"}]), encoding="utf-8")
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as judge:
        monkeypatch.setenv("TYPESAFE_ENDPOINT", judge.url)
        code, out, _err = check_own(capsys, own)
    assert code == 0 and "verified" in out[-2] and "misquoted" in out[-2]
    assert out[-1] == "A1 misquoted in Boiling (score 97.1): Water boils at [-101-] {+100+} °C at sea level."


def test_the_to_a_person_line_counts_what_the_table_shows(capsys, own, monkeypatch):
    """Three rows say review (one misquoted, which no threshold could accept): the line says 3, and that
    the uncalibrated note is about 2 of them; one row alone is one verdict."""
    from standins.jev import jev_standin
    (own / "citations.json").write_text(json.dumps([
        {"id": "A1", "claim": "Water boils at 100 °C.", "quote": "Water boils at 100 °C at sea level.",
         "section": "Boiling"},
        {"id": "A2", "claim": "Water freezes at 0 °C.", "quote": "Water freezes at 0 °C.",
         "section": "Freezing"},
        {"id": "A3", "claim": "Water boils at 100 °C.", "quote": "Water boils at 101 °C at sea level.",
         "section": "Boiling"}]), encoding="utf-8")
    with jev_standin({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}) as judge:
        monkeypatch.setenv("TYPESAFE_ENDPOINT", judge.url)
        code, out, err = check_own(capsys, own)
        assert code == 0 and sum(line.split()[-2] == "review" for line in out[2:5]) == 3, out
        assert err == [f"citecheck check: 3 verdicts to a person, 2 of them uncalibrated: no AUTO_ACCEPT for "
                       f"standin-jev in data/gate.json: run `calibrate --model standin-jev --write` or set "
                       "AUTO_ACCEPT"]
        alone = [{"id": "A1", "claim": "Water boils at 100 °C.", "quote": None, "section": "Boiling"}]
        (own / "citations.json").write_text(json.dumps(alone), encoding="utf-8")
        code, out, err = check_own(capsys, own)
    assert code == 0 and err[0].startswith("citecheck check: 1 verdict to a person, uncalibrated: ")
