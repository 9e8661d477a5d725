"""robots.txt (RFC 9309): parsing and matching, what an unreadable file means, and the fetcher obeying it
(direct and Crawlbase, batch too) within FETCH_DEADLINE, against stand-in origins on 127.0.0.1."""
from __future__ import annotations

import json
import time

import pytest
from standins.crawlbase import NORMAL_TOKEN, Answer, CrawlingStandIn
from standins.http import StandIn
from standins.slow_origin import SlowOrigin, drip, response, routes, stall

from citecheck import batch
from citecheck.vocabulary import REASONS, ROBOTS_DISALLOWED, ROBOTS_UNREACHABLE, UNREACHABLE, is_transient
from citecheck.web import fetch, robots
from citecheck.web.fetch import direct

PAGE = "<html><head><title>Boiling</title></head><body><article><p>" + "Water boils at 100 degrees. " * 30 + \
    "</p></article></body></html>"
POLITE = {"ignore_robots": False, "host_concurrency": 2, "host_rate": 50.0}
"""The shipped politeness (robots.txt read), a rate fast enough for a test."""


def verdicts(text: str, *paths: str) -> list[bool]:
    parsed = robots.parse(text.encode("utf-8"))
    return [parsed.verdict("https://example.org" + path).allowed for path in paths]


# ---------------------------------------------------------------- parsing and matching (RFC 9309 2.2)

def test_the_longest_match_wins_and_allow_wins_a_tie():
    text = "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\nAllow: /x\nDisallow: /x\n"
    assert verdicts(text, "/a", "/a/b", "/a/b/c/d", "/x", "/other") == [False, True, False, True, True]


def test_star_and_dollar():
    text = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /private*/secret\n"
    assert verdicts(text, "/doc.pdf", "/doc.pdf?x=1", "/doc.html", "/private-1/secret/2", "/private") == \
        [False, True, True, False, True]


def test_our_group_replaces_star_and_our_groups_merge():
    text = ("User-agent: *\nDisallow: /\n\nUser-agent: CiteCheck/2.0\nDisallow: /ours\n\n"
            "User-agent: other\nUser-agent: citecheck\nDisallow: /merged\n")
    assert verdicts(text, "/page", "/ours", "/merged") == [True, False, False]


def test_no_group_for_us_and_no_star_allows_everything():
    assert verdicts("User-agent: somebot\nDisallow: /\n", "/page") == [True]


def test_an_empty_disallow_robots_txt_itself_and_a_query_string():
    assert verdicts("User-agent: *\nDisallow:\n", "/anything") == [True]
    assert verdicts("User-agent: *\nDisallow: /\n", "/robots.txt", "/") == [True, False]
    assert verdicts("User-agent: *\nDisallow: /*?session=\n", "/page?session=1", "/page") == [False, True]


def test_non_ascii_and_escapes_compare_percent_encoded():
    text = "User-agent: *\nDisallow: /caf\u00e9\nDisallow: /a%2fb\n"
    assert verdicts(text, "/caf%C3%A9/menu", "/a%2Fb") == [False, False]


def test_malformed_lines_are_skipped_not_fatal():
    data = (b"\xff\xfe garbage\nUser-agent *\nno colon here\nUser-agent: *\nCrawl-delay: ten\n"
            b"Disallow: /no\n\x00")
    parsed = robots.parse(data)
    assert parsed.verdict("http://h/no").allowed is False and parsed.verdict("http://h/yes").allowed


def test_only_the_first_500_kib_are_parsed():
    filler = b"# " + b"x" * (robots.MAX_BYTES) + b"\n"
    parsed = robots.parse(b"User-agent: *\nDisallow: /early\n" + filler + b"Disallow: /late\n")
    assert parsed.verdict("http://h/early").allowed is False
    assert parsed.verdict("http://h/late").allowed is True


