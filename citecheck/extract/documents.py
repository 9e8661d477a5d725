"""The documents an answer cites, from a directory: which file is document_index 0, 1, 2, ...

Rules:
- With a manifest `DIR/documents.txt` (one file name per line, relative to DIR; blank lines and lines
  starting "#" skipped), entry n is document n: the order the documents were sent in, which only the
  caller knows. Without one, the regular files of DIR sorted by name (code-point order; hidden files
  skipped) are documents 0, 1, 2, ... Name the files `0-….pdf`, `1-….txt` or write the manifest.
- A file that starts "%PDF-" is read by `pdf_text` within the run's PDF limits (a Document with one
  section per page: page_location ranges are checked against it); any other file is its UTF-8 text as
  it was sent (char_location ranges index into it), at most `source.text.MAX_FILE_BYTES`.
- Only regular files inside DIR are read: a manifest entry that is absolute or has a `..` part, a
  symlink that leads out of DIR, a device, a FIFO or a socket is a problem naming the entry, never
  opened (so no match line can tell what a file outside DIR holds); subdirectories are not documents.
  The file type is checked again on the opened descriptor, so nothing swapped in after the check is read.
- A document that cannot be read (missing, not UTF-8, a PDF that pdf_text refuses) is a problem naming
  the file, and its place is empty: citations of it are still extracted, unchecked against it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import stat
from pathlib import Path, PurePath

from ..config import PdfLimits
from ..paths import not_a_file
from ..source.sources import Document
from ..source.text import MAX_FILE_BYTES, read_file
from .parsed import AnswerError, Problem

MANIFEST = "documents.txt"


@dataclass
class CitedDocuments:
    names: list[str] = field(default_factory=list)                 # file names, by document_index
    documents: list[str | Document | None] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def confined(folder: Path, name: str) -> Path:
    """folder/name if it is a regular file inside folder (symlinks resolved); else ValueError saying why.
    Nothing is opened: only names and stat are looked at."""
    if PurePath(name).is_absolute() or ".." in PurePath(name).parts:
        raise ValueError(f"{name}: outside the documents folder (absolute or '..'); not read")
    path = folder / name
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):                      # missing, or a symlink loop
        raise FileNotFoundError(name) from None
    if not real.is_relative_to(folder.resolve()):
        raise ValueError(f"{name}: a link out of the documents folder; not read")
    mode = real.stat().st_mode
    if not stat.S_ISREG(mode):
        raise ValueError(not_a_file(name, mode))
    return real


def _names(folder: Path) -> list[tuple[str, str]]:
    """(where, file name) of each document in order: the manifest's lines, else the sorted entries."""
    manifest = folder / MANIFEST
    if manifest.is_file() and not manifest.is_symlink():
        lines = manifest.read_text(encoding="utf-8").splitlines()
        return [(f"{manifest}:{n}", line.strip()) for n, line in enumerate(lines, 1)
                if line.strip() and not line.lstrip().startswith("#")]
    return [(str(folder / p.name), p.name) for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if not p.name.startswith(".") and not (p.is_dir() and not p.is_symlink())]


def read_document(path: Path, limits: PdfLimits | None = None) -> str | Document:
    """One cited document as the vendor saw it: a PDF as a Document, other files as their text."""
    from ..source.pdf_text import load_limited
    limits = limits or PdfLimits()
    data = read_file(path, path.name, max(limits.max_bytes, MAX_FILE_BYTES))
    if b"%PDF-" in data[:1024]:
        return load_limited(path, limits)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name}: not UTF-8 text (byte {exc.start}) and not a PDF") from None


def read_documents(folder: str | Path, limits: PdfLimits | None = None) -> CitedDocuments:
    """The documents of `folder` by document_index (module rules); a folder that is not one raises."""
    folder = Path(folder)
    if not folder.is_dir():
        raise AnswerError(f"--documents {folder}: not a directory")
    out = CitedDocuments()
    for where, name in _names(folder):
        document = None
        try:
            document = read_document(confined(folder, name), limits)
        except FileNotFoundError:
            out.problems.append(Problem(where, "unreadable_document", f"{name}: no such file; document "
                                        f"{len(out.names)} is not checked"))
        except (OSError, ValueError) as exc:
            out.problems.append(Problem(where, "unreadable_document", f"{exc}; document {len(out.names)} "
                                        "is not checked"))
        out.names.append(name)
        out.documents.append(document)
    return out
