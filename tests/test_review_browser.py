"""A real browser on /review: Chromium (Debian's package, driven by Playwright) logs in, confirms one item with the
keyboard, corrects another with a note, and the audit DB holds both decisions.

Skipped only when Chromium is not installed (`.ci/run` installs it with apt-get)."""
from __future__ import annotations

import contextlib
import shutil
import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from citecheck import audit
from citecheck.serve.api import create_app

TOKEN = "browser-Tk9vQ2mX7pL4wZ8r-FAKE"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium; "
                                                         ".ci/run installs it)")


def seed(db: Path) -> None:
    conn = audit.connect(db)
    for item_id, label, confidence, quote, passage in [
        ("m1", "contradicted", 0.7, "far too little", "Salt lifts it by a small fraction of a degree, far too little."),
        ("m2", "supported", 0.4, "boils at 100 °C", "At sea level, pure water boils at 100 °C (212 °F)."),
        ("m3", "supported", 0.95, "yes", "yes"),
    ]:
        audit.write_citation(conn, "fixture", item_id, f"claim {item_id}", {
            "url": f"http://127.0.0.1:8731/{item_id}", "label": label, "confidence": confidence,
            "auto": confidence >= 0.8, "evidence_quote": quote, "passages": [passage]}, "m")
    conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(app):
    """The app under uvicorn on a free loopback port, in a thread: yields its base URL."""
    import uvicorn
    port = free_port()
    running = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(10)


@pytest.fixture
def server(make_ctx, tmp_path):
    seed(tmp_path / "audit.db")
    with serving(create_app(make_ctx(secrets={"REVIEW_TOKEN": TOKEN}), lambda claim, urls: {})) as base:
        yield base


def test_a_person_logs_in_confirms_one_item_and_corrects_another(server, tmp_path):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page()
            page.goto(server + "/review")
            assert page.title().startswith("Log in")
            page.fill("#name", "Ann")
            page.fill("#token", TOKEN)
            with page.expect_navigation():
                page.click("button[type=submit]:has-text('Log in')")
            assert page.url == server + "/review"
            assert "2 citations to review" in page.inner_text("main")
            cookies = {c["name"]: c for c in page.context.cookies()}
            assert cookies["citecheck_review"]["httpOnly"] and cookies["citecheck_review"]["sameSite"] == "Strict"
            assert page.evaluate("document.cookie") == ""                   # HttpOnly: no script can read it
            with page.expect_navigation():
                page.click("a:has-text('start with the first')")
            assert page.inner_text(".claim") == "claim m1"                 # contradicted first
            assert page.inner_text(".passage mark") == "far too little"
            with page.expect_navigation():
                page.keyboard.press("Enter")                               # the Confirm button has the focus
            assert "Saved: Ann confirmed citation m1" in page.inner_text(".flash")
            assert page.inner_text(".claim") == "claim m2"                 # the next in the queue
            page.check("input[name=label][value=not_found]")
            page.fill("#note", "the passage is about sea level, not the claim")
            with page.expect_navigation():
                page.click("button:has-text('Save correction')")
            assert "/review?" in page.url
            assert "corrected" in page.inner_text(".flash")
            assert "0 citations to review" in page.inner_text("main")
        finally:
            browser.close()
    with sqlite3.connect(tmp_path / "audit.db") as conn:
        decisions = conn.execute("SELECT id, action, judged_label, label, reviewer, note FROM reviews "
                                 "ORDER BY review_id").fetchall()
    assert decisions == [("m1", "confirm", "contradicted", "contradicted", "Ann", None),
                         ("m2", "correct", "supported", "not_found", "Ann",
                          "the passage is about sea level, not the claim")]
