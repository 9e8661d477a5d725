"""Text is text: what a string read from outside must be before any stage uses it.

Rules:
- Files are UTF-8; a leading byte-order mark is dropped. Bytes that are not UTF-8 raise ValueError
  naming the file, the byte and its offset.
- A string is text when it encodes as UTF-8: a lone surrogate (JSON's "\\ud800" escape decodes to one)
  is not, and is reported with its position, never passed on to crash a later stage.
- A file read from outside (`read_file`, `read_head`) is a regular file (checked on the opened descriptor,
  so nothing swapped in after a check is read: no device, FIFO or socket) of at most MAX_FILE_BYTES: its
  size is checked on that descriptor before a byte is read (a 10 GB sparse file costs one fstat).
- JSON nested deeper than MAX_DEPTH (arrays and objects) is refused before it is parsed (`too_deep`,
  one linear pass): Python's parser and every walker recurse.
"""
from __future__ import annotations

import codecs
import os
import re
import stat
from pathlib import Path

from ..paths import not_a_file

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest source, document or citations file read: 64 MiB (PDFs have PDF_MAX_BYTES)."""
MAX_DEPTH = 64
"""Arrays and objects nested deeper than this are not read (no vendor answer, batch line or citations file
nests a tenth as deep)."""
_DEPTH_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def decode(data: bytes, name: str) -> str:
    """The UTF-8 text of a file's bytes (BOM dropped); ValueError naming `name` otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        byte = data[exc.start]
        raise ValueError(f"{name}: not UTF-8 text (byte 0x{byte:02x} at offset {exc.start})") from None


def strip_bom(line: bytes) -> bytes:
    """A first line without its UTF-8 byte-order mark."""
    return line.removeprefix(codecs.BOM_UTF8)


def not_text(value: str) -> str | None:
    """None when `value` encodes as UTF-8, else where it fails ("a lone surrogate \\ud800 at character 3")."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate \\u{ord(value[exc.start]):04x} at character {exc.start + 1}"
    return None


def _open_regular(path: str | Path, name: str, max_bytes: int) -> int:
    """An open descriptor of a regular file of at most `max_bytes` (fstat on the descriptor: module rules);
    FileNotFoundError when it is missing, ValueError naming `name` otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):                  # before fdopen, which refuses a directory by fd
        os.close(fd)
        raise ValueError(not_a_file(name, info.st_mode))
    if info.st_size > max_bytes:
        os.close(fd)
        raise ValueError(f"{name}: {info.st_size:,} bytes, over the {max_bytes:,}-byte limit for a file read "
                         "as text; not read")
    return fd


def read_file(path: str | Path, name: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (module rules); FileNotFoundError when it is
    missing, ValueError naming `name` otherwise."""
    with os.fdopen(_open_regular(path, name, max_bytes), "rb") as handle:
        data = handle.read(max_bytes + 1)               # a file growing after the fstat is still cut here
    if len(data) > max_bytes:
        raise ValueError(f"{name}: over the {max_bytes:,}-byte limit for a file read as text; not read")
    return data


def read_head(path: str | Path, name: str, head: int, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The first `head` bytes of a file `read_file` would read (the same checks, made before reading)."""
    with os.fdopen(_open_regular(path, name, max_bytes), "rb") as handle:
        return handle.read(head)


def too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON text nests arrays/objects deeper than `limit` (brackets inside strings not counted)."""
    depth = 0
    for token in _DEPTH_TOKENS.finditer(text):
        kind = token.group()[0]
        if kind in "[{":
            depth += 1
            if depth > limit:
                return True
        elif kind in "]}":
            depth -= 1
    return False
