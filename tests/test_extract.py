"""citecheck.extract: LLM answers (Markdown, Anthropic, OpenAI, Perplexity) -> batch claims and check citations."""
import json
import socket
from pathlib import Path

import answers_expected as expected
import pytest

from citecheck import batch, extract, matching
from citecheck.extract import sentences
from citecheck.source import pdf_text, sources

ANSWERS = "data/answers"
SITE = expected.SITE
RFC = "data/rfc7519.txt"


def run(text, fmt="auto", documents=()):
    return extract.extract(text, fmt, documents)


def claims(result):
    return [(c["claim"], c["urls"]) for c in result.claims]


def problems(result):
    return [(p.kind, p.where) for p in result.problems]


def anthropic(*blocks, **extra):
    return json.dumps({"type": "message", "role": "assistant", "content": list(blocks), **extra})


def openai(text, *annotations, **extra):
    part = {"type": "output_text", "text": text, "annotations": list(annotations)}
    return json.dumps({"object": "response", "output": [
        {"type": "message", "role": "assistant", "content": [part]}], **extra})


def perplexity(content, **extra):
    return json.dumps({"object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": content}}], **extra})


# ------------------------------------------------------------ the example answers, exactly

@pytest.mark.parametrize("name", list(expected.CLAIMS))
def test_each_url_citing_example(name):
    result = extract.extract_file(f"{ANSWERS}/{name}")
    assert result.format == extract.detect(Path(ANSWERS, name).read_text(encoding="utf-8"))
    assert claims(result) == expected.CLAIMS[name]
    assert [c["id"] for c in result.claims] == [f"c{n}" for n in range(1, len(result.claims) + 1)]
    assert result.citations == []
    assert [str(p) for p in result.problems] == expected.PROBLEMS[name]


def test_problem_kinds_of_the_examples():
    kinds = {name: [p.kind for p in extract.extract_file(f"{ANSWERS}/{name}").problems]
             for name in expected.CLAIMS}
    assert kinds == {"markdown.md": ["uncited_source"], "openai.json": ["out_of_range"], "anthropic_web.json": [],
                     "perplexity.json": ["dangling_marker", "uncited_source"]}


def test_anthropic_rfc_example_gives_the_cookbook_citations_and_their_statuses():
    raw = Path(RFC).read_text(encoding="utf-8")
    result = extract.extract_file(f"{ANSWERS}/anthropic_rfc.json", documents=[raw])
    given = {c["id"]: c for c in json.loads(Path("data/citations.json").read_text(encoding="utf-8"))}
    assert [c["id"] for c in result.citations] == [f"q{n}" for n in range(1, 9)]
    assert [c["claim"] for c in result.citations] == [given[i]["claim"] for i in expected.RFC_CLAIM_IDS]
    for citation in result.citations:
        assert citation["section"] is None and citation["document"] == "RFC 7519"
        assert citation["document_index"] == 0
    accurate = [c for c in result.citations if c["id"] not in ("q5", "q8")]
    assert all(raw[c["start_char_index"]:c["end_char_index"]] == c["quote"] for c in accurate)
    assert [(p.kind, p.where) for p in result.problems] == [
        ("cited_text_mismatch", "$.content[9].citations[0]"), ("cited_text_mismatch", "$.content[15].citations[0]")]
    document = sources.load(RFC)
    statuses = [matching.locate(c["quote"], document, c["section"]) for c in result.citations]
    assert [(m.status, m.section) for m in statuses] == expected.RFC_STATUSES


def test_anthropic_rfc_example_without_the_document_checks_lengths_only():
    result = extract.extract_file(f"{ANSWERS}/anthropic_rfc.json")
    # the invented quote was given a range of its own length: only the document itself exposes it
    assert [(p.kind, p.where) for p in result.problems] == [("cited_text_mismatch", "$.content[15].citations[0]")]
    assert "cited_text has 77 characters but the range 18679-18764 covers 85" in str(result.problems[0])


