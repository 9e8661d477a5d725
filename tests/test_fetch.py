"""fetch: every branch of both backends.

Crawlbase runs through the unmodified crawlbase SDK against a Crawling-API stand-in on 127.0.0.1
(CRAWLBASE_API_URL); the direct fetcher runs against the fixture site served on 127.0.0.1.
"""
from __future__ import annotations

import json
from pathlib import Path

import crawlbase.base_api
import pytest
from standins.crawlbase import JS_TOKEN, NORMAL_TOKEN, Answer, CrawlingStandIn
from standins.http import StandIn

from citecheck import cache
from citecheck.config import PdfLimits, parse_origins
from citecheck.web import fetch, netguard
from citecheck.web import fixture_site as site
from citecheck.web.fetch import FetchResult, pages
from citecheck.web.fetch.crawlbase import CRAWLBASE_OPTIONS
from citecheck.web.fetch.pages import BACKOFF

TARGET = "https://kettle.example/articles/boiling-point"
ARTICLE = "\n\n".join(["At sea level, pure water boils at 100 °C (212 °F), the figure recipes assume."] * 8)
THIN = "Loading the article"
NO_WAIT = (lambda seconds: None)


def cache_text(run) -> str:
    """Every recorded entry as JSON, and the bytes of every cache file on disk (the store and its WAL)."""
    path = run.ctx.settings.cache_path
    files = [p for p in path.parent.iterdir() if p.name.startswith((path.name, path.stem + ".sqlite"))]
    return json.dumps(run.ctx.cache.entries(), ensure_ascii=False) + "".join(
        p.read_bytes().decode("utf-8", "replace") for p in files)


# ------------------------------------------------------------------ Crawlbase through the SDK

@pytest.fixture
def crawl(run, make_ctx):
    """crawl(script, js_token=True) -> a running stand-in the SDK is pointed at (stopped after the test)."""
    started = []

    def start(script=None, js_token=True):
        api = CrawlingStandIn(script).__enter__()
        started.append(api)
        secrets = {"CRAWLBASE_TOKEN": NORMAL_TOKEN, **({"CRAWLBASE_JS_TOKEN": JS_TOKEN} if js_token else {})}
        run.ctx = make_ctx(secrets=secrets, crawlbase_api_url=api.url, crawlbase_timeout=0.5)
        return api

    yield start
    for api in started:
        api.__exit__(None, None, None)
    crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"


def mode(call: dict) -> str:
    """Which attempt this is: readable / plain (no readability), with js_token / js_param when rendering."""
    base = "readable" if call.get("md_readability") == "true" else "plain"
    if call["token"] == JS_TOKEN:
        return base + "+js_token"
    return base + ("+js_param" if call.get("javascript") == "true" else "")


def by_mode(answers: dict[str, Answer]):
    return lambda call: answers[mode(call)]


def test_a_readable_page_is_one_call_with_md_readability_and_store(crawl, run):
    api = crawl(by_mode({"readable": Answer(ARTICLE, rid_header=True)}))
    result = fetch.fetch(TARGET, run.ctx)
    assert result == FetchResult(TARGET, TARGET, 200, ARTICLE, "rid00001", None, None, "crawlbase")
    assert len(api.calls) == 1
    call = api.calls[0]
    assert (call["url"], call["token"], call["format"], call["md_readability"], call["store"]) == \
        (TARGET, NORMAL_TOKEN, "md", "true", "true")
    assert "javascript" not in call


def test_the_rid_comes_from_the_storage_url_whose_token_is_never_kept(crawl, run):
    crawl(by_mode({"readable": Answer(ARTICLE)}))          # storage_url header only, no rid header
    result = fetch.fetch(TARGET, run.ctx)
    assert result.rid == "rid00001"
    written = cache_text(run)
    assert TARGET in written and "rid00001" in written
    for secret in (NORMAL_TOKEN, JS_TOKEN, "storage_url", "api.crawlbase.com/storage"):
        assert secret not in written
        assert secret not in json.dumps(result.to_dict())


def test_a_thin_readable_page_is_fetched_again_without_readability(crawl, run):
    api = crawl(by_mode({"readable": Answer(THIN), "plain": Answer(ARTICLE)}))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.markdown, result.label, result.rid) == (ARTICLE, None, "rid00002")
    assert [mode(c) for c in api.calls] == ["readable", "plain"]
    assert (api.calls[1]["format"], api.calls[1]["store"]) == ("md", "true")


def test_a_page_still_thin_escalates_to_the_js_token(crawl, run):
    api = crawl(by_mode({"readable": Answer(THIN), "plain": Answer(THIN), "readable+js_token": Answer(ARTICLE)}))
    result = fetch.fetch(TARGET, run.ctx)
    assert result.markdown == ARTICLE and result.label is None
    assert [mode(c) for c in api.calls] == ["readable", "plain", "readable+js_token"]
    assert "javascript" not in api.calls[2]


