"""Offsets everywhere: every found quote and evidence quote carries its span in the text the
row names — check's rows (the section), verify's (the page's text as stored), CSV, the audit DB — and a
stored span that no longer matches is a labelled outcome, never an exception."""
from __future__ import annotations

import json
import random

import pytest
from audit_dbs import at_version

from citecheck import audit, check, matching
from citecheck.audit import migrations
from citecheck.matching import spans
from citecheck.source import sources
from citecheck.vocabulary import SPAN_CHANGED, SPAN_INVALID, SPAN_MATCHES, SPAN_NONE

RFC = sources.load("data/rfc7519.txt")
CITATIONS = json.loads(open("data/citations.json", encoding="utf-8").read())
PIECES = ["word", "Wort", "x", "-", "case-\n   sensitive", "\u201cquoted\u201d", "it\u2019s", "\u2014", " ", "  ",
          "\n", "\n\n   ", "\t", "\u00a0", "\u2003", "a-\nb", "9", ".", "\r\n"]


def test_folded_is_normalise_and_every_span_of_it_maps_back_to_raw_text_that_normalises_to_it():
    rng = random.Random(27)
    for _ in range(400):
        raw = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 40)))
        folded = spans.Folded(raw)
        assert folded.text == matching.normalise(raw), repr(raw)
        text = folded.text
        for _ in range(20):
            if not text:
                break
            start = rng.randrange(len(text))
            end = rng.randrange(start, len(text)) + 1
            if text[start] in " -" or text[end - 1] == " ":
                continue       # a span never starts or ends on a space; "-b" alone is no wrap to rejoin
            a, b = folded.raw_span(start, end)
            assert 0 <= a <= b <= len(raw) and matching.normalise(raw[a:b]) == text[start:end], (raw, start, end)


def test_find_gives_the_raw_span_of_a_quote_across_a_line_wrap_and_typographic_quotes():
    page = "Intro.\n\nAt sea level,  pure water\n   boils at 100 \u00b0C (\u201cstandard\u201d)."
    start, end = spans.find('pure water boils at 100 \u00b0C ("standard")', page)
    assert page[start:end] == "pure water\n   boils at 100 \u00b0C (\u201cstandard\u201d)"
    assert spans.find("not on the page at all", page) is None and spans.find(".", page) is None


def test_check_rows_carry_the_span_of_the_found_quote_and_of_the_misquotes_closest_text(ctx):
    judge = lambda claim, source: {"relation": "supports", "confidence": 0.9}   # noqa: E731
    checked = check.check_matches(RFC, CITATIONS, ctx, judge=judge)
    located = 0
    for (row, match), citation in zip(checked, CITATIONS):
        if row["status"] not in ("found", "misquoted"):
            assert (row["span_start"], row["span_end"]) == (None, None)
            continue
        located += 1
        text = RFC.sections[row["section"]].text[row["span_start"]:row["span_end"]]
        wanted = matching.normalise(citation["quote"]) if row["status"] == "found" else match.closest
        assert matching.normalise(text) == wanted
    assert located >= 6
    c1 = next(row for row, _ in checked if row["id"] == "C1")
    assert "\n" in RFC.sections["4.1.4"].text[c1["span_start"]:c1["span_end"]]   # the RFC's own line wrap


def test_check_json_adds_the_section_and_span_of_a_located_quote_only(ctx):
    judge = lambda claim, source: {"relation": "supports", "confidence": 0.9}   # noqa: E731
    checked = check.check_matches(RFC, CITATIONS, ctx, judge=judge)
    printed = {row["id"]: check.json_row(row, match) for row, match in checked}
    assert {k: printed["C1"][k] for k in ("section", "span_start", "span_end")} == {
        "section": "4.1.4", "span_start": checked[0][0]["span_start"], "span_end": checked[0][0]["span_end"]}
    assert "span_start" not in printed["C5"]                      # fabricated: nowhere to point


