"""What every answer reader produces, and the small base class the readers share.

A reader turns one answer into `Parsed`: the answer's prose with citation markers and link syntax
removed, the anchors tying a span (or a point) of that prose to a cited source, and the problems met on
the way. `assemble.assemble` turns that into the cookbook's inputs; a reader never builds claims itself.

Rules:
- A problem names where it is (`line 3:14`, or a JSON path such as `$.content[2].citations[0]`) and
  is reported; the rest of the answer is still extracted.
- An answer that is not in the reader's format at all is one `AnswerFormatError`: one line naming the
  format and the first offending position.
- Nothing in an answer is executed or fetched.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Sequence

from ..sources import Document

Documents = Sequence["str | Document | None"]
"""The documents the answer cites, by document_index: their text as sent (to check character ranges) or a
loaded Document (to check page ranges). Optional; without them only the answer itself is checked."""


class AnswerError(ValueError):
    """The answer cannot be read at all; the message is one line."""


class AnswerFormatError(AnswerError):
    """The answer is not in the named format: the format and the first offending position."""

    def __init__(self, fmt: str, where: str, what: str):
        self.format, self.where, self.what = fmt, where, what
        lead = "cannot tell the answer's format" if fmt == "auto" else \
            f"not {'an' if fmt[0] in 'aeiou' else 'a'} {fmt} answer"
        super().__init__(f"{lead}: {where}: {what}")


@dataclass(frozen=True)
class Problem:
    where: str      # "line 3:14" or a JSON path
    kind: str       # dangling_marker | uncited_source | out_of_range | cited_text_mismatch | malformed |
                    # no_quote | no_sentence | unsupported | unknown_result | ignored
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(frozen=True)
class Link:
    """A cited URL (live-web flow)."""
    url: str
    title: str | None = None


@dataclass(frozen=True)
class Quote:
    """A quoted document citation (source-document flow); provenance is kept as (field, value) pairs."""
    quote: str | None
    section: str | None
    provenance: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class Anchor:
    """A source tied to prose[start:end]; start == end is a point (where a marker stood)."""
    start: int
    end: int
    source: Link | Quote
    where: str


@dataclass
class Parsed:
    text: str
    anchors: list[Anchor] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True)
class Extraction:
    """The cookbook's inputs from one answer: batch claims, check citations, and the problems found."""
    format: str
    claims: list[dict]
    citations: list[dict]
    problems: list[Problem]

    def claims_jsonl(self) -> str:
        """claims.jsonl text: one {"id", "claim", "urls"} object per line."""
        return "".join(json.dumps(claim, ensure_ascii=False) + "\n" for claim in self.claims)

    def citations_json(self) -> str:
        """citations.json text: a JSON list of {"id", "claim", "quote", "section", ...provenance}."""
        return json.dumps(self.citations, ensure_ascii=False, indent=1) + "\n"


class Reader(ABC):
    """One answer format. Subclasses set `name` and implement `parse`."""
    name: ClassVar[str]

    @abstractmethod
    def parse(self, text: str, documents: Documents = ()) -> Parsed:
        """The answer's prose, anchors and problems; raises AnswerFormatError if it is not this format."""

    def extract(self, text: str, documents: Documents = ()) -> Extraction:
        from .assemble import assemble
        return assemble(self.name, self.parse(text, documents))


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
        from .jsondoc import load
        return self.read(load(text, self.name), documents)