def test_without_a_js_token_escalation_sends_javascript_true_on_the_normal_token(crawl, run):
    api = crawl(by_mode({"readable": Answer(status=520), "readable+js_param": Answer(ARTICLE)}), js_token=False)
    result = fetch.fetch(TARGET, run.ctx)
    assert result.markdown == ARTICLE
    assert [mode(c) for c in api.calls] == ["readable", "readable+js_param"]
    assert api.calls[1]["token"] == NORMAL_TOKEN


def test_a_failed_crawl_520_escalates_straight_to_rendering(crawl, run):
    api = crawl(by_mode({"readable": Answer(status=520), "readable+js_token": Answer(ARTICLE)}))
    assert fetch.fetch(TARGET, run.ctx).markdown == ARTICLE
    assert [mode(c) for c in api.calls] == ["readable", "readable+js_token"]   # no plain retry of a 520


def test_a_520_after_rendering_too_is_crawl_failed_and_not_cached(crawl, run):
    api = crawl(lambda call: Answer(status=520))
    result = fetch.fetch(TARGET, run.ctx, sleep=NO_WAIT)
    assert (result.label, result.reason, result.markdown) == ("unreachable", "crawl_failed", "")
    assert len(api.calls) == 2
    assert TARGET not in cache_text(run)
    fetch.fetch(TARGET, run.ctx, sleep=NO_WAIT)                    # a live run tries again
    assert len(api.calls) == 4


def test_an_empty_origin_answer_207_escalates_then_settles_as_empty_page(crawl, run):
    api = crawl(lambda call: Answer("", cb_status=207))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.label, result.reason) == ("not_found", "empty_page")
    assert [mode(c) for c in api.calls] == ["readable", "readable+js_token"]


def test_an_app_shell_with_no_text_anywhere_is_empty_page_after_four_calls(crawl, run):
    api = crawl(lambda call: Answer(""))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.label, result.reason, result.markdown) == ("not_found", "empty_page", "")
    assert [mode(c) for c in api.calls] == ["readable", "plain", "readable+js_token", "plain+js_token"]


def test_a_paywall_teaser_keeps_its_short_text_without_a_label(crawl, run):
    teaser = "Pressure cooking, properly. Sealed pots are older than gas stoves. Subscribe to keep reading."
    crawl(lambda call: Answer(teaser))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.markdown, result.label, result.reason) == (teaser, None, None)


@pytest.mark.parametrize("status", [404, 410])
def test_a_dead_origin_is_unreachable_in_one_call(crawl, status, run):
    api = crawl(lambda call: Answer("Not Found", original_status=status, cb_status=status))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.label, result.reason, result.original_status) == ("unreachable", f"http_{status}", status)
    assert len(api.calls) == 1


def test_pc_status_is_read_when_cb_status_is_absent(crawl, run):
    api = crawl(lambda call: Answer("", original_status=None, cb_status=404, status_header="pc_status"))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.label, result.reason, result.original_status) == ("unreachable", "http_404", None)
    crawl_207 = crawl(lambda call: Answer("", cb_status=207, status_header="pc_status"))
    fetch.fetch(TARGET + "?v=2", run.ctx)
    assert len(api.calls) == 1 and len(crawl_207.calls) == 2


def test_a_deep_link_that_lands_on_the_homepage_is_not_found(crawl, run):
    crawl(lambda call: Answer(ARTICLE, url="https://kettle.example/"))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.label, result.reason, result.final_url) == \
        ("not_found", "redirected_to_homepage", "https://kettle.example/")


def test_a_short_not_found_template_is_a_soft_404_in_one_call(crawl, run):
    api = crawl(lambda call: Answer("# Oops! That page can't be found.\n\nNothing was found at this location."))
    result = fetch.fetch(TARGET, run.ctx)
    assert (result.label, result.reason, result.original_status) == ("unreachable", "soft_404", 200)
    assert len(api.calls) == 1


@pytest.mark.parametrize("compressed", [True, False])
def test_gzip_and_plain_bodies_read_the_same(crawl, compressed, run):
    api = crawl(lambda call: Answer(ARTICLE + "\n\nÉté: 100 °C", gzip=compressed))
    assert fetch.fetch(TARGET, run.ctx).markdown == ARTICLE + "\n\nÉté: 100 °C"
    assert len(api.calls) == 1


def test_timeouts_are_retried_with_backoff_then_crawl_failed(crawl, run):
    api = crawl(lambda call: Answer(ARTICLE, delay=1.0))          # CRAWLBASE_TIMEOUT is 0.5 s
    waits = []
    result = fetch.fetch(TARGET, run.ctx, sleep=waits.append)
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")
    assert waits == list(BACKOFF) and len(api.calls) == 1 + len(BACKOFF)
    assert TARGET not in cache_text(run)


def test_a_timeout_then_an_answer_recovers(crawl, run):
    api = crawl(lambda call: Answer(ARTICLE, delay=1.0 if call["call_index"] == 0 else 0))
    waits = []
    assert fetch.fetch(TARGET, run.ctx, sleep=waits.append).markdown == ARTICLE
    assert waits == [BACKOFF[0]] and len(api.calls) == 2


