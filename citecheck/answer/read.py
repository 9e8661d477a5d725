"""An answer as the report reads it: its sentences, and each marker with its source and the sentence(s) it
cites.

Rules:
- The answer is read by its format's `extract` reader (detected with `auto`); its sentences are
  `extract.sentences`' (pysbd), and a marker cites the sentence(s) `extract.sentences.covering` gives, as
  `extract` does: a marker is one citation of the answer (one `[n]`, one Anthropic citation, one OpenAI
  annotation; `[1][2]` is two).
- Markers are numbered m1, m2, … in the order of the text. A marker that points at no source (the reader's
  `dangling_marker` problem, e.g. `[7]` with six sources) is a marker too, labelled `no_source` by the
  report, numbered after the others, with the reader's position and no sentence.
- A marker's claim is `extract.assemble.Claims`' (a local file's quoted passage left out; one string per
  sentence run, shared). At most `max_markers` markers (ANSWER_MAX_MARKERS, dangling ones included) are
  read, in the order of the text; the rest are one problem line.
- Every reading problem is kept with its position; a citation attached to no sentence is one more.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..extract import MAX_MARKERS, READERS, AnswerError, Problem, detect, sentences
from ..extract.assemble import Claims, capped
from ..extract.parsed import Documents, Link, Quote

DANGLING = "dangling_marker"
"""The readers' problem kind for a marker with no source."""


@dataclass(frozen=True)
class Marker:
    """One citation of the answer. `source` None: it points at no source."""
    id: str
    where: str
    sentences: tuple[int, ...]          # 0-based indices into Read.spans; () for a dangling marker
    claim: str                          # the text of those sentences ('' for a dangling marker)
    source: Link | Quote | None
    message: str | None = None          # the reader's words for a dangling marker


@dataclass
class Read:
    format: str
    found: sentences.Sentences          # the prose and its sentences
    markers: list[Marker]
    problems: list[Problem]
    files: dict[str, str] = field(default_factory=dict)   # local files cited -> where the answer names them

    @property
    def prose(self) -> str:
        return self.found.text

    @property
    def spans(self) -> list[tuple[int, int]]:
        return self.found.spans

    def sentence(self, index: int) -> str:
        return self.found.claim((index,))


def read(text: str, fmt: str = "auto", documents: Documents = (), max_markers: int = MAX_MARKERS) -> Read:
    """The answer's sentences, markers and problems (module rules); AnswerError if it cannot be read."""
    name = detect(text) if fmt == "auto" else fmt
    if name not in READERS:
        raise AnswerError(f"unknown answer format {fmt!r}; use one of {', '.join(READERS)}")
    parsed = READERS[name].parse(text, documents)
    found = sentences.Sentences(parsed.text)
    dangling = [problem for problem in parsed.problems if problem.kind == DANGLING]
    anchors, over = capped(parsed.anchors, max_markers - min(len(dangling), max_markers // 2))
    dangling = dangling[:max_markers - len(anchors)]
    claims = Claims(found, anchors)
    markers: list[Marker] = []
    problems = list(parsed.problems) + over
    for anchor in anchors:
        indices, claim = claims.of(anchor)
        if not claim:
            problems.append(Problem(anchor.where, "no_sentence",
                                    "the citation is attached to no sentence; skipped"))
            continue
        markers.append(Marker(f"m{len(markers) + 1}", anchor.where, indices, claim, anchor.source))
    for problem in dangling:
        markers.append(Marker(f"m{len(markers) + 1}", problem.where, (), "", None, problem.message))
    return Read(name, found, markers, problems, dict(parsed.files))