def test_anthropic_pdf_example_against_the_excerpt_pdf():
    document = pdf_text.load(f"{ANSWERS}/rfc7519-excerpt.pdf")
    result = extract.extract_file(f"{ANSWERS}/anthropic_pdf.json", documents=[document])
    assert result.problems == []
    statuses = [matching.locate(c["quote"], document, c["section"]) for c in result.citations]
    assert [(c["section"], c["start_page_number"], c["end_page_number"], m.status, m.section)
            for c, m in zip(result.citations, statuses)] == expected.PDF_QUOTES
    assert {c["document"] for c in result.citations} == {"rfc7519-excerpt.pdf"}


def test_page_past_the_last_page_is_out_of_range():
    one_page = sources.Document("one.pdf", "x", pdf_text.page_sections(["only page"]))
    result = extract.extract_file(f"{ANSWERS}/anthropic_pdf.json", documents=[one_page])
    assert [(p.kind, p.where) for p in result.problems] == [("out_of_range", "$.content[5].citations[0]"),
                                                            ("out_of_range", "$.content[9].citations[0]"),
                                                            ("out_of_range", "$.content[11].citations[0]")]
    assert "pages 1-2 run past the last page of document 0 (1 pages)" in str(result.problems[0])
    assert len(result.citations) == 6                          # reported, and still extracted


@pytest.mark.parametrize("name, fmt", [("markdown.md", "markdown"), ("anthropic_rfc.json", "anthropic"),
                                       ("anthropic_pdf.json", "anthropic"), ("anthropic_web.json", "anthropic"),
                                       ("openai.json", "openai"), ("perplexity.json", "perplexity")])
def test_auto_detects_each_example(name, fmt):
    assert extract.detect(Path(ANSWERS, name).read_text(encoding="utf-8")) == fmt


def test_outputs_are_what_batch_and_check_read(tmp_path):
    result = extract.extract_file(f"{ANSWERS}/markdown.md")
    parsed = batch.parse_lines(result.claims_jsonl().encode("utf-8").splitlines())
    assert parsed.problems == [] and [c.id for c in parsed.claims] == ["c1", "c2", "c3", "c4", "c5"]
    assert parsed.claims[0].urls == (f"{SITE}/articles/boiling-point", f"{SITE}/articles/boiling-point-table-2019")
    quoted = extract.extract_file(f"{ANSWERS}/anthropic_pdf.json")
    path = tmp_path / "citations.json"
    path.write_text(quoted.citations_json(), encoding="utf-8")
    good, errors = sources.load_citations(path, pdf_text.load(f"{ANSWERS}/rfc7519-excerpt.pdf"))
    assert errors == [] and len(good) == 6