def test_verify_rows_carry_the_evidence_quotes_span_in_the_page_text(ctx, monkeypatch):
    from citecheck import verify
    page = ("Boiling\n\nAt sea level, pure water boils at 100 \u00b0C.\nUp a mountain\n"
            "it boils   at a lower temperature.")
    quote = "Up a mountain it boils at a lower temperature."
    monkeypatch.setattr(verify.methods, "judge", lambda claim, shown, ctx: {
        "label": "supported", "evidence_quote": quote, "confidence": 0.9, "reason": None, "method": "one_pass",
        "model": "m"})
    row = verify.trace_text("Water boils cooler up a mountain.", page, ctx).row
    assert row["label"] == "supported"
    assert page[row["span_start"]:row["span_end"]] == "Up a mountain\nit boils   at a lower temperature."
    monkeypatch.setattr(verify.methods, "judge", lambda claim, shown, ctx: {
        "label": "supported", "evidence_quote": "invented", "confidence": 0.9, "reason": None})
    row = verify.trace_text("x", page, ctx).row                   # the guard cleared it: no quote, no span
    assert (row["evidence_quote"], row["span_start"], row["span_end"]) == (None, None, None)


def test_the_audit_db_keeps_spans_and_an_older_db_gains_the_columns_keeping_its_rows(tmp_path):
    path = tmp_path / "v4.db"
    raw = at_version(path, 4)
    raw.execute("INSERT INTO citations (batch, id, claim, url, label, decided_at) "
                "VALUES ('b', 'old', 'c', 'http://x', 'supported', 't')")
    raw.commit()
    raw.close()
    conn = audit.connect(path)
    assert migrations.applied(conn)[-1] == 5
    assert (audit.decided(conn, "b")[("old", "http://x")]["span_start"]) is None
    audit.write_citation(conn, "b", "new", "c", {"url": "http://x", "label": "supported",
                                                  "evidence_quote": "boils", "span_start": 3, "span_end": 8})
    row = audit.decided(conn, "b")[("new", "http://x")]
    assert (row["span_start"], row["span_end"]) == (3, 8)


def test_check_audits_the_span_in_the_section(tmp_path, ctx):
    from citecheck.audit.source import write_check
    judge = lambda claim, source: {"relation": "supports", "confidence": 0.9}   # noqa: E731
    rows = check.check_citations(RFC, CITATIONS, ctx, judge=judge)
    conn = audit.connect(tmp_path / "a.db")
    written = {r["id"]: r for r in write_check(conn, "citations.json", "rfc.txt", RFC, CITATIONS, rows)}
    for row in rows:
        kept = written[row["id"]]
        assert (kept["span_start"], kept["span_end"]) == (row["span_start"], row["span_end"])
        if kept["span_start"] is not None:
            text = RFC.sections[kept["section"]].text
            assert spans.check(text, kept["span_start"], kept["span_end"], kept["evidence_quote"]) == SPAN_MATCHES


@pytest.mark.parametrize("start, end, outcome", [
    (4, 9, SPAN_MATCHES), (None, None, SPAN_NONE), (9, 4, SPAN_INVALID), (-1, 3, SPAN_INVALID),
    (4, 10_000, SPAN_INVALID), ("4", "9", SPAN_INVALID), (True, 9, SPAN_INVALID), (4, None, SPAN_INVALID),
    (4.0, 9.0, SPAN_INVALID)])
def test_a_stored_span_is_checked_against_the_text_before_use_never_raising(start, end, outcome):
    assert spans.check("The boils here.", start, end, "boils") == outcome


def test_a_span_into_a_page_that_changed_since_is_labelled_changed():
    before = "Water boils at 100 \u00b0C at sea level."
    start, end = spans.find("boils at 100 \u00b0C", before)
    assert spans.check(before, start, end, "boils at 100 \u00b0C") == SPAN_MATCHES
    after = "Update: water boils at 100 \u00b0C at sea level."      # fetched again: the text moved
    assert spans.check(after, start, end, "boils at 100 \u00b0C") == SPAN_CHANGED
    assert spans.check(after[:5], start, end, "boils at 100 \u00b0C") == SPAN_INVALID   # now past its end


