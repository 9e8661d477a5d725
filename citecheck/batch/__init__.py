"""batch: verify a JSONL file of claims and measure how often the citations hold up.

Rules:
- One {"id", "claim", "urls"} object per line (`batch.claims`), or an LLM answer whose cited URLs are
  the claims (`batch.inputs`); every claim-URL pair is one citation. The texts a citation carries (the
  line's "quotes": Anthropic's cited_text, a Perplexity snippet) go to `verify` with it, which matches
  them on the fetched page before any judge is asked; the journal keeps them in `quote`.
- citation precision and reachable precision (`batch.precision`).
- A malformed line is reported by its number and skipped, the other lines still run; a citation
  whose check fails becomes a labelled row, never an aborted batch.
- The audit DB is the journal: a citation already decided in this batch (same id, url, claim and carried
  texts, and answered by a model this run asks, JUDGE_MODEL or `choice_model`, or one this run's cache
  named as answering, or by none: the page settled it) is read back, not redone, `method` included, so a
  killed batch resumes where it stopped. A row whose reason is transient (`vocabulary.TRANSIENT`: the crawl
  or the judge could not be reached) is tried again, and so is a robots_disallowed row decided
  ROBOTS_MAX_AGE ago or more. A redone citation whose verdict comes back unchanged (a judge answering
  under another name, replayed from the cache) keeps its journal row, `decided_at` and reviews included. The journal's `model` and `method` are the ones that answered (`verify_citation`).
- At most BATCH_CONCURRENCY citations are in flight (`batch.pool`), or, with --cluster, outside calls
  across the cluster's workers (`batch.cluster`); rows are written by the calling thread only. The CSV
  report is `batch.report_csv`; `--report` writes the HTML one (`report_html`).
- Every row carries the gate's `auto` (`review.gated`, at the threshold in force for the model that
  answered; `threshold` is `review.gate_of`'s, None: the run's) and `auto_note`; a row read back from the
  journal is gated again (for its journal `model`), and its `auto` updated in the journal when the threshold
  changed. `batch` says once on stderr why verdicts went to a person uncalibrated. The audit row also keeps
  the passages the judge read.
- `--fail-under X [--on citation|reachable]` is the CI gate (`ci_gate`: exit 3 below X, after printing).

Imports: everything below the flows, `extract` (an answer as input) and `verify` (each citation).
"""
from __future__ import annotations

import collections
import datetime as _dt
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import audit
from ..context import RunContext
from ..extract.command import report
from ..verdict import ci_gate
from ..verdict.aggregate import overall
from ..verdict.precision import counts, precision_lines, ratios
from ..verdict.review import Gate, gate_of, gated
from ..vocabulary import ROBOTS_DISALLOWED, BatchRow, is_transient
from ..web import netguard
from .citation import Verify, check_one
from .claims import Claim, Parsed, parse_lines, read_claims
from .inputs import INPUT_FORMATS, read_input
from .pool import interleaved, run_pool
from .report_csv import CSV_COLUMNS, write_csv

__all__ = ["BatchResult", "Claim", "Parsed", "CSV_COLUMNS", "check_claims", "check_one", "counts",
           "parse_lines", "precision_lines", "read_claims", "run_batch", "write_csv"]

log = logging.getLogger(__name__)


@dataclass
class BatchResult:
    rows: list[dict]                      # one BatchRow dict per citation, in input order
    problems: list[str]                   # "line N: ..." for every skipped line
    reused: int = 0                       # citations read back from the journal
    decided: int = 0                      # citations checked in this run
    counts: dict = field(default_factory=dict)
    model: str | None = None              # the model that answered most of the citations (None: no model)


def _fresh(row: dict | None, claim: Claim, quote: str | None, models: set[str],
           robots_max_age: float) -> bool:
    return (row is not None and row["claim"] == claim.claim and row["model"] in models
            and (row.get("quote") or None) == quote and not is_transient(row["reason"])
            and not _robots_expired(row, robots_max_age))


