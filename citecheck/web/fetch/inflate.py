"""Bodies decompressed as they stream, counted on the bytes they inflate to (no bomb is ever inflated whole).

Rules:
- `read_capped(chunks, content_encoding, limit)` -> (at most `limit` decoded bytes, whether there was
  more). The Content-Encoding list is undone last-applied first, so stacks (`gzip, gzip`) are read
  too; gzip / x-gzip (concatenated members too), deflate (zlib or raw), zstd; identity or none: as is.
- Every stage is asked for at most what the cap has left (zlib's max_length, zstandard's stream reader
  read sizes) and pulls its input CHUNK bytes at a time, so memory stays near `limit` plus a chunk per
  stage plus a zstd window (at most ZSTD_MAX_WINDOW) whatever the body inflates to. Raw (compressed)
  bytes count too: more than `limit` of them is over the cap as well.
- Any other encoding (br included: no decoder is installed) -> UnknownEncoding before a byte is read;
  a body that is not what its encoding says, or ends inside a stream -> BadEncoding.
"""
from __future__ import annotations

import zlib
from typing import Iterable, Iterator

CHUNK = 64 * 1024
ZSTD_MAX_WINDOW = 8 * 1024 * 1024
"""zstd level 19's window: a frame asking for a larger one is refused, not allocated."""
GZIP = ("gzip", "x-gzip")
IDENTITY = ("", "identity")
KNOWN = GZIP + ("deflate", "zstd") + IDENTITY


class UnknownEncoding(ValueError):
    """A Content-Encoding this reader cannot undo (the caller's labelled row)."""


class BadEncoding(ValueError):
    """A body that is not what its Content-Encoding says (corrupt, or cut short)."""


class _Over(Exception):
    """More raw bytes than the cap allows."""


def encodings(content_encoding: str | None) -> list[str]:
    """The encodings to undo, first to undo first; UnknownEncoding for one this reader lacks."""
    names = [e.strip().lower() for e in (content_encoding or "").split(",")]
    unknown = [e for e in names if e not in KNOWN]
    if unknown:
        raise UnknownEncoding(f"Content-Encoding {unknown[0]!r} is not supported")
    return [e for e in reversed(names) if e not in IDENTITY]


class _Source:
    """The raw chunks, read `n` bytes at a time; over `limit` of them -> _Over."""

    def __init__(self, chunks: Iterable[bytes], limit: int):
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buffer, self._seen, self._limit = b"", 0, limit

    def read(self, n: int = CHUNK) -> bytes:
        while not self._buffer:
            chunk = next(self._chunks, None) if self._seen <= self._limit else None
            if chunk is None:
                if self._seen > self._limit:
                    raise _Over
                return b""
            self._buffer = chunk[:self._limit - self._seen]
            self._seen += len(chunk)
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out


class _Zlib:
    """gzip or deflate over `upstream`, never more than `n` bytes out per read."""

    def __init__(self, upstream, kind: str):
        self._up, self._gzip = upstream, kind in GZIP
        self._d: zlib._Decompress | None = None
        self._pending = b""

    def _start(self, data: bytes):
        if self._gzip:
            wbits = 16 + zlib.MAX_WBITS
        else:                               # RFC 9110 says zlib; some servers send raw deflate
            wbits = zlib.MAX_WBITS if len(data) > 1 and (data[0] & 0x0F) == 8 and \
                int.from_bytes(data[:2], "big") % 31 == 0 else -zlib.MAX_WBITS
        return zlib.decompressobj(wbits)

    def read(self, n: int = CHUNK) -> bytes:
        try:
            while True:
                if not self._pending:
                    self._pending = self._up.read(CHUNK)
                    if not self._pending:
                        if self._d is not None and not self._d.eof:
                            raise BadEncoding("the compressed body ends inside a stream")
                        return b""
                if self._d is None or self._d.eof:
                    if self._d is not None and not self._gzip:
                        self._pending = b""                  # bytes after a deflate stream: ignored
                        continue
                    self._d = self._start(self._pending)     # the next gzip member
                out = self._d.decompress(self._pending, n)
                self._pending = self._d.unconsumed_tail or self._d.unused_data
                if out:
                    return out
        except zlib.error as exc:
            raise BadEncoding(f"not a valid compressed body ({exc})") from None


class _Zstd:
    """zstd over `upstream` (frames one after another too), never more than `n` bytes out per read."""

    def __init__(self, upstream):
        import zstandard
        self._error = zstandard.ZstdError
        self._reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).stream_reader(
            upstream, read_size=CHUNK, read_across_frames=True)

    def read(self, n: int = CHUNK) -> bytes:
        try:
            return self._reader.read(n)
        except self._error as exc:
            raise BadEncoding(f"not a valid zstd body ({exc})") from None


def read_capped(chunks: Iterable[bytes], content_encoding: str | None, limit: int) -> tuple[bytes, bool]:
    """(at most `limit` decoded bytes, whether there was more): module rules."""
    stage = _Source(chunks, limit)
    for kind in encodings(content_encoding):
        stage = _Zstd(stage) if kind == "zstd" else _Zlib(stage, kind)
    out, size = [], 0
    try:
        while size <= limit:
            piece = stage.read(min(CHUNK, limit + 1 - size))
            if not piece:
                return b"".join(out), False
            out.append(piece)
            size += len(piece)
    except _Over:
        pass
    return b"".join(out)[:limit], True
