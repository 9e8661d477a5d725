"""Worst cases under the hostile-world limits, with their defaults (a script that prints numbers).

    .venv/bin/python benchmarks/bench_hostile.py [drip] [crawlbase-drip] [large-page] [api] [half-sent]
        [bombs] [judge-server] [parsers] [markdown] [batch-lines] [review] [cluster]  

- drip: an origin that sends its head, then one body byte a second (tests/standins/slow_origin.py),
  fetched directly with FETCH_TIMEOUT=5 (the issue's setting) and the default FETCH_DEADLINE.
- crawlbase-drip: the Crawling API itself dripping, through the crawlbase SDK (CRAWLBASE_TIMEOUT 90).
- large-page: a 5 MB page (the FETCH_MAX_BYTES cap): passages, the MAX_PASSAGES shortlist, MiniLM over
  the kept ones; and what encoding every passage would take, projected from the measured rate.
- api: four /verify requests citing ~1 MB pages while a client sends small requests every 0.25 s
  (the real verify: direct fetch from a stand-in, MiniLM, a judge stand-in), default API_* limits.
- half-sent: 200 connections that stop inside the body and 200 inside the head against `serve`'s server
  (default API_HEADER_TIMEOUT / API_BODY_TIMEOUT): seconds until every one is closed.
"""
from __future__ import annotations

import asyncio
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from standins.judge import free_port, judge_standin, verdict_json  # noqa: E402
from standins.slow_origin import SlowOrigin, drip, half_sent, page, response  # noqa: E402

from citecheck.config import Secrets, Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402

WORDS = ("water boils at sea level pressure altitude kettle steam pan heat temperature degrees the of and a in "
         "mountain cook pot lid vapour air thermometer recipe minute salt").split()


def big_html(megabytes: float, seed: int = 1) -> str:
    rng = random.Random(seed)
    paragraphs, size = [], 0
    while size < megabytes * 1_000_000:
        text = " ".join(rng.choice(WORDS) for _ in range(120))
        paragraphs.append(f"<p>{text}.</p>")
        size += len(text) + 8
    return "<html><body><article>" + "\n".join(paragraphs) + "</article></body></html>"


def context(tmp: Path, **settings) -> RunContext:
    return RunContext.build(Settings(cache_path=tmp / "cache.json", audit_db=tmp / "audit.db",
                                     allow_private=True, ignore_robots=True,     # our own stand-ins: no
                                     host_concurrency=64, host_rate=1000.0).replace(**settings))  # politeness


def bench_drip(tmp: Path) -> None:
    from citecheck.web import fetch
    body = b"<p>" + b"x" * 400 + b"</p>"
    ctx = context(tmp, fetch_timeout=5.0)
    with SlowOrigin(drip(response(200, length=len(body)), body, 1.0)) as origin:
        started = time.monotonic()
        result = fetch.fetch(origin.url + "/drip", ctx)
        seconds = time.monotonic() - started
    print(f"drip (1 byte/s, FETCH_TIMEOUT=5, FETCH_DEADLINE={ctx.settings.fetch_deadline:g}): "
          f"{seconds:.1f} s -> {result.label} / {result.reason}; {origin.connections} connection(s)")


def bench_crawlbase_drip(tmp: Path) -> None:
    import gzip

    import crawlbase.base_api

    from citecheck.web import fetch
    body = gzip.compress(big_html(0.002).encode(), mtime=0)         # ~900 bytes: a quarter of an hour of drip
    head = response(200, {"original_status": "200", "cb_status": "200", "Content-Encoding": "gzip"}, len(body),
                    "text/plain; charset=utf-8")
    with SlowOrigin(drip(head, body, 1.0)) as api:
        ctx = context(tmp, crawlbase_api_url=api.url, secrets=Secrets({"CRAWLBASE_TOKEN": "cbFAKE-bench"}))
        started = time.monotonic()
        result = fetch.fetch("https://kettle.example/a", ctx)
        seconds = time.monotonic() - started
    crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"
    print(f"crawling API drip (1 byte/s, CRAWLBASE_TIMEOUT={ctx.settings.crawlbase_timeout:g}, "
          f"FETCH_DEADLINE={ctx.settings.fetch_deadline:g}): {seconds:.1f} s -> {result.label} / {result.reason}")


def bench_large_page(tmp: Path) -> None:
    from citecheck.web import passages, retrieval, vectors
    from citecheck.web.fetch.html_text import readable_markdown
    html = big_html(5.0)
    cap = Settings().max_passages
    claim = "At 3,000 metres above sea level water boils at about 90 °C."
    vectors.model()
    started = time.monotonic()
    text = readable_markdown(html)
    extracted = time.monotonic()
    chunks = passages.split_passages(text)
    kept = retrieval.shortlist(claim, chunks, cap)
    shortlisted = time.monotonic()
    retrieval.rank(claim, [chunks[i] for i in kept], how="minilm")
    ranked = time.monotonic()
    sample = chunks[-64:]
    t0 = time.monotonic()
    retrieval.similarities(claim + " (rate sample)", sample)
    rate = len(sample) / (time.monotonic() - t0)
    print(f"5 MB page: {len(chunks):,} passages; extract {extracted - started:.1f} s, split + shortlist "
          f"{shortlisted - extracted:.1f} s, MiniLM on {len(kept)} (MAX_PASSAGES) {ranked - shortlisted:.1f} s; "
          f"every passage would be {len(chunks) / rate:.0f} s at the measured {rate:.1f} passages/s")


