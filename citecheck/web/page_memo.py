"""Per-page work done once per page and process: a bounded, thread-safe memo of pure functions of text.

Rules:
- `remembered(function, data)` is `function(data)`, computed once while remembered: keyed by the function
  itself and the SHA-256 of `data` (a str, or a sequence of str each length-prefixed, so no two sequences
  share a key). Callers use it for what a page's text alone decides:
  its passages, its text folded for spans, the BM25 index of its passages, the sentences of the shown
  passages, the words coverage counts, the carried quotes' normalised page. One memo (`MEMO`) per
  process serves every flow (verify, /verify, batch, check-answer) and every thread.
- `function` must be pure (the same data gives an equal value) and its value is shared: never mutated
  by a caller. A list is stored and handed out as a tuple.
- Bounded: least recently used out first while the entries' estimated size (`estimate`: sys.getsizeof of
  the value and what it holds, a large container extrapolated from a sample) passes `MAX_BYTES`; a value
  larger than the bound alone is computed and handed out, not kept.
- Thread-safe: one lock guards the table; the work runs outside it (two threads missing one key at once
  each compute it; the first value stored is the one kept, both are equal).
"""
from __future__ import annotations

import hashlib
import itertools
import sys
import threading
from collections import OrderedDict
from typing import Callable, Sequence, TypeVar

MAX_BYTES = 64 * 2**20
"""The memo's bound: 64 MiB of estimated value size (RFC 7519's 63 KB text cited twice: 2.7 MiB)."""
SAMPLE = 16
"""Items of a container measured when estimating its size; a longer one is extrapolated from them."""
KEY_BYTES = 200
"""What one entry's key and bookkeeping are counted as."""
_ATOMS = (str, bytes, int, float, bool, type(None))

T = TypeVar("T")


def digest(function: Callable, data: str | Sequence[str]) -> tuple[Callable, bytes]:
    """The memo key of `function(data)` (module rules)."""
    hasher = hashlib.sha256()
    if isinstance(data, str):
        hasher.update(b"s" + data.encode("utf-8", "surrogatepass"))
    else:
        hasher.update(b"q")
        for text in data:
            encoded = text.encode("utf-8", "surrogatepass")
            hasher.update(len(encoded).to_bytes(8, "big") + encoded)
    return function, hasher.digest()


def estimate(value: object, depth: int = 0) -> int:
    """Bytes `value` takes, estimated: sys.getsizeof of it and of what it holds (containers, an object's
    attributes), a container of more than SAMPLE items extrapolated from SAMPLE of them."""
    size = sys.getsizeof(value)
    if isinstance(value, _ATOMS) or depth > 8:
        return size
    if isinstance(value, dict):
        items, pairs = len(value), list(itertools.islice(value.items(), SAMPLE))
        measured = sum(estimate(k, depth + 1) + estimate(v, depth + 1) for k, v in pairs)
        return size + (measured * items // len(pairs) if pairs else 0)
    if isinstance(value, (list, tuple)):
        step = max(1, len(value) // SAMPLE)
        picked = value[::step][:SAMPLE]
    elif isinstance(value, (set, frozenset)):
        picked = list(itertools.islice(value, SAMPLE))
    elif hasattr(value, "__dict__"):
        return size + estimate(vars(value), depth + 1)
    else:
        return size
    measured = sum(estimate(item, depth + 1) for item in picked)
    return size + (measured * len(value) // len(picked) if picked else 0)


class Memo:
    """An LRU table of computed values bounded by their estimated bytes (module rules)."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._table: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._table)

    def remembered(self, function: Callable[..., T], data: str | Sequence[str]) -> T:
        """`function(data)`, from the table when it holds it, else computed and kept (module rules)."""
        key = digest(function, data)
        with self._lock:
            found = self._table.get(key)
            if found is not None:
                self._table.move_to_end(key)
                self.hits += 1
                return found[0]                     # type: ignore[return-value]
            self.misses += 1
        value = function(data)
        if isinstance(value, list):
            value = tuple(value)
        size = KEY_BYTES + estimate(value)
        if size > self.max_bytes:
            return value
        with self._lock:
            found = self._table.get(key)
            if found is not None:                   # another thread stored it meanwhile: share that one
                self._table.move_to_end(key)
                return found[0]                     # type: ignore[return-value]
            while self.bytes + size > self.max_bytes:      # room first: the bound holds at every moment
                _, (_, dropped) = self._table.popitem(last=False)
                self.bytes -= dropped
            self._table[key] = (value, size)
            self.bytes += size
        return value


MEMO = Memo()
"""The process's memo (tests swap it for a bounded or an empty one)."""


def remembered(function: Callable[..., T], data: str | Sequence[str]) -> T:
    """`function(data)` through the process's memo (module rules)."""
    return MEMO.remembered(function, data)