def test_a_pathological_pattern_is_matched_in_linear_time():
    parsed = robots.parse(b"User-agent: *\nDisallow: /" + b"*a" * 2000 + b"b\n")
    started = time.monotonic()
    assert parsed.verdict("http://h/" + "a" * 4000).allowed
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("status, allowed", [(200, None), (404, True), (410, True), (401, True), (403, True),
                                             (429, False), (500, False), (503, False)])
def test_what_each_status_means(status, allowed):
    """4xx: unavailable, everything allowed; 429 and 5xx: unreachable, complete disallow (RFC 9309 2.3.1)."""
    parsed = robots.of_answer(status, b"User-agent: *\nDisallow: /x\n")
    assert parsed.everything is allowed


def test_robots_disallowed_is_unreachable_and_not_transient_and_unreadable_is_transient():
    assert REASONS[ROBOTS_DISALLOWED].label == UNREACHABLE and not is_transient(ROBOTS_DISALLOWED)
    assert REASONS[ROBOTS_UNREACHABLE].label == UNREACHABLE and is_transient(ROBOTS_UNREACHABLE)


def test_the_user_agent_header_names_the_product_token():
    assert direct.USER_AGENT == robots.USER_AGENT and robots.USER_AGENT.startswith(robots.PRODUCT_TOKEN + "/")


# ---------------------------------------------------------------- the direct fetcher obeys it

def site(robots_answer: tuple, pages: dict | None = None):
    """A stand-in origin: /robots.txt answers `robots_answer`, other paths a page (or `pages[path]`)."""
    def handler(request):
        path = request.path
        if path == "/robots.txt":
            return robots_answer
        return (pages or {}).get(path, (200, {"Content-Type": "text/html"}, PAGE))
    return StandIn(handler)


def paths(server) -> list[str]:
    return [r.path for r in server.requests]


