"""/review: off without REVIEW_TOKEN; token, cookie and CSRF rules; escaping of a hostile page; the queue's
order and pages over 10,000 rows; conflicts refused with the history kept."""
from __future__ import annotations

import asyncio
import base64
import html.parser
import json
import re
import secrets
import sqlite3
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from citecheck import audit
from citecheck.serve.api import create_app
from citecheck.report import render_html
from citecheck.serve.review_app import auth, pages, queue
from citecheck.verdict import review

TOKEN = "review-token-FAKE-0123456789abcdef"
HOSTILE = '<img src=x onerror="alert(1)"> and <script>alert(2)</script>'


def verify_nothing(claim, urls):
    raise AssertionError("the review tests never verify")


def seed(db, rows):
    conn = audit.connect(db)
    written = [audit.write_citation(conn, r.pop("batch", "b1"), r.pop("id"), r.pop("claim", "a claim"), r, "m")
               for r in rows]
    conn.close()
    return written


ROWS = [
    {"id": "c1", "url": "http://site/a", "label": "supported", "confidence": 0.6, "auto": False,
     "evidence_quote": "boils at 100 °C", "passages": ["Pure water boils at 100 °C at sea level.", "Other."]},
    {"id": "c2", "url": "http://site/b", "label": "contradicted", "confidence": 0.9, "auto": False,
     "evidence_quote": "at 90 °C", "passages": ["At altitude it boils at 90 °C."]},
    {"id": "c3", "url": "http://site/c", "label": "not_found", "confidence": 0.0, "auto": False,
     "reason": "evidence_quote_not_in_source", "passages": ["Nothing about it."]},
    {"id": "c4", "url": "http://site/d", "label": "supported", "confidence": 0.95, "auto": True,
     "evidence_quote": "yes", "passages": ["yes"]},
    {"id": "c5", "url": "http://site/e", "label": "unreachable", "reason": "http_404", "auto": True},
]


@pytest.fixture
def app_for(make_ctx, tmp_path):
    apps = []

    def make(rows=ROWS, token=TOKEN, **settings):
        seed(tmp_path / "audit.db", [dict(r) for r in rows])
        app = create_app(make_ctx(secrets={"REVIEW_TOKEN": token} if token else {}, **settings), verify_nothing)
        apps.append(app)
        return app
    yield make
    for app in apps:
        if app.state.audit_writer is not None:
            app.state.audit_writer.close()


def login(client, name="Ann", token=TOKEN):
    return client.post("/review/login", data={"name": name, "token": token}, follow_redirects=False)


def form_of(page_html: str) -> dict:
    """The hidden fields of the decision form on an item page."""
    form = page_html[page_html.index('action="/review/decide"'):]
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))


def first_item(client, headers=None, **params):
    page = client.get("/review", params=params, headers=headers)
    link = re.search(r'href="(/review/item\?[^"]+)"', page.text).group(1).replace("&amp;", "&")
    return client.get(link, headers=headers)


def rows_of(db) -> list[dict]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute("SELECT * FROM citations ORDER BY id, url")]


def reviews_in(db):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, action, label, reviewer, note FROM reviews ORDER BY review_id").fetchall()


# ---------------------------------------------------------------- off, tokens, cookies

def test_off_unless_review_token_is_set(app_for):
    client = TestClient(app_for(token=None))
    for method, path in [("GET", "/review"), ("GET", "/review/item"), ("POST", "/review/decide")]:
        response = client.request(method, path)
        assert response.status_code == 404 and "set REVIEW_TOKEN" in response.text


def test_a_short_token_is_refused_at_start_without_its_value(app_for):
    with pytest.raises(ValueError, match="REVIEW_TOKEN must be at least 16") as err:
        app_for(token="short-secret")
    assert "short-secret" not in str(err.value)


