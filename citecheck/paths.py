"""Where the repository is, and how a path is printed (never absolute when it is inside the repository)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: notebooks run from here; data/, .models/ and build/ live here."""


def shown(path: Path) -> str:
    """A path as printed: relative to the repository when inside it."""
    path = Path(path)
    return str(path.relative_to(ROOT)) if path.is_absolute() and path.is_relative_to(ROOT) else str(path)
