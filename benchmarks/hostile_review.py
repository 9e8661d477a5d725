"""At full size: the audit DB and `/review` under hostile input (prints numbers).

    .venv/bin/python benchmarks/hostile_review.py

`bench_review(tmp)` is the function `bench_hostile.py` can import as one more bench:
- Foreign DB: a SQLite DB with a 100,000-row `citations` table of its own: seconds to refuse, unchanged.
- Parameters: `serve`'s real server over a 10,000-row audit DB, one row with a text confidence: the queue
  page; `page` of 5,000 digits, `page=²`, `saved` past SQLite's integers, an item key nested as deep as
  MAX_PARAM allows and one of 60 KB: each status and time. `calibrate` over it.
- Access log: every access-log line of the run, checked for a query string.
- Logins: 600 wrong logins from one address (how many were checked) then the right token, which passes the
  lock; a logged-out cookie replayed. Tokens: weak ones refused and 100,000 `secrets.token_urlsafe(32)`
  checked for false refusals.
- Marks: the item page's evidence mark (`render_html.marked`) over a text/plain page's passage with 16k to
  120k spaces after "Water boils -", before (the pattern built from the quote, kept here as the reference)
  and now (normalise once, `str.find`): seconds, the before/now ratio and the growth per doubling.
"""
from __future__ import annotations

import base64
import logging
import re
import secrets
import sqlite3
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import httpx  # noqa: E402
from standins.judge import free_port  # noqa: E402

from citecheck import audit  # noqa: E402
from citecheck.config import Secrets, Settings, review_token_problem  # noqa: E402
from citecheck.context import RunContext  # noqa: E402

ROWS = 10_000
WATER = "Water boils - at sea level."


def _timed(fn):
    started = time.monotonic()
    result = fn()
    return result, time.monotonic() - started


def bench_foreign_db(tmp: Path) -> None:
    path = tmp / "theirs.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE citations (id INTEGER PRIMARY KEY, doi TEXT, title TEXT)")
        raw.executemany("INSERT INTO citations (doi, title) VALUES (?, ?)",
                        ((f"10.1/{i}", f"paper {i}") for i in range(100_000)))
    before = path.read_bytes()
    started = time.monotonic()
    try:
        audit.connect(path).close()
        outcome = "opened (NOT refused)"
    except OSError as exc:
        outcome = f"refused ({type(exc).__name__})"
    seconds = time.monotonic() - started
    print(f"Foreign DB (100,000 rows of its own): {outcome} in {seconds * 1000:.1f} ms; "
          f"file unchanged: {path.read_bytes() == before}")


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _seed(db: Path) -> None:
    conn = audit.connect(db)
    with conn:
        for i in range(ROWS):
            audit.write_citation(conn, "big", f"c{i:05d}", f"claim {i}", {
                "url": f"http://site/{i}", "label": "supported", "confidence": (i % 100) / 100,
                "auto": False}, "m")
    conn.execute("UPDATE citations SET confidence = 'high', label = 'contradicted' WHERE id = 'c00007'")
    conn.commit()
    audit.write_citation(conn, "big", "spaces", "Water boils at sea level.", {
        "url": "http://site/water.txt", "label": "supported", "confidence": 0.9, "auto": False,
        "evidence_quote": WATER, "passages": [_whitespace(120_000)]}, "m")
    conn.close()


def _item_while_health(client: httpx.Client, base: str, params: dict, headers: dict) -> tuple:
    """The item page's status and seconds, and the seconds of each /health asked while it was pending."""
    done, health = threading.Event(), []
    result = {}

    def item():
        response, seconds = _timed(lambda: httpx.get(base + "/item", params=params, headers=headers,
                                                      timeout=300))
        result.update(status=response.status_code, seconds=seconds)
        done.set()
    threading.Thread(target=item).start()
    while not done.is_set():
        health.append(_timed(lambda: client.get(base.replace("/review", "/health")))[1])
        time.sleep(0.01)
    return result["status"], result["seconds"], health


