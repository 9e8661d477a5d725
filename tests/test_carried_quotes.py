"""The text a web citation carries (Anthropic cited_text, a Perplexity snippet): extracted with its URL,
matched on the fetched page before the judge is asked, in verify and in batch."""
import json
import random
import re
import sqlite3
from pathlib import Path

import pytest
from test_verify import judge, judge_server, quoting, url  # noqa: F401 - the fixture site and judge stand-in

from citecheck import batch, cli, extract, matching
from citecheck.batch.claims import parse_lines
from citecheck.verify import carried_match, page_of, page_text, trace_text, verify_citation, verify_claim

PAGE = "/articles/boiling-point"
CLAIM = "Water boils at 100 °C at sea level."
ON_PAGE = "At sea level, pure water boils at 100 °C (212 °F)."
NEAR_MISS = "At sea level, pure water boils at 100 °C (or 212 °F)."
INVENTED = "Water boils at exactly 100 °C everywhere on Earth, whatever the pressure."


def test_an_anthropic_web_citation_carries_its_cited_text():
    result = extract.extract_file("data/answers/anthropic_web.json")
    site = "http://127.0.0.1:8731"
    assert [c.get("quotes") for c in result.claims] == [
        {f"{site}/articles/boiling-point": [ON_PAGE]},
        {f"{site}/articles/boiling-point": ["and at that pressure water does not boil until it reaches about 120 °C."],
         f"{site}/premium/pressure-cooking": ["trap the steam, raise the pressure, and the water inside gets hotter "
                                              "than any open pan allows."]},
        {f"{site}/guides/cooking-at-altitude": ["In a mountain hut at 3,000 metres above sea level, a pot of water "
                                                "comes to a full boil at roughly 90 °C"]},
    ]
    assert parse_lines(result.claims_jsonl().encode().splitlines()).claims[0].carried(
        f"{site}/articles/boiling-point") == (ON_PAGE,)


def test_a_perplexity_snippet_is_carried_by_every_marker_to_its_source():
    answer = {"object": "chat.completion", "choices": [{"message": {"role": "assistant", "content":
              "Water boils at 100 °C at sea level.[1] It boils at 90 °C at 3,000 m.[2][1]"}}],
              "search_results": [{"title": "a", "url": "https://a.example/x", "snippet": ON_PAGE},
                                 {"title": "b", "url": "https://b.example/y", "snippet": ""}]}
    claims = extract.extract(json.dumps(answer), "perplexity").claims
    assert [(c["urls"], c.get("quotes")) for c in claims] == [
        (["https://a.example/x"], {"https://a.example/x": [ON_PAGE]}),
        (["https://b.example/y", "https://a.example/x"], {"https://a.example/x": [ON_PAGE]})]


@pytest.mark.parametrize("quotes, problem", [
    ({"https://other.example/": "text"}, True),          # a URL the line does not cite
    ({"https://a.example/": 3}, True),                   # not text
    ({"https://a.example/": ["one", 2]}, True),
    ({"https://a.example/": []}, True),
    ({"https://a.example/": "one"}, False),
    ({"https://a.example/": ["one", "two"]}, False),
])
def test_a_claims_line_may_carry_quotes_for_its_own_urls(quotes, problem):
    line = json.dumps({"id": "1", "claim": CLAIM, "urls": ["https://a.example/"], "quotes": quotes}).encode()
    parsed = parse_lines([line])
    assert bool(parsed.problems) is problem
    if problem:
        assert parsed.problems[0].startswith('line 1: "quotes" must map URLs of "urls"')
    else:
        assert parsed.claims[0].carried("https://a.example/") == tuple(
            [quotes["https://a.example/"]] if isinstance(quotes["https://a.example/"], str)
            else quotes["https://a.example/"])


def test_page_text_drops_markdown_marks_but_keeps_the_words():
    page = "# Title\n\nSee **the [guide](http://x/g)** and `code`.\n\n- an item\n> a quote\n![alt](i.png)"
    assert page_text(page) == "Title\n\nSee the guide and code.\n\nan item\na quote\nalt"


