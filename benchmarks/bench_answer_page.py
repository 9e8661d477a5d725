"""`/check-answer` and the answer page at full size (prints numbers; no fetch, no judge).

    .venv/bin/python benchmarks/bench_answer_page.py

- Refusals: a body over API_MAX_BODY_BYTES + 3 x ANSWER_MAX_BYTES (413 before parsing), an answer over
  ANSWER_MAX_BYTES (413) and one with ANSWER_MAX_MARKERS + 1 citations (422, counted by the reader): seconds
  each, and that no citation was checked.
- Reports: Markdown answers of 250 to 1,000 cited sentences (ANSWER_MAX_MARKERS is 1,000) read and reported
  with every marker labelled by a stand-in (the real reader and rows, no fetch or judge), then the page
  rendered: seconds for the JSON and for the page, the page's size, and the growth per doubling (about 2
  is linear).
"""
from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from citecheck.answer.checks import Checked  # noqa: E402
from citecheck.answer.read import read  # noqa: E402
from citecheck.answer.rows import build  # noqa: E402
from citecheck.config import Secrets, Settings  # noqa: E402
from citecheck.context import RunContext  # noqa: E402
from citecheck.serve.api import Limits, create_app  # noqa: E402

LABELS = ("supported", "contradicted", "not_found", "unreachable")


def stand_in(calls: list):
    def check(text: str, fmt: str) -> dict:
        calls.append(len(text))
        got = read(text, fmt)
        return build("answer", got, {m.id: Checked(f"https://s{i % 7}.example/", LABELS[i % 4])
                                     for i, m in enumerate(got.markers)}).to_dict()
    return check


def answer(sentences: int) -> str:
    body = "\n\n".join(f"In {1900 + i % 100} the kettle number {i} boiled at {90 + i % 10} °C near Lyon. "
                       f"[{i % 7 + 1}]" for i in range(sentences))
    return body + "\n\n" + "\n".join(f"[{k + 1}]: https://s{k}.example/" for k in range(7)) + "\n"


def timed(fn):
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def main() -> int:
    token, calls = secrets.token_urlsafe(32), []
    ctx = RunContext.build(Settings(audit_db=None, secrets=Secrets({"REVIEW_TOKEN": token})))
    limits = Limits(deadline=600)
    client = TestClient(create_app(ctx, lambda claim, urls: {}, limits=limits, check_answer=stand_in(calls)))
    settings, bearer = ctx.settings, {"authorization": f"Bearer {token}"}
    cap = limits.max_body_bytes + 3 * settings.answer_max_bytes
    big = b'{"answer": "' + b"x" * (cap + 1) + b'"}'
    for what, send in [
        (f"body of {len(big):,} bytes", lambda: client.post("/check-answer", content=big,
                                                              headers={"content-type": "application/json"})),
        (f"answer of {settings.answer_max_bytes + 1:,} bytes",
         lambda: client.post("/check-answer", json={"answer": "x" * (settings.answer_max_bytes + 1)})),
        (f"{settings.answer_max_markers + 1:,} citations",
         lambda: client.post("/check-answer", json={"answer": answer(settings.answer_max_markers + 1)})),
    ]:
        seconds, response = timed(send)
        print(f"refused: {what}: {response.status_code} in {seconds:.3f} s, checks run: {len(calls)}")
    previous = None
    for n in (250, 500, 1000):
        text = answer(n)
        json_s, response = timed(lambda: client.post("/check-answer", json={"answer": text}))
        assert response.status_code == 200, response.text[:200]
        page_s, page = timed(lambda: client.post("/check-answer/page", data={"answer": text}, headers=bearer))
        assert page.status_code == 200 and page.text.count("<mark>") == n
        growth = f", x{page_s / previous:.2f} per doubling" if previous else ""
        print(f"{n:>5} sentences, {n} markers: JSON {json_s:.2f} s; page {page_s:.2f} s, "
              f"{len(page.content) / 1024:,.0f} KiB{growth}")
        previous = page_s
    return 0


if __name__ == "__main__":
    sys.exit(main())
