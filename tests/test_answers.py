"""LLM answers through the commands: `extract`, `check --answer`, `batch ANSWER`, PDF sources in `check`, and
the CI gate's exit statuses (0 good, 1 bad input or problems, 2 usage, 3 the gate failed)."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import answers_expected as expected
import pytest
from pdfs import RFC_EXCERPT, blank, build, encrypted, no_text
from standins.jev import jev_standin

from citecheck import batch, cli, config
from citecheck.batch import inputs
from citecheck.extract import documents
from citecheck.paths import ROOT
from citecheck.source import sources
from citecheck.source.pdf_text import PdfDocument
from citecheck.verdict import ci_gate
from citecheck.vocabulary import STATUSES

ANSWERS = Path("data/answers")
RFC = "data/rfc7519.txt"
SUPPORTS = {"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}
CHECK_PDF = ["check", "--answer", ANSWERS / "anthropic_pdf.json", "--source", RFC_EXCERPT, "--format", "pdf"]
"""`check` on the PDF answer against the PDF it cites."""


def main(capsys, *argv):
    """cli.main in this process: (exit status, stdout, stderr lines)."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


@pytest.fixture(autouse=True)
def fixed_gate(monkeypatch):
    """These tests read answers, not the gate: the CLI runs at the AUTO_ACCEPT they were written under (0.8),
    so no 'to a person, uncalibrated' line joins the stderr they compare (tests/test_review.py has that)."""
    monkeypatch.setenv("AUTO_ACCEPT", "0.8")


@pytest.fixture
def jev(monkeypatch):
    with jev_standin(SUPPORTS) as server:
        monkeypatch.setenv("TYPESAFE_ENDPOINT", server.url)
        yield server


