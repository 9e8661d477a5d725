"""Screenshots of /review over the fixture batch for the README: docs/review-page.png, docs/review-queue.png.

    .venv/bin/python scripts/screenshot_review.py [--out docs]

What it does: replays notebook 03's two fixture batches offline from json_cache.json (the fixture site on
127.0.0.1:8731, no key, no model call) into a temporary audit DB, serves the app with a throwaway
REVIEW_TOKEN on a free loopback port, and drives Debian's Chromium (Playwright pointed at /usr/bin/chromium)
through the login form to the queue and to citation m1's page (the salt claim, with its quote marked).
"""
from __future__ import annotations

import argparse
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import batch
from citecheck.config import Secrets, Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402
from citecheck.serve.api import create_app  # noqa: E402
from citecheck.web import fixture_site  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def fixture_db(work: Path) -> Path:
    """Notebook 03's batches, replayed offline into a fresh audit DB."""
    db = work / "audit.db"
    ctx = RunContext.build(Settings(cache_path=ROOT / "json_cache.json", offline=True, audit_db=db))
    site = fixture_site.start(ctx.settings.site_port)
    ctx = ctx.allowing(site.host, site.port)
    for name in ("claims", "claims_more"):
        batch.run_batch(ROOT / "data" / f"{name}.jsonl", ctx)
    return db


def serve(db: Path, token: str) -> tuple[str, object]:
    import uvicorn
    ctx = RunContext.build(Settings(audit_db=db, secrets=Secrets({"REVIEW_TOKEN": token})))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(ctx, lambda claim, urls: {})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs"), help="folder for the PNGs (default docs/)")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("screenshot_review: Chromium is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory() as work:
        base, server = serve(fixture_db(Path(work)), token)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
                page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
                page.goto(base + "/review")
                page.fill("#name", "Ann")
                page.fill("#token", token)
                with page.expect_navigation():
                    page.click("button[type=submit]:has-text('Log in')")
                page.screenshot(path=str(Path(args.out) / "review-queue.png"), full_page=True)
                page.goto(base + "/review?batch=claims_more")
                with page.expect_navigation():
                    page.click("a:has-text('A tablespoon of salt')")
                page.screenshot(path=str(Path(args.out) / "review-page.png"), full_page=True)
                browser.close()
        finally:
            server.should_exit = True
    print(f"wrote {args.out}/review-queue.png and {args.out}/review-page.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