def test_a_disallowed_page_is_never_requested_and_robots_txt_is_read_once(make_ctx):
    rules = (200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /private/\n")
    with site(rules) as server:
        ctx = make_ctx(allow_private=True, **POLITE)
        refused = fetch.fetch(server.url + "/private/a", ctx)
        again = fetch.fetch(server.url + "/private/b", ctx)
        page = fetch.fetch(server.url + "/public", ctx)
    assert (refused.label, refused.reason) == (UNREACHABLE, ROBOTS_DISALLOWED)
    assert "Disallow: /private/" in refused.detail and again.reason == ROBOTS_DISALLOWED
    assert page.label is None and "boils" in page.markdown
    assert paths(server) == ["/robots.txt", "/public"]
    assert all(r.headers["User-Agent"] == robots.USER_AGENT for r in server.requests)


def test_a_disallowed_page_is_not_recorded_so_ignore_robots_fetches_it(make_ctx):
    rules = (200, {}, "User-agent: citecheck\nDisallow: /\n")
    with site(rules) as server:
        ctx = make_ctx(allow_private=True, **POLITE)
        assert fetch.fetch(server.url + "/page", ctx).reason == ROBOTS_DISALLOWED
        own = fetch.fetch(server.url + "/page", ctx.replace(ignore_robots=True))
    assert own.label is None and paths(server) == ["/robots.txt", "/page"]


def test_replay_never_reads_robots_txt(make_ctx):
    """A page recorded live stands in replay: offline, robots.txt is not asked for (it would forbid now)."""
    with site((200, {}, "")) as server:
        ctx = make_ctx(allow_private=True, **POLITE)
        recorded = fetch.fetch(server.url + "/page", ctx)
        server.handler = lambda request: (200, {}, "User-agent: *\nDisallow: /\n")
        replayed = fetch.fetch(server.url + "/page", ctx.replace(offline=True))
    assert replayed == recorded and paths(server) == ["/robots.txt", "/page"]


@pytest.mark.parametrize("answer, allowed", [
    ((404, {}, "nothing"), True),
    ((503, {}, "down"), False),
    ((500, {}, ""), False),
    ((200, {"Content-Type": "application/octet-stream"}, "\x00\x01 not robots \xff"), True),
])
def test_an_unreadable_robots_txt_follows_the_standard(make_ctx, answer, allowed):
    with site(answer) as server:
        result = fetch.fetch(server.url + "/page", make_ctx(allow_private=True, **POLITE))
    assert result.reason == (None if allowed else ROBOTS_UNREACHABLE)
    assert ("/page" in paths(server)) is allowed


def test_a_redirect_loop_is_unavailable_and_a_short_chain_is_followed(make_ctx):
    def looping(request):
        if request.path.startswith("/robots"):
            return 302, {"Location": "/robots-again.txt"}, ""
        return 200, {}, PAGE
    with StandIn(looping) as server:
        result = fetch.fetch(server.url + "/page", make_ctx(allow_private=True, **POLITE))
    assert result.label is None
    assert paths(server).count("/robots-again.txt") == robots.MAX_REDIRECTS

    def chain(request):
        hops = {"/robots.txt": "/r1", "/r1": "/r2"}
        if request.path in hops:
            return 301, {"Location": hops[request.path]}, ""
        if request.path == "/r2":
            return 200, {}, "User-agent: *\nDisallow: /page\n"
        return 200, {}, PAGE
    with StandIn(chain) as server:
        result = fetch.fetch(server.url + "/page", make_ctx(allow_private=True, **POLITE))
    assert result.reason == ROBOTS_DISALLOWED and "/page" not in paths(server)


def test_a_huge_robots_txt_is_read_only_to_its_limit_within_the_deadline(make_ctx):
    body = "User-agent: *\nDisallow: /early\n" + "# filler\n" * 400_000 + "Disallow: /page\n"   # ~3.6 MB
    with site((200, {"Content-Type": "text/plain"}, body)) as server:
        ctx = make_ctx(allow_private=True, fetch_deadline=10.0, **POLITE)
        started = time.monotonic()
        page = fetch.fetch(server.url + "/page", ctx)
        early = fetch.fetch(server.url + "/early", ctx)
    assert time.monotonic() - started < 10
    assert page.label is None and early.reason == ROBOTS_DISALLOWED


@pytest.mark.parametrize("behaviour", [stall(), stall(response(200, length=100)),
                                       drip(response(200, length=10_000), b"User-agent: *\n" * 800, 0.05)],
                         ids=["stall", "stall-after-head", "drip"])
def test_a_slow_robots_txt_is_unreachable_within_the_deadline(make_ctx, behaviour):
    """robots.txt shares the page's FETCH_DEADLINE; one not there in time is a complete disallow."""
    with SlowOrigin(routes({"/robots.txt": behaviour})) as origin:
        ctx = make_ctx(allow_private=True, fetch_deadline=1.5, fetch_timeout=1.0, **POLITE)
        started = time.monotonic()
        result = fetch.fetch(origin.url + "/page", ctx)
        seconds = time.monotonic() - started
    assert result.reason == ROBOTS_UNREACHABLE and "complete disallow" in result.detail
    assert seconds < 1.5 + 1.0
    assert [head.split(b" ")[1] for head in origin.requests] == [b"/robots.txt"]


def test_an_unresolvable_host_keeps_its_own_reason(make_ctx):
    result = fetch.fetch("http://no-such-host.invalid/page", make_ctx(**POLITE))
    assert result.reason == "dns_failure"


# ---------------------------------------------------------------- Crawlbase and batch

def test_through_crawlbase_a_robots_txt_this_machine_cannot_reach_does_not_stop_the_crawl(make_ctx):
    """A host that does not resolve here may resolve for Crawlbase (a machine whose way out is Crawlbase)."""
    with CrawlingStandIn(lambda call: Answer(body="Water boils at 100 degrees. " * 20)) as api:
        ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": NORMAL_TOKEN}, crawlbase_api_url=api.url, **POLITE)
        result = fetch.fetch("https://kettle.invalid/page", ctx)
    assert result.label is None and len(api.calls) == 1


def test_crawlbase_is_not_asked_for_a_disallowed_page(make_ctx):
    """The Crawling API has no robots.txt option: the driver reads robots.txt itself before asking."""
    with site((200, {}, "User-agent: *\nDisallow: /private\n")) as origin, \
            CrawlingStandIn(lambda call: Answer(body="Water boils at 100 degrees. " * 20)) as api:
        ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": NORMAL_TOKEN}, crawlbase_api_url=api.url,
                       allow_private=True, **POLITE)
        refused = fetch.fetch(origin.url + "/private/page", ctx)
        allowed = fetch.fetch(origin.url + "/public", ctx)
    assert refused.reason == ROBOTS_DISALLOWED and refused.backend == "crawlbase"
    assert allowed.label is None and [call["url"] for call in api.calls] == [origin.url + "/public"]
    assert paths(origin) == ["/robots.txt"]


