"""Where the repository is, and how a path is printed (never absolute when it is inside the repository)."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: data/, .models/, build/ and the cache's json_cache.json live here."""
DATA = ROOT / "data"
"""The cookbook's data folder: a notebook names its files explicitly (`DATA / "rfc7519.txt"`), whatever the
working directory, which is left to the reader's own files."""


def shown(path: Path) -> str:
    """A path as printed: relative to the repository when inside it, else `~/...` when in the home
    directory (the CLI's user cache), else as given."""
    path = Path(path)
    if path.is_absolute() and path.is_relative_to(ROOT):
        return str(path.relative_to(ROOT))
    home = Path.home()
    inside_home = path.is_absolute() and home != Path(path.anchor) and path.is_relative_to(home)
    return f"~/{path.relative_to(home)}" if inside_home else str(path)


def not_a_file(name: str | Path, mode: int | None = None) -> str:
    """'NAME is a directory, not a file' (a device, a FIFO, a socket: said so): the one wording for a path
    that is not a regular file, whoever finds it (`unreadable`, `source.text.read_file`, the documents
    folder). `mode` is its st_mode (None: a directory)."""
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"))
    kind = next((said for test, said in kinds if mode is not None and test(mode)), "a directory")
    return f"{shown(name)} is {kind}, not a file"


WHY_UNREADABLE = {errno.ENOENT: "does not exist",
                  errno.ENOTDIR: "does not exist (a part of its path is a file)",
                  errno.EACCES: "cannot be read (permission denied)", errno.EPERM: "cannot be read (permission denied)"}
"""Why a path cannot be read, by errno, as the end of a sentence that starts with the path."""


def unreadable(exc: OSError) -> str | None:
    """'PATH is a directory, not a file' (and the like) for an OSError naming a file; None for any other."""
    if not isinstance(exc.filename, (str, os.PathLike)) or exc.errno is None:    # none, or a descriptor
        return None
    if exc.errno == errno.EISDIR:
        return not_a_file(exc.filename)
    why = WHY_UNREADABLE.get(exc.errno)
    return f"{shown(exc.filename)} {why}" if why else f"{shown(exc.filename)}: {(exc.strerror or '').lower()}"


def a_file(path: str | Path) -> Path:
    """`path` when it names a file; else the OSError (`unreadable` says it as one sentence)."""
    path = Path(path)
    if not path.is_file():
        code = errno.EISDIR if path.is_dir() else errno.ENOENT
        raise OSError(code, os.strerror(code), str(path))
    return path