def test_api_5xx_is_retried_but_not_escalated(crawl, run):
    api = crawl(lambda call: Answer(ARTICLE) if call["call_index"] == 2 else Answer(status=503))
    waits = []
    assert fetch.fetch(TARGET, run.ctx, sleep=waits.append).markdown == ARTICLE
    assert waits == list(BACKOFF) and all(mode(c) == "readable" for c in api.calls)


def test_a_thin_page_beats_a_failed_rendering(crawl, run):
    api = crawl(by_mode({"readable": Answer(THIN), "plain": Answer(THIN), "readable+js_token": Answer(status=520)}))
    result = fetch.fetch(TARGET, run.ctx, sleep=NO_WAIT)
    assert (result.markdown, result.label, result.rid) == (THIN, None, "rid00002")   # the plain retry's
    assert len(api.calls) == 3


def test_an_unexpected_api_status_is_a_failed_crawl(crawl, run):
    api = crawl(lambda call: Answer(status=400))
    result = fetch.fetch(TARGET, run.ctx, sleep=NO_WAIT)
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")
    assert [mode(c) for c in api.calls] == ["readable", "readable+js_token"]


def test_a_rejected_token_is_an_error_naming_the_variable_not_its_value(crawl, make_ctx, run):
    api = crawl(lambda call: Answer(ARTICLE))
    run.ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": "cbFAKEwrong-000000"}, crawlbase_api_url=api.url,
                       crawlbase_timeout=0.5)
    with pytest.raises(fetch.CrawlbaseRejected, match="CRAWLBASE_TOKEN was rejected") as raised:
        fetch.fetch(TARGET, run.ctx)
    assert "cbFAKEwrong" not in str(raised.value)
    assert TARGET not in cache_text(run)


def test_every_call_gets_a_fresh_options_dict(crawl, run):
    """The SDK writes `url` into its options dict (and its default one); nothing may leak between calls."""
    from crawlbase import CrawlingAPI
    before = dict(CRAWLBASE_OPTIONS)
    api = crawl(lambda call: Answer(THIN if call["url"].endswith("/a") else ARTICLE))
    fetch.fetch("https://kettle.example/a", run.ctx)
    fetch.fetch("https://kettle.example/b", run.ctx)
    assert [c["url"] for c in api.calls] == ["https://kettle.example/a"] * 4 + ["https://kettle.example/b"]
    assert [mode(c) for c in api.calls][:4] == ["readable", "plain", "readable+js_token", "plain+js_token"]
    assert CRAWLBASE_OPTIONS == before
    assert CrawlingAPI.get.__defaults__ == ({},)


def test_offline_replay_returns_the_identical_result_without_a_call(crawl, run):
    api = crawl(by_mode({"readable": Answer(THIN), "plain": Answer(ARTICLE)}))
    live = fetch.fetch(TARGET, run.ctx)
    run.ctx = run.ctx.replace(offline=True)              # a new process: read back from the file
    assert fetch.fetch(TARGET, run.ctx) == live
    assert len(api.calls) == 2
    with pytest.raises(cache.CacheMiss, match="fetch.crawlbase"):
        fetch.fetch(TARGET + "/other", run.ctx)
    assert len(api.calls) == 2


def test_a_pdf_is_downloaded_directly_never_crawled(crawl, fixture_site, run):
    api = crawl(lambda call: Answer(ARTICLE))
    run.ctx = run.ctx.replace(allow_private=True)
    result = fetch.fetch(fixture_site.url("/reports/boiling-point-survey.pdf"), run.ctx)
    assert (result.label, result.reason, result.backend) == (None, None, "direct")
    assert "it came to a full boil at roughly 90 °C" in " ".join(result.markdown.split())
    assert api.calls == []
    assert '"fetch.pdf"' in cache_text(run)


def test_the_stand_in_origin_mode_crawls_the_fixture_site(crawl, fixture_site, run):
    """The same classification whether the page came through Crawlbase or directly."""
    crawl()
    for path, reason in [("/articles/boiling-point", None), ("/articles/boiling-point-table-2019", "http_404"),
                         ("/articles/kettle-scale-myths", "http_410"), ("/articles/steam-tables", "soft_404"),
                         ("/blog/2021/03/boiling-at-altitude", "redirected_to_homepage")]:
        result = fetch.fetch(fixture_site.url(path), run.ctx)
        assert (result.reason, result.backend) == (reason, "crawlbase"), path
    assert "boils at 100 °C" in fetch.fetch(fixture_site.url("/articles/boiling-point"), run.ctx).markdown


# ------------------------------------------------------------------ direct, against the fixture site

@pytest.fixture
def direct(run, fixture_site):
    run.ctx = run.ctx.replace(allow_private=True, fetch_timeout=0.4)
    return fixture_site


@pytest.mark.parametrize("page", site.pages(include_test_only=True), ids=lambda p: p["path"])
def test_direct_fetch_gives_each_fixture_page_its_label(direct, page, run):
    result = fetch.fetch(direct.url(page["path"]), run.ctx, sleep=NO_WAIT)
    assert (result.label, result.reason, result.backend) == (page["label"], page["reason"], "direct")


