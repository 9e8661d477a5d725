"""The fixture site: a real HTTP server on 127.0.0.1 producing the statuses and redirects in routes.json."""
from __future__ import annotations

import socket

import httpx
import pytest

from citecheck.config import Settings
from citecheck.vocabulary import is_transient
from citecheck.web import fetch, passages, retrieval
from citecheck.web import fixture_site as site

LONG_CLAIM = "At 3,000 metres above sea level, water boils at about 90 °C."
LONG_EVIDENCE = "a pot of water comes to a full boil at roughly 90 °C"


@pytest.fixture(scope="module")
def running():
    with site.start(port=0) as server:
        yield server


@pytest.mark.parametrize("path, route", site.load_routes().items(), ids=list(site.load_routes()))
def test_every_route_answers_with_its_status_redirect_and_type(running, path, route):
    response = httpx.get(running.url(path), follow_redirects=False, timeout=5)
    assert response.status_code == route.get("status", 200)
    assert response.headers[site.MARKER] == site.MARKER_VALUE
    assert response.headers.get("location") == route.get("redirect")
    if "content_type" in route:
        assert response.headers["content-type"] == route["content_type"]
    if "page" in route and route.get("layout", True):
        assert "Kettle &amp; Flame" in response.text and route["title"] in response.text


def test_an_unknown_path_is_a_404_page_and_head_has_no_body(running):
    response = httpx.get(running.url("/no/such/page?x=1"))
    assert response.status_code == 404 and "page not found" in response.text
    head = httpx.head(running.url("/articles/boiling-point"))
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) > 1000


def test_the_pdfs_are_real_pdfs_built_by_the_committed_script(running):
    import subprocess
    import sys
    for path in ("/reports/boiling-point-survey.pdf", "/reports/boiling-point-scan.pdf"):
        response = httpx.get(running.url(path))
        assert response.content.startswith(b"%PDF-1.4") and response.content.rstrip().endswith(b"%%EOF")
    check = subprocess.run([sys.executable, "scripts/build_site_pdfs.py", "--check"], cwd=site.ROOT,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr


def test_the_survey_pdf_has_two_pages_of_text_and_the_scan_none():
    from citecheck.source import pdf_text
    survey = pdf_text.load(site.SITE_DIR / "files" / "boiling-point-survey.pdf")
    assert [s for s in survey.sections if "-" not in s][:2] == ["1", "2"]
    text = " ".join(survey.text.split())
    assert "at 3,000 metres above sea level it came to a full boil at roughly 90 °C" in text
    with pytest.raises(pdf_text.PdfError) as refused:
        pdf_text.load(site.SITE_DIR / "files" / "boiling-point-scan.pdf")
    assert (refused.value.reason, refused.value.detail) == ("pdf_unsupported", "no extractable text")


def test_serve_yields_the_base_url_and_stops_after_the_block():
    with site.serve(port=0) as base_url:
        assert httpx.get(base_url + "/").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(base_url + "/", timeout=2)


def test_a_port_already_serving_the_fixture_site_is_reused_and_left_running(running):
    again = site.start(port=running.port)
    assert (again.owned, again.base_url) == (False, running.base_url)
    again.stop()
    assert httpx.get(running.url("/")).status_code == 200


def test_a_port_held_by_another_program_is_an_error_naming_the_setting():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        with pytest.raises(OSError, match="CITECHECK_SITE_PORT"):
            site.start(port=holder.getsockname()[1])
    finally:
        holder.close()


def test_the_fixed_port_comes_from_config():
    assert site.DEFAULT_PORT == Settings.from_env({}).site_port == 8731
    assert Settings.from_env({"CITECHECK_SITE_PORT": "9123"}).site_port == 9123
    with pytest.raises(ValueError, match="CITECHECK_SITE_PORT"):
        Settings.from_env({"CITECHECK_SITE_PORT": "eighty"})


def test_a_route_without_a_page_file_or_redirect_is_rejected(tmp_path):
    (tmp_path / "routes.json").write_text('{"/x": {"status": 200}}')
    with pytest.raises(ValueError, match="route '/x' must"):
        site.load_routes(tmp_path)


def test_every_referenced_file_exists_and_the_readme_says_fixtures():
    for route in site.load_routes().values():
        if "page" in route:
            assert (site.SITE_DIR / "pages" / route["page"]).is_file()
        if "file" in route:
            assert (site.SITE_DIR / route["file"]).is_file()
    assert "These pages are fixtures" in (site.SITE_DIR / "README.md").read_text()


def test_pages_lists_what_each_fixture_demonstrates():
    rows = {row["path"]: row for row in site.pages()}
    assert "/status/slow" not in rows and "/status/unavailable" not in rows    # test-only routes hidden
    assert rows["/articles/boiling-point-table-2019"]["reason"] == "http_404"
    assert {row["reason"] for row in rows.values()} >= {
        "http_404", "http_410", "redirected_to_homepage", "soft_404", "empty_page", "pdf_unsupported",
        "paywall", "login_required"}
    every = {row["reason"] for row in site.pages(include_test_only=True)}
    assert every >= {"bot_challenge", "access_denied", "rate_limited", "crawl_failed"}
    transient = [row["path"] for row in site.pages() if is_transient(row["reason"])]
    assert transient == []          # a shown page must replay offline: transient results are never cached


def test_the_boiling_point_article_states_100_degrees_at_sea_level(running, make_ctx):
    text = fetch.fetch(running.url("/articles/boiling-point"), make_ctx(allow_private=True)).markdown
    assert "At sea level, pure water boils at 100 °C (212 °F)." in text
    assert len(passages.split_passages(text)) >= 3


def test_the_long_articles_evidence_is_its_second_best_passage(running, make_ctx):
    text = fetch.fetch(running.url("/guides/cooking-at-altitude"), make_ctx(allow_private=True)).markdown
    assert len(text.split()) >= 1500 and text.count("\n## ") >= 8
    chunks = passages.split_passages(text)
    ranked = [i for i, _score in retrieval.rank(LONG_CLAIM, chunks, k=len(chunks), how="minilm")]
    holding = [i for i, chunk in enumerate(chunks) if LONG_EVIDENCE in " ".join(chunk.split())]
    assert len(holding) == 1
    assert ranked.index(holding[0]) == 1, "the evidence should be the second-best passage, not the best"