def _robots_expired(row: dict, max_age: float) -> bool:
    """A robots_disallowed row stands ROBOTS_MAX_AGE from its decision; then its URL is checked again."""
    if row["reason"] != ROBOTS_DISALLOWED:
        return False
    utc = _dt.timezone.utc
    decided = _dt.datetime.strptime(row["decided_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=utc)
    return (_dt.datetime.now(utc) - decided).total_seconds() >= max_age


VERDICT_KEYS = ("claim", "quote", "label", "reason", "confidence", "evidence_quote", "model", "method",
                "status")
"""What a redone citation must repeat for its journal row to stand (module rules)."""


def _unchanged(row: dict | None, result: dict) -> bool:
    return row is not None and all((row.get(k) or None) == (result.get(k) or None) for k in VERDICT_KEYS)


def _progress(total: int, show: bool):
    from tqdm import tqdm
    return tqdm(total=total, unit="citation", file=sys.stderr, leave=False,
                disable=not (show and sys.stderr.isatty()))


def run_batch(path: str | Path, ctx: RunContext, *, batch: str | None = None, db: str | Path | None = None,
              verify: Verify | None = None, concurrency: int | None = None,
              progress: bool = False, threshold: float | Gate | None = None, fmt: str = "auto",
              cluster: str | None = None) -> BatchResult:
    """Read the claims file or answer (`fmt`: batch.inputs) and check it as batch `batch` (default: the file
    name without extension)."""
    parsed = read_input(path, fmt, ctx)
    return check_claims(parsed.claims, ctx, batch=batch or Path(path).stem, db=db, verify=verify,
                        concurrency=concurrency, progress=progress, problems=parsed.problems,
                        threshold=threshold, cluster=cluster)


def _regate(conn, batch: str, rows: dict, redo: set, gate: Gate) -> None:
    """Gate the read-back rows (all but `redo`) at this run's thresholds; record an `auto` that changed."""
    for (item_id, url), row in list(rows.items()):
        if (item_id, url) in redo:
            continue
        again = gated(row, gate)
        if again["auto"] != row.get("auto"):
            audit.set_auto(conn, batch, item_id, url, again["auto"])
        rows[(item_id, url)] = again


def check_claims(claims: list[Claim], ctx: RunContext, *, batch: str, db: str | Path | None = None,
                 verify: Verify | None = None, concurrency: int | None = None,
                 progress: bool = False, problems: list[str] | None = None,
                 threshold: float | Gate | None = None, cluster: str | None = None) -> BatchResult:
    """Check every citation not already decided in `batch`; rows come back in input order. `cluster`
    (local:N or tls://HOST:PORT) checks them on Dask workers (`batch.cluster`), else in threads."""
    threshold = gate_of(threshold, ctx.settings)
    concurrency = concurrency or ctx.settings.batch_concurrency
    models = {"", ctx.settings.judge_model, ctx.settings.choice_model, *ctx.cache.seen}   # "": no model asked
    from ..verify import carried_text                   # verify (fetch, judge) loads when a batch runs
    quote = {(c.id, url): carried_text(c.carried(url)) for c in claims for url in c.urls}
    conn = audit.connect(db if db is not None else ctx.settings.journal)
    try:
        rows = audit.decided(conn, batch)
        todo = [(c, url) for c in claims for url in c.urls
                if not _fresh(rows.get((c.id, url)), c, quote[(c.id, url)], models,
                              ctx.settings.robots_max_age)]
        _regate(conn, batch, rows, {(c.id, url) for c, url in todo}, threshold)
        kept = 0
        with _progress(len(todo), progress) as bar:
            for (c, url), result in _runner(todo, ctx, verify, concurrency, threshold, cluster):
                carried = {**result, "claim": c.claim, "quote": quote[(c.id, url)]}
                row = rows.get((c.id, url))
                if _unchanged(row, carried):
                    kept += 1
                    if row.get("auto") != result.get("auto"):
                        audit.set_auto(conn, batch, c.id, url, result.get("auto"))
                    row = {**row, "auto": result.get("auto")}
                else:
                    row = audit.write_citation(conn, batch, c.id, c.claim, carried)
                rows[(c.id, url)] = {**row, "auto_note": result.get("auto_note")}
                bar.update()
    finally:
        conn.close()
    out = []
    for c in claims:
        cited = [rows[(c.id, url)] for url in c.urls]
        verdict = overall([row["label"] for row in cited])
        out.extend(BatchRow.from_dict({**row, "overall": verdict}).to_dict() for row in cited)
    answering = collections.Counter(row["model"] for row in rows.values() if row.get("model"))
    return BatchResult(out, list(problems or []), len(out) - len(todo) + kept, len(todo) - kept, counts(out),
                       answering.most_common(1)[0][0] if answering else None)


def _runner(todo: list, ctx: RunContext, verify: Verify | None, concurrency: int, threshold: Gate,
            cluster: str | None):
    """(item, row) pairs as citations finish: on the cluster, or in this process's threads."""
    if cluster:
        from .cluster import run_cluster
        return run_cluster(todo, ctx, cluster, concurrency, threshold, verify)
    if verify is not None:
        return run_pool(lambda item: check_one(verify, item[0].claim, item[1], threshold), interleaved(todo),
                        concurrency)
    from ..verify import verify_citation

    def check(item: tuple[Claim, str]) -> dict:
        claim, url = item
        return check_one(lambda text, cited: verify_citation(text, cited, ctx, threshold, with_passages=True,
                                                             quotes=claim.carried(cited)),
                         claim.claim, url, threshold)
    return run_pool(check, interleaved(todo), concurrency)


# ---------------------------------------------------------------- CLI

def add_arguments(parser) -> None:
    parser.add_argument("file", help='JSONL, one {"id", "claim", "urls"} object per line, or an LLM answer')
    parser.add_argument("--format", choices=INPUT_FORMATS, default="auto",
                        help="claims (JSONL) or an answer format (default auto: a .jsonl file, or one whose "
                             "first line is a claim, is a claims file; anything else an answer)")
    parser.add_argument("--out", help="write one CSV row per citation to this file")
    parser.add_argument("--batch", help="batch name in the audit DB (default: the file name without "
                        "extension); the same name resumes, a new name starts over")
    parser.add_argument("--db", help="audit DB path (default: AUDIT_DB, audit.db)")
    parser.add_argument("--cluster", metavar="local:N|tls://HOST:PORT",
                        help="check on Dask workers over mutual TLS: N local worker processes, or a running "
                             "scheduler (CLUSTER_TLS_CA, CLUSTER_TLS_CERT, CLUSTER_TLS_KEY)")
    parser.add_argument("--report", metavar="FILE.html", help="write one self-contained HTML report "
                        "(summary, plots, the review queue, every row) to this file")
    parser.add_argument("--fail-under", type=ci_gate.fraction, metavar="X",
                        help=f"exit {ci_gate.GATE_FAILED} when the precision (--on) is below X (0-1)")
    parser.add_argument("--on", choices=ci_gate.PRECISIONS, default=ci_gate.PRECISIONS[0],
                        help="which precision --fail-under reads (default citation: a dead link counts "
                             "against the answer)")


def run(args, ctx: RunContext) -> int:
    """Skipped lines on stderr, the two precision lines on stdout; exit 1 when a line was skipped, 3 when
    the gate fails."""
    parsed = read_input(args.file, args.format, ctx)
    report("batch", args.file, parsed.problems + parsed.notes)
    if not parsed.claims:
        raise ValueError(f"{args.file}: no valid claims to check")
    if args.cluster:
        from .cluster import ready
        ready(args.cluster, ctx.settings)          # a bad spec or TLS setting: one line before any work
    gate, name, before = Gate.of(ctx.settings), args.batch or Path(args.file).stem, netguard.lookups()
    result = check_claims(parsed.claims, ctx, batch=name, db=args.db, progress=True, problems=parsed.problems,
                          threshold=gate, cluster=args.cluster)
    gate.tell(result.rows, "batch")
    netguard.tell_if_offline("batch", before)
    if result.reused:
        print(f"citecheck batch: resumed: {result.reused} citation(s) already decided in this batch "
              "were read back from the audit DB", file=sys.stderr)
    for line in precision_lines(result.rows):
        print(line)
    if args.out:
        write_csv(result.rows, args.out)
    if args.report:
        from ..report.report_html import write_report
        threshold = gate.shown(result.model or ctx.settings.judge_model)      # the model that answered
        write_report(result.rows, args.report, batch=name, threshold=threshold, problems=parsed.problems)
    gate = None
    if args.fail_under is not None:
        gate = ci_gate.precision_gate(ratios(result.rows), args.fail_under, args.on)
    return ci_gate.finish("batch", bool(parsed.problems), gate)