def test_a_cluster_workers_row_with_a_bad_span_is_off_the_row_contract():
    from citecheck.batch import cluster
    row = {"url": "http://x", "label": "not_found", "model": None}
    assert cluster._row({**row, "span_start": 1, "span_end": 5}, "http://x", {None})["span_end"] == 5
    with pytest.raises(cluster.ResultInvalid, match="span"):
        cluster._row({**row, "span_start": "1", "span_end": 5}, "http://x", {None})


# ---------------------------------------------------------------- the review page and the report mark by span

SECTION = "The boils here. Water boils at 100 \u00b0C.\nIt boils at 100 \u00b0C up there too."


def source_row(start, end, **more):
    return {"flow": "source", "section": "4.1", "evidence_quote": "boils at 100 \u00b0C", "span_start": start,
            "span_end": end, "passages": json.dumps([SECTION]), **more}


def test_a_source_row_marks_exactly_its_span_not_every_occurrence_of_the_words():
    from citecheck.report import render_html
    start = SECTION.index("boils at 100 \u00b0C up")
    (number, holds, segments), = render_html.passages_of(source_row(start, start + 15))
    assert holds and [text for text, hit in segments if hit] == ["boils at 100 \u00b0C"]
    assert "".join(text for text, _ in segments) == SECTION
    assert render_html.span_line(source_row(start, start + 15)) == f"characters {start}-{start + 15} of section 4.1 (marked below)"


@pytest.mark.parametrize("start, end, state", [(0, 15, SPAN_CHANGED), (30, 9_999, SPAN_INVALID), ("x", 3, SPAN_INVALID)])
def test_a_span_that_no_longer_holds_the_quote_is_said_and_the_words_are_marked_instead(start, end, state):
    from citecheck.report import render_html
    row = source_row(start, end)
    (_, holds, segments), = render_html.passages_of(row)
    assert holds and [text for text, hit in segments if hit] == ["boils at 100 \u00b0C"] * 2   # by its words
    line = render_html.span_line(row)
    assert f"span {state}" in line and "marked by the quote's words instead" in line


def test_a_web_rows_span_names_the_stored_page_and_the_report_shows_it():
    from citecheck.report import render_html, report_html
    row = {"flow": "web", "evidence_quote": "boils", "span_start": 40, "span_end": 90, "rid": "r1"}
    assert render_html.span_line(row) == "characters 40-90 of the page's text as stored (rid r1)"
    assert render_html.span_line({**row, "span_start": None, "span_end": None}) is None
    batch_row = {"id": "c1", "claim": "c", "url": "http://x", "label": "supported", "reason": None,
                 "confidence": 0.9, "evidence_quote": "boils", "final_url": None, "original_status": 200,
                 "rid": None, "auto": True, "auto_note": None, "method": "pooled", "span_start": 40, "span_end": 90,
                 "overall": "supported"}
    assert "characters 40-90 of the page&#39;s text as stored" in report_html.render([batch_row], batch="b",
                                                                                      threshold=0.8)


def test_the_review_page_marks_a_checked_citation_by_its_span(make_ctx, tmp_path):
    from fastapi.testclient import TestClient

    from citecheck.serve.api import create_app
    token = "review-token-FAKE-0123456789abcdef"
    start = SECTION.index("boils at 100 \u00b0C up")
    conn = audit.connect(tmp_path / "audit.db")
    audit.write_citation(conn, "check:c.json", "C1", "claim", {
        "url": "rfc.txt", "label": "verified", "confidence": 0.5, "auto": False, "flow": "source", "section": "4.1",
        "status": "found", "quote": "boils at 100 \u00b0C", "evidence_quote": "boils at 100 \u00b0C",
        "passages": [SECTION], "span_start": start, "span_end": start + 15}, "m")
    conn.close()
    app = create_app(make_ctx(secrets={"REVIEW_TOKEN": token}), lambda claim, urls: None)
    try:
        client = TestClient(app)
        client.post("/review/login", data={"name": "Ann", "token": token}, follow_redirects=False)
        listing = client.get("/review")
        link = listing.text.split('href="/review/item?', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        item = client.get("/review/item?" + link)
    finally:
        app.state.audit_writer.close()
    assert item.status_code == 200
    assert f"characters {start}-{start + 15} of section 4.1 (marked below)" in item.text
    assert item.text.count("<mark>boils at 100 °C</mark>") == 1
