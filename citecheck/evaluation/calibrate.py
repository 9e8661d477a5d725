"""calibrate: choose AUTO_ACCEPT from the reviewers' own labels in the audit DB, the way notebook 04 does.

Rules:
- Labels: every audited citation with a current review (`audit.reviews`) and a model confidence (the
  only ones the threshold decides; a misquote, never automatic, is left out). A verdict is correct when
  the reviewer's label is the judged one (a confirmation), wrong when they corrected it.
- Split by a fixed rule that never moves a row: the sha256 of (batch, id, url), even -> tune, odd ->
  report. The threshold is chosen on tune only, with `evaluation.choose_threshold` (the smallest observed
  confidence whose accepted verdicts reach the target with at least MIN_ACCEPTED of them accepted).
- Reported on the report half: accepted, right, precision with its 95 % Wilson interval and a bootstrap
  range (BOOTSTRAP resamples of the report half, fixed seed, 2.5-97.5 percentiles), and the review share
  the threshold implies, there and over every decided citation in scope.
- No threshold reaching the target on tune -> `AUTO_ACCEPT=1` (everything to a person) and the reason.
- Fewer labelled rows than 2 x MIN_ACCEPTED, or a half with fewer than MIN_ACCEPTED -> an error saying how
  many it has and how many it needs.
- `--model M` uses only the rows model M decided (the audit's `model`), and says which AUTO_ACCEPT is in
  force for M now (`review.in_force`); `--write` then records the result in the calibration table
  (AUTO_ACCEPT_TABLE, `review.read_table`; other models' entries kept, the file replaced atomically):
  {M: {threshold (1 when none reaches the target), precision and interval (the report half's accepted
  verdicts, Wilson 95 %; null when none), n (labels used), target, date (UTC), batch (null: every batch)}}.
  The flows then gate M's verdicts by it unless AUTO_ACCEPT is set.
- The table is never written through a symbolic link: a link at AUTO_ACCEPT_TABLE is refused (one line),
  neither replaced by a file nor followed to a file elsewhere (a link planted in a shared checkout must not
  redirect a write); point AUTO_ACCEPT_TABLE at the real file. Everything printed passes `config.printable`
  (model names and labels come from the audit DB and the command line).
- A row whose stored confidence is not a number in [0, 1] (`audit.confidence_problem`) is never a label:
  it is skipped, `calibrate` says so in one stderr line, and the review share counts it as to review.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import audit, evaluation, files
from ..audit import reviews
from ..config import printable
from ..context import RunContext
from ..paths import shown
from ..verdict.review import EVERYTHING_TO_A_PERSON, Gate, gate, read_table
from ..vocabulary import MISQUOTED

BOOTSTRAP = 2000
SEED = 15


def split_of(row: dict) -> str:
    """tune or report, from the row's key alone (see module rules)."""
    digest = hashlib.sha256("\x1f".join((row["batch"], row["id"], row["url"])).encode("utf-8")).digest()
    return evaluation.SPLITS[digest[-1] % 2]


def labelled(conn, batch: str | None = None, model: str | None = None,
             skipped: list | None = None) -> list[dict]:
    """The reviewed rows the threshold decides (of `model` when given), each with `correct` and `split`;
    rows with an invalid confidence are left out and appended to `skipped`."""
    rows = [r for r in reviews.reviewed(conn, batch) if r["confidence"] is not None
            and r["status"] != MISQUOTED and (model is None or r["model"] == model)]
    valid = [audit.confidence_problem(r["confidence"]) is None for r in rows]
    if skipped is not None:
        skipped += [r for r, ok in zip(rows, valid) if not ok]
    rows = [r for r, ok in zip(rows, valid) if ok]
    return [{**r, "correct": r["reviewed_label"] == r["label"], "split": split_of(r)} for r in rows]


def bootstrap(confidence: list[float], correct: list[bool], threshold: float, n: int = BOOTSTRAP,
              seed: int = SEED) -> tuple[float, float] | None:
    """2.5-97.5 percentile range of the accepted precision over `n` resamples (None: nothing accepted)."""
    rng, pairs, values = random.Random(seed), list(zip(confidence, correct)), []
    for _ in range(n):
        sample = [pairs[rng.randrange(len(pairs))] for _ in pairs]
        point = evaluation.at_threshold([c for c, _ in sample], [ok for _, ok in sample], threshold)
        if point["accepted"]:
            values.append(point["accepted_accuracy"])
    if not values:
        return None
    values.sort()
    return values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]