def bench_review_app(tmp: Path) -> None:
    import uvicorn

    from citecheck.evaluation import calibrate
    from citecheck.serve import serving
    from citecheck.serve.api import create_app
    db, token = tmp / "audit.db", secrets.token_urlsafe(32)
    _seed(db)
    ctx = RunContext.build(Settings(audit_db=db, secrets=Secrets({"REVIEW_TOKEN": token})))
    app = create_app(ctx, lambda claim, urls: {})
    port = free_port()
    server = uvicorn.Server(serving.server_config(app, ctx.settings.api, "127.0.0.1", port, "info"))
    seen = _Lines()
    logging.getLogger("uvicorn.access").addHandler(seen)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    base, bearer = f"http://127.0.0.1:{port}/review", {"Authorization": f"Bearer {token}"}
    deep = base64.urlsafe_b64encode(b"[" * 6144).decode().rstrip("=")
    try:
        with httpx.Client(timeout=60) as client:
            cases = [("queue page (one text confidence)", "", {}), ("page=5000 digits", "", {"page": "9" * 5000}),
                     ("page=²", "", {"page": "²"}), ("saved=2**70", "", {"saved": str(2 ** 70)}),
                     ("k nested 6,144 deep", "/item", {"k": deep}), ("k of 60 KB", "/item", {"k": "A" * 60_000}),
                     ("seen_review=²", "/decide", None)]
            for name, path, params in cases:
                if params is None:
                    response, seconds = _timed(lambda: client.post(base + path, headers=bearer, data={
                        "k": "x", "seen_review": "²", "action": "confirm"}))
                else:
                    response, seconds = _timed(lambda: client.get(base + path, params=params, headers=bearer))
                note = " (invalid row shown)" if "invalid row: confidence" in response.text else ""
                print(f"Parameters, {name}: {response.status_code} in {seconds * 1000:.0f} ms{note}")
            key = base64.urlsafe_b64encode(b'["big", "spaces", "http://site/water.txt"]').decode().rstrip("=")
            status, seconds, health = _item_while_health(client, base, {"k": key}, bearer)
            print(f"Marks: the item page of a 120,000-space passage: {status} in {seconds * 1000:.0f} ms; "
                  f"{len(health)} /health asked meanwhile, slowest {max(health, default=0) * 1000:.0f} ms")
            login, logout = base + "/login", base + "/logout"
            statuses, seconds = _timed(lambda: [client.post(login, data={"name": "x", "token": f"wrong-{i}"})
                                                .status_code for i in range(600)])
            right = client.post(login, data={"name": "Ann", "token": token}, follow_redirects=False)
            print(f"Logins: 600 wrong logins in {seconds:.1f} s: {statuses.count(401)} x 401 (checked), "
                  f"{statuses.count(429)} x 429 (unchecked); then the right token: {right.status_code}")
        with httpx.Client(timeout=60) as person:        # the lock above never holds the right token back
            person.post(login, data={"name": "Ann", "token": token}, follow_redirects=False)
            cookie = person.cookies.get("citecheck_review")
            page = person.get(base)
            csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
            person.post(logout, data={"csrf": csrf}, headers={"Origin": f"http://127.0.0.1:{port}"},
                        follow_redirects=False)
            replayed = httpx.get(base, cookies={"citecheck_review": cookie}, timeout=60)
            print(f"Logins: a logged-out cookie replayed: {replayed.status_code}")
    finally:
        server.should_exit = True
        thread.join(10)
        logging.getLogger("uvicorn.access").removeHandler(seen)
    with_query = [line for line in seen.lines if "?" in line]
    print(f"Access log: {len(seen.lines)} lines, {len(with_query)} with a query string")
    conn = audit.connect(db)
    skipped: list = []
    try:
        calibrate.calibrate(conn, skipped=skipped)
        outcome = "ran"
    except ValueError as exc:
        outcome = f"one-line error ({str(exc)[:60]}...)"
    conn.close()
    print(f"Parameters, calibrate over it: {outcome}, no traceback")


def bench_tokens() -> None:
    weak = ["passwordpassword", "abcdefghijklmnopqrstuvwxyz", "Password1234567!", "0123456789012345",
            "Password123456789", "Sunshine8403917265", "Tr0ub4dor&3Tr0ub4dor&3"]
    refused = sum(review_token_problem(t) is not None for t in weak)
    false, seconds = _timed(lambda: sum(review_token_problem(secrets.token_urlsafe(32)) is not None
                                        for _ in range(100_000)))
    print(f"Tokens: {refused}/{len(weak)} weak tokens refused; {false}/100,000 token_urlsafe(32) refused "
          f"({seconds:.1f} s)")


def _marked_before(passage: str, quote: str) -> list[tuple[str, bool]]:
    """The reference: how the evidence was marked before (a regex from the quote: a space any whitespace
    run, a dash optionally followed by a line wrap), which backtracks quadratically over whitespace."""
    from citecheck.matching import _FOLD, normalise
    folded: dict[str, set] = {}
    for raw, to in _FOLD.items():
        folded.setdefault(to, set()).add(chr(raw))
    parts = []
    for char in normalise(quote):
        if char == " ":
            parts.append(r"\s+")
        elif char == "-":
            parts.append("[" + re.escape("-" + "".join(folded.get("-", ()))) + r"](?:\n\s*)?")
        elif char in folded:
            parts.append("[" + re.escape(char + "".join(folded[char])) + "]")
        else:
            parts.append(re.escape(char))
    segments, at = [], 0
    for hit in re.compile("".join(parts)).finditer(passage):
        segments += [(passage[at:hit.start()], False), (hit.group(0), True)]
        at = hit.end()
    return segments + [(passage[at:], False)]


def _whitespace(spaces: int) -> str:
    """A text/plain page's passage: the quoted line, then "Water boils -", a newline and `spaces` spaces."""
    return f"{WATER}\n\nWater boils -\n" + " " * spaces + "higher up it boils lower.\n"


def bench_marks() -> None:
    from citecheck.report import render_html
    quote, last = WATER, None
    for spaces in (16_000, 32_000, 64_000, 120_000):
        passage = _whitespace(spaces)
        _, before = _timed(lambda: _marked_before(passage, quote))
        now = min(_timed(lambda: render_html.marked(passage, quote))[1] for _ in range(5))
        growth = (f"; x{spaces / last[0]:.2g} the spaces: before x{before / last[1]:.1f}, "
                  f"now x{now / last[2]:.1f}" if last else "")
        print(f"Marks, {spaces:,} spaces: before {before:.2f} s, now {now * 1000:.2f} ms "
              f"({before / now:,.0f}x){growth}")
        last = spaces, before, now


def bench_review(tmp: Path) -> None:
    bench_marks()
    bench_foreign_db(tmp)
    bench_tokens()
    bench_review_app(tmp)


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        bench_review(Path(tmp))