def test_direct_follows_a_redirect_and_keeps_the_final_url(direct, run):
    result = fetch.fetch(direct.url("/articles/water-boiling-point"), run.ctx)
    assert (result.final_url, result.original_status) == (direct.url("/articles/boiling-point"), 200)
    assert "At sea level, pure water boils at 100 °C (212 °F)." in result.markdown
    assert "Kettle & Flame is a fixture site" not in result.markdown          # readability dropped the chrome


def test_direct_thin_page_falls_back_to_the_whole_page_text(direct, run):
    soft = fetch.fetch(direct.url("/articles/steam-tables"), run.ctx)
    assert "Kettle & Flame is a fixture site" in soft.markdown                 # the whole page, chrome and all
    shell = fetch.fetch(direct.url("/app/boiling-calculator"), run.ctx)
    assert shell.markdown == ""                                                # a <noscript> note is not text


def test_direct_timeouts_are_retried_with_backoff_then_not_cached(direct, run):
    waits = []
    result = fetch.fetch(direct.url("/status/slow"), run.ctx, sleep=waits.append)
    assert (result.label, result.reason, result.original_status) == ("unreachable", "crawl_failed", None)
    assert waits == list(BACKOFF)
    assert "/status/slow" not in cache_text(run)


def test_direct_5xx_keeps_the_status(direct, run):
    result = fetch.fetch(direct.url("/status/unavailable"), run.ctx, sleep=NO_WAIT)
    assert (result.reason, result.original_status) == ("crawl_failed", 503)


def test_direct_results_replay_offline(direct, run):
    live = fetch.fetch(direct.url("/guides/cooking-at-altitude"), run.ctx)
    run.ctx = run.ctx.replace(offline=True)
    assert fetch.fetch(direct.url("/guides/cooking-at-altitude"), run.ctx) == live


def test_direct_size_cap_drops_the_rest(direct, run):
    run.ctx = run.ctx.replace(fetch_max_bytes=3000)
    capped = fetch.fetch(direct.url("/guides/cooking-at-altitude"), run.ctx)
    assert 0 < fetch.non_space(capped.markdown) < 3000


def test_direct_refuses_loopback_without_the_allowance(fixture_site, run):
    result = fetch.fetch(fixture_site.url("/articles/boiling-point"), run.ctx)
    assert (result.label, result.reason) == ("unreachable", "blocked_address")
    assert fixture_site.url("/articles/boiling-point") not in cache_text(run)


def test_direct_checks_every_redirect_hop(direct, monkeypatch, run):
    """A public page must not bounce the fetch into the private network: netguard sees each hop."""
    seen = []
    real = netguard.vet

    def check(url, **kwargs):
        seen.append(url)
        if url.endswith("/articles/boiling-point"):
            raise netguard.BlockedURL("loopback", "test")
        return real(url, **kwargs)

    monkeypatch.setattr(netguard, "vet", check)
    result = fetch.fetch(direct.url("/articles/water-boiling-point"), run.ctx)
    assert seen == [direct.url("/articles/water-boiling-point"), direct.url("/articles/boiling-point")]
    assert (result.label, result.reason) == ("unreachable", "blocked_address")


@pytest.mark.parametrize("url", ["ftp://kettle.example/a", "https:///no-host", "kettle.example/a",
                                 "http://[::1/a", "http://kettle.example:port/a"])
def test_a_url_that_is_not_http_with_a_host_is_invalid(url, run):
    result = fetch.fetch(url, run.ctx)
    assert (result.label, result.reason) == ("unreachable", "invalid_url")


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_no_url_at_all_is_a_value_error(bad, run):
    with pytest.raises(ValueError, match="url must be a non-empty string"):
        fetch.fetch(bad, run.ctx)


# ------------------------------------------------------------------ classification rules

def test_soft_404_needs_both_a_short_page_and_not_found_wording():
    template = "Error 404. The page you are looking for does not exist."
    article = Path(site.SITE_DIR, "pages", "altitude-guide.html").read_text() + " It once returned a 404."
    assert fetch.is_soft_404(template)
    assert not fetch.is_soft_404("A short note about kettles and their scale.")
    assert not fetch.is_soft_404(article)                 # long: mentioning 404 does not make it one


@pytest.mark.parametrize("url, final, expected", [
    ("https://a.example/deep/link", "https://a.example/", ("not_found", "redirected_to_homepage")),
    ("https://a.example/deep/link", "https://b.example", ("not_found", "redirected_to_homepage")),
    ("https://a.example/", "https://a.example/", (None, None)),                 # the homepage itself was cited
    ("https://a.example/deep", "https://a.example/deeper", (None, None)),
])
def test_homepage_rule(url, final, expected):
    assert fetch.settle(url, final, 200, ARTICLE) == expected


# ------------------------------------------------------------------ a hostile world: bounded, labelled

import gzip  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402

from standins.slow_origin import SlowOrigin, drip, drip_head, page, raw, reset, response, routes, stall  # noqa: E402

