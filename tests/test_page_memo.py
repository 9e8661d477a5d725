"""The per-page memo (`web.page_memo`): a page's work done once per process, the same rows with or without
it, its bound held, and safe under threads.

- A batch whose citations share pages (the fixture site's claims files plus claims carrying quotes,
  through the real pipeline: crawl, passages, BM25, the pooled judge over a capable stand-in, guard,
  spans) gives the same rows with the memo as with a memo that keeps nothing, and the memo was used.
- The memo's estimated bytes never pass its bound (least recently used out first; a value over the bound
  is handed out, not kept), also with many threads at once.
"""
from __future__ import annotations

import json
import threading

import pytest
from standins.capable import capable_standin

import levels as L
from citecheck.batch import run_batch
from citecheck.web import fixture_site as site
from citecheck.web import page_memo

GUIDE = "/guides/cooking-at-altitude"
BOILING = "/articles/boiling-point"
SHARED = [   # claims citing pages the claims files cite too, some carrying the text they say the page holds
    {"id": "p1", "claim": L.SEA_LEVEL, "urls": [BOILING], "quotes": {BOILING: L.SEA_LEVEL}},
    {"id": "p2", "claim": L.FIFTY, "urls": [BOILING], "quotes": {BOILING: L.SCALD.replace("skin", "hands")}},
    {"id": "p3", "claim": L.HUNDRED, "urls": [BOILING, GUIDE], "quotes": {GUIDE: "Water boils at 40 °C."}},
    {"id": "p4", "claim": L.ALTITUDE, "urls": [GUIDE], "quotes": {GUIDE: L.GUIDE_90}},
    {"id": "p5", "claim": "At sea level, pure water boils at 100 °C.", "urls": [BOILING, GUIDE]},
]


def claims_file(directory, base_url: str):
    path = L.batch_file(directory, base_url)
    extra = [{**c, "urls": [base_url + u for u in c["urls"]],
              "quotes": {base_url + u: q for u, q in c.get("quotes", {}).items()}} for c in SHARED]
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(c, ensure_ascii=False) + "\n" for c in extra)
    return path


def batch_rows(directory, judge_url: str, memo: page_memo.Memo, monkeypatch) -> list[dict]:
    monkeypatch.setattr(page_memo, "MEMO", memo)
    directory.mkdir()
    with site.start(port=0) as running:
        ctx = L.context(directory, "both", judge_url, "pooled", BATCH_CONCURRENCY="4")
        rows = run_batch(claims_file(directory, running.base_url), ctx, batch="memo").rows
        return [{k: (v.replace(running.base_url, "SITE") if isinstance(v, str) else v)
                 for k, v in row.items() if k != "decided_at"} for row in rows]


def test_a_batch_whose_citations_share_pages_gives_the_same_rows_with_and_without_the_memo(
        tmp_path, monkeypatch):
    with capable_standin(L.SITE_STORIES) as judge:
        without = batch_rows(tmp_path / "without", judge.url, page_memo.Memo(max_bytes=0), monkeypatch)
        memo = page_memo.Memo()
        remembered = batch_rows(tmp_path / "with", judge.url, memo, monkeypatch)
    assert remembered == without
    judged = [r for r in without if r["confidence"] is not None]
    assert len(judged) >= 8 and any(r["span_start"] is not None for r in without)
    assert {r["status"] for r in without} >= {"found", "misquoted", "missing"}
    assert memo.hits >= 20 and 0 < memo.bytes <= memo.max_bytes     # pages were worked once, then reused


def test_without_room_nothing_is_kept_and_every_call_computes():
    memo, calls = page_memo.Memo(max_bytes=0), []
    for _ in range(3):
        assert memo.remembered(lambda text: calls.append(text) or text.upper(), "page") == "PAGE"
    assert calls == ["page"] * 3 and len(memo) == 0 and memo.bytes == 0


def test_the_bound_holds_and_the_least_recently_used_page_goes_first():
    calls = []

    def upper(text: str) -> str:
        calls.append(text[0])
        return text.upper()
    memo = page_memo.Memo(max_bytes=3 * (page_memo.KEY_BYTES + page_memo.estimate("X" * 1000)))
    for n in range(10):
        memo.remembered(upper, f"{n}" + "x" * 999)
        memo.remembered(upper, "0" + "x" * 999)                  # page 0 is read again and again
        assert memo.bytes <= memo.max_bytes
        assert memo.bytes == sum(size for _, size in memo._table.values())
    assert len(memo) == 3 and calls == [str(n) for n in range(10)]   # page 0 computed once
    assert memo.remembered(upper, "y" * 4000) == "Y" * 4000      # over the bound: handed out, not kept
    assert len(memo) == 3 and memo.bytes <= memo.max_bytes
    memo.remembered(upper, "9" + "x" * 999)
    memo.remembered(upper, "1" + "x" * 999)                      # long gone: computed again
    assert calls[-2:] == ["y", "1"]


def test_a_list_is_kept_and_handed_out_as_a_tuple_and_keys_tell_sequences_apart():
    memo = page_memo.Memo()
    assert memo.remembered(list, "ab") == ("a", "b")
    assert memo.remembered(lambda passages: len(passages), ["a\x00b"]) == 1
    assert page_memo.digest(len, ["ab", "c"]) != page_memo.digest(len, ["a", "bc"])
    assert page_memo.digest(len, "ab") != page_memo.digest(len, ["ab"])
    assert page_memo.digest(len, "ab") != page_memo.digest(str.upper, "ab")


@pytest.mark.parametrize("max_bytes", [page_memo.MAX_BYTES, 20_000])
def test_many_threads_share_the_memo_and_the_bound_holds(max_bytes):
    memo, errors = page_memo.Memo(max_bytes=max_bytes), []
    pages = [f"page {n} " * 400 for n in range(12)]

    def work(seed: int) -> None:
        for i in range(200):
            page = pages[(seed * 7 + i) % len(pages)]
            if memo.remembered(str.split, page) != tuple(page.split()):
                errors.append(page[:8])
            if memo.bytes > memo.max_bytes:
                errors.append("over the bound")
    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert memo.bytes == sum(size for _, size in memo._table.values()) <= memo.max_bytes
    assert memo.hits + memo.misses == 8 * 200
