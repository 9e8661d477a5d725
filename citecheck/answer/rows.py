"""The answer report's rows and numbers: per marker, per sentence, per answer.

Rules:
- A marker row (`MarkerRow`) is its source's verdict (`checks.Checked`) with the marker's id, position,
  sentence (1-based; null for a marker that points nowhere) and claim.
- A sentence row (`SentenceRow`) is `cited` when a marker cites it; else `uncited` when it asserts a
  checkable fact (`uncited.asserts_fact`), else `no_claim`. A cited sentence lists its markers in order,
  `supported_by` (the ones whose source supports it) and its `label`, `aggregate.overall` of its markers'
  labels (any contradicted first; `unchecked` and `no_source` markers carry none); `note` says which of
  its sources support it and what the others said ("supported by m2 (source 2 of 2); not by m1:
  unreachable (http_404)").
- Citation precision = markers whose source supports their sentence / markers checked (every marker but
  `unchecked` ones: a marker pointing nowhere counts against the answer). Citation recall = sentences
  supported by at least one of their sources / sentences that needed a citation (uncited ones, and cited
  ones with at least one marker checked).
  Either is null when its denominator is 0; printed like batch's lines: `citation_precision=0.4286 (3/7)`.
- An uncited sentence's `found_in` lists the answer's own sources that support it (it did not cite them),
  and its `note` what they said (`own_sources`); `own` holds every question and the budget line.
- Problems: one line each, in this order: the answer's reading problems (with their positions; a
  dangling marker is said once, as its marker's line), every marker whose source does not support its
  sentence or whose quote is misquoted (with the diff), every cited sentence none of whose sources
  supports it, every uncited claim (with what the answer's sources said of it).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, replace

from ..verdict.aggregate import overall
from ..vocabulary import (CITED, LABELS, MARKER_LABELS, MISQUOTED, NO_CLAIM, NO_SOURCE, SENTENCE_KINDS,
                          SUPPORTED, UNCHECKED, UNCITED)
from .checks import Checked
from .own_sources import OwnSources
from .read import DANGLING, Read
from .uncited import asserts_fact


@dataclass(frozen=True)
class MarkerRow:
    id: str
    sentence: int | None
    where: str
    claim: str
    source: str | None
    label: str
    reason: str | None
    confidence: float | None
    evidence_quote: str | None
    quote: str | None
    status: str | None
    diff: str | None
    auto: bool | None
    method: str | None


@dataclass(frozen=True)
class SentenceRow:
    sentence: int
    text: str
    kind: str
    markers: list[str]
    supported_by: list[str]
    label: str | None
    note: str | None
    found_in: list[str] = field(default_factory=list)    # uncited: the answer's sources that support it


UNCITED_NOTE = "asserts a checkable fact and cites nothing"


def ratio_line(name: str, hits: int, total: int) -> str:
    """`name=0.4286 (3/7)`, or `name=n/a (0/0)`."""
    value = f"{hits / total:.4f}" if total else "n/a"
    return f"{name}={value} ({hits}/{total})"


@dataclass
class AnswerReport:
    """One answer's report (module rules); `to_dict()` is the JSON."""
    answer: str
    format: str
    markers: list[MarkerRow]
    sentences: list[SentenceRow]
    reading: list[str] = field(default_factory=list)      # the answer's reading problems, by position
    own: OwnSources = field(default_factory=OwnSources)   # the uncited sentences asked of its own sources

    def counts(self) -> dict:
        labels = Counter(m.label for m in self.markers)
        kinds = Counter(s.kind for s in self.sentences)
        return {"sentences": len(self.sentences), **{k: kinds[k] for k in SENTENCE_KINDS},
                "markers": len(self.markers), **{label: labels[label] for label in MARKER_LABELS}}

    def precision(self) -> tuple[int, int]:
        checked = [m for m in self.markers if m.label != UNCHECKED]
        return sum(m.label == SUPPORTED for m in checked), len(checked)

    def recall(self) -> tuple[int, int]:
        checked = {m.id for m in self.markers if m.label != UNCHECKED}
        needing = [s for s in self.sentences if s.kind == UNCITED or checked.intersection(s.markers)]
        return sum(bool(s.supported_by) for s in needing), len(needing)

    def bad_input(self) -> bool:
        """Whether the answer had a reading problem (a marker pointing nowhere is one)."""
        return bool(self.reading) or any(m.label == NO_SOURCE for m in self.markers)

    def lines(self) -> list[str]:
        """The two headline lines: citation precision and citation recall."""
        return [ratio_line("citation_precision", *self.precision()),
                ratio_line("citation_recall", *self.recall())]

    def problems(self) -> list[str]:
        out = list(self.reading)
        for m in self.markers:
            if m.label != SUPPORTED or m.status == MISQUOTED:
                where = f"sentence {m.sentence}" if m.sentence else m.where
                why = "".join(f", {part}" for part in (m.reason, m.diff and f"misquoted: {m.diff}") if part)
                out.append(f"{m.id} ({where}) -> {m.source or 'no source'}: {m.label}{why}")
        for s in self.sentences:
            if s.kind == CITED and not s.supported_by:
                out.append(f"sentence {s.sentence}: none of its sources supports it: {s.text}")
            elif s.kind == UNCITED:
                out.append(f"sentence {s.sentence}: an uncited claim ({self.own.note(s.sentence)}): {s.text}")
        return out

    def with_own(self, own: OwnSources) -> "AnswerReport":
        """This report with what the answer's own sources said of its uncited sentences."""
        sentences = [replace(s, found_in=own.found_in(s.sentence),
                             note=f"{UNCITED_NOTE}; {own.note(s.sentence)}") if s.kind == UNCITED else s
                     for s in self.sentences]
        return replace(self, sentences=sentences, own=own)

    def to_dict(self) -> dict:
        (hits, checked), (supported, needing) = self.precision(), self.recall()
        summary = {**self.counts(),
                   "citation_precision": round(hits / checked, 4) if checked else None,
                   "precision_of": [hits, checked],
                   "citation_recall": round(supported / needing, 4) if needing else None,
                   "recall_of": [supported, needing]}
        return {"answer": self.answer, "format": self.format, "summary": summary,
                "markers": [asdict(m) for m in self.markers],
                "sentences": [asdict(s) for s in self.sentences],
                "uncited_checks": self.own.to_dict(),
                "problems": self.problems()}


