"""Where the repository is, and how a path is printed (never absolute when it is inside the repository)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: data/, .models/, build/ and the cache's json_cache.json live here."""
DATA = ROOT / "data"
"""The cookbook's data folder: a notebook names its files explicitly (`DATA / "rfc7519.txt"`), whatever the
working directory, which is left to the reader's own files."""


def shown(path: Path) -> str:
    """A path as printed: relative to the repository when inside it."""
    path = Path(path)
    return str(path.relative_to(ROOT)) if path.is_absolute() and path.is_relative_to(ROOT) else str(path)
