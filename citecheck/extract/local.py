"""Answers that cite local files: a Markdown source list may name a file instead of a URL.

    Water boils at 100 °C at sea level [1]. "Water boils at 100 °C at sea level." [1]

    Sources:
    [1] coffee.md

The design, end to end:
- Reading (`markdown`): an entry (`[1] coffee.md`, `1. notes/tea.txt - Tea notes`, `[1]: coffee.md`,
  `[^n]: coffee.md`) with no URL that names a file makes each marker citing it a quoted document citation
  of that file: `{"id", "claim", "quote", "section": null, "file": "coffee.md"}` in citations.json. Its
  quote is the block quote the marker stands in (`> "..." [1]`), else the double-quoted passage the marker
  directly follows (`"..." [1]`); with neither, the quote is null: the sentence is a claim to judge against
  the file.
- Finding (`read_local_files`, here): the answer is untrusted (an LLM can be prompt-injected), so a name is
  read only from the documents the user named: the files of `--documents DIR` (the answer's own folder
  only when named so: `--documents .`). A file is among them when it is a regular file inside DIR
  (`documents.confined`: no absolute path, no `..`, no symlink out), no part of its path (as written and
  as resolved) starts with "." (no hidden file or folder: `.config/gh/hosts.yml`, `.env`), and it has a
  source format's extension (`sources.SOURCE_SUFFIXES`: .md, .markdown, .txt, .pdf). Anything else is
  never opened: one problem line `document_not_named` (vocabulary) at its entry saying how to name it,
  its markers unchecked with that reason; nothing of it reaches output or a judge. A named file is read
  and split as `check --source` reads a source (`sources.detect_format`, `load`: size checked first).
  A named file that cannot be found or read is one problem line at its entry's position; its citations
  are not checked and the rest run.
- What a file shows: a near-miss's closest span (the diff, the evidence) is at most the quote's own
  length of the file's text (`check.check_matches`).
- Checking (`check`, `check-answer`): a quote is located in the file and judged against its section, as
  for any source; a claim with no quote is judged against the section of the file that RETRIEVAL (BM25)
  ranks first for it (`check.best_section`; check-answer's row names it: `coffee.md §Brewing`).
  `check --answer` checks the citations of its `--source` (the file the user names; without one it says
  which file to name); `check-answer` checks every marker against its own file.
- Not read as local files: inline links to them (`[notes](coffee.md)` stays "not an http(s) URL").
- Problems are one line per marker (a marker whose entry gives neither a URL nor a file name says so and
  how to fix it) and one line per file that cannot be read.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Mapping

from ..source import sources
from ..source.document import Document
from .documents import confined
from ..vocabulary import DOCUMENT_NOT_NAMED
from .parsed import Problem

HOW_TO_NAME = "name the folder that holds it with --documents DIR (the answer's own folder: --documents .)"
"""How a message says to name a document."""


@dataclass
class LocalFiles:
    """The local files an answer cites: each read one split into sections, or why it was not read."""
    documents: dict[str, Document] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)        # name -> why (one line)
    problems: list[Problem] = field(default_factory=list)       # one per file not read, at its entry
    not_named: set[str] = field(default_factory=set)            # the unread ones the user did not name

    def why_not(self, name: str) -> str:
        return self.unread.get(name, f"{name}: not read")

    def reason(self, name: str) -> str:
        """A row's reason for a file not read: DOCUMENT_NOT_NAMED, else the line saying why."""
        return DOCUMENT_NOT_NAMED if name in self.not_named else self.why_not(name)


class NotNamed(ValueError):
    """A local file that is not among the documents the user named (module rules); never opened."""


def read_local_files(files: Mapping[str, str], folder: str | Path | None, pdf=None, *,
                     folder_name: str = "--documents DIR") -> LocalFiles:
    """Each file of `files` (name -> where the answer names it) read from `folder`, the documents the user
    named (module rules); `pdf`: the run's PdfLimits. With no folder no file is named, none is read."""
    out = LocalFiles()
    for name, where in files.items():
        try:
            if folder is None:
                raise NotNamed(f"{name}: not among the named documents (none were named); {HOW_TO_NAME}")
            out.documents[name] = _read(Path(folder), name, pdf, folder_name)
        except NotNamed as exc:
            out.unread[name] = str(exc)
            out.not_named.add(name)
            out.problems.append(Problem(where, DOCUMENT_NOT_NAMED, f"{exc}; its citations are not checked"))
        except (OSError, ValueError) as exc:
            out.unread[name] = str(exc)
            out.problems.append(Problem(where, "unreadable_document", f"{exc}; its citations are not checked"))
    return out


def hidden(path: PurePath) -> bool:
    """Whether a part of `path` (relative to a folder) is hidden: starts with '.' ('..' is `confined`'s)."""
    return any(part.startswith(".") and part != ".." for part in path.parts)


def unnamed(path: PurePath) -> str | None:
    """Why a file at `path` (relative to the documents folder) is not one of its documents, or None."""
    if hidden(path):
        return "a hidden file or folder"
    if path.suffix.lower() not in sources.SOURCE_SUFFIXES:
        return f"not a source document ({', '.join(sources.SOURCE_SUFFIXES)})"
    return None


def _read(folder: Path, name: str, pdf, folder_name: str) -> Document:
    why = unnamed(PurePath(name))
    if why:
        raise NotNamed(f"{name}: {why}, not among the documents of {folder_name}; not read")
    try:
        real = confined(folder, name)
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: no such file in {folder_name}") from None
    why = unnamed(PurePath(real.relative_to(folder.resolve())))
    if why:
        raise NotNamed(f"{name}: a link to {why}, not among the documents of {folder_name}; not read")
    try:
        document = sources.load(real, sources.detect_format(real), pdf=pdf)
    except ValueError as exc:                        # say the name as written, never the resolved path
        raise ValueError(str(exc).replace(str(real), name)) from None
    except OSError as exc:
        raise OSError(str(exc).replace(str(real), name)) from None
    return replace(document, name=name)