def test_nothing_in_an_answer_is_fetched(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("extract opened a network connection")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for name in ("markdown.md", "anthropic_web.json", "openai.json", "perplexity.json"):
        assert extract.extract_file(f"{ANSWERS}/{name}").claims


# ------------------------------------------------------------ sentences

def test_units_after_a_full_stop_do_not_join_sentences():
    text = "It reaches about 120 °C. See the guide. Water boils at 212 °F. Next."
    assert [text[a:b] for a, b in sentences.split(text)] == [
        "It reaches about 120 °C.", "See the guide.", "Water boils at 212 °F.", "Next."]


def test_a_blank_line_ends_a_sentence_and_abbreviations_do_not():
    text = "Dr. Smith measured it, e.g. at 3,000 m\n\nNo full stop here"
    assert [text[a:b] for a, b in sentences.split(text)] == ["Dr. Smith measured it, e.g. at 3,000 m",
                                                             "No full stop here"]


# ------------------------------------------------------------ markdown

def test_several_markers_on_one_sentence_are_one_claim_with_urls_deduplicated_in_order():
    text = ("Water boils at 100 °C.[2][1] It freezes at 0 °C [1, 2][2].\n\n"
            "[1]: http://a.example/one\n[2]: http://a.example/two\n")
    assert claims(run(text)) == [("Water boils at 100 °C.", ["http://a.example/two", "http://a.example/one"]),
                                 ("It freezes at 0 °C.", ["http://a.example/one", "http://a.example/two"])]


def test_marker_ranges_and_a_dangling_marker():
    text = "Three facts [1-3]. One unknown [4].\n\nSources:\n1. http://a.example/1\n2. http://a.example/2\n" \
           "3. http://a.example/3\n"
    result = run(text)
    assert claims(result) == [("Three facts.", ["http://a.example/1", "http://a.example/2", "http://a.example/3"])]
    assert problems(result) == [("dangling_marker", "line 1:32")]
    assert "Sources" not in json.dumps(result.claims)


def test_reference_links_footnotes_autolinks_and_bare_urls():
    text = ("Salt barely matters, as [the Article][Boil] says. Altitude does[^alt]. "
            "Kettles do not <http://a.example/kettle>. See https://a.example/x_(y). Undefined [text][nope] stays.\n\n"
            "[boil]: http://a.example/boil 'Boiling'\n[^alt]: The guide, http://a.example/alt.\n")
    result = run(text)
    assert claims(result) == [("Salt barely matters, as the Article says.", ["http://a.example/boil"]),
                              ("Altitude does.", ["http://a.example/alt"]),
                              ("Kettles do not.", ["http://a.example/kettle"]),
                              ("See.", ["https://a.example/x_(y)"])]
    assert problems(result) == [("dangling_marker", "line 1:153")]


def test_links_in_code_and_non_web_links_are_not_citations():
    text = ("Run `curl [1](http://a.example/code)` first. Mail [us](mailto:x@a.example).\n\n"
            "```\nSee [this](http://a.example/fenced).\n```\nDone [1].\n\n[1]: http://a.example/one\n")
    result = run(text)
    assert claims(result) == [("Done.", ["http://a.example/one"])]
    assert problems(result) == [("unsupported", "line 1:51")]


def test_list_items_headings_and_soft_wraps():
    text = ("# Heading without a stop\n"
            "Water boils at 100 °C\nat sea level [1].\n"
            "- **Salt:** it raises the point a little [1]\n"
            "- a second item [1]\n"
            "> quoted [1]\n\n[1]: http://a.example/one\n")
    assert [c for c, _ in claims(run(text))] == [
        "Water boils at 100 °C at sea level.", "it raises the point a little", "a second item", "quoted"]


def test_think_block_and_source_list_problems():
    text = ("<think>maybe [9] http://a.example/thought</think>Answer [1] and [2].\n\n"
            "References:\n[1] http://a.example/one\n[2] No link here\n[1] http://a.example/again\n")
    result = run(text)
    assert claims(result) == [("Answer and.", ["http://a.example/one"])]
    assert [(p.kind, p.where) for p in result.problems] == [("malformed", "line 6:1"), ("dangling_marker", "line 1:65")]
    assert "defined twice" in str(result.problems[0])
    assert str(result.problems[1]) == ("line 1:65: marker [2] cites source [2] (line 5:1), which gives neither a URL "
                                       "nor a file name: add its http(s) URL or the name of a file beside the answer")


def test_markdown_that_is_not_markdown():
    with pytest.raises(extract.AnswerFormatError, match=r"^not a markdown answer: line 2:3: a NUL character"):
        run("fine\nab\x00", "markdown")
    with pytest.raises(extract.AnswerFormatError, match=r"^not a markdown answer: line 1:1: this is a JSON document"):
        run('{"content": []}', "markdown")


# ------------------------------------------------------------ anthropic

def test_anthropic_clause_citations_and_malformed_blocks():
    answer = anthropic(
        {"type": "text", "text": "Per the notes, "},
        {"type": "text", "text": "the grass is green", "citations": [
            {"type": "char_location", "cited_text": "The grass is green.", "document_index": 0,
             "document_title": "Notes", "start_char_index": 0, "end_char_index": 19}]},
        {"type": "text", "text": " and "},
        {"type": "text", "text": "the sky is blue", "citations": [
            {"type": "content_block_location", "cited_text": "The sky is blue.", "document_index": 1,
             "document_title": None, "start_block_index": 1, "end_block_index": 2},
            {"type": "char_location", "document_index": 0, "start_char_index": 20, "end_char_index": 36},
            {"type": "search_result_location", "source": "x"}]},
        {"type": "text", "text": 42},
        {"type": "text", "text": ". It rains."})
    result = run(answer)
    assert [(c["claim"], c["quote"], c["section"]) for c in result.citations] == [
        ("Per the notes, the grass is green and the sky is blue", "The grass is green.", None),
        ("Per the notes, the grass is green and the sky is blue", "The sky is blue.", None)]
    assert result.citations[0]["document"] == "Notes" and result.citations[1]["document"] == "document 1"
    assert (result.citations[1]["start_block_index"], result.citations[1]["end_block_index"]) == (1, 2)
    assert problems(result) == [("malformed", "$.content[4].text"), ("malformed", "$.content[3].citations[1].cited_text"),
                                ("unsupported", "$.content[3].citations[2].type")]


def test_anthropic_ranges_checked_against_the_documents():
    doc = "The grass is green. The sky is blue."
    def cite(**fields):
        return {"type": "char_location", "cited_text": "The grass is green.", "document_index": 0, **fields}
    answer = anthropic({"type": "text", "text": "Green grass", "citations": [
        cite(start_char_index=0, end_char_index=19), cite(start_char_index=30, end_char_index=99),
        cite(start_char_index=9, end_char_index=4), cite(start_char_index=20, end_char_index=36),
        cite(document_index=3, start_char_index=0, end_char_index=19),
        {"type": "page_location", "cited_text": "x", "document_index": 0, "start_page_number": 2,
         "end_page_number": 2}]}, {"type": "text", "text": "."})
    result = run(answer, "anthropic", documents=[doc])
    assert len(result.citations) == 6 and result.citations[5]["section"] == "2"
    assert [(p.kind, p.where) for p in result.problems] == [
        ("out_of_range", "$.content[0].citations[1]"), ("out_of_range", "$.content[0].citations[2]"),
        ("cited_text_mismatch", "$.content[0].citations[3]"),
        ("out_of_range", "$.content[0].citations[4].document_index"),
        ("out_of_range", "$.content[0].citations[5]")]
    assert "characters 30-99 fall outside document 0 (36 characters)" in str(result.problems[0])


def test_anthropic_web_citation_of_a_url_no_search_returned():
    answer = anthropic(
        {"type": "web_search_tool_result", "tool_use_id": "t", "content": [
            {"type": "web_search_result", "url": "http://a.example/found", "title": "Found"}]},
        {"type": "text", "text": "It boils", "citations": [
            {"type": "web_search_result_location", "url": "http://a.example/elsewhere", "cited_text": "x"},
            {"type": "web_search_result_location", "url": "ftp://a.example/file", "cited_text": "x"}]},
        {"type": "text", "text": "."})
    result = run(answer)
    assert claims(result) == [("It boils.", ["http://a.example/elsewhere"])]
    assert problems(result) == [("unknown_result", "$.content[1].citations[0]"),
                                ("malformed", "$.content[1].citations[1].url")]


@pytest.mark.parametrize("answer, message", [
    ("[1, 2]", r"^not an anthropic answer: \$: is not a JSON object"),
    ('{"type": "message", "role": "assistant"}', r"^not an anthropic answer: \$\.content: is missing"),
    ('{"type": "completion", "content": []}', r"^not an anthropic answer: \$\.type: is 'completion', not 'message'"),
    ('{"type": "message",\n "content": [}', r"^not an anthropic answer: line 2:14: not valid JSON"),
])
def test_not_an_anthropic_answer(answer, message):
    with pytest.raises(extract.AnswerFormatError, match=message):
        run(answer, "anthropic")


# ------------------------------------------------------------ openai

def test_openai_marker_spans_file_citations_and_bad_annotations():
    text = "Boils at 100 °C. ([a.example](http://a.example/boil)) Freezes at 0 °C. Melts."
    marker = text.index("([")
    result = run(openai(
        text,
        {"type": "url_citation", "start_index": marker, "end_index": text.index(")) ") + 2,
         "url": "http://a.example/boil", "title": "Boiling"},
        {"type": "file_citation", "file_id": "file-1", "filename": "notes.pdf", "index": text.index(" Melts")},
        {"type": "file_citation", "file_id": "file-2", "index": 999},
        {"type": "url_citation", "start_index": 9, "end_index": 3, "url": "http://a.example/x"},
        {"type": "url_citation", "start_index": 0, "end_index": 4},
        {"type": "container_file_citation", "container_id": "c", "file_id": "f", "start_index": 0, "end_index": 1},
        {"type": "mystery"}))
    assert claims(result) == [("Boils at 100 °C.", ["http://a.example/boil"])]
    assert result.citations == [{"id": "q1", "claim": "Freezes at 0 °C.", "quote": None, "section": None,
                                 "document": "notes.pdf", "file_id": "file-1"}]
    assert problems(result) == [
        ("no_quote", "$.output[0].content[0].annotations[1]"), ("out_of_range", "$.output[0].content[0].annotations[2]"),
        ("out_of_range", "$.output[0].content[0].annotations[3]"),
        ("malformed", "$.output[0].content[0].annotations[4].url"),
        ("unsupported", "$.output[0].content[0].annotations[6].type")]


def test_openai_parts_messages_and_other_items():
    answer = json.dumps({"object": "response", "output": [
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "assistant", "content": [
            {"type": "refusal", "refusal": "no"},
            {"type": "output_text", "text": "First part.", "annotations": [
                {"type": "url_citation", "start_index": 0, "end_index": 11, "url": "http://a.example/1"}]}]},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Second part", "annotations": [
                {"type": "url_citation", "start_index": 7, "end_index": 11, "url": "http://a.example/2"}]},
            {"type": "output_text"}]},
        "junk"]})
    result = run(answer)
    assert claims(result) == [("First part.", ["http://a.example/1"]), ("Second part", ["http://a.example/2"])]
    assert problems(result) == [("malformed", "$.output[2].content[1].text"), ("malformed", "$.output[3]")]


