"""What no notebook output and no log line may hold: a path of this machine."""
from __future__ import annotations

import re

ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:work|root|home|tmp|usr|opt|var|Users|private)/")
"""An absolute path under a directory that only exists on some machine (a URL's path does not match)."""


def leaks(text: str) -> list[str]:
    """The lines of `text` that hold an absolute path."""
    return [line for line in text.splitlines() if ABSOLUTE.search(line)]
