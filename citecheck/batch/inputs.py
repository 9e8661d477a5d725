"""A batch's input: a claims file (JSONL), or an LLM answer whose cited URLs become the claims.

Rules:
- `auto`: a file whose name ends ".jsonl", or whose first non-blank line is a JSON object with a
  "claim" field, is a claims file (`batch.claims`); anything else is an LLM answer, read by
  `citecheck.extract` with its format detected. `claims` or an answer format name says which.
- An answer's claims are batch claims (ids c1, c2, ... in text order); its problems are reported by
  position, the way a claims file's skipped lines are by number; its quoted document citations are
  `check --answer`'s (a note says how many).
"""
from __future__ import annotations

import json
from pathlib import Path

from .. import paths
from ..context import RunContext
from ..source.text import too_deep
from ..vocabulary import ANSWER_FORMATS
from .claims import Parsed, parse_lines, read_claims

CLAIMS = "claims"
INPUT_FORMATS = ("auto", CLAIMS, *ANSWER_FORMATS)
_SNIFF_BYTES = 65536


def is_claims_file(path: str | Path) -> bool:
    """The `auto` rule above (only the file's first 64 KiB are read)."""
    path = Path(path)
    if path.suffix.lower() == ".jsonl":
        return True
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    first = next((line for line in head.split(b"\n") if line.strip()), b"")
    if too_deep(first.decode("utf-8", errors="replace")):
        return False
    try:
        obj = json.loads(first.decode("utf-8-sig"))
    except ValueError:                          # not UTF-8, not JSON, or a line cut at 64 KiB
        return False
    return isinstance(obj, dict) and "claim" in obj


def read_input(path: str | Path, fmt: str, ctx: RunContext) -> Parsed:
    """The claims of a claims file or of an answer, with the problems and notes to report."""
    paths.a_file(path)
    if fmt == CLAIMS or (fmt == "auto" and is_claims_file(path)):
        return read_claims(path, ctx.settings.claim_max_chars)
    from ..extract.command import read_answer
    result = read_answer(path, fmt, ctx)
    parsed = parse_lines(result.claims_jsonl().encode("utf-8").splitlines(), ctx.settings.claim_max_chars)
    notes = [f"{len(result.citations)} quoted document citations: `citecheck check --answer {path} --source "
             "DOCUMENT` checks those"] if result.citations else []
    return Parsed(parsed.claims, [str(problem) for problem in result.problems] + parsed.problems,
                  notes + parsed.notes)
