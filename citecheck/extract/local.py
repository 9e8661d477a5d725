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
- Finding (`read_local_files`, here): a name is relative to the answer's folder, or to `--documents DIR`
  when given, and confined to it by `documents.confined` (no absolute path, no `..`, no symlink out, a
  regular file); it is read and split as `check --source` reads a source (`sources.detect_format`, `load`).
  A file that cannot be found or read is one problem line at its entry's position; its citations are not
  checked and the rest run.
- Checking (`check`, `check-answer`): a quote is located in the file and judged against its section, as
  for any source; a claim with no quote is judged against the section of the file that RETRIEVAL (BM25)
  ranks first for it (`check.best_section`; check-answer's row names it: `coffee.md §Brewing`).
  `check --answer` checks the citations of its `--source` (without one: of the one file the answer names);
  `check-answer` checks every marker against its own file.
- Not read as local files: inline links to them (`[notes](coffee.md)` stays "not an http(s) URL").
- Problems are one line per marker (a marker whose entry gives neither a URL nor a file name says so and
  how to fix it) and one line per file that cannot be read.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from ..source import sources
from ..source.document import Document
from .documents import confined
from .parsed import Problem

ANSWER_FOLDER = "the answer's folder"
"""How messages name the folder local names resolve against when no --documents DIR is given."""


@dataclass
class LocalFiles:
    """The local files an answer cites: each read one split into sections, or why it was not read."""
    documents: dict[str, Document] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)        # name -> why (one line)
    problems: list[Problem] = field(default_factory=list)       # one per file not read, at its entry

    def why_not(self, name: str) -> str:
        return self.unread.get(name, f"{name}: not read")


def read_local_files(files: Mapping[str, str], folder: str | Path | None, pdf=None, *,
                     folder_name: str = ANSWER_FOLDER) -> LocalFiles:
    """Each file of `files` (name -> where the answer names it) found in `folder` and read (module rules);
    `pdf`: the run's PdfLimits. With no folder nothing is read and each file is unread, saying so."""
    out = LocalFiles()
    for name, where in files.items():
        if folder is None:
            out.unread[name] = f"{name}: no folder was given to find it in"
            continue
        try:
            out.documents[name] = _read(Path(folder), name, pdf, folder_name)
        except (OSError, ValueError) as exc:
            out.unread[name] = str(exc)
            out.problems.append(Problem(where, "unreadable_document", f"{exc}; its citations are not checked"))
    return out


def _read(folder: Path, name: str, pdf, folder_name: str) -> Document:
    try:
        real = confined(folder, name)
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: no such file in {folder_name}") from None
    try:
        document = sources.load(real, sources.detect_format(real), pdf=pdf)
    except ValueError as exc:                        # say the name as written, never the resolved path
        raise ValueError(str(exc).replace(str(real), name)) from None
    except OSError as exc:
        raise OSError(str(exc).replace(str(real), name)) from None
    return replace(document, name=name)