PAGE_HTML = "<html><body><article>" + "".join(f"<p>{line}</p>" for line in ARTICLE.split("\n\n")) + \
    "</article></body></html>"


@pytest.fixture
def loopback(run):
    """The direct fetcher allowed to reach loopback (the stand-ins), with the default limits."""
    run.ctx = run.ctx.replace(allow_private=True)
    return run


@pytest.fixture
def hostile(run):
    """The direct fetcher allowed to reach loopback, a short total deadline, a long per-read timeout."""
    run.ctx = run.ctx.replace(allow_private=True, fetch_timeout=30.0, fetch_deadline=1.5)
    return run


def timed(call):
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


@pytest.mark.parametrize("behaviour", [
    drip(response(200, length=len(PAGE_HTML.encode())), PAGE_HTML.encode(), 0.2),   # 1 byte / 0.2 s: ~3 min
    drip_head(response(200, length=100) + b"x" * 100, 0.2),                          # the head itself drips
    stall(response(200, length=1000)),                                               # a head, then silence
    stall(),                                                                          # silence from the start
], ids=["drip-body", "drip-head", "stall-after-head", "stall"])
def test_a_slow_origin_cannot_hold_a_direct_fetch_past_the_deadline(hostile, behaviour):
    """FETCH_TIMEOUT (30 s here) bounds one read; FETCH_DEADLINE (1.5 s) the whole fetch, with its retries."""
    with SlowOrigin(behaviour) as origin:
        result, seconds = timed(lambda: fetch.fetch(origin.url + "/page", hostile.ctx))
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")
    assert seconds < 6, f"the fetch took {seconds:.1f} s with a 1.5 s deadline"
    assert origin.url not in cache_text(hostile)


def test_a_reset_connection_is_retried_then_crawl_failed(hostile):
    hostile.ctx = hostile.ctx.replace(fetch_deadline=60.0)
    with SlowOrigin(reset(response(200, length=5000) + b"<p>half")) as origin:
        result = fetch.fetch(origin.url + "/page", hostile.ctx, sleep=NO_WAIT)
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")
    assert origin.connections == 1 + len(BACKOFF)


def test_no_retry_is_waited_for_past_the_deadline(hostile):
    from citecheck.web.fetch.html_text import readable_markdown
    readable_markdown("<p>warm up</p>")                 # trafilatura's first import is not the origin's time
    waits = []

    def wait(seconds):
        waits.append(seconds)
        time.sleep(seconds)
    with SlowOrigin(page("busy", status=503)) as origin:
        result = fetch.fetch(origin.url + "/page", hostile.ctx.replace(fetch_deadline=3.0), sleep=wait)
    assert (result.reason, result.original_status) == ("crawl_failed", 503)
    assert waits == [BACKOFF[0]]                        # 1 s fits in 3 s; the 3 s wait would end past it


def test_the_crawling_api_dripping_cannot_hold_a_crawlbase_fetch_past_the_deadline(make_ctx, run):
    body = gzip.compress(ARTICLE.encode(), mtime=0)
    headers = {"original_status": "200", "cb_status": "200", "url": TARGET, "Content-Encoding": "gzip"}
    head = response(200, headers, len(body), "text/plain; charset=utf-8")
    try:
        with SlowOrigin(drip(head, body, 0.2)) as api:
            run.ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": NORMAL_TOKEN}, crawlbase_api_url=api.url,
                               crawlbase_timeout=30.0, fetch_deadline=1.5)
            result, seconds = timed(lambda: fetch.fetch(TARGET, run.ctx))
    finally:
        crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")
    assert seconds < 6, f"the fetch took {seconds:.1f} s with a 1.5 s deadline"
    assert TARGET not in cache_text(run)


@pytest.mark.parametrize("answer", [
    response(200, {"original_status": "200", "cb_status": "200"}, 18, "application/json; charset=utf-8")
    + b"<html>not json</ht",                                                          # JSON type, not JSON
    response(200, {"original_status": "200", "cb_status": "200", "Content-Encoding": "gzip"}, 40,
             "text/plain; charset=utf-8") + gzip.compress(ARTICLE.encode(), mtime=0)[:40],   # truncated gzip
    b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\nshort",                          # cut before its length
], ids=["json-type-not-json", "truncated-gzip", "short-body"])
def test_a_crawling_api_answer_that_cannot_be_read_is_crawl_failed_not_a_traceback(answer, make_ctx, run):
    try:
        with SlowOrigin(raw(answer)) as api:
            run.ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": NORMAL_TOKEN}, crawlbase_api_url=api.url,
                               crawlbase_timeout=2.0)
            result = fetch.fetch(TARGET, run.ctx, sleep=NO_WAIT)
    finally:
        crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")
    assert TARGET not in cache_text(run)


