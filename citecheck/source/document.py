"""A source document: its text and the sections citations name (what every reader of a source returns)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Document:
    name: str
    text: str
    sections: dict[str, Section]

    def summary(self, citations: int | None = None) -> str:
        """'N characters, M numbered sections[, K citations]' (appendices are not numbered); a
        document without numbered headings says 'M sections'."""
        numbered = sum(1 for key in self.sections if key[:1].isdigit())
        counted = f"{numbered} numbered sections" if numbered else f"{len(self.sections)} sections"
        parts = [f"{len(self.text):,} characters", counted]
        if citations is not None:
            parts.append(f"{citations} citations")
        return ", ".join(parts)
