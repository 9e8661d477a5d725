"""fetch: every branch of both backends.

Crawlbase runs through the unmodified crawlbase SDK against a Crawling-API stand-in on 127.0.0.1
(CRAWLBASE_API_URL); the direct fetcher runs against the fixture site served on 127.0.0.1.
"""
from __future__ import annotations

import json
from pathlib import Path

import crawlbase.base_api
import pytest

from citecheck import cache, fetch, netguard
from citecheck import fixture_site as site
from citecheck.fetch import FetchResult, pages
from citecheck.fetch.crawlbase import CRAWLBASE_OPTIONS
from citecheck.fetch.pages import BACKOFF
from standins.crawlbase import JS_TOKEN, NORMAL_TOKEN, Answer, CrawlingStandIn

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


def test_a_pdf_is_never_crawled(crawl, run):
    api = crawl(lambda call: Answer(ARTICLE))
    result = fetch.fetch("https://kettle.example/reports/Survey.PDF", run.ctx)
    assert (result.label, result.reason, result.backend) == ("not_found", "pdf_unsupported", "crawlbase")
    assert api.calls == []


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
    real = netguard.check_url

    def check(url, **kwargs):
        seen.append(url)
        if url.endswith("/articles/boiling-point"):
            raise netguard.BlockedURL("loopback", "test")
        return real(url, **kwargs)

    monkeypatch.setattr(netguard, "check_url", check)
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