def test_not_an_openai_answer():
    with pytest.raises(extract.AnswerFormatError, match=r"^not an openai answer: \$\.object: is 'chat.completion'"):
        run('{"object": "chat.completion", "output": []}', "openai")
    with pytest.raises(extract.AnswerFormatError, match=r"^not an openai answer: \$\.output: must be a list"):
        run('{"object": "response", "output": {}}', "openai")


# ------------------------------------------------------------ perplexity

def test_perplexity_search_results_only_and_bad_sources():
    result = run(perplexity("Boils [1]. Freezes [2]. Melts [3].", search_results=[
        {"title": "One", "url": "http://a.example/1", "date": "2025-01-01"}, {"title": "No url"},
        {"url": "file:///etc/passwd"}]))
    assert claims(result) == [("Boils.", ["http://a.example/1"])]
    assert problems(result) == [("malformed", "$.search_results[1].url"), ("malformed", "$.search_results[2]"),
                                ("dangling_marker", "$.choices[0].message.content, line 1:20"),
                                ("dangling_marker", "$.choices[0].message.content, line 1:31")]


def test_perplexity_extra_choices_and_shape_errors():
    answer = json.loads(perplexity("A [1].", citations=["http://a.example/1", 7]))
    answer["choices"].append({"index": 1, "message": {"content": "B [1]."}})
    result = run(json.dumps(answer))
    assert claims(result) == [("A.", ["http://a.example/1"])]
    assert problems(result) == [("ignored", "$.choices"), ("malformed", "$.citations[1]")]
    with pytest.raises(extract.AnswerFormatError, match=r"^not a perplexity answer: \$\.choices: is empty"):
        run('{"choices": [], "citations": []}', "perplexity")
    with pytest.raises(extract.AnswerFormatError,
                       match=r"^not a perplexity answer: \$\.choices\[0\]\.message\.content: must be a string"):
        run('{"choices": [{"message": {"content": 3}}]}', "perplexity")