def read_claims(folder: Path):
    lines = (folder / "claims.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


# ------------------------------------------------------------ extract


@pytest.mark.parametrize("name", list(expected.CLAIMS))
def test_extract_writes_each_formats_claims_and_reports_its_problems(capsys, tmp_path, name):
    code, out, err = main(capsys, "extract", ANSWERS / name, "--out", tmp_path)
    claims = read_claims(tmp_path)
    assert [(c["claim"], c["urls"]) for c in claims] == expected.CLAIMS[name]
    assert [c["id"] for c in claims] == [f"c{n}" for n in range(1, len(claims) + 1)]
    assert json.loads((tmp_path / "citations.json").read_text(encoding="utf-8")) == []
    assert err == [f"citecheck extract: {ANSWERS / name}: {p}" for p in expected.PROBLEMS[name]]
    assert code == (1 if expected.PROBLEMS[name] else 0)
    urls = sum(len(c["urls"]) for c in claims)
    assert f"{len(claims)} claims citing {urls} URLs -> {tmp_path / 'claims.jsonl'}" in out


def test_extract_anthropic_pdf_with_its_document_gives_the_quotes_and_pages(capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(RFC_EXCERPT, folder / RFC_EXCERPT.name)
    code, out, err = main(
        capsys, "extract", ANSWERS / "anthropic_pdf.json", "--documents", folder, "--out", tmp_path / "out"
    )
    assert (code, err) == (0, [])
    assert out.splitlines()[0].startswith("document 0: rfc7519-excerpt.pdf (") and "2 pages)" in out
    cited = json.loads((tmp_path / "out" / "citations.json").read_text(encoding="utf-8"))
    assert [(c["section"], c["start_page_number"], c["end_page_number"]) for c in cited] == [
        row[:3] for row in expected.PDF_QUOTES
    ]
    assert cited[0]["quote"] == 'The "iss" (issuer) claim identifies the principal that issued the JWT. '
    assert read_claims(tmp_path / "out") == []


def test_extract_anthropic_rfc_against_the_text_as_sent_reports_the_two_bad_quotes(capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(RFC, folder / "rfc7519.txt")
    code, _, err = main(
        capsys, "extract", ANSWERS / "anthropic_rfc.json", "--documents", folder, "--out", tmp_path
    )
    assert code == 1
    assert err == [
        f"citecheck extract: {ANSWERS / 'anthropic_rfc.json'}: $.content[{n}].citations[0]: cited_text is "
        f"not the text at characters {span} of document 0"
        for n, span in ((9, "45179-45246"), (15, "18679-18764"))
    ]
    cited = json.loads((tmp_path / "citations.json").read_text(encoding="utf-8"))
    given = {c["id"]: c["claim"] for c in json.loads(Path("data/citations.json").read_text(encoding="utf-8"))}
    assert [c["claim"] for c in cited] == [given[i] for i in expected.RFC_CLAIM_IDS]


def test_extract_default_out_is_named_after_the_answer_under_build(capsys, tmp_path, monkeypatch):
    answer = (ANSWERS / "markdown.md").resolve()
    monkeypatch.chdir(tmp_path)
    assert main(capsys, "extract", answer)[0] == 1
    assert len(read_claims(tmp_path / "build" / "markdown")) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]          # nothing else in the folder


def test_documents_are_the_manifest_in_order_else_the_files_sorted_by_name(tmp_path):
    for name, text in (("b.txt", "Bee."), ("a.txt", "Ay."), (".hidden", "no")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert documents.read_documents(tmp_path).documents == ["Ay.", "Bee."]
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really%%EOF")
    (tmp_path / documents.MANIFEST).write_text(
        "# sent in this order\nb.txt\n\nbroken.pdf\nmissing.txt\na.txt\n"
    )
    cited = documents.read_documents(tmp_path)
    assert cited.names == ["b.txt", "broken.pdf", "missing.txt", "a.txt"]
    assert cited.documents == ["Bee.", None, None, "Ay."]
    assert [(p.where, p.kind) for p in cited.problems] == [
        (f"{tmp_path / documents.MANIFEST}:4", "unreadable_document"),
        (f"{tmp_path / documents.MANIFEST}:5", "unreadable_document"),
    ]
    assert "broken.pdf: pdf_corrupt" in str(cited.problems[0]) and "document 1 is not checked" in str(
        cited.problems[0]
    )
    assert "missing.txt: no such file; document 2 is not checked" in str(cited.problems[1])


def test_a_pdf_document_is_a_pdf_by_its_bytes_not_its_name(tmp_path):
    (tmp_path / "0-excerpt").write_bytes(RFC_EXCERPT.read_bytes())
    (tmp_path / "1-latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    cited = documents.read_documents(tmp_path)
    assert isinstance(cited.documents[0], PdfDocument) and cited.documents[1] is None
    assert "1-latin1.txt: not UTF-8 text (byte 3) and not a PDF" in str(cited.problems[0])


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--format", "openai", ANSWERS / "perplexity.json"],
            "not an openai answer: $.object: is 'chat.completion', not 'response'",
        ),
        (
            ["--format", "anthropic", ANSWERS / "markdown.md"],
            "not an anthropic answer: line 1:1: not valid JSON",
        ),
        (
            ["--format", "markdown", ANSWERS / "openai.json"],
            "not a markdown answer: line 1:1: this is a JSON document",
        ),
        (["data/answers/none.json"], "answer file not found: data/answers/none.json"),
    ],
)
def test_extract_an_answer_not_in_its_format_is_one_line_and_writes_nothing(capsys, tmp_path, argv, message):
    code, out, err = main(capsys, "extract", *argv, "--out", tmp_path / "out")
    assert code == 1 and len(err) == 1 and err[0].startswith(f"citecheck extract: error: {message}")
    assert not (tmp_path / "out").exists() and out == ""


def test_an_answer_over_answer_max_bytes_is_refused(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("ANSWER_MAX_BYTES", "100")
    code, _, err = main(capsys, "extract", ANSWERS / "openai.json", "--out", tmp_path)
    assert code == 1 and err == [
        f"citecheck extract: error: {ANSWERS / 'openai.json'}: "
        f"{(ANSWERS / 'openai.json').stat().st_size:,} bytes, over the 100-byte limit for an "
        "answer (ANSWER_MAX_BYTES)"
    ]


def test_extract_and_check_fetch_nothing(capsys, tmp_path, monkeypatch, jev):
    real = socket.socket.connect

    def only_the_judge(sock, address):
        assert f"http://127.0.0.1:{address[1]}" == jev.url, f"connected to {address}"
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", only_the_judge)
    assert main(capsys, "extract", ANSWERS / "perplexity.json", "--out", tmp_path)[0] == 1
    assert main(capsys, *CHECK_PDF)[0] == 0


# ------------------------------------------------------------ check --answer


def statuses(out: str) -> list[tuple[str, str]]:
    """(id, status) of each table row (a misquote's diff line after the table is not a row)."""
    rows = [line.split() for line in out.splitlines()[2:]]
    return [(row[0], row[1]) for row in rows
            if len(row) > 1 and row[1] in STATUSES and " misquoted in " not in " ".join(row)]


def test_check_an_anthropic_answer_against_the_rfc(capsys, jev):
    code, out, err = main(capsys, "check", "--answer", ANSWERS / "anthropic_rfc.json", "--source", RFC)
    assert code == 1  # the two cited_text mismatches are problems
    assert [line.split(": ")[2] for line in err] == [
        "$.content[9].citations[0]",
        "$.content[15].citations[0]",
    ]
    assert out.splitlines()[0] == "58,357 characters, 45 numbered sections, 8 citations"
    assert [status for _, status in statuses(out)] == [status for status, _ in expected.RFC_STATUSES]


def test_check_an_anthropic_answer_against_the_pdf_finds_quotes_across_pdf_breaks(capsys, jev):
    code, out, err = main(capsys, *CHECK_PDF, "--json")
    assert (code, err) == (0, [])
    rows = json.loads(out)
    assert [(r["id"], r["verdict"]) for r in rows][3:] == [
        ("q4", "verified"),
        ("q5", "unsupported"),      # "TLS 1.3": the judge's verified, no 1.3 in the section (number_mismatch)
        ("q6", "fabricated"),
    ]
    assert [r["auto"] for r in rows] == [True, True, True, False, False, True]  # misquote, number: a person
    document = sources.load(RFC_EXCERPT, "pdf")
    assert isinstance(document, PdfDocument) and document.summary(6).endswith(", 2 pages, 6 citations")


def test_check_an_answer_with_no_quoted_citation_is_bad_input(capsys):
    code, out, err = main(capsys, "check", "--answer", ANSWERS / "perplexity.json", "--source", RFC)
    assert code == 1 and err == [
        f"citecheck check: error: {ANSWERS / 'perplexity.json'}: no quoted document citations "
        f"to check (3 claims cite URLs: `citecheck batch {ANSWERS / 'perplexity.json'}` checks "
        "those)"
    ]


def openai_file_search(tmp_path: Path) -> Path:
    text = "The iss claim identifies who issued the JWT. The exp claim is OPTIONAL."
    answer = {
        "object": "response",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": text,
                        "annotations": [
                            {
                                "type": "file_citation",
                                "file_id": "file-rfc",
                                "filename": "rfc7519.txt",
                                "index": len(text),
                            }
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "file_search.json"
    path.write_text(json.dumps(answer), encoding="utf-8")
    return path


def test_a_document_only_citation_is_skipped_with_a_problem_line(capsys, tmp_path, jev):
    answer = openai_file_search(tmp_path)
    code, out, err = main(capsys, "check", "--answer", answer, "--source", RFC)
    assert code == 1
    assert err == [
        f"citecheck check: {answer}: $.output[0].content[0].annotations[0]: file_citation of rfc7519.txt "
        "quotes nothing and names no section: a document-only citation",
        "citecheck check: citation q1: a document-only citation (no quote, no section): skipped, there is "
        "nothing to find and no section to judge",
        f"citecheck check: no usable citations in {answer}",
    ]
    assert out.splitlines() == ["58,357 characters, 45 numbered sections, 1 citation"]  # no table
    hand_written = tmp_path / "citations.json"
    hand_written.write_text(
        json.dumps(
            [
                {"id": "h1", "claim": "x", "quote": None, "section": None},
                {"id": "h2", "claim": "x", "quote": None, "section": "4.1.4"},
            ]
        )
    )
    code, out, err = main(capsys, "check", "--citations", hand_written, "--source", RFC)
    assert (
        code == 1
        and len(err) == 1
        and err[0].startswith("citecheck check: citation h1: a document-only citation")
    )
    assert statuses(out) == [("h2", "section-only")]


def test_a_citation_of_another_document_is_skipped(capsys, tmp_path, jev):
    answer = json.loads((ANSWERS / "anthropic_pdf.json").read_text(encoding="utf-8"))
    answer["content"][1]["citations"][0]["document_index"] = 1
    path = tmp_path / "two_documents.json"
    path.write_text(json.dumps(answer), encoding="utf-8")
    code, out, err = main(capsys, "check", "--answer", path, "--source", RFC_EXCERPT, "--format", "pdf")
    assert code == 1
    assert err == [
        f"citecheck check: {path}: $.content[1].citations[0].document_index: document 1 was not given "
        "(1 documents)",
        "citecheck check: citation q1: cites document 1 (rfc7519-excerpt.pdf), not the source (document 0): "
        "skipped",
    ]
    assert [cid for cid, _ in statuses(out)] == ["q2", "q3", "q4", "q5", "q6"]


# ------------------------------------------------------------ PDF sources in check


def test_check_a_pdf_the_test_builds_finds_quotes_across_every_break(capsys, tmp_path, jev):
    pages = [
        [
            "Water boils at a lower tempera-",
            "ture on a mountain, and the \ufb01rst reading",
            "of the day is case-",
            "sensitive to altitude. This sentence runs",
        ],
        ["on to the second page, past the header. A case for sensitive probes."],
    ]
    pdf = tmp_path / "notes.pdf"
    pdf.write_bytes(build(pages, header="Kettle & Flame lab notes"))
    quotes = [
        "Water boils at a lower temperature on a mountain",
        "the first reading of the day",
        "case-sensitive to altitude.",
        "This sentence runs on to the second page, past the header.",
    ]
    citations = tmp_path / "citations.json"
    citations.write_text(
        json.dumps(
            [
                {"id": f"p{n}", "claim": "A claim.", "quote": q, "section": "1"}
                for n, q in enumerate(quotes, 1)
            ]
        )
    )
    code, out, err = main(capsys, "check", "--source", pdf, "--format", "pdf", "--citations", citations)
    assert (code, err) == (0, [])
    assert out.splitlines()[0].endswith(" characters, 2 pages, 4 citations")
    assert statuses(out) == [(f"p{n}", "found") for n in range(1, 5)]
    assert "Kettle & Flame" not in sources.load(pdf, "pdf").text


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda: encrypted(build([["Secret."]]), "pw"), "pdf_unsupported: encrypted: a password is needed"),
        (lambda: b"%PDF-1.7\n" + b"\x00garbage" * 50 + b"\n%%EOF\n", "pdf_corrupt: "),
        (lambda: build([["Cut short."]])[:900], "pdf_truncated: no %%EOF marker"),
        (lambda: blank(500), "pdf_too_large: 500 pages, over the 300-page limit (PDF_MAX_PAGES)"),
        (lambda: b"<html><body>Not a PDF</body></html>", "not_pdf: not a PDF: no %PDF- header"),
        (lambda: no_text(1), "pdf_unsupported: no extractable text on any of its 1 pages"),
    ],
)
def test_a_pdf_check_cannot_read_is_one_line(capsys, tmp_path, make, reason):
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(make())
    code, out, err = main(
        capsys, "check", "--source", pdf, "--format", "pdf", "--citations", "data/citations.json"
    )
    assert code == 1 and out == ""
    assert len(err) == 1 and err[0].startswith(f"citecheck check: error: x.pdf: {reason}")


def test_pdf_limits_are_settings(capsys, tmp_path, monkeypatch):
    pdf = tmp_path / "two.pdf"
    pdf.write_bytes(build([["One."], ["Two."]]))
    monkeypatch.setenv("PDF_MAX_PAGES", "1")
    code, _, err = main(
        capsys, "check", "--source", pdf, "--format", "pdf", "--citations", "data/citations.json"
    )
    assert code == 1 and "2 pages, over the 1-page limit (PDF_MAX_PAGES)" in err[0]
    monkeypatch.setenv("PDF_MAX_BYTES", "1000")
    code, _, err = main(
        capsys, "check", "--source", pdf, "--format", "pdf", "--citations", "data/citations.json"
    )
    assert code == 1 and "over the 1,000-byte limit (PDF_MAX_BYTES)" in err[0]
    limits = config.Settings.from_env({"PDF_MAX_SECONDS": "2.5", "ANSWER_MAX_BYTES": "7"})
    assert (limits.pdf, limits.answer_max_bytes) == (config.PdfLimits(max_seconds=2.5), 7)
    assert config.Settings.from_env({}).pdf == config.PdfLimits(20 * 1024 * 1024, 300, 60.0)
    for name in ("PDF_MAX_BYTES", "PDF_MAX_PAGES", "PDF_MAX_SECONDS", "ANSWER_MAX_BYTES"):
        with pytest.raises(ValueError, match=name):
            config.Settings.from_env({name: "0"})


# ------------------------------------------------------------ batch ANSWER


@pytest.fixture
def verified(monkeypatch):
    """verify_citation replaced: supported unless the URL is in `.refuse` (no page, no judge)."""

    class Fake:
        refuse = {f"{expected.SITE}/articles/steam-tables": "unreachable"}
        calls = []

    def verify_citation(claim, url, ctx, *args, **options):
        Fake.calls.append((claim, url))
        return {"url": url, "label": Fake.refuse.get(url, "supported"), "confidence": 0.9}

    monkeypatch.setattr("citecheck.verify.verify_citation", verify_citation)
    return Fake


def test_batch_reads_an_answer_and_reports_its_problems_by_position(capsys, verified):
    code, out, err = main(capsys, "batch", ANSWERS / "perplexity.json")
    assert code == 1
    assert err == [
        f"citecheck batch: {ANSWERS / 'perplexity.json'}: {p}" for p in expected.PROBLEMS["perplexity.json"]
    ]
    assert verified.calls == [
        (claim, url) for claim, urls in expected.CLAIMS["perplexity.json"] for url in urls
    ]
    assert out.splitlines() == ["citation_precision=0.8000 (4/5)", "reachable_precision=1.0000 (4/4)"]


@pytest.mark.parametrize(
    "argv, code, gate",
    [
        (["--fail-under", "0.9"], 3, "gate failed: citation_precision=0.8000 (4/5) < 0.9"),
        (["--fail-under", "0.8"], 1, "gate passed: citation_precision=0.8000 (4/5) >= 0.8"),
        (
            ["--fail-under", "0.9", "--on", "reachable"],
            1,
            "gate passed: reachable_precision=1.0000 (4/4) >= 0.9",
        ),
    ],
)
def test_batch_gate_exit_statuses(capsys, verified, argv, code, gate):
    got, out, err = main(capsys, "batch", ANSWERS / "perplexity.json", *argv)
    assert (got, err[-1]) == (code, f"citecheck batch: {gate}")
    assert out.splitlines()[0] == "citation_precision=0.8000 (4/5)"  # printed before the gate decides


def test_batch_gate_on_a_clean_claims_file_and_nothing_reachable(capsys, tmp_path, verified):
    path = tmp_path / "claims.jsonl"
    path.write_text(
        json.dumps({"id": "a", "claim": "x", "urls": [f"{expected.SITE}/articles/steam-tables"]}) + "\n"
    )
    assert main(capsys, "batch", path, "--fail-under", "0")[0] == 0
    code, _, err = main(capsys, "batch", path, "--fail-under", "0", "--on", "reachable")
    assert code == 3 and err[-1] == (
        "citecheck batch: gate failed: reachable_precision is n/a (no citation counted), the gate needs 0"
    )


def test_batch_of_an_answer_with_only_quoted_citations(capsys):
    code, _, err = main(capsys, "batch", ANSWERS / "anthropic_pdf.json")
    assert code == 1 and err == [
        f"citecheck batch: {ANSWERS / 'anthropic_pdf.json'}: 6 quoted document citations: "
        f"`citecheck check --answer {ANSWERS / 'anthropic_pdf.json'} --source DOCUMENT` checks those",
        f"citecheck batch: error: {ANSWERS / 'anthropic_pdf.json'}: no valid claims to check",
    ]


def test_claims_files_are_told_from_answers(tmp_path, ctx):
    claims = tmp_path / "claims.json"
    claims.write_text('\n{"id": "a", "claim": "x", "urls": []}\n')
    odd = tmp_path / "odd.jsonl"
    odd.write_text("{oops\n")
    assert inputs.is_claims_file(claims) and inputs.is_claims_file(odd)
    assert not any(inputs.is_claims_file(ANSWERS / name) for name in expected.CLAIMS)
    assert [c.id for c in inputs.read_input(ANSWERS / "openai.json", "auto", ctx).claims] == [
        "c1",
        "c2",
        "c3",
    ]


def test_run_batch_takes_an_answer_too(tmp_path, ctx):
    result = batch.run_batch(
        ANSWERS / "markdown.md",
        ctx,
        db=tmp_path / "a.db",
        verify=lambda claim, url: {"url": url, "label": "supported"},
    )
    assert [(r["id"], r["url"]) for r in result.rows] == [
        (f"c{n}", url) for n, (_, urls) in enumerate(expected.CLAIMS["markdown.md"], 1) for url in urls
    ]
    assert result.problems == expected.PROBLEMS["markdown.md"]


# ------------------------------------------------------------ check --fail-on


@pytest.mark.parametrize(
    "fail_on, code, gate",
    [
        ("contradicted", 0, "gate passed: no citation is contradicted (6 checked)"),
        (
            "contradicted,fabricated",
            3,
            "gate failed: 1 of 6 citations are contradicted or fabricated: q6 fabricated",
        ),
        (
            "misquoted,fabricated",
            3,
            "gate failed: 2 of 6 citations are misquoted or fabricated: q4 misquoted, q6 fabricated",
        ),
    ],
)
def test_check_gate_exit_statuses(capsys, jev, fail_on, code, gate):
    got, out, err = main(capsys, *CHECK_PDF, "--fail-on", fail_on)
    assert (got, err) == (code, [f"citecheck check: {gate}"])
    assert len(out.splitlines()) == 10  # the table first, then q4's misquote line and q5's numbers line


def test_the_gate_wins_over_problems_and_a_passing_gate_keeps_them(capsys, jev):
    argv = ["check", "--answer", ANSWERS / "anthropic_rfc.json", "--source", RFC]
    assert main(capsys, *argv, "--fail-on", "fabricated")[0] == ci_gate.GATE_FAILED
    assert main(capsys, *argv, "--fail-on", "contradicted")[0] == ci_gate.PROBLEMS


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--fail-on", "verified"],
        ["check", "--fail-on", ","],
        ["batch", "--fail-under", "1.5"],
        ["batch", "--fail-under", "high"],
        ["batch", "--on", "everything"],
    ],
)
def test_a_bad_gate_is_a_usage_error(capsys, argv):
    with pytest.raises(SystemExit) as raised:
        cli.main(
            [*argv, "--source", RFC, "--citations", "data/citations.json"]
            if argv[0] == "check"
            else [*argv, "data/claims.jsonl"]
        )
    assert raised.value.code == 2
    assert "error: argument --" in capsys.readouterr().err