def test_a_batch_labels_disallowed_rows_without_fetching_them(tmp_path, make_ctx):
    rules = (200, {}, "User-agent: *\nDisallow: /private/\n")
    with site(rules, {"/gone": (404, {}, "gone")}) as server:
        claims = [{"id": f"c{i}", "claim": "Water boils at 100 degrees.",
                   "urls": [server.url + f"/private/{i}", server.url + "/gone"]} for i in range(5)]
        path = tmp_path / "claims.jsonl"
        path.write_text("".join(json.dumps(c) + "\n" for c in claims), encoding="utf-8")
        result = batch.run_batch(path, make_ctx(allow_private=True, **POLITE), concurrency=4)
    private = [row for row in result.rows if "/private/" in row["url"]]
    assert len(private) == 5
    assert {(r["label"], r["reason"]) for r in private} == {(UNREACHABLE, ROBOTS_DISALLOWED)}
    assert not any(p.startswith("/private/") for p in paths(server))
    assert paths(server).count("/robots.txt") == 1 and "/gone" in paths(server)


def test_a_resumed_batch_keeps_a_disallowed_row_for_robots_max_age_then_checks_again(tmp_path, make_ctx):
    with site((200, {}, "User-agent: *\nDisallow: /private/\n")) as server:
        path = tmp_path / "claims.jsonl"
        path.write_text(json.dumps({"id": "c", "claim": "Water boils.", "urls": [server.url + "/private/x"]})
                        + "\n", encoding="utf-8")
        ctx = make_ctx(allow_private=True, **POLITE)
        first = batch.run_batch(path, ctx)
        server.handler = lambda request: (404, {}, "gone")             # robots.txt gone, the page too
        kept = batch.run_batch(path, ctx.replace(robots_max_age=3600.0))
        again = batch.run_batch(path, ctx.replace(robots_max_age=0.001))
    assert first.rows[0]["reason"] == kept.rows[0]["reason"] == ROBOTS_DISALLOWED and kept.decided == 0
    assert again.decided == 1 and again.rows[0]["reason"] == "http_404"


def test_one_read_per_origin_at_a_time_and_waiters_share_its_answer_or_its_error():
    import threading
    from citecheck.web.netguard import BlockedURL
    kept, reads, gate = robots.Robots(3600), [], threading.Event()

    def read(url):
        reads.append(url)
        gate.wait(5)
        return robots.parse(b"User-agent: *\nDisallow: /x\n")
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(kept.verdict("http://h/x", read, 5).allowed))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    gate.set()
    for thread in threads:
        thread.join()
    assert reads == ["http://h/robots.txt"] and answers == [False] * 4

    def refused(url):
        raise BlockedURL("dns", "no answer")
    with pytest.raises(BlockedURL):
        kept.verdict("http://other/x", refused, 5)
    assert robots.Robots(0.001).verdict("http://h/y", read, 5).allowed