def test_every_page_needs_the_token_and_a_wrong_one_says_nothing_about_it(app_for):
    client = TestClient(app_for())
    anonymous = client.get("/review")
    assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Bearer")
    assert 'action="/review/login"' in anonymous.text                   # people get the login form
    assert client.get("/review/item", params={"k": "x"}).status_code == 401
    assert client.get("/review", headers={"Authorization": "Bearer wrong-" + TOKEN}).status_code == 401
    assert client.get("/review", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    wrong_token, no_name = login(client, token=TOKEN[:-1]), login(client, name="   ")
    assert wrong_token.status_code == no_name.status_code == 401
    assert wrong_token.text == no_name.text and TOKEN not in wrong_token.text
    assert "set-cookie" not in wrong_token.headers
    assert client.get("/review", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_the_login_cookie_is_httponly_samesite_and_never_holds_the_token(app_for):
    client = TestClient(app_for())
    response = login(client)
    assert response.status_code == 303 and response.headers["location"] == "/review"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/review" in cookie
    assert TOKEN not in cookie
    page = client.get("/review")
    assert page.status_code == 200 and "signed in as <strong>Ann</strong>" in page.text


def test_a_forged_or_expired_cookie_is_refused():
    keys = auth.Keys(TOKEN)
    good = keys.session("Ann", now=1000)
    assert keys.reviewer(good, now=1000 + 60).name == "Ann"
    assert keys.reviewer(good, now=1000 + auth.SESSION_HOURS * 3600 + 1) is None
    name, issued, signature = good.split(".")
    assert keys.reviewer(f"{auth.Keys(TOKEN).session('Bob', now=1000).split('.')[0]}.{issued}.{signature}",
                         now=1001) is None
    assert keys.reviewer(good, now=1000) and auth.Keys(TOKEN + "x").reviewer(good, now=1001) is None
    assert keys.reviewer("garbage", now=1) is None and keys.reviewer(None) is None
    assert TOKEN not in repr(keys)


# ---------------------------------------------------------------- CSRF

def test_every_write_needs_the_form_token_and_a_cross_site_post_is_refused(app_for, tmp_path):
    client = TestClient(app_for())
    login(client)
    fields = form_of(first_item(client).text)
    decide = {**fields, "action": "confirm"}
    assert client.post("/review/decide", data={**decide, "csrf": ""}, follow_redirects=False).status_code == 403
    assert client.post("/review/decide", data={**decide, "csrf": "0" * 64},
                       follow_redirects=False).status_code == 403
    other = TestClient(client.app)
    login(other, name="Eve")
    assert other.post("/review/decide", data=decide, follow_redirects=False).status_code == 403   # Ann's token
    cross = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    for headers in (cross, {"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
        refused = client.post("/review/decide", data=decide, headers=headers, follow_redirects=False)
        assert refused.status_code == 403 and "cross-site request refused" in refused.text
    assert client.post("/review/login", data={"name": "Ann", "token": TOKEN}, headers=cross,
                       follow_redirects=False).status_code == 403
    assert reviews_in(tmp_path / "audit.db") == []                          # nothing was written
    same_site = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    saved = client.post("/review/decide", data=decide, headers=same_site, follow_redirects=False)
    assert saved.status_code == 303
    assert reviews_in(tmp_path / "audit.db") == [("c2", "confirm", "contradicted", "Ann", None)]


def test_a_script_writes_with_the_bearer_token_and_no_form_token(app_for, tmp_path):
    client = TestClient(app_for())
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    fields = form_of(first_item(client, headers=bearer).text)
    assert fields["csrf"] == ""
    saved = client.post("/review/decide", headers=bearer, data={**fields, "action": "correct", "label": "supported",
                                                                "note": "the page backs it", "reviewer": "bot"})
    assert saved.status_code == 200 and saved.json()["label"] == "supported" and saved.json()["reviewer"] == "bot"
    assert reviews_in(tmp_path / "audit.db") == [("c2", "correct", "supported", "bot", "the page backs it")]
    assert client.post("/review/decide", data=fields).status_code == 401   # no token, no cookie


# ---------------------------------------------------------------- escaping

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "a", "span", "nav", "form",
                "input", "button", "main", "div", "p", "dl", "dt", "dd", "strong", "mark", "section", "aside",
                "fieldset", "legend", "label", "textarea", "kbd", "table", "thead", "tbody", "tr", "th", "td",
                "code", "del", "ins", "select", "option", "img"}


class Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attributes = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes += attrs


def parsed(text: str) -> Tags:
    tags = Tags()
    tags.feed(text)
    return tags


def assert_inert(text: str, images: bool = False) -> None:
    """No tag or attribute that could run anything (`images`: our own PNGs as data: URIs); the hostile
    text shown as text."""
    tags = parsed(text)
    assert tags.tags <= ALLOWED_TAGS - (set() if images else {"img"}), tags.tags - ALLOWED_TAGS
    assert not [name for name, _ in tags.attributes if name.startswith("on")]
    assert not [value for name, value in tags.attributes if name in ("href", "src", "action")
                and (value or "").strip().lower().startswith(("javascript:", "data:"))
                and not (images and name == "src" and value.startswith("data:image/png;base64,"))]
    assert "<script" not in text.lower()


def test_a_hostile_page_and_claim_render_as_text(app_for, tmp_path):
    hostile = {"id": "<b>x</b>", "url": "javascript:alert(3)", "label": "contradicted", "confidence": 0.3,
               "auto": False, "claim": "Claim " + HOSTILE, "evidence_quote": "onerror=",
               "reason": None, "final_url": "http://a/<svg onload=alert(4)>",
               "passages": ["Page text " + HOSTILE, "</div><textarea>breakout"]}
    client = TestClient(app_for(rows=[hostile]))
    login(client, name='<svg onload="alert(5)">')
    listing = client.get("/review")
    item = first_item(client)
    for page in (listing, item):
        assert page.status_code == 200
        assert_inert(page.text)
        assert "script-src 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in item.text
    assert "&lt;img src=x <mark>onerror=</mark>&#34;alert(1)&#34;&gt;" in item.text       # marked, still text
    assert "&lt;/div&gt;&lt;textarea&gt;breakout" in item.text
    assert "javascript:alert(3)" in item.text and 'href="javascript' not in item.text
    fields = form_of(item.text)
    client.post("/review/decide", data={**fields, "action": "correct", "label": "supported", "note": HOSTILE})
    history = client.get("/review/item", params={"k": fields["k"]})
    assert_inert(history.text)
    assert "&lt;svg onload=&#34;alert(5)&#34;&gt;" in history.text


# ---------------------------------------------------------------- hostile whitespace: linear, off the loop

WATER = "Water boils - at sea level."
SPACES = 120_000


def whitespace_page(spaces: int) -> str:
    """A text/plain page keeps its whitespace: after the quoted line, "Water boils -", a newline and `spaces`
    spaces, then words that do not go on with the quote (where a pattern built from it backtracks)."""
    return f"{WATER}\n\nWater boils -\n" + " " * spaces + "higher up it boils lower.\n"


async def while_rendering(app, item_link: str, cookies) -> tuple[httpx.Response, list[tuple[bool, int]]]:
    """GET the item page and, until it is answered, /health every 20 ms: the item's response and, per
    /health, (answered while the item was still pending, status)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", cookies=cookies,
                                 timeout=120) as client:
        item = asyncio.create_task(client.get(item_link))
        health = []
        while not item.done():
            response = await client.get("/health")
            health.append((not item.done(), response.status_code))
            await asyncio.sleep(0.02)
        return await item, health


def test_a_page_of_whitespace_from_the_real_flow_is_marked_in_a_worker_thread_while_health_answers(
        make_ctx, tmp_path, monkeypatch):
    """/verify on a crawled text/plain page with 120,000 spaces after "Water boils -", the judge quoting the
    line above it: the item page marks the quote by normalising both texts once (linear: no pattern built
    from the quote backtracks over the spaces), in a worker thread, and /health answers meanwhile."""
    from standins.http import StandIn
    from standins.judge import judge_standin, verdict_json
    threads = []
    marking = render_html.passages_of
    monkeypatch.setattr(render_html, "passages_of",
                        lambda row: (threads.append(threading.current_thread()), marking(row))[1])
    page = whitespace_page(SPACES)
    with StandIn(lambda request: (200, {"Content-Type": "text/plain; charset=utf-8"}, page)) as origin, \
            judge_standin() as judge:
        judge.script.content = verdict_json("supported", WATER, 0.9)
        app = create_app(make_ctx(secrets={"OPENAI_API_KEY": "sk-FAKE-judge", "REVIEW_TOKEN": TOKEN},
                                  allow_private=True, openai_base_url=judge.url + "/v1"))
        try:
            client = TestClient(app)
            verdict = client.post("/verify", json={"claim": "Water boils at sea level.",
                                                   "urls": [origin.url + "/water.txt"]})
            assert verdict.status_code == 200 and verdict.json()["citations"][0]["evidence_quote"] == WATER
            login(client)
            listing = client.get("/review", params={"view": "all"})
            link = re.search(r'href="(/review/item\?[^"]+)"', listing.text).group(1).replace("&amp;", "&")
            item, health = asyncio.run(while_rendering(app, link, dict(client.cookies)))
        finally:
            app.state.audit_writer.close()
    assert " " * SPACES in json.loads(rows_of(tmp_path / "audit.db")[0]["passages"])[0]    # whitespace kept
    assert item.status_code == 200
    assert item.text.count(f"<mark>{WATER}</mark>") == 1 and "Water boils -\n" in item.text
    assert threads and all(thread is not threading.main_thread() for thread in threads)    # off the loop
    assert health and all(status == 200 for _, status in health)


def test_a_page_not_rendered_in_time_is_a_503_message_and_the_server_keeps_answering(app_for, monkeypatch):
    """Rendering is in a worker thread under RENDER_SECONDS: a slow one is given up with a 503 page naming
    the limit, and /health is answered while it runs."""
    marking = render_html.passages_of
    monkeypatch.setattr(render_html, "passages_of", lambda row: (time.sleep(1.5), marking(row))[1])
    monkeypatch.setattr(pages, "RENDER_SECONDS", 0.5)
    client = TestClient(app_for())
    login(client)
    link = re.search(r'href="(/review/item\?[^"]+)"', client.get("/review").text).group(1)
    item, health = asyncio.run(while_rendering(client.app, link.replace("&amp;", "&"), dict(client.cookies)))
    assert item.status_code == 503 and item.headers["retry-after"] == "1"
    assert "this page took longer than 0.5 s to prepare and was given up" in item.text
    assert "Traceback" not in item.text and 'href="/review"' in item.text
    assert any(pending for pending, _ in health) and all(status == 200 for _, status in health)


def test_marks_follow_the_guards_comparison_wherever_the_quote_stands():
    """Typographic quotes and dashes, a word wrapped at a hyphen and any whitespace run compare equal; every
    occurrence is marked in the passage's own characters; no quote, no mark."""
    typographic = "said \u201cwater\u00a0boils\u201d \u2014 case-\n   sensitive"
    passage = f'He {typographic}.  He said "water boils" - case-sensitive.'
    segments = render_html.marked(passage, 'said "water boils" - case-sensitive')
    assert [text for text, hit in segments if hit] == [typographic, 'said "water boils" - case-sensitive']
    assert "".join(text for text, _ in segments) == passage
    assert render_html.marked(passage, None) == render_html.marked(passage, "  ") == [(passage, False)]
    assert render_html.marked(whitespace_page(SPACES), WATER)[0] == (WATER, True)


# ---------------------------------------------------------------- the queue

def test_the_queue_is_in_the_package_order_and_filters_by_view_batch_and_reason(app_for):
    client = TestClient(app_for())
    login(client)

    def ids(**params):
        return re.findall(r"<td class=\"small\">b1 · (c\d)</td>", client.get("/review", params=params).text)
    assert ids() == [r["id"] for r in review.queue(ROWS)] == ["c2", "c3", "c1"]
    assert ids(view="auto") == ["c4", "c5"]
    assert ids(view="all") == ["c2", "c3", "c1", "c4", "c5"]
    assert ids(view="all", reason="http_404") == ["c5"]
    assert ids(view="all", reason=queue.NO_REASON) == ["c2", "c1", "c4"]
    assert ids(batch="nope") == []


def test_ten_thousand_items_are_paginated_in_the_queue_order(app_for, tmp_path):
    rows = [{"batch": f"b{i % 3}", "id": f"c{i:05d}", "url": f"http://site/{i}",
             "label": "contradicted" if i % 7 == 0 else "supported", "reason": None if i % 5 else "soft_404",
             "confidence": round((i * 7919 % 1000) / 1000, 3), "auto": i % 10 == 0}
            for i in range(10_000)]
    db = tmp_path / "audit.db"
    conn = audit.connect(db)
    with conn:
        conn.executemany(f"INSERT INTO citations ({', '.join(audit.COLUMNS)}) VALUES "
                         f"({', '.join('?' for _ in audit.COLUMNS)})",
                         [[{**r, "claim": "claim", "rid": "", "model": "m", "decided_at": "t", "flow": "web"}.get(c)
                           for c in audit.COLUMNS] for r in rows])
    conn.close()
    client = TestClient(app_for(rows=[]))
    login(client)
    expected = [r["id"] for r in review.queue(rows)]                        # the gate's `auto`, the package order
    assert len(expected) == 9000
    started = time.perf_counter()
    first = client.get("/review")
    seconds = time.perf_counter() - started
    print(f"\n/review over 10,000 rows (9,000 queued): first page in {seconds * 1000:.0f} ms")
    assert "<strong>9000</strong> citations to review" in first.text and "page 1 of 180" in first.text
    shown = lambda page: re.findall(r"<td class=\"small\">b\d · (c\d{5})</td>", page.text)  # noqa: E731
    assert shown(first) == expected[:50]
    assert shown(client.get("/review", params={"page": 2})) == expected[50:100]
    last = client.get("/review", params={"page": 999})                      # past the end: the last page
    assert "page 180 of 180" in last.text and shown(last) == expected[-50:]
    only = client.get("/review", params={"batch": "b1", "reason": "soft_404", "view": "all"})
    assert f"<strong>{sum(1 for r in rows if r['batch'] == 'b1' and r['reason'])}</strong>" in only.text


# ---------------------------------------------------------------- deciding

def test_confirm_then_next_and_a_review_made_meanwhile_is_refused_with_history_kept(app_for, tmp_path):
    app = app_for()
    ann, bob = TestClient(app), TestClient(app)
    login(ann)
    login(bob, name="Bob")
    ann_item, bob_item = first_item(ann), first_item(bob)
    assert "<mark>at 90 °C</mark>" in ann_item.text
    saved = ann.post("/review/decide", data={**form_of(ann_item.text), "action": "confirm", "note": "right"},
                     follow_redirects=False)
    assert saved.status_code == 303 and "saved=" in saved.headers["location"]
    following = ann.get(saved.headers["location"])
    assert "Saved: Ann confirmed" in following.text and "<mark>boils at 100 °C</mark>" not in following.text
    assert form_of(following.text)["k"] != form_of(ann_item.text)["k"]       # the next item in the queue: c3
    late = bob.post("/review/decide", data={**form_of(bob_item.text), "action": "correct", "label": "supported"})
    assert late.status_code == 409 and "reviewed meanwhile by Ann" in late.text
    assert reviews_in(tmp_path / "audit.db") == [("c2", "confirm", "contradicted", "Ann", "right")]
    again = bob.get("/review/item", params={"k": form_of(bob_item.text)["k"], "view": "all"})
    assert "Reviewed by <strong>Ann</strong>" in again.text
    changed = bob.post("/review/decide", data={**form_of(again.text), "action": "correct", "label": "supported"})
    assert changed.status_code == 200
    assert [r[3] for r in reviews_in(tmp_path / "audit.db")] == ["Ann", "Bob"]      # history kept


def test_a_review_of_a_row_that_does_not_exist_or_was_decided_again_is_refused(app_for, tmp_path):
    client = TestClient(app_for())
    login(client)
    fields = form_of(first_item(client).text)
    gone = {**fields, "k": "WyJiMSIsICJub3BlIiwgImh0dHA6Ly9zaXRlL3oiXQ", "action": "confirm"}
    missing = client.post("/review/decide", data=gone)
    assert missing.status_code == 404 and "no citation nope" in missing.text
    assert client.get("/review/item", params={"k": gone["k"]}).status_code == 404
    seed(tmp_path / "audit.db", [dict(ROWS[1], label="supported")])          # c2 decided again meanwhile
    stale = client.post("/review/decide", data={**fields, "action": "confirm"})
    assert stale.status_code == 409 and "decided again" in stale.text
    wrong = client.post("/review/decide", data={**form_of(first_item(client).text), "action": "correct"})
    assert wrong.status_code == 422 and "needs one of the labels" in wrong.text
    assert reviews_in(tmp_path / "audit.db") == []


def test_a_misquote_shows_its_word_diff(app_for):
    row = {"id": "C9", "url": "data/rfc7519.txt", "label": "verified", "confidence": 0.67, "auto": False,
           "flow": "source", "section": "4.1.3", "status": "misquoted",
           "quote": "The aud claim identifies the recipients that the JWT is meant for.",
           "evidence_quote": "The \"aud\" (audience) claim identifies the recipients that the JWT is intended for.",
           "passages": ["4.1.3. The \"aud\" (audience) claim identifies the recipients that the JWT is intended for."]}
    client = TestClient(app_for(rows=[row]))
    login(client)
    item = first_item(client)
    assert "section 4.1.3 of data/rfc7519.txt" in item.text
    assert ("The <del>aud</del> <ins>&#34;aud&#34; (audience)</ins> claim identifies the recipients that the "
            "JWT is <del>meant</del> <ins>intended</ins> for.") in item.text
    assert 'value="fabricated"' in item.text and 'value="supported"' not in item.text   # the flow's labels
    assert "<mark>The &#34;aud&#34; (audience) claim identifies" in item.text


def test_a_misquote_longer_than_diff_words_shows_no_word_diff():
    """A word diff is quadratic in the words: past DIFF_WORDS a side the page shows none."""
    row = {"status": "misquoted", "quote": "a " * render_html.DIFF_WORDS + "b", "evidence_quote": "a " * 3}
    assert render_html.misquote_diff(row) is None
    assert render_html.misquote_diff({**row, "quote": "a " * render_html.DIFF_WORDS}) == [
        ("equal", "a a a"), ("removed", " ".join(["a"] * (render_html.DIFF_WORDS - 3)))]


# ---------------------------------------------------------------- hostile parameters and rows

def nested_key(depth: int) -> str:
    return base64.urlsafe_b64encode(("[" * depth).encode()).decode().rstrip("=")


@pytest.mark.parametrize("path, params", [
    ("/review", {"page": "²"}), ("/review", {"page": "9" * 5000}), ("/review", {"page": "0"}),
    ("/review", {"page": "-1"}), ("/review", {"saved": "²"}), ("/review", {"saved": "9" * 40}),
    ("/review", {"saved": "9" * 5000}), ("/review", {"batch": "b" * 10_000}),
    ("/review/item", {"k": nested_key(40_000)}), ("/review/item", {"k": nested_key(3000)}),
    ("/review/item", {"k": "%%%"}), ("/review/item", {"saved": "١٢"}),
])
def test_every_parameter_is_untrusted_400_never_500(app_for, path, params):
    client = TestClient(app_for(), raise_server_exceptions=False)
    response = client.get(path, params=params, headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 400 and "Traceback" not in response.text
    assert re.search(r"(page|saved) must be a whole number from 1 to \d+|longer than 8192 characters|"
                     r"the link is malformed", response.text)
    assert client.get(path, params=params).status_code == 401          # parameters only after the token


def test_a_malformed_seen_review_on_a_decision_is_400_and_writes_nothing(app_for, tmp_path):
    client = TestClient(app_for(), raise_server_exceptions=False)
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    fields = form_of(first_item(client, headers=bearer).text)
    for seen in ("²", "9" * 5000, "-3"):
        refused = client.post("/review/decide", headers=bearer, data={**fields, "action": "confirm",
                                                                      "seen_review": seen})
        assert refused.status_code == 400 and "seen_review must be a whole number" in refused.text
    assert reviews_in(tmp_path / "audit.db") == []


def test_a_row_with_a_text_confidence_is_shown_invalid_and_the_others_render(app_for, tmp_path):
    app = app_for()
    with sqlite3.connect(tmp_path / "audit.db") as raw:
        raw.execute("UPDATE citations SET confidence = 'high' WHERE id = 'c1'")
        raw.execute("INSERT INTO citations (batch, id, claim, url, label, decided_at) "
                    "VALUES ('b1', X'00ff', 'blob id', 'http://site/z', 'supported', 'x')")
    client = TestClient(app)
    login(client)
    for view in ("queue", "all"):
        page = client.get("/review", params={"view": view})
        assert page.status_code == 200 and "invalid row: confidence &#39;high&#39; is not a number" in page.text
        assert "http://site/b" in page.text and "1 row left out" in page.text
    item = client.get("/review/item", params={"k": base64.urlsafe_b64encode(
        b'["b1", "c1", "http://site/a"]').decode().rstrip("=")})
    assert item.status_code == 200 and "invalid row: confidence" in item.text


# ---------------------------------------------------------------- sessions, lockout, token strength

def test_logout_revokes_the_session_on_the_server(app_for):
    client = TestClient(app_for())
    login(client)
    cookie = client.cookies.get(auth.COOKIE)
    csrf = form_of(first_item(client).text)["csrf"]
    assert client.post("/review/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    replayed = TestClient(client.app)
    replayed.cookies.set(auth.COOKIE, cookie, path="/review")
    assert replayed.get("/review").status_code == 401
    login(client, name="Bob")
    assert client.get("/review").status_code == 200                    # a new session works


def test_a_restarted_server_accepts_no_cookie_of_the_one_before_it(app_for):
    """Revocations live in memory, so a restart must end every session (else a logged-out cookie would be
    valid again): each server start draws its own cookie key."""
    client = TestClient(app_for())
    login(client)
    cookie = client.cookies.get(auth.COOKIE)
    restarted = TestClient(app_for())
    restarted.cookies.set(auth.COOKIE, cookie, path="/review")
    assert restarted.get("/review").status_code == 401
    assert auth.Keys(TOKEN).reviewer(auth.Keys(TOKEN).session("Ann")) is None


def test_failed_logins_lock_the_client_out_then_it_may_try_again():
    clock = [1000.0]
    throttle = auth.Throttle(clock=lambda: clock[0])
    for _ in range(auth.MAX_FAILURES):
        assert throttle.retry_after("10.0.0.1") is None
        throttle.failed("10.0.0.1")
    assert throttle.retry_after("10.0.0.1") == auth.WINDOW and throttle.retry_after("10.0.0.2") is None
    clock[0] += auth.WINDOW
    assert throttle.retry_after("10.0.0.1") is None


def test_after_ten_wrong_tokens_a_guesser_gets_429_unchecked_and_the_right_token_still_passes(app_for):
    """Another client on the same address cannot lock the reviewer out: past the limit a wrong token is 429
    with Retry-After, but the right one logs in and reads the queue."""
    client = TestClient(app_for())
    for i in range(auth.MAX_FAILURES):
        assert login(client, token=f"wrong-{i}-" + TOKEN).status_code == 401
    guess = login(client, token="another-guess-" + TOKEN)
    assert guess.status_code == 429 and 0 < int(guess.headers["retry-after"]) <= auth.WINDOW
    assert "set-cookie" not in guess.headers and TOKEN not in guess.text
    right = login(client)
    assert right.status_code == 303 and auth.COOKIE in right.headers["set-cookie"]
    assert client.get("/review", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_wrong_bearer_tokens_count_too_and_a_replayed_one_counts_once(app_for):
    client = TestClient(app_for())
    for _ in range(2 * auth.MAX_FAILURES):                  # one wrong token, replayed: one guess
        assert client.get("/review", headers={"Authorization": "Bearer wrong-" + TOKEN}).status_code == 401
    for i in range(auth.MAX_FAILURES - 1):
        assert client.get("/review", headers={"Authorization": f"Bearer wrong-{i}"}).status_code == 401
    assert login(client, token="wrong-again").status_code == 429 and login(client).status_code == 303


def test_a_locked_address_gets_its_token_checked_only_in_the_right_tokens_bucket(monkeypatch):
    """Guessing stays throttled: past the limit only tokens whose fingerprint falls in the right token's
    bucket are checked, at most MAX_FAILURES wrong ones a window; locking the right token out takes that many
    of its bucket (here 2**3 buckets; the shipped 2**24 makes it some 10 x 2**24 requests a minute)."""
    monkeypatch.setattr(auth, "BUCKET_BITS", 3)
    keys, clock = auth.Keys(TOKEN), [1000.0]
    throttle, checked = auth.Throttle(clock=lambda: clock[0]), []
    token_ok = keys.token_ok
    monkeypatch.setattr(keys, "token_ok", lambda offered: (checked.append(offered), token_ok(offered))[1])

    def attempt(token):
        try:
            return throttle.check("127.0.0.1", token, keys)
        except auth.LockedOut as exc:
            return exc.retry_after
    assert [attempt(f"guess-{i}") for i in range(auth.MAX_FAILURES)] == [False] * auth.MAX_FAILURES
    in_bucket = [t for t in (f"guess-{i}" for i in range(10, 2000)) if keys.may_be_right(keys.fingerprint(t))]
    outcomes = {t: attempt(t) for t in [f"guess-{i}" for i in range(10, 2000)]}
    assert len(checked) == 2 * auth.MAX_FAILURES                                   # 10, then 10 of the bucket
    assert checked[auth.MAX_FAILURES:] == in_bucket[:auth.MAX_FAILURES]
    assert all(outcomes[t] is False for t in in_bucket[:auth.MAX_FAILURES])             # checked: 401
    assert {outcomes[t] for t in outcomes if t not in in_bucket[:auth.MAX_FAILURES]} == {auth.WINDOW}   # 429
    assert attempt(TOKEN) == auth.WINDOW                          # the bucket's own limit: the price paid
    clock[0] += auth.WINDOW
    assert attempt(TOKEN) is True


def test_before_its_bucket_is_full_the_right_token_passes_a_locked_address(monkeypatch):
    monkeypatch.setattr(auth, "BUCKET_BITS", 3)
    keys, throttle = auth.Keys(TOKEN), auth.Throttle()
    for i in range(auth.MAX_FAILURES):
        throttle.check("127.0.0.1", f"guess-{i}", keys)
    guesses = [f"guess-{i}" for i in range(10, 2000)]
    in_bucket = [t for t in guesses if keys.may_be_right(keys.fingerprint(t))]
    for token in in_bucket[:auth.MAX_FAILURES - 1] * 3:                    # replays count once
        assert throttle.check("127.0.0.1", token, keys) is False
    assert throttle.check("127.0.0.1", TOKEN, keys) is True
    with pytest.raises(auth.LockedOut):
        throttle.check("127.0.0.1", next(t for t in guesses if t not in in_bucket), keys)


@pytest.mark.parametrize("weak", ["passwordpassword", "abcdefghijklmnopqrstuvwxyz",
                                  "a1a1a1a1a1a1a1a1a1a1a1a1", "Password1234567!", "0123456789012345",
                                  "Password123456789", "Sunshine8403917265", "P@ssw0rd1234567890",
                                  "Tr0ub4dor&3Tr0ub4dor&3", "correcthorsebatterystaple1"])
def test_a_weak_token_is_refused_saying_how_to_make_one_without_its_value(app_for, weak):
    from citecheck.config import Settings
    for refused in (lambda: app_for(token=weak), lambda: Settings.from_env({"REVIEW_TOKEN": weak})):
        with pytest.raises(ValueError, match="REVIEW_TOKEN .*secrets.token_urlsafe") as err:
            refused()
        assert weak not in str(err.value)
    assert Settings.from_env({"REVIEW_TOKEN": TOKEN}).secrets.has("REVIEW_TOKEN")


def test_generated_tokens_pass_the_strength_rule():
    from citecheck.config import review_token_problem
    tokens = [secrets.token_urlsafe(32) for _ in range(2000)]
    assert [review_token_problem(t) for t in tokens] == [None] * 2000


def test_the_page_header_states_the_gate_for_every_model_not_one_models_number(app_for, monkeypatch, tmp_path):
    """The queue holds verdicts of many models: with no AUTO_ACCEPT the header says the gate is per model."""
    client = TestClient(app_for())
    login(client)
    page = client.get("/review").text
    assert "AUTO_ACCEPT per model" in page and "AUTO_ACCEPT = 1" not in page
