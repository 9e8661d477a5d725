"""The per-host limit (HOST_CONCURRENCY in flight, HOST_RATE starts a second) counted server-side, shared by
batch, check-answer and the API; Retry-After honoured within FETCH_DEADLINE."""
from __future__ import annotations

import json
import threading
import time
from email.utils import formatdate

import pytest
from standins.http import StandIn
from test_api import send

from citecheck import answer, batch
from citecheck.serve.api import create_app
from citecheck.vocabulary import RATE_LIMITED
from citecheck.web import fetch
from citecheck.web.fetch import direct
from citecheck.web.fetch.deadline import Budget
from citecheck.web.fetch.hosts import HostBusy, HostLimit

PAGE = ("<html><body><article><p>" + "Water boils at 100 degrees at sea level. " * 20
        + "</p></article></body></html>")


class Counting:
    """A stand-in origin that counts requests in flight (its peak) and when each started; every page is a
    slow 404 (no judge needed), robots.txt a 404 (everything allowed)."""

    def __init__(self, seconds: float = 0.25):
        self.seconds, self.lock = seconds, threading.Lock()
        self.now = self.peak = 0
        self.starts: list[float] = []
        self.server = StandIn(self.handle)
        self.url = self.server.url

    def handle(self, request):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.starts.append(time.monotonic())
        try:
            time.sleep(self.seconds)
            return 404, {}, "<p>gone</p>"
        finally:
            with self.lock:
                self.now -= 1

    def __enter__(self):
        self.server.__enter__()
        return self

    def __exit__(self, *exc):
        self.server.__exit__(*exc)


def polite(make_ctx, **changes):
    settings = {"ignore_robots": False, "host_concurrency": 2, "host_rate": 100.0, "allow_private": True,
                **changes}
    return make_ctx(**settings)


def test_a_batch_never_has_more_than_host_concurrency_requests_in_flight_per_host(tmp_path, make_ctx):
    with Counting() as one, Counting() as two:
        claims = [{"id": f"c{i}", "claim": "Water boils.", "urls": [one.url + f"/p{i}", two.url + f"/p{i}"]}
                  for i in range(8)]
        path = tmp_path / "claims.jsonl"
        path.write_text("".join(json.dumps(c) + "\n" for c in claims), encoding="utf-8")
        result = batch.run_batch(path, polite(make_ctx), concurrency=8)
    assert {row["reason"] for row in result.rows} == {"http_404"}
    assert one.peak == two.peak == 2                 # the limit held, and was reached (8 threads could do 8)


def test_a_cluster_batch_holds_the_limit_cluster_wide(tmp_path, make_ctx):
    """Two workers of two threads each: the origin still sees at most HOST_CONCURRENCY at once."""
    with Counting() as origin:
        claims = [{"id": f"c{i}", "claim": "Water boils.", "urls": [origin.url + f"/p{i}"]} for i in range(8)]
        path = tmp_path / "claims.jsonl"
        path.write_text("".join(json.dumps(c) + "\n" for c in claims), encoding="utf-8")
        result = batch.run_batch(path, polite(make_ctx), concurrency=4, cluster="local:2")
    assert {row["reason"] for row in result.rows} == {"http_404"}
    assert origin.peak == 2


