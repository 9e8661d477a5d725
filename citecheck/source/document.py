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
        parts = [count(len(self.text), "character"), self.divisions()]
        if citations is not None:
            parts.append(count(citations, "citation"))
        return ", ".join(parts)

    def divisions(self) -> str:
        """'M numbered sections', or 'M sections' when no heading is numbered."""
        numbered = sum(1 for key in self.sections if key[:1].isdigit())
        return count(numbered, "numbered section") if numbered else count(len(self.sections), "section")


def count(n: int, noun: str) -> str:
    """'1 citation', '2 citations', '58,357 characters'."""
    return f"{n:,} {noun}{'s' * (n != 1)}"