# ------------------------------------------------------------ auto and files

@pytest.mark.parametrize("text, message", [
    ("  \n", r"^cannot tell the answer's format: line 1:1: the answer is empty"),
    ('{"choices": [1], ', r"^cannot tell the answer's format: line 1:18: it starts like JSON but is not valid JSON"),
    ('{"answer": "x", "sources": []}', r"^cannot tell the answer's format: \$: JSON with none of the known shapes "
                                       r"\(answer, sources\)"),
    ("[1, 2]", r"^cannot tell the answer's format: \$: JSON with none of the known shapes \(a JSON list\)"),
])
def test_auto_says_why_it_cannot_tell(text, message):
    with pytest.raises(extract.AnswerFormatError, match=message):
        run(text)


def test_auto_reads_markdown_that_starts_with_a_bracket():
    assert claims(run("[Water](http://a.example/w) boils.")) == [("Water boils.", ["http://a.example/w"])]
    assert run("[" * 5000).format == "markdown"                 # not JSON, however deep it looks


def test_json_nested_too_deeply_is_one_line():
    with pytest.raises(extract.AnswerFormatError, match=r"^not an openai answer: \$: JSON nested deeper than 64"):
        run("[" * 100000, "openai")


def test_unknown_format_name():
    with pytest.raises(extract.AnswerError, match="unknown answer format 'gemini'"):
        run("x", "gemini")