def _note(markers: list[MarkerRow]) -> str:
    """Which of a sentence's sources support it, and what the others said."""
    def said(m: MarkerRow) -> str:
        return f"{m.id}: {m.label}" + (f" ({m.reason})" if m.reason else "")
    n = len(markers)
    support = [f"{m.id} (source {k} of {n})" for k, m in enumerate(markers, 1) if m.label == SUPPORTED]
    others = [said(m) for m in markers if m.label != SUPPORTED]
    if not support:
        return ("its one source does not support it: " if n == 1 else f"none of its {n} sources supports it: "
                ) + "; ".join(others)
    return "supported by " + ", ".join(support) + ("; not by " + "; ".join(others) if others else "")


def build(name: str, read: Read, checked: dict[str, Checked]) -> AnswerReport:
    """The report of `read` with each marker's `checked` verdict (module rules)."""
    markers = [MarkerRow(m.id, m.sentences[0] + 1 if m.sentences else None, m.where, m.claim,
                         **asdict(checked[m.id])) for m in read.markers]
    by_sentence: dict[int, list[MarkerRow]] = {}
    for m, row in zip(read.markers, markers):
        for index in m.sentences:
            by_sentence.setdefault(index, []).append(row)
    sentences = []
    for index in range(len(read.spans)):
        text, cited = read.sentence(index), by_sentence.get(index, [])
        if cited:
            labels = [m.label for m in cited if m.label in LABELS]
            sentences.append(SentenceRow(index + 1, text, CITED, [m.id for m in cited],
                                         [m.id for m in cited if m.label == SUPPORTED],
                                         overall(labels) if labels else None, _note(cited)))
        else:
            kind = UNCITED if asserts_fact(text) else NO_CLAIM
            note = UNCITED_NOTE if kind == UNCITED else None
            sentences.append(SentenceRow(index + 1, text, kind, [], [], None, note))
    reading = [str(p) for p in read.problems if p.kind != DANGLING]       # a dangling marker is a row
    return AnswerReport(name, read.format, markers, sentences, reading)