def while_heavy(app, heavy: list[str], cheap: str, pause: float) -> tuple[list, list]:
    """Each heavy URL cited by one /verify request at once, and a cheap one every `pause` s until they end:
    ([(seconds, status)] of the heavy ones, [(seconds since start, status)] of the cheap ones)."""
    import httpx
    done, timeline = [], []

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=600) as client:
            started = time.monotonic()

            async def one(n, url):
                response = await client.post("/verify",
                                             json={"claim": f"Water boils at 90 °C ({n}).", "urls": [url]})
                done.append((round(time.monotonic() - started, 1), response.status_code))
            tasks = [asyncio.create_task(one(n, url)) for n, url in enumerate(heavy)]
            await asyncio.sleep(0.2)
            n = 0
            while not all(t.done() for t in tasks):
                n += 1
                response = await client.post("/verify", json={"claim": f"Water boils at 100 °C ({n}).",
                                                              "urls": [f"{cheap}/{n}"]})
                timeline.append((time.monotonic() - started, response.status_code))
                await asyncio.sleep(pause)
            await asyncio.gather(*tasks)
    asyncio.run(scenario())
    return done, timeline


def bench_api(tmp: Path) -> None:
    import httpx

    from citecheck.serve.api import create_app
    from citecheck.web import vectors
    big, small = page(big_html(1.0)), page("<p>" + "Water boils at 100 °C at sea level. " * 20 + "</p>")

    def serve(conn, head, stop):
        (big if b" /big/" in head else small)(conn, head, stop)
    with SlowOrigin(serve) as origin, judge_standin() as judge:
        judge.script.content = verdict_json("not_found", None, 0.5)
        app = create_app(context(tmp, openai_base_url=judge.url + "/v1"))
        vectors.model()
        large, timeline = while_heavy(app, [f"{origin.url}/big/{n}" for n in range(4)], f"{origin.url}/small", 0.25)
    statuses = [s for _, s in timeline]
    answered = [t for t, s in timeline if s == 200]
    print(f"api (API_DEADLINE={Settings().api.deadline:g}, MAX_PASSAGES={Settings().max_passages}): 4 requests on "
          f"1 MB pages -> {sorted(large)} (seconds, status); other requests: {len(statuses)} sent, "
          f"{statuses.count(200)} answered 200, {statuses.count(429)} got 429"
          + (f"; first 200 at {min(answered):.1f} s" if answered else ""))


def bench_half_sent(tmp: Path) -> None:
    import uvicorn

    from citecheck.serve import serving
    from citecheck.serve.api import create_app
    limits = Settings().api
    port = free_port()
    server = uvicorn.Server(serving.server_config(create_app(context(tmp), lambda c, u: {}), limits, "127.0.0.1",
                                                  port, "warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    sockets = half_sent(port, 200)
    for sock in sockets:
        sock.setblocking(False)
    started, closed = time.monotonic(), {}
    while len(closed) < len(sockets) and time.monotonic() - started < 120:
        for i, sock in enumerate(sockets):
            if i in closed:
                continue
            try:
                while sock.recv(4096):
                    pass
                closed[i] = time.monotonic() - started
            except BlockingIOError:
                pass
        time.sleep(0.05)
    server.should_exit = True
    thread.join(10)
    bodies = [closed[i] for i in range(200) if i in closed]
    heads = [closed[i] for i in range(200, 400) if i in closed]
    print(f"half-sent (API_HEADER_TIMEOUT={limits.header_timeout:g}, API_BODY_TIMEOUT={limits.body_timeout:g}): "
          f"bodies {len(bodies)}/200 closed, last at {max(bodies, default=float('nan')):.1f} s; "
          f"heads {len(heads)}/200 closed, last at {max(heads, default=float('nan')):.1f} s "
          f"(median {statistics.median(heads) if heads else float('nan'):.1f} s)")


def round_two() -> dict:
    """The hostile inputs' worst cases, each in its own module beside this one (imported only when asked for)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import hostile_cluster
    import hostile_linear
    import hostile_parsers
    import hostile_review
    import hostile_stream
    return {"bombs": hostile_stream.bench_bombs, "judge-server": hostile_stream.bench_judge_server,
            "parsers": lambda tmp: hostile_parsers.bench_parsers(),
            "markdown": lambda tmp: hostile_linear.bench_markdown(),
            "batch-lines": lambda tmp: hostile_linear.bench_batch(), "review": hostile_review.bench_review,
            "cluster": hostile_cluster.bench_cluster}


BENCHES = {"drip": bench_drip, "crawlbase-drip": bench_crawlbase_drip, "large-page": bench_large_page,
           "api": bench_api, "half-sent": bench_half_sent}


def main(argv: list[str]) -> None:
    import tempfile
    benches = {**BENCHES, **round_two()}
    for name in argv or list(benches):
        with tempfile.TemporaryDirectory() as tmp:
            benches[name](Path(tmp))


if __name__ == "__main__":
    main(sys.argv[1:])
