"""Review: turn a quote match and a judge's answer into a verdict, gate every verdict with the AUTO_ACCEPT in
force for the model that answered, and order what goes to a person.

Rules (the gate, `gate`, is the only place auto vs review is decided, for every flow):
- The threshold in force (`in_force`): an explicit `AUTO_ACCEPT` for every model; else the answering
  model's entry in the calibration table (AUTO_ACCEPT_TABLE, default data/gate.json, written by
  `calibrate --model M --write`). No entry, or an entry whose threshold is 1 or more (calibrate found none
  reaching its target): no threshold is in force (None) and every verdict of that model goes to a person,
  the row saying why in `auto_note`; the flow says it once on stderr (`Gate.tell`), not once per row.
- `AUTO_ACCEPT=1` (a threshold of 1 or more) sends everything to a person: no row is automatic, not
  even a confidence of exactly 1.0 or a citation no model was asked about.
- A misquote is never automatic: the citation misstates the source whatever the judge says. Nor is a
  page a notice settled (retracted, withdrawn, expression of concern: `web.notices`), nor a supported
  verdict downgraded for a claim number the evidence does not state (`number_mismatch`).
- A citation no model was asked about (confidence null: a fabricated quote, settled by string
  matching; a dead link, a PDF, a homepage redirect, settled by the page) is automatic.
- Otherwise a verdict is automatic when a threshold is in force and its confidence >= it; else a person
  reviews. A guarded verdict has confidence 0, so it goes to a person at any threshold above 0.
- A contradiction has no rule of its own in the gate: it is gated by confidence like any verdict (the
  threshold `calibrate` measures is then the one in force); it leads the queue instead.
- The table is read once per run (`Gate.of`, at the entry point, passed down as the flows' `threshold`;
  `read_table` keeps what it read by path, mtime and size, so a library caller passing none reads it once
  too); a missing file is an empty table, a malformed one a ValueError naming the path. It is read as any
  outside file is (`source.text.read_file`: a regular file, bounded, checked on the open descriptor, so a
  FIFO is one line, never a hang) and JSON nested deeper than `source.text.MAX_DEPTH` is refused unparsed.
- The queue (`queue`): what the gate sends to a person, contradicted first, then lowest confidence first,
  then the citations no model was asked about; ties in (batch, id, url) order.
- The source-document verdict: a quote that is not in the source is `fabricated` (no model asked,
  confidence null); otherwise supports -> verified, contradicts -> contradicted, says_nothing -> unsupported.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..config import Settings
from ..matching import Match
from ..paths import shown
from ..source.text import MAX_DEPTH, decode, read_file, too_deep
from ..vocabulary import (CONTRADICTED, FABRICATED, MISQUOTED, MISSING, NUMBER_MISMATCH, SETTLING_NOTICES,
                          UNSUPPORTED_LANGUAGE, VERDICT_OF)

EVERYTHING_TO_A_PERSON = 1.0
"""The AUTO_ACCEPT that sends every citation to a person."""
ENTRY_KEYS = ("threshold", "precision", "interval", "n", "target", "date", "batch")
"""A calibration table entry's keys: {model: {threshold, precision, interval: [lo, hi], n, target, date,
batch}} (`calibrate --write`); `evaluate --write-gate` adds `method` and `command` (how to measure it
again)."""


def gate(confidence: float | None, threshold: float | None, *, misquoted: bool = False) -> bool:
    """True: accepted automatically; False: a person reviews (see module rules; threshold None: no
    AUTO_ACCEPT in force for the answering model)."""
    if threshold is not None and threshold >= EVERYTHING_TO_A_PERSON or misquoted:
        return False
    if confidence is None:
        return True
    return threshold is not None and confidence >= threshold


_READ: dict[tuple, dict] = {}
"""Tables already read, by (path, mtime, size): a run reads its table once; a rewritten file is read again."""


def read_table(path: Path) -> dict[str, dict]:
    """The calibration table at `path` ({} when there is no file); malformed: a ValueError naming the path."""
    try:
        stat = Path(path).stat()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ValueError(f"AUTO_ACCEPT_TABLE {shown(path)} cannot be read: {exc}") from None
    key = (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        _READ[key] = _parse_table(path)
    return {model: dict(entry) for model, entry in _READ[key].items()}


def _parse_table(path: Path) -> dict[str, dict]:
    name = f"AUTO_ACCEPT_TABLE {shown(path)}"
    try:
        text = decode(read_file(path, name), name)
    except OSError as exc:
        raise ValueError(f"{name} cannot be read: {exc.strerror or exc}") from None
    if too_deep(text):
        raise ValueError(f"{name} nests deeper than {MAX_DEPTH} levels; not read")
    try:
        table = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"AUTO_ACCEPT_TABLE {shown(path)} is not JSON: {exc}") from None
    if not isinstance(table, dict):
        raise ValueError(f"AUTO_ACCEPT_TABLE {shown(path)} must be an object {{model: entry}}")
    for model, entry in table.items():
        threshold = entry.get("threshold") if isinstance(entry, dict) else None
        if (not isinstance(threshold, (int, float)) or isinstance(threshold, bool)
                or not 0 <= threshold <= EVERYTHING_TO_A_PERSON):
            raise ValueError(f"AUTO_ACCEPT_TABLE {shown(path)}: the entry for {model!r} needs a threshold "
                             f"between 0 and 1, got {entry!r}")
    return table


def in_force(model: str | None, settings: Settings, table: dict[str, dict]) -> float | None:
    """The AUTO_ACCEPT for verdicts `model` answered: AUTO_ACCEPT when set, else the model's table entry
    below 1; None: no threshold in force (every verdict of the model goes to a person)."""
    if settings.auto_accept is not None:
        return settings.auto_accept
    threshold = table.get(model, {}).get("threshold") if model is not None else None
    return threshold if threshold is not None and threshold < EVERYTHING_TO_A_PERSON else None


@dataclass
class Gate:
    """The AUTO_ACCEPT of a run: the settings and the calibration table, read once (`of`) and passed down."""
    settings: Settings
    table: dict[str, dict] = field(default_factory=dict)
    told: dict = field(default_factory=dict, compare=False, repr=False)     # note -> the call that said it

    @classmethod
    def of(cls, settings: Settings) -> "Gate":
        """The run's gate; the table is not read when AUTO_ACCEPT is set (it overrides every entry)."""
        table = {} if settings.auto_accept is not None else read_table(settings.auto_accept_table)
        return cls(settings, table)

    def threshold(self, model: str | None) -> float | None:
        return in_force(model, self.settings, self.table)

    def shown(self, model: str | None) -> float:
        """The threshold to draw or print for `model` (1 when none is in force)."""
        threshold = self.threshold(model)
        return EVERYTHING_TO_A_PERSON if threshold is None else threshold

    def headline(self) -> str:
        """The gate in one line, for a page that shows verdicts of many models (the review queue)."""
        if self.settings.auto_accept is not None:
            return f"AUTO_ACCEPT = {self.settings.auto_accept:g}"
        calibrated = sum(1 for model in self.table if self.threshold(model) is not None)
        where = shown(self.settings.auto_accept_table)
        return f"AUTO_ACCEPT per model ({where}): " + (f"{calibrated} set" if calibrated else "none set, all to a person")

    def note(self, model: str | None) -> str:
        """Why no threshold is in force for `model` (a row's `auto_note`, the stderr line)."""
        where, name = shown(self.settings.auto_accept_table), model or "an unnamed model"
        entry = self.table.get(model) if model is not None else None
        if entry is not None:
            return (f"calibrated: no AUTO_ACCEPT reaches precision {entry.get('target')} for {name} in "
                    f"{where} ({entry.get('date')}): every verdict to a person; set AUTO_ACCEPT to override")
        return (f"uncalibrated: no AUTO_ACCEPT for {name} in {where}: run `calibrate --model {name} --write` "
                "or set AUTO_ACCEPT")

    def route(self, confidence: float | None, model: str | None, *, misquoted: bool = False) -> dict:
        """{auto, auto_note}: the gate at `model`'s threshold; the note says why when none is in force."""
        threshold = self.threshold(model)
        auto = gate(confidence, threshold, misquoted=misquoted)
        uncalibrated = threshold is None and confidence is not None and not misquoted
        return {"auto": auto, "auto_note": self.note(model) if uncalibrated else None}

    def tell(self, rows: Iterable[dict], flow: str) -> None:
        """One stderr line per note this gate has not told yet (once per run, not once per row), counting
        what the table shows: every row going to a person (misquotes, unjudged ones too), and how many of
        them the note is about when not all."""
        rows = list(rows)
        notes, token = [row.get("auto_note") for row in rows], object()
        to_a_person = sum(1 for row in rows if row.get("auto") is False)
        for note in dict.fromkeys(n for n in notes if n):
            if self.told.setdefault(note, token) is token:          # atomic: /verify's threads say it once
                count = notes.count(note)
                total = max(count, to_a_person)
                why = note if count == total else f"{count} of them {note}"
                verdicts = "verdict" if total == 1 else "verdicts"
                print(f"citecheck {flow}: {total} {verdicts} to a person, {why}", file=sys.stderr)


