"""Choice-readout calibration: per-option offsets fitted on a tune split, stored per question.

Rules:
- Offsets ("calibrate before use") are fitted by `scripts/eval_judge.py --write-calibration` on the
  tune split and kept in data/judge_calibration.json, one entry per question (`question_key`).
- The local judge's server subtracts them before the softmax; the judge client puts them in every
  Choice cache key, so refitting re-asks instead of replaying answers read out with old offsets.
- The table is parsed once while its file is unchanged (same size, modification and change times):
  a judge step asks it for the offsets of every Choice key, so a step costs a `stat`, not a parse,
  and a refitted file is read again at the next step.
- This module is neutral ground: the client (`judges`) and the server (`local_judge`) both import it,
  and it imports neither.
"""
from __future__ import annotations

import functools
import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from ..paths import ROOT

CALIBRATION_FILE = ROOT / "data" / "judge_calibration.json"


def question_key(instructions: Any, criteria: dict) -> str:
    """Which question a set of calibration offsets was fitted for (instructions + criteria, in order)."""
    try:
        return _text_question_key(instructions, tuple(criteria.items()))
    except TypeError:                             # content that is not text (an object): not remembered
        return _digest(instructions, list(criteria.items()))


@functools.lru_cache(maxsize=64)
def _text_question_key(instructions: str, criteria: tuple) -> str:
    return _digest(instructions, list(criteria))


def _digest(instructions: Any, criteria: list) -> str:
    blob = json.dumps({"instructions": instructions, "criteria": criteria}, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


_parsed: dict[Path, tuple[tuple, dict]] = {}
_parsing = threading.Lock()


def load_calibration(path: Path | None = None) -> dict[str, dict[str, float]]:
    """{question_key: {option: offset}} from the eval script's JSON (a copy: parsed once while the file is
    unchanged); {} when the file does not exist."""
    path = path or CALIBRATION_FILE
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {}
    stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
    with _parsing:
        known = _parsed.get(path)
        if known is None or known[0] != stamp:
            data = json.loads(path.read_text(encoding="utf-8"))
            known = _parsed[path] = (stamp, {key: dict(entry["offsets"])
                                             for key, entry in data.get("questions", {}).items()})
    return {key: dict(offsets) for key, offsets in known[1].items()}
