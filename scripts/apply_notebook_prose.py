"""Apply scripts/notebook_prose.json to the markdown cells of notebooks/*.ipynb.

Rules:
- The JSON maps a notebook's file name to {"set": {cell id: markdown}, "insert_after": {existing cell id:
  [{"id": new id, "source": markdown}, ...]}, "delete": [markdown cell id, ...]}.
- Only markdown cells are written, inserted or deleted; a code cell (its source, outputs, metadata) is never
  touched. An id that names a code cell, or is not found, is one line on stderr; the rest is still applied.
- Idempotent: an inserted cell whose id already exists is updated in place, not inserted again; a notebook
  is written only when its cells changed, so a second run changes nothing.
- `--check` writes nothing and exits 1 when a notebook would change (the test of the committed notebooks).

Usage: python scripts/apply_notebook_prose.py [--check] [--prose scripts/notebook_prose.json] [--notebooks DIR]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
PROSE = ROOT / "scripts" / "notebook_prose.json"
NOTEBOOKS = ROOT / "notebooks"


def _markdown(cell_id: str, source: str):
    cell = nbformat.v4.new_markdown_cell(source)
    cell["id"] = cell_id
    return cell


def apply(nb, changes: dict, name: str, problems: list[str]) -> None:
    """Apply one notebook's changes to `nb` in place; each id that cannot be applied adds a line to `problems`."""
    def find(cell_id: str):
        return next((c for c in nb.cells if c.get("id") == cell_id), None)

    def writable(cell_id: str, what: str):
        cell = find(cell_id)
        if cell is None:
            problems.append(f"{name}: cell {cell_id} not found ({what} skipped)")
        elif cell.cell_type != "markdown":
            problems.append(f"{name}: cell {cell_id} is a {cell.cell_type} cell, not markdown ({what} skipped)")
            return None
        return cell

    for cell_id, source in changes.get("set", {}).items():
        cell = writable(cell_id, "set")
        if cell is not None:
            cell.source = source
    for anchor, new_cells in changes.get("insert_after", {}).items():
        if find(anchor) is None:
            problems.append(f"{name}: cell {anchor} not found (insert_after skipped)")
            continue
        previous = anchor
        for new in new_cells:
            existing = find(new["id"])
            if existing is None:
                at = nb.cells.index(find(previous)) + 1
                nb.cells.insert(at, _markdown(new["id"], new["source"]))
            elif existing.cell_type != "markdown":
                problems.append(f"{name}: cell {new['id']} is a {existing.cell_type} cell, not markdown (insert skipped)")
                continue
            else:
                existing.source = new["source"]
            previous = new["id"]
    for cell_id in changes.get("delete", []):
        cell = find(cell_id)
        if cell is None:
            continue                                   # already deleted: nothing to do
        if cell.cell_type != "markdown":
            problems.append(f"{name}: cell {cell_id} is a {cell.cell_type} cell, not markdown (delete skipped)")
            continue
        nb.cells.remove(cell)


def run(prose: Path = PROSE, notebooks: Path = NOTEBOOKS, check: bool = False) -> tuple[list[str], list[str]]:
    """(notebooks changed or that would change, problem lines)."""
    spec = json.loads(prose.read_text(encoding="utf-8"))
    changed, problems = [], []
    for name, changes in spec.items():
        path = notebooks / name
        if not path.is_file():
            problems.append(f"{name}: notebook not found in {notebooks}")
            continue
        nb = nbformat.read(str(path), as_version=4)
        before = nbformat.writes(nb)
        apply(nb, changes, name, problems)
        if nbformat.writes(nb) != before:
            changed.append(name)
            if not check:
                nbformat.validate(nb)
                nbformat.write(nb, str(path))
    return changed, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a notebook would change")
    parser.add_argument("--prose", type=Path, default=PROSE)
    parser.add_argument("--notebooks", type=Path, default=NOTEBOOKS)
    args = parser.parse_args(argv)
    changed, problems = run(args.prose, args.notebooks, args.check)
    for line in problems:
        print(line, file=sys.stderr)
    verb = "would change" if args.check else "changed"
    print(f"{verb}: {', '.join(changed) or 'nothing'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