def gate_of(threshold: "float | Gate | None", settings: Settings | None = None) -> Gate:
    """What a flow's `threshold` argument means: a Gate as given, a number as AUTO_ACCEPT for every model,
    None as the run's own (`Gate.of(settings)`)."""
    if isinstance(threshold, Gate):
        return threshold
    if threshold is None:
        return Gate.of(settings or Settings())
    return Gate((settings or Settings()).replace(auto_accept=float(threshold)))


def decide(match: Match, answer: dict | None, threshold: "float | Gate") -> dict:
    """Verdict, confidence and the gate (`auto`, `auto_note`) for one source-document citation."""
    policy = gate_of(threshold)
    if match.status == MISSING or answer is None:
        return {"relation": None, "confidence": None, "verdict": FABRICATED, **policy.route(None, None)}
    confidence = round(float(answer["confidence"]), 4)
    return {"relation": answer["relation"], "confidence": confidence,
            "verdict": VERDICT_OF[answer["relation"]],
            **policy.route(confidence, answer.get("model"), misquoted=match.status == MISQUOTED)}


def held(row: dict) -> bool:
    """A live-web row that is never automatic: its carried text is misquoted, a notice settled it, its
    language is one the cookbook does not read (`unsupported_language`: a person who reads it decides), or
    a judge's supported was downgraded for a number (`number_mismatch`)."""
    reason = row.get("reason")
    return row.get("status") == MISQUOTED or reason in SETTLING_NOTICES or reason == UNSUPPORTED_LANGUAGE or (
        reason == NUMBER_MISMATCH and row.get("confidence") is not None)


