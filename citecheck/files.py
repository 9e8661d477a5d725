"""Files this package writes for people (the cache export, the CSV and HTML reports).

Rules:
- A file is replaced atomically: written to a temp file beside it, flushed to disk, then renamed over
  it, so a kill leaves the old file or the new one, never half of one (and a temp file, `.NAME.xxxxxxxx`,
  removed on any error).
- The new file keeps the old one's permission bits; a file that did not exist gets the umask's usual
  mode (0666 & ~umask) — not the 0600 of a temp file.
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import IO, Callable


def new_file_mode() -> int:
    """The mode open() would give a new file under this process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def replace_file(path: str | Path, write: Callable[[IO], None], *, text: bool = True) -> None:
    """Atomically replace `path` with what `write(handle)` writes (module rules)."""
    path = Path(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = new_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        with (os.fdopen(fd, "w", encoding="utf-8", newline="") if text else os.fdopen(fd, "wb")) as handle:
            write(handle)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
