"""What a tool call may read and how big its arguments may be: the documents folder and the size caps.

Rules:
- Every file argument names a file inside the documents folder (`mcp --root`, default the current
  directory): a path relative to it, or an absolute one inside it. `..`, a symlink leading out, a
  directory, a device or a FIFO is refused unread: `extract.documents.confined`, the rule of
  `extract --documents`; so is a hidden file or folder, or a link to one (`extract.local.hidden`). A
  folder argument (extract's documents) must be a directory inside it.
- Caps, the CLI's settings: an answer given inline is at most ANSWER_MAX_BYTES (UTF-8); a claim at
  most CLAIM_MAX_CHARS (batch's cap); a claim's URLs at most API_MAX_URLS (the /verify API's cap), each
  an http(s) URL with a host. Text holding a lone surrogate is refused.
- Each refusal is one `ToolInputError` line naming the argument; paths print relative to the folder
  (`shown`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath

from ...extract.documents import confined
from ...extract.local import hidden
from ...verify import is_text
from ...web import netguard


class ToolInputError(ValueError):
    """A tool call's argument is unusable: one line naming it (the call is refused, nothing ran)."""


def text(argument: str, value: str) -> str:
    """`value`, refused when it holds a lone surrogate (it cannot be UTF-8: not text)."""
    if not is_text(value):
        raise ToolInputError(f"{argument} is not valid text (a lone surrogate)")
    return value


def exactly_one(**given) -> str:
    """The name of the one argument given (not None, not "") among `given`; else a ToolInputError naming them."""
    named = [name for name, value in given.items() if value is not None and value != ""]
    if len(named) != 1:
        choices = " or ".join(given)
        got = f" (got {', '.join(named)})" if named else ""
        raise ToolInputError(f"give exactly one of {choices}{got}")
    return named[0]


def answer_text(value: str, max_bytes: int) -> str:
    """An answer given inline, at most `max_bytes` of UTF-8 (ANSWER_MAX_BYTES)."""
    size = len(text("answer", value).encode("utf-8"))
    if size > max_bytes:
        raise ToolInputError(f"answer: {size:,} bytes, over the {max_bytes:,}-byte limit for an answer "
                             "(ANSWER_MAX_BYTES)")
    return value


def claim_text(value: str, max_chars: int) -> str:
    """A claim: not blank, at most `max_chars` characters (CLAIM_MAX_CHARS), stripped."""
    claim = text("claim", value).strip()
    if not claim:
        raise ToolInputError("claim must not be empty")
    if len(claim) > max_chars:
        raise ToolInputError(f"claim: {len(claim):,} characters, over the {max_chars:,}-character limit "
                             "(CLAIM_MAX_CHARS)")
    return claim


def url_list(urls: list[str], max_urls: int) -> list[str]:
    """One to `max_urls` URLs (API_MAX_URLS), each http(s) with a host (addresses are fetch's to vet)."""
    if not urls:
        raise ToolInputError("urls: give at least one URL")
    if len(urls) > max_urls:
        raise ToolInputError(f"urls: {len(urls)} URLs, over the limit of {max_urls} (API_MAX_URLS)")
    for n, url in enumerate(urls):
        try:
            netguard.check_url(text(f"urls[{n}]", url), allow_private=True)
        except netguard.BlockedURL as exc:
            raise ToolInputError(f"urls[{n}] {url!r} is not an http(s) URL with a host ({exc})") from None
    return urls


@dataclass(frozen=True)
class Folder:
    """The documents folder: the only place a tool reads files from (module rules)."""
    root: Path                          # resolved

    @classmethod
    def at(cls, root: str | Path) -> "Folder":
        path = Path(root).resolve()
        if not path.is_dir():
            raise ValueError(f"--root {root}: not a directory")
        return cls(path)

    def _relative(self, argument: str, name: str) -> str:
        """`name` relative to the folder (an absolute path inside it is made relative)."""
        if not text(argument, name).strip():
            raise ToolInputError(f"{argument} must name a file in the documents folder")
        if PurePath(name).is_absolute():
            if not PurePath(name).is_relative_to(self.root):
                raise ToolInputError(f"{argument}: {name} is outside the documents folder; not read")
            return str(PurePath(name).relative_to(self.root))
        return name

    def file(self, argument: str, name: str) -> Path:
        """The regular file `name` inside the folder (symlinks resolved), or a ToolInputError saying why."""
        relative = self._relative(argument, name)
        try:
            real = confined(self.root, relative)
        except FileNotFoundError:
            raise ToolInputError(f"{argument}: no file {name!r} in the documents folder") from None
        except ValueError as exc:
            raise ToolInputError(f"{argument}: {exc}") from None
        if hidden(PurePath(relative)) or hidden(real.relative_to(self.root)):
            raise ToolInputError(f"{argument}: {name}: a hidden file or folder (or a link to one); not read")
        return real

    def folder(self, argument: str, name: str) -> Path:
        """The directory `name` inside the folder (symlinks resolved), or a ToolInputError saying why."""
        relative = self._relative(argument, name)
        real = (self.root / relative).resolve()
        if ".." in PurePath(relative).parts or not real.is_relative_to(self.root):
            raise ToolInputError(f"{argument}: {name} is outside the documents folder; not read")
        if not real.is_dir():
            raise ToolInputError(f"{argument}: no directory {name!r} in the documents folder")
        return real

    def shown(self, value: str) -> str:
        """`value` with the folder's absolute path dropped: a path inside it prints relative."""
        return value.replace(f"{self.root}/", "")