def test_a_cited_text_found_on_the_page_is_judged(judge, judge_server, url, run):  # noqa: F811
    judge.content = quoting("supported", 0.93)
    row = verify_citation(CLAIM, url(PAGE), run.ctx, quotes=[ON_PAGE])
    assert (row["label"], row["status"], row["diff"]) == ("supported", "found", None)
    assert len(judge_server.requests) == 1


def test_a_fabricated_cited_text_on_a_real_url_does_not_pass_and_no_model_is_asked(judge, judge_server, url,
                                                                                     run):  # noqa: F811
    judge.content = quoting("supported", 0.99)
    row = verify_citation(CLAIM, url(PAGE), run.ctx.replace(auto_accept=0.5), quotes=[ON_PAGE, INVENTED])
    assert (row["label"], row["reason"], row["status"], row["confidence"]) == (
        "not_found", "fabricated_quote", "missing", None)
    assert judge_server.requests == [] and row["auto"] is True          # string matching settled it
    same = verify_citation(CLAIM, url(PAGE), run.ctx, quotes=[ON_PAGE])  # the real quote alone: judged
    assert same["label"] == "supported" and len(judge_server.requests) == 1


def test_a_misquoted_cited_text_is_judged_with_its_diff_and_never_automatic(judge, url, run):  # noqa: F811
    judge.content = quoting("supported", 0.99)
    row = verify_citation(CLAIM, url(PAGE), run.ctx.replace(auto_accept=0.5), quotes=[NEAR_MISS])
    assert (row["label"], row["status"]) == ("supported", "misquoted")
    assert row["diff"] == "At sea level, pure water boils at 100 °C [-(or 212-] {+(212+} °F)."
    assert row["auto"] is False
    plain = verify_citation(CLAIM, url(PAGE), run.ctx.replace(auto_accept=0.5))
    assert (plain["status"], plain["auto"]) == (None, True)               # the same verdict, nothing carried


def test_a_dead_link_settles_first_and_its_cited_text_is_not_looked_for(judge, judge_server, url, run):  # noqa: F811
    row = verify_citation(CLAIM, url("/articles/boiling-point-table-2019"), run.ctx, quotes=[INVENTED])
    assert (row["label"], row["reason"], row["status"]) == ("unreachable", "http_404", None)


def test_trace_text_matches_the_carried_text_too(judge, judge_server, run):  # noqa: F811
    trace = trace_text(CLAIM, ON_PAGE + "\n\nMore text about kettles.", run.ctx, quotes=[INVENTED])
    assert (trace.row["reason"], trace.row["status"]) == ("fabricated_quote", "missing")
    assert judge_server.requests == []


def test_verify_claim_passes_each_url_its_own_texts(judge, url, run):  # noqa: F811
    judge.content = quoting("supported")
    urls = [url(PAGE), url("/guides/cooking-at-altitude")]
    result = verify_claim(CLAIM, urls, run.ctx, quotes={urls[1]: [INVENTED]})
    assert [(c["status"], c["reason"]) for c in result["citations"]] == [(None, None), ("missing", "fabricated_quote")]


def test_batch_checks_the_carried_texts_and_journals_them(judge, judge_server, url, run, tmp_path):  # noqa: F811
    judge.content = quoting("supported")
    lines = [{"id": "a", "claim": CLAIM, "urls": [url(PAGE)], "quotes": {url(PAGE): ON_PAGE}},
             {"id": "b", "claim": CLAIM, "urls": [url(PAGE)], "quotes": {url(PAGE): [INVENTED]}}]
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    db = tmp_path / "journal.db"
    result = batch.run_batch(path, run.ctx, db=db)
    assert [(r["id"], r["label"], r["reason"], r["status"]) for r in result.rows] == [
        ("a", "supported", None, "found"), ("b", "not_found", "fabricated_quote", "missing")]
    assert len(judge_server.requests) == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id, quote, status FROM citations ORDER BY id").fetchall() == [
            ("a", ON_PAGE, "found"), ("b", INVENTED, "missing")]
    assert batch.run_batch(path, run.ctx, db=db).reused == 2                 # same texts: read back
    lines[1]["quotes"] = {url(PAGE): ON_PAGE}                                 # a changed text: checked again
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    again = batch.run_batch(path, run.ctx, db=db)
    assert (again.reused, again.rows[1]["status"], again.rows[1]["label"]) == (1, "found", "supported")
    out = tmp_path / "rows.csv"
    batch.write_csv(again.rows, out)
    assert out.read_text(encoding="utf-8").splitlines()[0].endswith(",method,span_start,span_end,status,diff,notice,overall")