def test_any_unexpected_backend_exception_is_a_labelled_fetch_error_and_not_cached(direct, monkeypatch, run,
                                                                                    caplog):
    from citecheck.web.fetch import direct as direct_backend

    def broken(html, url=None, seconds=None):
        raise RuntimeError("a bug in an extractor")
    monkeypatch.setattr(direct_backend, "extract", broken)
    url = direct.url("/articles/boiling-point")
    with caplog.at_level("WARNING", logger="citecheck.web.fetch"):
        result = fetch.fetch(url, run.ctx)
    assert (result.label, result.reason, result.detail) == ("unreachable", "fetch_error", "RuntimeError")
    assert "RuntimeError: a bug in an extractor" in caplog.text
    assert url not in cache_text(run)


def test_a_rejected_crawlbase_token_is_a_missing_setting_naming_the_variable(crawl, make_ctx, run):
    from citecheck.config import MissingSetting
    api = crawl(lambda call: Answer(ARTICLE))
    run.ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": "cbFAKEwrong-000000"}, crawlbase_api_url=api.url)
    with pytest.raises(MissingSetting) as raised:
        fetch.fetch(TARGET, run.ctx)
    assert raised.value.name == "CRAWLBASE_TOKEN"
    assert str(raised.value) == "CRAWLBASE_TOKEN was rejected (Crawlbase HTTP 401)"


# ------------------------------------------------------------------ pages that look empty but are not

FRENCH = "<html><body><p>Été : l’eau bout à 100 °C au niveau de la mer.</p></body></html>"


@pytest.mark.parametrize("charset", ["idna", "rot13", "no-such-codec"])
def test_a_charset_that_cannot_decode_the_page_falls_back_to_detection(loopback, charset):
    with SlowOrigin(page(FRENCH.encode("utf-8"), f"text/html; charset={charset}")) as origin:
        result = fetch.fetch(origin.url + "/fr", loopback.ctx)
    assert result.label is None and "l’eau bout à 100 °C" in result.markdown


def test_a_page_with_an_xml_declaration_before_its_doctype_is_read(loopback):
    body = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            '<head><title>t</title></head><body><div><p>Water boils at one hundred degrees at sea level.</p>'
            '</div></body></html>')
    with SlowOrigin(page(body)) as origin:
        result = fetch.fetch(origin.url + "/xhtml", loopback.ctx)
    assert (result.label, result.markdown) == (None, "Water boils at one hundred degrees at sea level.")


def test_a_page_nested_100000_divs_deep_is_read(loopback):
    text = "Water boils at one hundred degrees Celsius at sea level, the survey says. " * 4
    body = "<html><body>" + "<div>" * 100_000 + f"<p>{text}</p>" + "</div>" * 100_000 + "</body></html>"
    with SlowOrigin(page(body)) as origin:
        result = fetch.fetch(origin.url + "/deep", loopback.ctx)
    assert result.label is None and result.markdown == text.strip()


# ------------------------------------------------------------------ DNS rebinding

