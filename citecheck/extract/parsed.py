"""What every answer reader produces: `Parsed` (the prose, its anchors, the problems met) and the
cookbook's inputs built from it (`Extraction`), with the errors an unreadable answer raises.

Rules:
- A problem names where it is (`line 3:14`, or a JSON path such as `$.content[2].citations[0]`) and
  is reported; the rest of the answer is still extracted.
- An answer that is not in the reader's format at all is one `AnswerFormatError`: one line naming the
  format and the first offending position.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

from ..source.document import Document

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
    """A cited URL (live-web flow); `quote` is the text the citation says it quotes from the page (Anthropic's
    cited_text, a Perplexity snippet), None when it carries none: verify matches it on the fetched page."""
    url: str
    title: str | None = None
    quote: str | None = None


@dataclass(frozen=True)
class Quote:
    """A quoted document citation (source-document flow); provenance is kept as (field, value) pairs. A
    citation of a local file (a Markdown source list naming one) carries ("file", its name as written), and
    `passage`: the span of the prose its quote was read from (quote marks included), left out of its claim."""
    quote: str | None
    section: str | None
    provenance: tuple[tuple[str, object], ...] = ()
    passage: tuple[int, int] | None = field(default=None, compare=False)


def local_file(source: "Link | Quote | None") -> str | None:
    """The local file a citation cites (its name as the answer wrote it), or None."""
    return dict(source.provenance).get("file") if isinstance(source, Quote) else None


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
    files: dict[str, str] = field(default_factory=dict)     # local files cited -> where the answer names them


@dataclass(frozen=True)
class Extraction:
    """The cookbook's inputs from one answer: batch claims, check citations, and the problems found."""
    format: str
    claims: list[dict]
    citations: list[dict]
    problems: list[Problem]
    files: dict[str, str] = field(default_factory=dict)     # local files cited -> where the answer names them

    def claims_jsonl(self) -> str:
        """claims.jsonl text: one {"id", "claim", "urls"} object per line."""
        return "".join(json.dumps(claim, ensure_ascii=False) + "\n" for claim in self.claims)

    def citations_json(self) -> str:
        """citations.json text: a JSON list of {"id", "claim", "quote", "section", ...provenance}."""
        return json.dumps(self.citations, ensure_ascii=False, indent=1) + "\n"
