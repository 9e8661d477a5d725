"""Compressed bombs stay small: every fetched body is capped on the bytes it inflates to, as
they are produced, for every encoding and stacks of them; the memory a bomb costs stays near the cap."""
from __future__ import annotations

import gzip
import socket
import ssl
import threading
import tracemalloc
import zlib

import crawlbase.base_api
import pytest
import zstandard
from standins.crawlbase import NORMAL_TOKEN
from standins.slow_origin import SlowOrigin, raw, response

from citecheck.config import PdfLimits
from citecheck.web import fetch
from citecheck.web.fetch import inflate

INFLATED = 64 * 1024 * 1024
"""What each bomb inflates to: 64 MiB (the finding's were 2 and 8 GiB; the shape is the same)."""
CAP = 256 * 1024
LINE = b"At sea level, pure water boils at 100 degrees Celsius.\n"
TARGET = "https://example.org/article"


def _bomb_text() -> bytes:
    return LINE * (INFLATED // len(LINE))


def _zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(data)


def _gzip_gzip(data: bytes) -> bytes:
    return gzip.compress(gzip.compress(data, 9, mtime=0), 9, mtime=0)


@pytest.fixture(scope="module")
def bombs():
    """{Content-Encoding: body}: each body inflates to INFLATED bytes of text."""
    text = _bomb_text()
    made = {"zstd": _zstd(text), "gzip, gzip": _gzip_gzip(text), "gzip": gzip.compress(text, 9, mtime=0)}
    assert all(len(body) < INFLATED // 50 for body in made.values())          # small on the wire
    return made


def peak_of(call):
    """(call's result, the peak of Python allocations while it ran, in bytes)."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------ the reader itself

@pytest.mark.parametrize("encoding", ["zstd", "gzip, gzip", "gzip"])
def test_a_bomb_is_inflated_only_up_to_the_cap(bombs, encoding):
    body = bombs[encoding]
    chunks = [body[i:i + 65536] for i in range(0, len(body), 65536)]
    (data, more), peak = peak_of(lambda: inflate.read_capped(chunks, encoding, CAP))
    assert (len(data), more) == (CAP, True)
    assert data == _bomb_text()[:CAP]
    assert peak < 8 * 1024 * 1024, f"{peak:,} bytes allocated for a {CAP:,}-byte cap"


@pytest.mark.parametrize("encoding, encode", [
    ("gzip", lambda b: gzip.compress(b, mtime=0)), ("x-gzip", lambda b: gzip.compress(b, mtime=0)),
    ("deflate", zlib.compress), ("deflate", lambda b: zlib.compress(b)[2:-4]),          # zlib, and raw deflate
    ("zstd", _zstd), ("gzip, zstd", lambda b: _zstd(gzip.compress(b, mtime=0))),
    ("identity", lambda b: b), ("", lambda b: b),
], ids=["gzip", "x-gzip", "deflate-zlib", "deflate-raw", "zstd", "gzip-then-zstd", "identity", "none"])
def test_every_encoding_and_stack_reads_back_whole_under_the_cap(encoding, encode):
    text = LINE * 100
    body = encode(text)
    assert inflate.read_capped([body[i:i + 100] for i in range(0, len(body), 100)], encoding, 10_000) == (text, False)


def test_two_gzip_members_read_as_one_body():
    body = gzip.compress(b"first ", mtime=0) + gzip.compress(b"second", mtime=0)
    assert inflate.read_capped([body], "gzip", 100) == (b"first second", False)


def test_an_unknown_encoding_is_refused_before_reading_and_a_broken_body_is_bad():
    with pytest.raises(inflate.UnknownEncoding, match="'br'"):
        inflate.read_capped(iter(()), "br", 100)
    with pytest.raises(inflate.BadEncoding):
        inflate.read_capped([b"not gzip at all"], "gzip", 100)
    with pytest.raises(inflate.BadEncoding):
        inflate.read_capped([gzip.compress(LINE * 10, mtime=0)[:-12]], "gzip", 10_000)   # cut short


def test_raw_bytes_count_against_the_cap_too():
    assert inflate.read_capped([b"x" * 60, b"y" * 60], None, 100) == (b"x" * 60 + b"y" * 40, True)


# ------------------------------------------------------------------ the direct fetcher

@pytest.fixture
def loopback(run):
    run.ctx = run.ctx.replace(allow_private=True, fetch_max_bytes=CAP)
    return run


def served(body: bytes, encoding: str, content_type: str = "text/plain; charset=utf-8"):
    return raw(response(200, {"Content-Encoding": encoding}, len(body), content_type) + body)


@pytest.mark.parametrize("encoding", ["zstd", "gzip, gzip"])
def test_a_direct_fetch_of_a_bomb_stops_at_fetch_max_bytes(bombs, encoding, loopback):
    body = bombs[encoding]
    with SlowOrigin(served(body, encoding)) as origin:
        result, peak = peak_of(lambda: fetch.fetch(origin.url + "/page", loopback.ctx))
    assert (result.label, result.reason) == (None, None)
    assert result.markdown.startswith(LINE.decode().strip()) and len(result.markdown) <= CAP
    assert peak < 16 * 1024 * 1024, f"{peak:,} bytes allocated for a {CAP:,}-byte FETCH_MAX_BYTES"


def test_a_pdf_bomb_is_pdf_too_large_not_inflated(loopback):
    body = gzip.compress(b"%PDF-1.7\n" + b"\0" * INFLATED, 9, mtime=0)
    loopback.ctx = loopback.ctx.replace(pdf=PdfLimits(max_bytes=CAP))
    with SlowOrigin(served(body, "gzip", "application/pdf")) as origin:
        result, peak = peak_of(lambda: fetch.fetch(origin.url + "/paper", loopback.ctx))
    assert (result.label, result.reason) == ("not_found", "pdf_too_large")
    assert peak < 16 * 1024 * 1024


def test_a_direct_answer_in_an_unknown_encoding_is_a_labelled_row(loopback):
    with SlowOrigin(served(b"\x1b\x03\x00", "br")) as origin:
        result = fetch.fetch(origin.url + "/page", loopback.ctx)
    assert (result.label, result.reason) == ("not_found", "unsupported_content")
    assert "'br'" in result.detail


def test_a_direct_answer_its_encoding_cannot_read_is_crawl_failed(loopback):
    with SlowOrigin(served(b"this is not gzip", "gzip")) as origin:
        result = fetch.fetch(origin.url + "/page", loopback.ctx, sleep=lambda s: None)
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")


# ------------------------------------------------------------------ Crawlbase answers

@pytest.fixture
def crawling_api(make_ctx, run):
    """crawling_api(body, encoding) -> the fetch's result with the Crawling API answering that body."""
    def answer(body: bytes, encoding: str):
        headers = {"original_status": "200", "cb_status": "200", "url": TARGET, "Content-Encoding": encoding}
        try:
            with SlowOrigin(raw(response(200, headers, len(body), "text/plain; charset=utf-8") + body)) as api:
                run.ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": NORMAL_TOKEN}, crawlbase_api_url=api.url,
                                   crawlbase_timeout=5.0, fetch_max_bytes=CAP)
                return peak_of(lambda: fetch.fetch(TARGET, run.ctx, sleep=lambda s: None))
        finally:
            crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"
    return answer


@pytest.mark.parametrize("encoding", ["gzip", "gzip, gzip", "zstd"])
def test_a_crawling_api_bomb_stops_at_fetch_max_bytes(bombs, encoding, crawling_api):
    result, peak = crawling_api(bombs[encoding], encoding)
    assert result.label is None and result.markdown.startswith(LINE.decode().strip())
    assert len(result.markdown) <= CAP
    assert peak < 16 * 1024 * 1024, f"{peak:,} bytes allocated for a {CAP:,}-byte FETCH_MAX_BYTES"


def test_a_crawling_api_answer_in_an_unknown_encoding_is_a_labelled_row(crawling_api):
    result, _ = crawling_api(b"\x1b\x03\x00", "br")
    assert (result.label, result.reason) == ("not_found", "unsupported_content")


def test_a_plain_crawling_api_answer_stops_at_fetch_max_bytes_as_it_streams(crawling_api):
    """The SDK reads a body whole; the backend reads it chunk by chunk and stops at the cap."""
    result, peak = crawling_api(LINE * (INFLATED // len(LINE)), "identity")
    assert result.label is None and 0 < len(result.markdown) <= CAP
    assert peak < 16 * 1024 * 1024, f"{peak:,} bytes allocated for a {CAP:,}-byte FETCH_MAX_BYTES"


@pytest.mark.parametrize("encoding", ["GZIP", " gzip", "x-gzip", "Gzip, identity"])
def test_a_crawling_api_gzip_body_is_inflated_whatever_the_header_spelling(encoding, crawling_api):
    result, _ = crawling_api(gzip.compress(LINE * 40, mtime=0), encoding)
    assert result.label is None and result.markdown.startswith(LINE.decode().strip())


def test_a_crawling_api_behind_an_untrusted_certificate_never_receives_the_token(make_ctx, run, tmp_path):
    """The SDK's own TLS context verifies nothing: a man in the middle would read the token in the URL."""
    from distributed.security import Security
    made = Security.temporary()                                  # a self-signed pair no CA store trusts
    (tmp_path / "cert.pem").write_text(made.tls_scheduler_cert)
    (tmp_path / "key.pem").write_text(made.tls_scheduler_key)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server, heard = socket.create_server(("127.0.0.1", 0)), []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            try:
                with tls.wrap_socket(conn, server_side=True) as wrapped:
                    heard.append(wrapped.recv(4096))
                    wrapped.sendall(response(200, {"original_status": "200", "cb_status": "200"}, 2) + b"ok")
            except OSError:
                pass
    threading.Thread(target=serve, daemon=True).start()
    try:
        run.ctx = make_ctx(secrets={"CRAWLBASE_TOKEN": NORMAL_TOKEN}, crawlbase_timeout=5.0,
                           crawlbase_api_url=f"https://127.0.0.1:{server.getsockname()[1]}/")
        result = fetch.fetch(TARGET, run.ctx, sleep=lambda s: None)
    finally:
        server.close()
        crawlbase.base_api.CRAWLBASE_API_URL = "https://api.crawlbase.com/"
    assert (result.label, result.reason) == ("unreachable", "crawl_failed")
    assert heard == []
