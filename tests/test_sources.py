"""Loading and splitting source documents; citation validation."""
import json

import pytest

from citecheck.source import sources

RFC = "data/rfc7519.txt"


def test_rfc_page_furniture_is_dropped_and_sections_numbered():
    doc = sources.load(RFC)
    assert "[Page" not in doc.text and "\f" not in doc.text
    assert "RFC 7519                  JSON Web Token" not in doc.text
    numbered = [k for k in doc.sections if k[0].isdigit()]
    assert len(numbered) == 45
    assert numbered[:3] == ["1", "1.1", "2"] and "4.1.4" in doc.sections
    assert doc.sections["4.1.4"].title.startswith('"exp"')
    assert {"A", "A.1", "A.2", "B", "C"} <= set(doc.sections)


def test_paragraph_cut_by_a_page_break_is_joined():
    raw = ("1.  Intro\n\n   The first half of a sentence that runs on\n\n\n"
           "Jones, et al.                Standards Track                    [Page 1]\n\f\n"
           "RFC 7519                  JSON Web Token (JWT)                  May 2015\n\n\n"
           "   and ends on the next page.\n\n   New paragraph.\n")
    text = sources.clean_rfc(raw)
    assert "runs on\n   and ends on the next page." in text
    assert "page.\n\n   New paragraph." in text


def test_page_break_between_paragraphs_keeps_the_blank_line():
    raw = ("1.  Intro\n\n   A paragraph ends here.\n\n"
           "Jones, et al.                Standards Track                    [Page 1]\n\f\n"
           "RFC 7519                  JSON Web Token (JWT)                  May 2015\n\n"
           "   Another paragraph.\n")
    assert "here.\n\n   Another" in sources.clean_rfc(raw)


def test_summary_line():
    doc = sources.load(RFC)
    assert doc.summary(9) == f"{len(doc.text):,} characters, 45 numbered sections, 9 citations"


def test_markdown_and_text_splitters(tmp_path):
    md = tmp_path / "doc.md"
    md.write_text("Intro line.\n\n# Install\n\nRun it.\n\n```\n# not a heading\n```\n\n## Use\n\nCall it.\n")
    doc = sources.load(md, "markdown")
    assert list(doc.sections) == ["preamble", "Install", "Use"]
    assert "# not a heading" in doc.sections["Install"].text
    txt = tmp_path / "doc.txt"
    txt.write_text("One.\n\n\nTwo\nlines.\n\n  \nThree.")
    assert [s.text for s in sources.load(txt, "text").sections.values()] == ["One.", "Two\nlines.", "Three."]


def test_unknown_format_and_missing_file():
    with pytest.raises(ValueError, match="unknown format"):
        sources.load(RFC, "docx")
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        sources.load("nope.txt")


def test_bad_citations_are_reported_by_id_and_field_and_the_rest_kept(tmp_path):
    doc = sources.load(RFC)
    path = tmp_path / "c.json"
    path.write_text(json.dumps([
        {"id": "ok", "claim": "c", "quote": None, "section": "4.1.4"},
        {"id": "noquote", "claim": "c", "section": "1"},
        {"id": "badsec", "claim": "c", "quote": "q", "section": "99.9"},
        {"id": "emptyclaim", "claim": " ", "quote": "q", "section": "1"},
        "not an object",
    ]))
    good, errors = sources.load_citations(path, doc)
    assert [c["id"] for c in good] == ["ok"]
    assert errors == [
        "citation noquote: missing field 'quote'",
        "citation badsec: field 'section' names unknown section '99.9' in rfc7519.txt",
        "citation emptyclaim: field 'claim' must be a non-empty string",
        "citation #5: is not a JSON object",
    ]


def test_citations_file_that_is_not_json(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("[{,]")
    with pytest.raises(ValueError, match=r"c.json is not valid JSON: line 1"):
        sources.load_citations(path)


# ---------------------------------------------------------------- text is text

def test_a_lone_surrogate_rejects_that_citation_only(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('[{"id": "bad", "claim": "x\\ud800y", "quote": null, "section": "1"},'
                    ' {"id": "q", "claim": "c", "quote": "\\udfff", "section": "1"},'
                    ' {"id": "\\ud800", "claim": "c", "quote": null, "section": "1"},'
                    ' {"id": "ok", "claim": "c", "quote": null, "section": "1"}]', encoding="ascii")
    good, errors = sources.load_citations(path, sources.load(RFC))
    assert [c["id"] for c in good] == ["ok"]
    assert errors == ["citation bad: field 'claim' is not text (a lone surrogate \\ud800 at character 2)",
                      "citation q: field 'quote' is not text (a lone surrogate \\udfff at character 1)",
                      "citation '\\ud800': field 'id' is not text (a lone surrogate \\ud800 at character 1)"]
    "\n".join(errors).encode("utf-8")                   # every message can be printed


def test_a_bom_is_accepted_and_undecodable_bytes_name_the_file(tmp_path):
    path = tmp_path / "c.json"
    citations = [{"id": "a", "claim": "c", "quote": None, "section": None}]
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(citations).encode())
    assert [c["id"] for c in sources.load_citations(path)[0]] == ["a"]
    path.write_bytes(b'[{"id": "a", "claim": "caf\xe9", "quote": null, "section": null}]')
    with pytest.raises(ValueError, match=r"citations file .*c.json: not UTF-8 text \(byte 0xe9 at offset 26"):
        sources.load_citations(path)
    source = tmp_path / "doc.md"
    source.write_bytes(b"# Title\n\nna\xefve\n")
    with pytest.raises(ValueError, match=r"source file .*doc.md: not UTF-8 text \(byte 0xef"):
        sources.load(source, "markdown")
    source.write_bytes(b"\xef\xbb\xbf# Title\n\nBody.\n")
    assert list(sources.load(source, "markdown").sections) == ["Title"]


def test_duplicate_ids_are_warned_and_both_kept(tmp_path):
    path = tmp_path / "c.json"
    citations = [{"id": i, "claim": "c", "quote": None, "section": None} for i in ("a", "b", "a")]
    path.write_text(json.dumps(citations))
    loaded = sources.read_citations(path)
    assert [c["id"] for c in loaded.citations] == ["a", "b", "a"] and not loaded.errors
    assert loaded.warnings == ["citation a: duplicate id (also citation #1); both are checked"]
    assert sources.load_citations(path)[1] == loaded.warnings


def test_a_citations_file_nested_too_deeply_is_one_error(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="c.json"):
        sources.load_citations(path)
