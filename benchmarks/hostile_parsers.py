"""Parsers under a hard deadline: full-size bombs under the default limits, and what the
sandbox costs a normal page (a script that prints numbers; `bench_hostile.py` may import `bench_parsers`).

    .venv/bin/python benchmarks/hostile_parsers.py [overhead] [pdf] [html] [api]

- overhead: a normal fixture page (trafilatura) and a normal two-page PDF (pypdf), extracted in this
  process and through `source.sandbox` (a forked child): median milliseconds of 20 runs each.
- pdf: a small one-page PDF whose 2,500 layout lines are ~10,000 characters wide (H3's shape), read with
  the default PDF_MAX_SECONDS (60): seconds until pdf_too_slow; and its first 200 lines read in process.
- html: one element with 100,000 attributes (H4, ~889 KB), fetched directly with the default
  EXTRACT_MAX_SECONDS (10): seconds until page_too_complex.
- api: /verify (ASGI, default API_* limits, a judge stand-in) with four requests citing the H4 page while
  cheap requests (a short page) follow one another every 0.5 s: their statuses and the slowest.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_fetch import many_attributes  # noqa: E402 - the tests' bombs, full size here
from test_pdf_text import wide_columns  # noqa: E402

from citecheck.config import Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402


def _median_ms(call, runs: int = 20) -> float:
    call()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def bench_overhead() -> None:
    from pdfs import build

    from citecheck.source import pdf_text
    from citecheck.web import fixture_site as site
    from citecheck.web.fetch import html_text
    layout = (site.SITE_DIR / "layout.html").read_text(encoding="utf-8")
    content = (site.SITE_DIR / "pages" / "boiling-point.html").read_text(encoding="utf-8")
    markup = layout.replace("{content}", content)
    inside = _median_ms(lambda: html_text.readable_markdown(markup, "http://x/a"))
    sandboxed = _median_ms(lambda: html_text.extract(markup, "http://x/a", 20.0))
    print(f"overhead html: fixture page boiling-point ({len(markup):,} chars): in process {inside:.1f} ms, "
          f"sandboxed {sandboxed:.1f} ms (+{sandboxed - inside:.1f} ms)")
    data = build([["Water boils at a lower temperature on a mountain."] * 30] * 2)
    limits = {"name": "x.pdf", "max_pages": 300, "outline": True}
    inside = _median_ms(lambda: pdf_text.read_pages(data, limits))
    sandboxed = _median_ms(lambda: pdf_text.from_bytes(data, "x.pdf"))
    print(f"overhead pdf: two pages ({len(data):,} bytes): in process {inside:.1f} ms, "
          f"sandboxed {sandboxed:.1f} ms (+{sandboxed - inside:.1f} ms)")


def bench_pdf() -> None:
    from citecheck.source import pdf_text
    limits = Settings().pdf
    data = wide_columns(2500, step=0.3, flate=True)
    started = time.monotonic()
    try:
        pdf_text.from_bytes(data, "wide.pdf", max_seconds=limits.max_seconds)
        outcome = "read"
    except pdf_text.PdfError as exc:
        outcome = exc.reason
    print(f"pdf: {len(data) / 1000:.0f} KB wide-layout page, PDF_MAX_SECONDS={limits.max_seconds:g}: {outcome} "
          f"after {time.monotonic() - started:.1f} s")
    started = time.monotonic()
    pdf_text.read_pages(wide_columns(200, step=0.3, flate=True), {"name": "w.pdf", "max_pages": 9, "outline": False})
    print(f"pdf: the same shape with 200 lines, read in this process (no deadline can stop it): "
          f"{time.monotonic() - started:.1f} s")


def bench_html(tmp: Path) -> None:
    from standins.slow_origin import SlowOrigin, page

    from citecheck.web import fetch
    ctx = RunContext.build(Settings(cache_path=tmp / "cache.json", allow_private=True, ignore_robots=True))
    body = many_attributes(100_000)
    with SlowOrigin(page(body)) as origin:
        started = time.monotonic()
        result = fetch.fetch(origin.url + "/bomb", ctx)
    print(f"html: {len(body) / 1000:.0f} KB page, one element with 100,000 attributes, "
          f"EXTRACT_MAX_SECONDS={ctx.settings.extract_max_seconds:g}: {result.reason} "
          f"after {time.monotonic() - started:.1f} s")


def bench_api(tmp: Path) -> None:
    from bench_hostile import while_heavy
    from standins.judge import judge_standin, verdict_json
    from standins.slow_origin import SlowOrigin, page

    from citecheck.serve.api import create_app
    bomb = page(many_attributes(100_000))
    small = page("<p>" + "Water boils at 100 °C at sea level. " * 20 + "</p>")

    def serve(conn, head, stop):
        (bomb if b" /bomb/" in head else small)(conn, head, stop)
    with SlowOrigin(serve) as origin, judge_standin() as judge:
        judge.script.content = verdict_json("not_found", None, 0.5)
        app = create_app(RunContext.build(Settings(cache_path=tmp / "api.json", audit_db=tmp / "audit.db",
                                                   allow_private=True, openai_base_url=judge.url + "/v1",
                                                   ignore_robots=True, host_concurrency=64,
                                                   host_rate=1000.0)))
        bombs, timeline = while_heavy(app, [f"{origin.url}/bomb/{n}" for n in range(4)], f"{origin.url}/small", 0.5)
    statuses = [s for _, s in timeline]
    print(f"api: 4 requests on the 100,000-attribute page -> {sorted(bombs)} (seconds, status); cheap requests: "
          f"{len(statuses)} sent, {statuses.count(200)} answered 200, {statuses.count(429)} got 429 "
          f"(API_CONCURRENCY {Settings().api.concurrency}), last at {max(t for t, _ in timeline):.1f} s")


def bench_parsers(which: set[str] | None = None) -> None:
    which = which or {"overhead", "pdf", "html", "api"}
    with tempfile.TemporaryDirectory() as tmp:
        if "overhead" in which:
            bench_overhead()
        if "pdf" in which:
            bench_pdf()
        if "html" in which:
            bench_html(Path(tmp))
        if "api" in which:
            bench_api(Path(tmp))


if __name__ == "__main__":
    bench_parsers(set(sys.argv[1:]) or None)