def test_verdict_gate_and_finish():
    rows = [
        {"id": "a", "status": "found", "verdict": "verified"},
        {"id": "b", "status": "misquoted", "verdict": "unsupported"},
    ]
    assert (
        ci_gate.verdict_gate(rows, ("unsupported", "misquoted")).message
        == "gate failed: 1 of 2 citations are unsupported or misquoted: b unsupported"
    )
    assert ci_gate.verdict_gate(rows, ("fabricated",)) == ci_gate.Gate(
        False, "gate passed: no citation is fabricated (2 checked)"
    )
    assert ci_gate.finish("x", False, None) == 0 and ci_gate.finish("x", True, None) == 1
    assert ci_gate.precision_gate({"citation": (9, 10)}, 0.9, "citation").failed is False


# ------------------------------------------------------------ the README's CI step, exactly


def test_the_readme_ci_step_replays_the_committed_cache_and_fails_the_gate(tmp_path):
    import yaml

    readme = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    step = yaml.safe_load(readme.split("<!-- ci-gate-step -->\n```yaml\n", 1)[1].split("```", 1)[0])[0]
    assert step["env"] == {"CITECHECK_OFFLINE": "1"}
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"       # `python` is this one
    reader = {k: v for k, v in os.environ.items() if k != "JUDGE_METHOD"}      # the reader's default
    env = {**reader, **step["env"], "CITECHECK_CACHE": str(ROOT / "json_cache.json"),
           "AUDIT_DB": str(tmp_path / "audit.db"), "PATH": path}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == ci_gate.GATE_FAILED, done.stderr
    gates = [line for line in done.stderr.splitlines() if ": gate " in line]
    assert [line.split(": gate ")[1].split(":")[0] for line in gates] == ["failed", "failed"]
    assert gates[0].startswith("citecheck check: gate failed: ") and " q5 fabricated" in gates[0]
    assert gates[1].startswith("citecheck batch: gate failed: citation_precision=")
    assert done.stdout.splitlines()[0] == "58,357 characters, 45 numbered sections, 8 citations"
    assert "citation_precision=" in done.stdout and "reachable_precision=" in done.stdout


@pytest.mark.parametrize("argv, message", [
    (["check", "--source", RFC, "--answer", ANSWERS / "perplexity.json", "--answer-format", "anthropic"],
     "not an anthropic answer: $.content: is missing"),
    (["batch", ANSWERS / "openai.json", "--format", "perplexity"],
     "not a perplexity answer: $.choices: is missing"),
    (["batch", ANSWERS / "anthropic_web.json", "--format", "markdown"],
     "not a markdown answer: line 1:1: this is a JSON document"),
])
def test_check_and_batch_name_the_format_an_answer_is_not_in(capsys, argv, message):
    code, out, err = main(capsys, *argv)
    assert (code, out) == (1, "") and len(err) == 1
    assert err[0].startswith(f"citecheck {argv[0]}: error: {message}")
