"""Text is text: what a string read from outside must be before any stage uses it.

Rules:
- Files are UTF-8; a leading byte-order mark is dropped. Bytes that are not UTF-8 raise ValueError
  naming the file, the byte and its offset.
- A string is text when it encodes as UTF-8: a lone surrogate (JSON's "\\ud800" escape decodes to one)
  is not, and is reported with its position, never passed on to crash a later stage.
"""
from __future__ import annotations

import codecs


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