def test_starts_to_one_host_are_spaced_by_host_rate(make_ctx):
    ctx = polite(make_ctx, host_concurrency=8, host_rate=5.0)
    with Counting(seconds=0.0) as origin:
        threads = [threading.Thread(target=fetch.fetch, args=(origin.url + f"/p{i}", ctx)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    gaps = [b - a for a, b in zip(origin.starts, origin.starts[1:])]
    assert len(origin.starts) == 7 and min(gaps) > 0.2 - 0.05      # robots.txt and 6 pages, 1/5 s apart


def test_check_answer_shares_the_limit(make_ctx):
    with Counting() as origin:
        text = "".join(f"Water boils at {i} degrees [{i}].\n\n" for i in range(1, 7)) + "".join(
            f"[{i}]: {origin.url}/p{i}\n" for i in range(1, 7))
        report = answer.report(text, polite(make_ctx, batch_concurrency=6))
    assert report is not None and origin.peak == 2 and len(origin.starts) == 7


def test_the_api_shares_the_limit_across_requests(make_ctx):
    with Counting() as origin:
        app = create_app(polite(make_ctx))
        bodies = [{"claim": "Water boils.", "urls": [origin.url + f"/r{i}a", origin.url + f"/r{i}b"]}
                  for i in range(4)]
        responses = send(app, *[("POST", "/verify", {"json": body}) for body in bodies])
    assert [r.status_code for r in responses] == [200] * 4
    assert origin.peak == 2 and len(origin.starts) == 9


def test_contexts_of_one_run_share_one_limit(make_ctx):
    ctx = polite(make_ctx)
    assert fetch.host_limit(ctx) is fetch.host_limit(ctx.replace(judge_method="json"))


# ---------------------------------------------------------------- Retry-After

def answering(*answers):
    """A stand-in origin giving `answers` in turn to the page (robots.txt: 404), then the last again."""
    queue = list(answers)

    def handler(request):
        if request.path == "/robots.txt":
            return 404, {}, ""
        return queue.pop(0) if len(queue) > 1 else queue[0]
    return StandIn(handler)


@pytest.mark.parametrize("status, header", [(429, "1"), (503, "1"), (429, "date")])
def test_retry_after_is_waited_for_then_tried_once_more(make_ctx, status, header):
    header = formatdate(time.time() + 1, usegmt=True) if header == "date" else header
    waits = []
    with answering((status, {"Retry-After": header}, "slow down"), (200, {}, PAGE)) as server:
        result = fetch.fetch(server.url + "/page", polite(make_ctx), sleep=waits.append)
    assert result.label is None and "boils" in result.markdown
    assert len(waits) == 1 and 0 <= waits[0] <= 1.0
    assert [r.path for r in server.requests] == ["/robots.txt", "/page", "/page"]


def test_a_retry_after_past_the_deadline_is_rate_limited_at_once_and_holds_the_host(make_ctx):
    waits = []
    ctx = polite(make_ctx, fetch_deadline=5.0)
    with answering((503, {"Retry-After": "120"}, "come back later")) as server:
        started = time.monotonic()
        first = fetch.fetch(server.url + "/page", ctx, sleep=waits.append)
        second = fetch.fetch(server.url + "/other", ctx, sleep=waits.append)
        seconds = time.monotonic() - started
    assert (first.reason, second.reason) == (RATE_LIMITED, RATE_LIMITED)
    assert waits == [] and seconds < 2
    assert [r.path for r in server.requests] == ["/robots.txt", "/page"]     # /other never asked


def test_a_second_refusal_after_the_wait_is_rate_limited():
    waits = []
    with answering((429, {"Retry-After": "0"}, "no")) as server:
        from citecheck.config import Settings
        from citecheck.context import RunContext
        ctx = RunContext.build(Settings(allow_private=True, ignore_robots=True, host_rate=100.0))
        result = fetch.fetch(server.url + "/page", ctx, sleep=waits.append)
    assert result.reason == RATE_LIMITED and waits == [0.0] and len(server.requests) == 2


def test_retry_after_values():
    assert direct.retry_after("7") == 7.0
    assert direct.retry_after("soon") is None and direct.retry_after(None) is None
    assert direct.retry_after(formatdate(1000.0, usegmt=True), now=lambda: 990.0) == 10.0
    assert direct.retry_after(formatdate(1000.0, usegmt=True), now=lambda: 2000.0) == 0.0


# ---------------------------------------------------------------- the limit itself

def test_a_slot_that_cannot_come_before_the_deadline_fails_at_once():
    limit = HostLimit(1, 0.1)                   # one start every 10 s
    release = limit.acquire("http://h/a", Budget(5))
    release()
    started = time.monotonic()
    with pytest.raises(HostBusy):
        limit.acquire("http://h/b", Budget(5))
    assert time.monotonic() - started < 1
    limit.acquire("http://h:8080/c", Budget(5))()      # another port is another host


def test_a_deferred_host_says_so():
    limit = HostLimit(2, 100.0)
    limit.defer("https://h/x", 60)
    with pytest.raises(HostBusy) as caught:
        limit.acquire("https://h/y", Budget(5))
    assert caught.value.deferred


# ---------------------------------------------------------------- settings

def test_the_shipped_politeness_and_its_variables():
    from citecheck.config import Settings
    shipped = Settings.from_env({})
    assert (shipped.ignore_robots, shipped.robots_max_age, shipped.host_concurrency, shipped.host_rate) == \
        (False, 86400.0, 2, 1.0) == (Settings().ignore_robots, Settings().robots_max_age,
                                     Settings().host_concurrency, Settings().host_rate)
    mine = Settings.from_env({"CITECHECK_IGNORE_ROBOTS": "1", "ROBOTS_MAX_AGE": "60",
                              "HOST_CONCURRENCY": "3", "HOST_RATE": "0.5"})
    assert (mine.ignore_robots, mine.robots_max_age, mine.host_concurrency, mine.host_rate) == \
        (True, 60.0, 3, 0.5)


@pytest.mark.parametrize("name, value",
                         [("HOST_RATE", "0"), ("HOST_CONCURRENCY", "1.5"), ("ROBOTS_MAX_AGE", "x")])
def test_a_bad_politeness_setting_is_one_line_naming_it(name, value):
    from citecheck.config import Settings
    with pytest.raises(ValueError, match=name):
        Settings.from_env({name: value})
