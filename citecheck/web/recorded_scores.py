"""MiniLM scores recorded from a replay of the notebooks, so a fresh clone ranks without encoding.

Rules:
- data/minilm_scores.json (committed) holds the cosine scores `retrieval.similarities` computed for every
  MiniLM ranking an offline replay of the notebooks makes: {"encoder": the encoder build, "scores":
  {sha256 of [query, *passages]: [score per passage]}}, keys sorted, one call a line (a re-recording's
  diff shows the calls that changed). They were computed in fresh kernels with the vectors' disk memory
  off: what a first run on a fresh clone computes.
- `retrieval` takes a call's scores from the record when it was made by this encoder build (the disk
  memory's: package, sentence-transformers and torch versions) and holds this exact call (the same query
  and passages, in order); any other call is encoded and computed as before. The same floats either
  way, so a replay's rankings and printed scores do not depend on whether it encoded.
- The file is read once per process, at the first MiniLM ranking; one that cannot be read or is not a
  record is said once in the log and ignored (the scores are computed).
- Re-recording (`python scripts/record_minilm_scores.py`) sets `recording`: nothing is read from the file,
  and each computed call is kept for `save`.
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path

from ..files import replace_file
from ..paths import ROOT
from . import vectors

PATH = ROOT / "data" / "minilm_scores.json"
recording = False
"""On while re-recording: the record is not read, every computed call is kept in `computed`."""
computed: dict[str, list[float]] = {}
log = logging.getLogger(__name__)

_record: dict[str, list] | None = None
_lock = threading.Lock()


def encoder() -> str:
    """The encoder build the scores belong to (the name of its vectors' disk memory)."""
    return vectors.store_path().stem.removeprefix("vectors-")


def call_key(query: str, passages: tuple[str, ...]) -> str:
    blob = json.dumps([query, *passages], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def recorded(query: str, passages: tuple[str, ...]) -> tuple[float, ...] | None:
    """The recorded scores of this call, or None (not recorded, another encoder, or recording)."""
    if recording:
        return None
    scores = _loaded().get(call_key(query, passages))
    if not isinstance(scores, list) or len(scores) != len(passages) \
            or not all(isinstance(s, float) for s in scores):
        return None
    return tuple(scores)


def keep(query: str, passages: tuple[str, ...], scores: tuple[float, ...]) -> None:
    """While recording, keep a computed call's scores."""
    if recording:
        computed[call_key(query, passages)] = list(scores)


def _loaded() -> dict:
    global _record
    with _lock:
        if _record is None:
            _record = {}
            try:
                data = json.loads(PATH.read_text(encoding="utf-8"))
            except FileNotFoundError:
                return _record
            except (OSError, ValueError) as exc:
                log.warning("recorded MiniLM scores ignored (%s): %s", PATH.name, exc)
                return _record
            if not (isinstance(data, dict) and isinstance(data.get("scores"), dict)):
                log.warning("recorded MiniLM scores ignored (%s): not a record", PATH.name)
            elif data.get("encoder") != encoder():
                log.info("recorded MiniLM scores are of encoder %s, this is %s: computed instead",
                         data.get("encoder"), encoder())
            else:
                _record = data["scores"]
        return _record


def save(path: Path = PATH) -> int:
    """Add the calls computed in this process to the record at `path` (started when missing); how many
    it holds. A record of another encoder build is an error, never mixed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {"encoder": encoder(), "scores": {}}
    if data.get("encoder") != encoder():
        raise ValueError(f"{path.name} holds scores of encoder {data.get('encoder')!r}, not {encoder()!r}")
    scores = {**data["scores"], **computed}
    lines = ",\n".join(f"  {json.dumps(key)}: {json.dumps(scores[key])}" for key in sorted(scores))
    text = f'{{\n "encoder": {json.dumps(encoder())},\n "scores": {{\n{lines}\n }}\n}}\n'
    replace_file(path, lambda handle: handle.write(text))
    return len(scores)
