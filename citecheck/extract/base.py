"""The small base class the answer readers share.

A reader turns one answer into `parsed.Parsed`: the answer's prose with citation markers and link syntax
removed, the anchors tying a span (or a point) of that prose to a cited source, and the problems met on
the way. `assemble.assemble` turns that into the cookbook's inputs; a reader never builds claims itself.

Rules:
- Nothing in an answer is executed or fetched.
- A problem is reported with its position and the rest is extracted (`parsed`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from .assemble import assemble
from .jsondoc import load
from .parsed import Documents, Extraction, Parsed


class Reader(ABC):
    """One answer format. Subclasses set `name` and implement `parse`."""
    name: ClassVar[str]

    @abstractmethod
    def parse(self, text: str, documents: Documents = ()) -> Parsed:
        """The answer's prose, anchors and problems; raises AnswerFormatError if it is not this format."""

    def extract(self, text: str, documents: Documents = (), max_markers: int | None = None) -> Extraction:
        """The answer's inputs (`assemble`), at most `max_markers` citations (None: every one)."""
        return assemble(self.name, self.parse(text, documents), max_markers)


class JsonReader(Reader):
    """A vendor's JSON response: `looks_like` recognises it (for auto), `read` walks it."""

    @classmethod
    @abstractmethod
    def looks_like(cls, data: object) -> bool:
        """True when `data` has this vendor's top-level shape."""

    @abstractmethod
    def read(self, data: object, documents: Documents) -> Parsed:
        """Walk the parsed JSON; raise AnswerFormatError for a wrong top-level shape."""

    def parse(self, text: str, documents: Documents = ()) -> Parsed:
        return self.read(load(text, self.name), documents)
