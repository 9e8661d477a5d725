"""Screenshots of the answer page at / for the docs: docs/answer-page.png (and the form, answer-form.png).

    .venv/bin/python scripts/screenshot_answer.py [--out docs]

What it does: serves the app with a throwaway REVIEW_TOKEN on a free loopback port, replaying json_cache.json
offline against the fixture site (127.0.0.1:8731: no key, no model call), and drives Debian's Chromium
(Playwright pointed at /usr/bin/chromium) through the login form, pastes data/answers/anthropic_report.json
(notebook 06's answer) into the page, submits it and shoots the report, then follows its first problem's
link to the sentence it names.
"""
from __future__ import annotations

import argparse
import secrets
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck.config import Secrets, Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402
from citecheck.serve.api import create_app  # noqa: E402
from citecheck.web import fixture_site  # noqa: E402
from screenshot_review import FLAGS  # noqa: E402 - this folder is on the path of a script run from it

ANSWER = ROOT / "data" / "answers" / "anthropic_report.json"


def serve(token: str) -> tuple[str, object, object]:
    """(the app's base URL, its uvicorn server, the fixture site), replaying the cache offline."""
    import uvicorn
    ctx = RunContext.build(Settings(cache_path=ROOT / "json_cache.json", offline=True, audit_db=None,
                                    secrets=Secrets({"REVIEW_TOKEN": token})))
    site = fixture_site.start(ctx.settings.site_port)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(ctx.allowing(site.host, site.port))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, site


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs"), help="folder for the PNGs (default docs/)")
    out, chromium = Path(parser.parse_args().out), shutil.which("chromium")
    if not chromium:
        sys.exit("screenshot_answer: Chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright
    token = secrets.token_urlsafe(24)
    base, server, site = serve(token)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
            page = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1,
                                       java_script_enabled=False).new_page()
            page.goto(base + "/")
            page.fill("#token", token)
            with page.expect_navigation():
                page.click("button[type=submit]:has-text('Log in')")
            page.fill("#answer", ANSWER.read_text(encoding="utf-8"))
            page.screenshot(path=str(out / "answer-form.png"))
            with page.expect_navigation():
                page.click("button:has-text('Check the answer')")
            page.locator("#numbers").scroll_into_view_if_needed()
            page.screenshot(path=str(out / "answer-page.png"), full_page=True)
            page.click("#problems a >> nth=0")
            page.screenshot(path=str(out / "answer-problem-link.png"))
            browser.close()
    finally:
        server.should_exit = True
        site.stop()
    print(f"wrote {out}/answer-form.png, {out}/answer-page.png and {out}/answer-problem-link.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