@pytest.fixture
def rebinding_dns(monkeypatch):
    """`rebind*.test` names answer 127.0.0.1 the first time they are looked up and 127.0.0.2 after; the
    guard treats 127.0.0.1 as public (it stands for a public page) and 127.0.0.2 as private."""
    looked_up = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if isinstance(host, str) and host.startswith("rebind") and host.endswith(".test"):
            looked_up[host] = looked_up.get(host, 0) + 1
            address = "127.0.0.1" if looked_up[host] == 1 else "127.0.0.2"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 80)))]
        return real(host, port, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(netguard, "why_refused",
                        lambda address: "private" if str(address) == "127.0.0.2" else None)
    return looked_up


def test_the_direct_fetcher_connects_to_the_vetted_address_not_a_second_dns_answer(rebinding_dns, run):
    with SlowOrigin(page(PAGE_HTML)) as public, \
            SlowOrigin(page("<p>the internal admin page</p>"), host="127.0.0.2", port=public.port) as private:
        result = fetch.fetch(f"http://rebind.test:{public.port}/article", run.ctx)
    assert private.requests == []
    assert len(public.requests) == 1
    assert f"host: rebind.test:{public.port}".encode() in public.requests[0].lower()
    assert result.label is None and "boils at 100 °C" in result.markdown
    assert rebinding_dns == {"rebind.test": 1}                     # looked up once: by the guard


def hop(location: str):
    return raw(f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
               .encode())


def test_every_redirect_hop_connects_to_its_own_vetted_address(rebinding_dns, run):
    with SlowOrigin(None) as public, \
            SlowOrigin(page("<p>the internal admin page</p>"), host="127.0.0.2", port=public.port) as private:
        public.behaviour = routes({"/old": hop(f"http://rebind2.test:{public.port}/moved"),
                                   "/moved": hop(f"http://rebind3.test:{public.port}/article"),
                                   "/article": page(PAGE_HTML)})
        result = fetch.fetch(f"http://rebind.test:{public.port}/old", run.ctx)
    assert private.requests == []
    assert [r.split(b" ", 2)[1] for r in public.requests] == [b"/old", b"/moved", b"/article"]
    assert result.final_url == f"http://rebind3.test:{public.port}/article"
    assert "boils at 100 °C" in result.markdown
    assert rebinding_dns == {"rebind.test": 1, "rebind2.test": 1, "rebind3.test": 1}   # vetted once each


def test_a_hop_whose_name_now_resolves_private_is_refused_before_it_connects(rebinding_dns, run):
    with SlowOrigin(None) as public, \
            SlowOrigin(page("<p>the internal admin page</p>"), host="127.0.0.2", port=public.port) as private:
        public.behaviour = routes({"/old": hop("/moved"), "/moved": page(PAGE_HTML)})   # same host, again
        result = fetch.fetch(f"http://rebind.test:{public.port}/old", run.ctx)
    assert (result.label, result.reason) == ("unreachable", "blocked_address")
    assert private.requests == [] and len(public.requests) == 1


# ------------------------------------------------------------------ PDFs: fetched directly, read or labelled

import pdfs  # noqa: E402 - the tests' PDF builder

SURVEY = (site.SITE_DIR / "files" / "boiling-point-survey.pdf").read_bytes()
PDF_TYPE = "application/pdf"


def test_a_scanned_pdf_is_pdf_unsupported_and_says_it_has_no_text(direct, run):
    url = direct.url("/reports/boiling-point-scan.pdf")
    result = fetch.fetch(url, run.ctx)
    assert (result.label, result.reason) == ("not_found", "pdf_unsupported")
    assert result.detail == "no extractable text"
    assert url in cache_text(run)                                      # a property of the file: cached


@pytest.mark.parametrize("data, content_type, reason, detail, cached", [
    (pdfs.encrypted(SURVEY, "secret"), PDF_TYPE, "pdf_unsupported", "encrypted", True),
    (SURVEY[:len(SURVEY) // 2], PDF_TYPE, "pdf_truncated", None, False),
    (b"<html><body>not a pdf at all</body></html>", PDF_TYPE, "not_pdf", None, True),
    (b"%PDF-1.4\n" + b"garbage " * 40 + b"\n%%EOF\n", PDF_TYPE, "pdf_corrupt", None, True),
], ids=["encrypted", "truncated", "not-a-pdf", "corrupt"])
def test_a_pdf_that_cannot_be_read_gets_its_reason(loopback, data, content_type, reason, detail, cached):
    with SlowOrigin(page(data, content_type)) as origin:
        url = origin.url + "/report.pdf"
        result = fetch.fetch(url, loopback.ctx)
    assert (result.label, result.reason) == (pages.REASONS[reason].label, reason)
    assert detail is None or result.detail == detail
    assert (url in cache_text(loopback)) is cached


def test_a_pdf_over_pdf_max_bytes_is_refused_before_it_is_downloaded(loopback):
    loopback.ctx = loopback.ctx.replace(pdf=PdfLimits(max_bytes=10_000))
    head = response(200, length=len(SURVEY), content_type=PDF_TYPE)
    with SlowOrigin(stall(head)) as origin:                            # the head only: the body never comes
        result, seconds = timed(lambda: fetch.fetch(origin.url + "/big.pdf", loopback.ctx))
    assert (result.label, result.reason) == ("not_found", "pdf_too_large")
    assert "over PDF_MAX_BYTES" in result.detail and seconds < 10


def test_a_pdf_without_a_length_is_cut_at_pdf_max_bytes_and_refused_not_read_in_part(loopback):
    loopback.ctx = loopback.ctx.replace(pdf=PdfLimits(max_bytes=10_000))
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nConnection: close\r\n\r\n"
    with SlowOrigin(raw(head + SURVEY)) as origin:
        result = fetch.fetch(origin.url + "/big.pdf", loopback.ctx)
    assert (result.reason, result.markdown) == ("pdf_too_large", "")


def test_a_pdf_served_as_octet_stream_from_any_url_is_read(loopback):
    with SlowOrigin(page(SURVEY, "application/octet-stream")) as origin:
        result = fetch.fetch(origin.url + "/download?id=7", loopback.ctx)
    assert result.label is None and "Forty-one readers" in result.markdown


def test_a_pdf_link_that_redirects_into_the_private_network_is_refused(run):
    with StandIn(lambda request: (200, {"Content-Type": PDF_TYPE}, SURVEY)) as internal, \
            StandIn(lambda request: (302, {"Location": internal.url + "/secret.pdf"}, "")) as public:
        run.ctx = run.ctx.replace(allow_hosts=parse_origins(public.url.removeprefix("http://")))
        result = fetch.fetch(public.url + "/report.pdf", run.ctx)
    assert (result.label, result.reason) == ("unreachable", "blocked_address")
    assert internal.requests == [] and len(public.requests) == 1


def test_a_pdf_replays_offline_from_its_own_cache_entry(direct, run):
    url = direct.url("/reports/boiling-point-survey.pdf")
    live = fetch.fetch(url, run.ctx)
    run.ctx = run.ctx.replace(offline=True)
    assert fetch.fetch(url, run.ctx) == live
    with pytest.raises(cache.CacheMiss, match="fetch.pdf"):
        fetch.fetch(direct.url("/reports/other.pdf"), run.ctx)


# ------------------------------------------------------------------ sites that refuse robots

@pytest.mark.parametrize("status, reason, cached", [
    (401, "login_required", True), (402, "paywall", True), (403, "access_denied", False),
    (429, "rate_limited", False),
])
def test_an_origin_that_refuses_through_crawlbase_gets_its_own_reason(crawl, status, reason, cached, run):
    crawl(lambda call: Answer("Sorry.", original_status=status, cb_status=status))
    result = fetch.fetch(TARGET, run.ctx, sleep=NO_WAIT)
    assert (result.label, result.reason, result.original_status) == ("unreachable", reason, status)
    assert (TARGET in cache_text(run)) is cached


def test_a_challenge_page_through_crawlbase_is_a_bot_challenge_and_not_cached(crawl, run):
    challenge = "# Just a moment...\n\nChecking your browser. Verify you are human to continue."
    crawl(lambda call: Answer(challenge))
    result = fetch.fetch(TARGET, run.ctx, sleep=NO_WAIT)
    assert (result.label, result.reason) == ("unreachable", "bot_challenge")
    assert TARGET not in cache_text(run)


def test_a_deep_link_that_lands_on_a_login_page_is_login_required(crawl, run):
    crawl(lambda call: Answer("# Sign in\n\n" + ARTICLE, url="https://kettle.example/users/sign_in?next=/a"))
    assert fetch.fetch(TARGET, run.ctx).reason == "login_required"


@pytest.mark.parametrize("text", [
    "How to solve a CAPTCHA: a long article. " * 40,                      # long: an article about robots
    "The access denied error explained. " * 40,
])
def test_a_long_article_about_challenges_is_not_a_challenge(text):
    from citecheck.web.fetch.refusals import refusal
    assert refusal(TARGET, TARGET, 200, text) is None


def test_the_paywall_teaser_without_paywall_markup_is_still_judged(direct, run):
    result = fetch.fetch(direct.url("/premium/pressure-cooking"), run.ctx)
    assert (result.label, result.reason) == (None, None) and "Denis Papin" in result.markdown


def test_the_fetch_limits_come_from_config_and_bad_values_name_the_variable():
    from citecheck.config import Settings
    defaults = Settings.from_env({})
    assert (defaults.fetch_deadline, defaults.max_passages, defaults.pdf.max_bytes, defaults.pdf.max_pages,
            defaults.pdf.max_seconds, defaults.extract_max_seconds) == (60.0, 32, 20 * 1024 * 1024, 300, 60.0,
                                                                        10.0)
    assert defaults == Settings()
    changed = Settings.from_env({"FETCH_DEADLINE": "7.5", "MAX_PASSAGES": "8", "PDF_MAX_PAGES": "2"})
    assert (changed.fetch_deadline, changed.max_passages, changed.pdf.max_pages) == (7.5, 8, 2)
    for name, bad in [("FETCH_DEADLINE", "0"), ("MAX_PASSAGES", "2.5"), ("PDF_MAX_BYTES", "lots"),
                      ("PDF_MAX_SECONDS", "-1"), ("EXTRACT_MAX_SECONDS", "0")]:
        with pytest.raises(ValueError, match=name):
            Settings.from_env({name: bad})


# ------------------------------------------------------------------ parsers under a deadline

def many_attributes(count: int) -> str:
    """One element with `count` attributes: lxml's parse grows faster than quadratic in them."""
    attributes = " ".join(f'a{i}="v"' for i in range(count))
    text = "Water boils at 100 degrees at sea level. " * 12
    return f"<html><body><div {attributes}><p>{text}</p></div></body></html>"


def test_a_page_whose_extraction_passes_its_deadline_is_a_labelled_row_and_not_cached(loopback):
    ctx = loopback.ctx.replace(extract_max_seconds=0.5)
    article = "<html><body><article>" + "".join(f"<p>{p}</p>" for p in ARTICLE.split("\n\n")) + "</article>"
    with SlowOrigin(routes({"/bomb": page(many_attributes(40_000)), "/fine": page(article)})) as origin:
        bomb = fetch.fetch(origin.url + "/bomb", ctx)
        fine = fetch.fetch(origin.url + "/fine", loopback.ctx)
    assert (bomb.label, bomb.reason) == ("not_found", "page_too_complex")
    assert "EXTRACT_MAX_SECONDS" in bomb.detail and bomb.markdown == ""
    assert origin.url + "/bomb" not in cache_text(loopback)            # the moment's and the machine's: transient
    assert (fine.label, fine.reason) == (None, None) and "pure water boils at 100 °C" in fine.markdown


def test_extraction_in_the_sandbox_gives_the_text_extraction_in_process_gives():
    from citecheck.web.fetch import html_text
    layout = (site.SITE_DIR / "layout.html").read_text(encoding="utf-8")
    for path in sorted((site.SITE_DIR / "pages").glob("*.html")):
        markup = layout.replace("{content}", path.read_text(encoding="utf-8"))
        assert html_text.extract(markup, "http://x/a", 20.0) == html_text.readable_markdown(markup, "http://x/a")
