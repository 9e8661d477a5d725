"""Re-record data/minilm_scores.json: `python scripts/record_minilm_scores.py` (no key, no network).

Every notebook is replayed offline (`citecheck.notebook.execute`, a fresh kernel, json_cache.json alone) with
two cells around it: the first turns `recorded_scores.recording` on (nothing is read from the record, every
MiniLM ranking is computed) and the vectors' disk memory off (each text encoded as on a fresh clone); the
last adds the calls that kernel computed to a new record. When all have run, the new record replaces
data/minilm_scores.json. The notebooks themselves are not saved; `python -m citecheck.notebook` then checks
that they replay to their committed outputs from the new record.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import notebook  # noqa: E402
from citecheck.web import recorded_scores  # noqa: E402

BEFORE = ("from citecheck.web import recorded_scores, vectors\n"
          "recorded_scores.recording = True\n"
          "vectors.disk_enabled = False")


def main() -> int:
    import nbformat
    from nbformat.v4 import new_code_cell
    work = ROOT / "build" / "record-scores"
    work.mkdir(parents=True, exist_ok=True)
    record = work / recorded_scores.PATH.name
    record.unlink(missing_ok=True)
    for path in notebook.notebook_paths():
        nb = nbformat.read(str(path), as_version=4)
        nb.cells = [new_code_cell(BEFORE), *nb.cells,
                    new_code_cell(f"print(recorded_scores.save(__import__('pathlib').Path({str(record)!r})))")]
        nbformat.write(nb, str(work / path.name))
        done = notebook.execute(work / path.name)
        print(f"{path.name}: the record holds {done.cells[-1].outputs[0]['text'].strip()} calls", flush=True)
    os.replace(record, recorded_scores.PATH)
    print(f"wrote {recorded_scores.PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