def gated(row: dict, threshold: "float | Gate", model: str | None = None) -> dict:
    """A live-web row with its `auto` (and `auto_note`) set by the gate for the model that answered
    (`model`, else the row's own `model`); a `held` row is never automatic."""
    return {**row, **gate_of(threshold).route(row.get("confidence"), model or row.get("model"),
                                              misquoted=held(row))}


def needs_review(row: dict, threshold: "float | Gate | None") -> bool:
    """The gate, read the other way round: True when this row goes to a person (a Gate: at the threshold
    in force for the row's `model`; a number or None: at that threshold)."""
    misquoted = held(row)
    if isinstance(threshold, Gate):
        return not threshold.route(row.get("confidence"), row.get("model"), misquoted=misquoted)["auto"]
    return not gate(row.get("confidence"), threshold, misquoted=misquoted)


def review_share(rows: list[dict], thresholds: list[float]) -> list[dict]:
    """For each threshold: how many citations, and what share of all, would go to a person."""
    out = []
    for threshold in thresholds:
        n = sum(needs_review(row, threshold) for row in rows)
        share = round(n / len(rows), 4) if rows else 0.0
        out.append({"threshold": threshold, "to_review": n, "share": share})
    return out


def queue_key(row: dict) -> tuple:
    """The queue's order: contradicted first, then lowest confidence, then no model asked; ties by key."""
    label = row.get("label") or row.get("verdict")
    confidence = row.get("confidence")
    return (label != CONTRADICTED, confidence is None, confidence or 0.0,
            str(row.get("batch") or ""), str(row.get("id") or ""), str(row.get("url") or ""))


def queue(rows: Iterable[dict], threshold: float | None = None) -> list[dict]:
    """The rows a person must read, in the queue's order. With `threshold`, the gate decides which rows
    those are; without it, each row's own `auto` does (a row whose `auto` is unknown goes to a person)."""
    if threshold is None:
        waiting = [row for row in rows if not row.get("auto")]
    else:
        waiting = [row for row in rows if needs_review(row, threshold)]
    return sorted(waiting, key=queue_key)
