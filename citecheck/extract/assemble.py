"""Turn any reader's Parsed answer into the cookbook's inputs.

Rules:
- URL citations become batch claims `{"id": "c1", "claim", "urls"}`: one claim per sentence (or run of
  sentences a span covers), its URLs deduplicated in the order they are cited. A claim whose citations
  carry the text they quote (`Link.quote`) adds `"quotes": {url: [text, ...]}` (distinct texts, in order).
- Quoted document citations become check citations `{"id": "q1", "claim", "quote", "section", ...}`,
  one per citation (each has its own quote), followed by its provenance fields (document, range; `file`
  for a local file a Markdown answer names, whose entry's position `Extraction.files` keeps).
- Claims and citations come in the order of the text; a citation whose sentence is empty is reported
  (no_sentence) and skipped.
"""
from __future__ import annotations

from . import sentences
from .parsed import Extraction, Link, Parsed, Problem


def assemble(fmt: str, parsed: Parsed) -> Extraction:
    found = sentences.Sentences(parsed.text)
    problems = list(parsed.problems)
    grouped: dict[tuple[int, ...], list[str]] = {}
    quoted: dict[tuple[int, ...], dict[str, list[str]]] = {}
    citations: list[dict] = []
    for anchor in sorted(parsed.anchors, key=lambda a: (a.start, a.end)):
        indices = found.covering(anchor.start, anchor.end)
        text = found.claim(indices) if indices else ""
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
    claims = [{"id": f"c{n}", "claim": found.claim(indices), "urls": urls,
               **({"quotes": quoted[indices]} if indices in quoted else {})}
              for n, (indices, urls) in enumerate(sorted(grouped.items()), 1)]
    return Extraction(fmt, claims, citations, problems, dict(parsed.files))
