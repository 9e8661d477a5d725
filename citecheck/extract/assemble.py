"""Turn any reader's Parsed answer into the cookbook's inputs.

Rules:
- URL citations become batch claims `{"id": "c1", "claim", "urls"}`: one claim per sentence (or run of
  sentences a span covers), its URLs deduplicated in the order they are cited. A claim whose citations
  carry the text they quote (`Link.quote`) adds `"quotes": {url: [text, ...]}` (distinct texts, in order).
- Quoted document citations become check citations `{"id": "q1", "claim", "quote", "section", ...}`,
  one per citation (each has its own quote), followed by its provenance fields (document, range; `file`
  for a local file a Markdown answer names, whose entry's position `Extraction.files` keeps).
- A local file's citation (`extract.local`) carries its quote apart: the claim is the sentence(s) without
  the quoted passages its file citations were read from (`Quote.passage`, quote marks included); when
  nothing with content is left (the sentence is the quote), a quoting citation's claim is its quote, any
  other's the whole sentence.
- One claim string per sentence run, shared by every citation of it: memory per citation stays a pointer,
  however long the sentence (`Claims`).
- At most `max_markers` citations (ANSWER_MAX_MARKERS) are read, in the order of the text; the rest are one
  problem line (too_many_markers) counting them.
- Claims and citations come in the order of the text; a citation whose sentence is empty is reported
  (no_sentence) and skipped.
"""
from __future__ import annotations

from ..matching.normal import has_content
from ..source import language
from ..vocabulary import TOO_MANY_MARKERS
from . import sentences
from .parsed import Anchor, Extraction, Link, Parsed, Problem, Quote


class Claims:
    """The claim of each anchor (module rules): one string per sentence run, made once."""

    def __init__(self, found: sentences.Sentences, anchors: list[Anchor]):
        self.found = found
        self.cuts: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        self.made: dict = {}                               # indices (and (indices, None): uncut) -> claim
        for anchor in anchors:
            if isinstance(anchor.source, Quote) and anchor.source.passage:
                indices = found.covering(anchor.start, anchor.end)
                self.cuts.setdefault(indices, []).append(anchor.source.passage)

    def of(self, anchor: Anchor) -> tuple[tuple[int, ...], str]:
        """(the sentences the anchor cites, its claim: '' when there are none)."""
        indices = self.found.covering(anchor.start, anchor.end)
        if not indices:
            return indices, ""
        if indices not in self.made:
            self.made[indices] = self.found.claim(indices, sorted(set(self.cuts.get(indices, ()))))
        claim = self.made[indices]
        if has_content(claim) or indices not in self.cuts:
            return indices, claim
        if isinstance(anchor.source, Quote) and anchor.source.passage:
            return indices, anchor.source.quote
        if (indices, None) not in self.made:              # a claim beside the quotes: the whole sentence
            self.made[(indices, None)] = self.found.claim(indices)
        return indices, self.made[(indices, None)]


def capped(anchors: list[Anchor], max_markers: int | None) -> tuple[list[Anchor], list[Problem]]:
    """The first `max_markers` anchors in the order of the text, and a problem line for the rest."""
    ordered = sorted(anchors, key=lambda a: (a.start, a.end))
    if max_markers is None or len(ordered) <= max_markers:
        return ordered, []
    return ordered[:max_markers], [Problem(
        ordered[max_markers].where, TOO_MANY_MARKERS,
        f"{len(ordered) - max_markers:,} more citations from here on, over the {max_markers:,} read from "
        "one answer (ANSWER_MAX_MARKERS): not extracted or checked")]


def assemble(fmt: str, parsed: Parsed, max_markers: int | None = None) -> Extraction:
    found = sentences.Sentences(parsed.text, language.detect(parsed.text))
    anchors, problems = capped(parsed.anchors, max_markers)
    problems = list(parsed.problems) + problems
    claims = Claims(found, anchors)
    grouped: dict[tuple[int, ...], list[str]] = {}
    quoted: dict[tuple[int, ...], dict[str, list[str]]] = {}
    citations: list[dict] = []
    for anchor in anchors:
        indices, text = claims.of(anchor)
        if not text:
            problems.append(Problem(anchor.where, "no_sentence", "the citation is attached to no sentence; "
                                                                 "skipped"))
            continue
        if isinstance(anchor.source, Link):
            urls = grouped.setdefault(indices, [])
            if anchor.source.url not in urls:
                urls.append(anchor.source.url)
            if anchor.source.quote:
                texts = quoted.setdefault(indices, {}).setdefault(anchor.source.url, [])
                texts.extend([anchor.source.quote] * (anchor.source.quote not in texts))
        else:
            citations.append({"id": f"q{len(citations) + 1}", "claim": text, "quote": anchor.source.quote,
                              "section": anchor.source.section, **dict(anchor.source.provenance)})
    batch = [{"id": f"c{n}", "claim": found.claim(indices), "urls": urls,
              **({"quotes": quoted[indices]} if indices in quoted else {})}
             for n, (indices, urls) in enumerate(sorted(grouped.items()), 1)]
    return Extraction(fmt, batch, citations, problems, dict(parsed.files))