def test_verify_cli_takes_quotes_for_its_urls(judge, judge_server, url, run, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("CITECHECK_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("OPENAI_BASE_URL", run.ctx.settings.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code = cli.main(["verify", "--claim", CLAIM, "--url", url(PAGE), "--quote", url(PAGE), INVENTED])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["citations"][0]["reason"] == "fabricated_quote"
    assert cli.main(["verify", "--claim", CLAIM, "--url", url(PAGE), "--quote", "http://elsewhere/", "x"]) == 1
    assert "--quote names 'http://elsewhere/', which no --url gives" in capsys.readouterr().err


# ---------------------------------------------------------------- long carried texts on a long page

RFC = (Path(__file__).resolve().parent.parent / "data/rfc7519.txt").read_text(encoding="utf-8")
SEEN = page_text(RFC)                       # the page as a reader sees it: what a citation quotes


def one_letter_off(at: int, n: int) -> tuple[str, str, str]:
    """The whole words of the page's n characters from `at`, with the letter nearest their middle
    changed: (quote, the word as quoted, the word on the page)."""
    span = SEEN[at:at + n]
    span = span[(span.index(" ") + 1 if at else 0):span.rindex(" ") if at + n < len(SEEN) else n].strip()
    i = len(span) // 2
    while not span[i].isalpha():
        i += 1
    quote = span[:i] + ("q" if span[i] != "q" else "z") + span[i + 1:]
    word = lambda text: re.split(r"\s", text[:i])[-1] + re.split(r"\s", text[i:])[0]  # noqa: E731 - at i
    return quote, word(quote), word(span)


@pytest.mark.parametrize("n", [300, 600, 1000, 4999])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_a_long_carried_text_one_letter_off_is_misquoted_with_its_diff(n, where):
    """The page is one long text: the quote is placed where its pieces stand, then aligned (matching)."""
    at = {"start": 0, "middle": (len(SEEN) - n) // 2, "end": len(SEEN) - n}[where]
    quote, quoted, real = one_letter_off(at, n)
    match = carried_match([quote], page_of("https://www.rfc-editor.org/rfc/rfc7519.txt", RFC),
                          matching.NEAR_MISS_MAX_CHARS)
    assert (match.status, match.score >= 99, len(quote) > n - 40) == ("misquoted", True, True)
    assert f"[-{quoted}-] {{+{real}+}}" in match.diff and match.diff.count("[-") == 1


def test_a_long_misquoted_carried_text_is_judged_and_never_automatic(judge, judge_server, run):  # noqa: F811
    judge.content = quoting("supported", 0.99)
    quote, _, _ = one_letter_off(len(SEEN) // 2, 1000)
    trace = trace_text(CLAIM, RFC, run.ctx.replace(auto_accept=0.5), quotes=[quote])
    assert (trace.row["status"], trace.row["auto"], len(judge_server.requests)) == ("misquoted", False, 1)


def test_a_long_invented_carried_text_is_still_a_fabricated_quote(judge, judge_server, run):  # noqa: F811
    invented = " ".join(random.Random(3).sample(RFC.split(), 300))[:1000]
    trace = trace_text(CLAIM, RFC, run.ctx, quotes=[invented])
    assert (trace.row["reason"], trace.row["status"]) == ("fabricated_quote", "missing")
    assert judge_server.requests == []