def test_answer_files_bad_bytes_size_and_missing(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_bytes("ok line\nsecond \u00e9 line\xff".encode("utf-8")[:-2] + b"\xff rest")
    with pytest.raises(extract.AnswerFormatError, match=r"^not a markdown answer: line 2:14: not UTF-8 text"):
        extract.extract_file(bad, "markdown")
    big = tmp_path / "big.md"
    big.write_text("x" * 101)
    with pytest.raises(extract.AnswerError, match=r"101 bytes, over the 100-byte limit"):
        extract.extract_file(big, max_bytes=100)
    with pytest.raises(extract.AnswerError, match="answer file not found"):
        extract.extract_file(tmp_path / "none.json")


def test_a_local_files_quoted_passage_travels_as_the_quote_not_inside_the_claim():
    text = ('Water boils hot [1]. As the notes say, "Water boils at 100 °C at sea level." [1] It is good.\n\n'
            '"Brew at 93 °C" [1] and "grind fresh" [1], the notes add.\n\n'
            "> Keep beans in a jar. [1]\n\nSources:\n[1] coffee.md\n")
    assert [(c["claim"], c["quote"]) for c in extract.extract(text, "markdown").citations] == [
        ("Water boils hot.", None),
        ("As the notes say", "Water boils at 100 °C at sea level."),    # the sentence without its passage
        ("and, the notes add.", "Brew at 93 °C"),                        # both passages out, one claim
        ("and, the notes add.", "grind fresh"),
        ("Keep beans in a jar.", "Keep beans in a jar.")]               # the sentence is the quote: the quote
    url = extract.extract('As the page says, "water boils" [1].\n\n[1]: https://example.com/a\n', "markdown")
    assert url.claims[0]["claim"] == 'As the page says, "water boils".'   # a URL citation's: the sentence
