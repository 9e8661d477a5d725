"""A real browser on the answer page at /: Chromium (Debian's package, driven by Playwright) with JavaScript
off logs in, pastes an answer, submits it and reads the report: the checked sentences marked, each problem a
link that takes it to its sentence. The answer's URLs are the fixture site's, the judge a stand-in on
127.0.0.1.

Skipped only when Chromium is not installed (`.ci/run` installs it with apt-get)."""
from __future__ import annotations

import pytest
from test_answer_report import markdown_answer, scripted_judge  # noqa: F401 - the scripted judge stand-in
from test_review_browser import CHROMIUM, FLAGS, serving
from test_verify import judge, judge_server, url  # noqa: F401 - the fixture site and judge stand-in

from citecheck.config import Secrets
from citecheck.serve.api import create_app

TOKEN = "answer-Tq7vR2mK9pX4wZ6s-FAKE"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed "
                                                         "(apt-get install -y chromium; .ci/run installs it)")


@pytest.fixture
def server(scripted_judge, run):  # noqa: F811
    ctx = run.ctx.replace(secrets=Secrets({"REVIEW_TOKEN": TOKEN}), audit_db=None)
    with serving(create_app(ctx)) as base:
        yield base


def test_a_person_logs_in_pastes_an_answer_and_follows_a_problem_to_its_sentence(server, url):  # noqa: F811
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_context(java_script_enabled=False,
                                       viewport={"width": 1000, "height": 300}).new_page()
            page.goto(server + "/")
            assert page.title().startswith("Check an answer")
            page.fill("#token", TOKEN)
            with page.expect_navigation():
                page.click("button[type=submit]:has-text('Log in')")
            assert page.url == server + "/"
            cookie = {c["name"]: c for c in page.context.cookies()}["citecheck_answer"]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
            page.fill("#answer", markdown_answer(url))
            with page.expect_navigation():
                page.click("button:has-text('Check the answer')")
            assert page.url == server + "/check-answer/page" and page.title().startswith("Answer report")
            numbers = page.inner_text("#numbers")
            assert "citation_precision\n0.4000 (2/5)" in numbers
            assert "citation_recall\n0.4000 (2/5)" in numbers
            marks = page.locator("#sentences mark").all_inner_texts()
            assert len(marks) == 5 and marks[2].startswith("A tablespoon of salt")  # the claims
            assert page.inner_text("#s1").startswith("Hello!") and page.locator("#s1 mark").count() == 0
            assert page.inner_text("#s4 .label") == "contradicted"
            link = page.locator("#problems a", has_text="sentence 4: none of its sources supports it")
            assert link.get_attribute("href") == "#s4"
            page.locator("#answer").scroll_into_view_if_needed()                   # the page's end
            assert not in_view(page, "#s4")
            link.click()
            assert page.url.endswith("/check-answer/page#s4") and in_view(page, "#s4")
            page.locator("#s4 a", has_text="[m4]").click()                # the sentence's marker's row
            assert page.url.endswith("#m4") and in_view(page, "#m4") and not in_view(page, "#s4")
            assert "contradicted" in page.inner_text("#m4")
            assert page.input_value("#answer") == markdown_answer(url)    # kept, to edit and resubmit
        finally:
            browser.close()


def in_view(page, selector: str) -> bool:
    """Whether the element's top is inside the viewport (the browser scrolled to it; a pixel of rounding)."""
    box, height = page.locator(selector).bounding_box(), page.viewport_size["height"]
    return -1 <= box["y"] < height