@dataclass
class Calibration:
    target: float
    min_accepted: int
    tune: int
    report: int
    threshold: float | None                   # None: no threshold reaches the target -> AUTO_ACCEPT=1
    best: dict                                # evaluation.best_reachable on tune
    point: dict = field(default_factory=dict)  # evaluation.at_threshold on report
    wilson: tuple[float, float] | None = None
    bootstrap: tuple[float, float] | None = None
    in_scope: int = 0                         # decided citations in scope (batch or all)
    to_review: int = 0                        # of those, sent to a person at the chosen AUTO_ACCEPT
    from_queue: int = 0                       # labelled rows the gate had sent to a person when decided

    @property
    def auto_accept(self) -> float:
        return EVERYTHING_TO_A_PERSON if self.threshold is None else self.threshold


def calibrate(conn, *, batch: str | None = None, model: str | None = None,
              target: float = evaluation.TARGET_PRECISION,
              min_accepted: int = evaluation.MIN_ACCEPTED, skipped: list | None = None) -> Calibration:
    """Choose and report AUTO_ACCEPT (see module rules); ValueError when there are too few labels. Rows
    left out for an invalid confidence are appended to `skipped` (also when it then raises)."""
    skipped = [] if skipped is None else skipped
    rows = labelled(conn, batch, model, skipped)
    halves = {s: [r for r in rows if r["split"] == s] for s in evaluation.SPLITS}
    scope = (f"in batch {batch}" if batch else "in the audit DB") + (f" for model {model}" if model else "")
    if len(rows) < 2 * min_accepted or min(map(len, halves.values())) < min_accepted:
        raise ValueError(f"calibrate needs at least {2 * min_accepted} reviewed citations with a model "
                         f"confidence, {min_accepted} in each half; {scope} there are {len(rows)} "
                         f"({len(halves['tune'])} tune, {len(halves['report'])} report): "
                         "review more in /review")
    result = measure(halves["tune"], halves["report"], target, min_accepted)
    result.from_queue = sum(r["auto"] == 0 or r["auto"] is None for r in rows)
    scoped = [("batch = ?", batch)] * bool(batch) + [("model = ?", model)] * bool(model)
    where = "WHERE " + " AND ".join(c for c, _ in scoped) if scoped else ""
    decided = conn.execute(f"SELECT confidence, status FROM citations {where}",
                           [value for _, value in scoped]).fetchall()
    result.in_scope = len(decided)
    result.to_review = sum(audit.confidence_problem(c) is not None
                           or not gate(c, result.auto_accept, misquoted=s == MISQUOTED) for c, s in decided)
    return result


def measure(tune: list[dict], report: list[dict], target: float = evaluation.TARGET_PRECISION,
            min_accepted: int = evaluation.MIN_ACCEPTED) -> Calibration:
    """The threshold chosen on `tune` and its precision on `report` (rows with `confidence`, `correct`)."""
    conf, ok = [r["confidence"] for r in tune], [r["correct"] for r in tune]
    result = Calibration(target, min_accepted, len(tune), len(report),
                         evaluation.choose_threshold(conf, ok, target, min_accepted),
                         evaluation.best_reachable(conf, ok, min_accepted))
    if result.threshold is not None:
        conf, ok = [r["confidence"] for r in report], [r["correct"] for r in report]
        result.point = evaluation.at_threshold(conf, ok, result.threshold)
        if result.point["accepted"]:
            result.wilson = evaluation.wilson(result.point["accepted_correct"], result.point["accepted"])
        result.bootstrap = bootstrap(conf, ok, result.threshold)
    return result


def skipped_line(rows: list[dict]) -> str:
    """The one stderr line naming the reviewed rows left out for an invalid confidence."""
    first = rows[0]
    return (f"calibrate: skipped {len(rows)} reviewed row{'s' * (len(rows) != 1)} with an invalid confidence "
            f"(first: batch {first['batch']!r}, id {first['id']!r}, url {first['url']!r}: "
            f"{audit.confidence_problem(first['confidence'])})")


def _share(n: int, total: int) -> str:
    return f"{n}/{total} ({n / total:.1%})" if total else "0/0"


def report_lines(result: Calibration) -> list[str]:
    """What `calibrate` prints: the AUTO_ACCEPT line first, then why and what it costs."""
    lines = [f"AUTO_ACCEPT={result.auto_accept:g}"]
    head = (f"labels: {result.tune + result.report} reviewed citations ({result.tune} tune, {result.report} "
            f"report; split by sha256 of batch, id, url); target precision {result.target:g} with at least "
            f"{result.min_accepted} accepted")
    if result.threshold is None:
        best = result.best
        why = (f"the best any threshold reaches is {best['accepted_accuracy']:.3f} (at {best['threshold']:g})"
               if best["threshold"] is not None else f"no threshold accepts {result.min_accepted} verdicts")
        lines += [f"reason: no threshold reaches {result.target:g} on the tune half: {why}; every verdict "
                  "goes to a person", head]
    else:
        p = result.point
        precision = (f"precision {p['accepted_accuracy']:.3f} (95 % Wilson {result.wilson[0]:.3f}-"
                     f"{result.wilson[1]:.3f}; bootstrap {result.bootstrap[0]:.3f}-{result.bootstrap[1]:.3f})"
                     if p["accepted"] else "precision n/a: the report half accepts none")
        lines += [head, f"chosen on tune: {result.threshold:g}",
                  f"report half: {p['accepted']} accepted, {p['accepted_correct']} right: {precision}; "
                  f"to review {_share(p['review'], result.report)}"]
    lines.append(f"review share at AUTO_ACCEPT={result.auto_accept:g}: "
                 f"{_share(result.to_review, result.in_scope)} of the decided citations in scope")
    if result.from_queue == result.tune + result.report:
        lines.append("note: every label came from the queue (verdicts the gate doubted); review some "
                     "automatically accepted ones too (view 'accepted automatically'), or the threshold is "
                     "measured on the doubtful verdicts only")
    return lines


def entry(result: Calibration, batch: str | None) -> dict:
    """The calibration table's entry for this result (see module rules)."""
    p = result.point
    return {"threshold": result.auto_accept,
            "precision": round(p["accepted_accuracy"], 4) if p.get("accepted") else None,
            "interval": [round(x, 4) for x in result.wilson] if result.wilson else None,
            "n": result.tune + result.report, "target": result.target,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "batch": batch}


def write_entry(path: Path, model: str, new: dict) -> None:
    """Record `model`'s entry in the table at `path` (a malformed table is an error, never overwritten; a
    symbolic link is refused, never replaced nor written through: see module rules)."""
    if Path(path).is_symlink():
        raise ValueError(f"AUTO_ACCEPT_TABLE {shown(path)} is a symbolic link: not replaced; point "
                         "AUTO_ACCEPT_TABLE at the file itself")
    table = {**read_table(path), model: new}
    path.parent.mkdir(parents=True, exist_ok=True)
    files.replace_file(path, lambda out: out.write(json.dumps(table, indent=1, sort_keys=True) + "\n"))


# ---------------------------------------------------------------- CLI: python -m citecheck calibrate

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--audit-db", help="the audit DB (default: AUDIT_DB, else audit.db)")
    parser.add_argument("--batch", help="only this batch's reviews (default: every batch)")
    parser.add_argument("--target", type=float, default=evaluation.TARGET_PRECISION,
                        help="precision the accepted verdicts must reach "
                             f"(default {evaluation.TARGET_PRECISION})")
    parser.add_argument("--model", help="only the verdicts this model answered (the audit's model column)")
    parser.add_argument("--write", action="store_true",
                        help="record the result for --model in the calibration table (AUTO_ACCEPT_TABLE, "
                             "default data/gate.json): the flows then gate that model's verdicts by it")


def run(args: argparse.Namespace, ctx: RunContext) -> int:
    """Print the AUTO_ACCEPT line and its report; too few labels or a missing DB is a one-line error."""
    if not 0 < args.target <= 1:
        raise ValueError(f"--target must be between 0 and 1, got {args.target}")
    if args.write and not args.model:
        raise ValueError("--write needs --model: the table holds one AUTO_ACCEPT per model")
    table_path = ctx.settings.auto_accept_table
    before = Gate.of(ctx.settings.replace(auto_accept=None)) if args.model else None
    path = Path(args.audit_db) if args.audit_db else ctx.settings.journal
    if not path.is_file():
        raise FileNotFoundError(f"audit DB {path} does not exist: pass --audit-db or set AUDIT_DB")
    conn = audit.connect(path)
    skipped: list = []
    try:
        result = calibrate(conn, batch=args.batch, model=args.model, target=args.target, skipped=skipped)
    finally:
        conn.close()
        if skipped:
            print(printable(skipped_line(skipped)), file=sys.stderr)
    print(printable("\n".join(report_lines(result)), lines=True))
    if before is not None:
        now = before.threshold(args.model)
        held = f"AUTO_ACCEPT={now:g} ({shown(table_path)})" if now is not None else before.note(args.model)
        print(printable(f"in force for {args.model} now: {held}"))
        if ctx.settings.auto_accept is not None:
            print(f"note: AUTO_ACCEPT={ctx.settings.auto_accept:g} is set: it overrides the table for every "
                  "model")
    if args.write:
        write_entry(table_path, args.model, entry(result, args.batch))
        print(printable(f"wrote {shown(table_path)}: {args.model} AUTO_ACCEPT={result.auto_accept:g}"))
    return 0
