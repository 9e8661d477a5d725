"""batch: verify a JSONL file of claims and measure how often the citations hold up.

Rules:
- One {"id", "claim", "urls"} object per line; every claim-URL pair is one citation.
- citation precision = supported / all citations; reachable precision = supported / (all - unreachable),
  n/a when nothing was reachable.
- A malformed line is reported by its number and skipped, the other lines still run; a citation
  whose check fails becomes a labelled row, never an aborted batch.
- The audit DB is the journal: a citation already decided in this batch (same id, url, claim and
  judge model) is read back, not redone, so a killed batch resumes where it stopped. A row that
  failed for a passing reason (the crawl or the judge could not be reached) is tried again.
- At most BATCH_CONCURRENCY citations are in flight, each in a worker thread (the crawl and judge
  SDKs are synchronous); rows are written by the calling thread only.
"""
from __future__ import annotations

import concurrent.futures as cf
import csv
import json
import logging
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import audit, config

CSV_COLUMNS = ("id", "claim", "url", "label", "reason", "confidence", "evidence_quote", "final_url",
               "original_status", "rid", "overall")
RETRY_REASONS = frozenset({"crawl_failed", "dns_failure", "blocked_address", "blocked_url",
                           "judge_unavailable", "check_failed"})
"""Reasons that describe our failure to look, not the page (fetch does not cache them either):
a resumed batch tries these again."""

Verify = Callable[[str, str], dict]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Claim:
    line: int
    id: str
    claim: str
    urls: tuple[str, ...]


@dataclass
class Parsed:
    claims: list[Claim]
    problems: list[str]                   # "line N: ..." for every skipped line
    notes: list[str]                      # "line N: ..." for a line kept with a change


@dataclass
class BatchResult:
    rows: list[dict]                      # one per citation, in input order, with `overall`
    problems: list[str]                   # "line N: ..." for every skipped line
    reused: int = 0                       # citations read back from the journal
    decided: int = 0                      # citations checked in this run
    counts: dict = field(default_factory=dict)


# ---------------------------------------------------------------- reading

def _problem(obj) -> str | None:
    """Why a parsed line is not a claim, or None."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    missing = [key for key in ("id", "claim", "urls") if key not in obj]
    if missing:
        return "missing " + ", ".join(f'"{key}"' for key in missing)
    if isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)) or not str(obj["id"]).strip():
        return '"id" must be a non-empty string or a number'
    if not isinstance(obj["claim"], str) or not obj["claim"].strip():
        return '"claim" must be a non-empty string'
    urls = obj["urls"]
    if not isinstance(urls, list) or not all(isinstance(u, str) and u.strip() for u in urls):
        return '"urls" must be a list of URL strings'
    return None


def parse_lines(lines: list[bytes]) -> Parsed:
    """Raw lines -> claims, skipped lines and notes; blank lines are skipped silently."""
    claims: list[Claim] = []
    problems: list[str] = []
    notes: list[str] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"line {number}: not UTF-8 text")
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        why = _problem(obj)
        item_id = str(obj["id"]).strip() if why is None else ""
        if why is None and item_id in first_line:
            why = f"duplicate id {item_id!r} (first on line {first_line[item_id]})"
        if why:
            problems.append(f"line {number}: {why}")
            continue
        first_line[item_id] = number
        urls = tuple(dict.fromkeys(u.strip() for u in obj["urls"]))
        if len(urls) < len(obj["urls"]):
            notes.append(f"line {number}: a URL is listed twice; it is checked once")
        claims.append(Claim(number, item_id, obj["claim"].strip(), urls))
    return Parsed(claims, problems, notes)


def read_claims(path: str | Path) -> Parsed:
    """A JSONL file -> Parsed. A missing file raises FileNotFoundError naming it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    return parse_lines(path.read_bytes().split(b"\n"))


# ---------------------------------------------------------------- precision

def counts(rows: list[dict]) -> dict:
    labels = [row["label"] for row in rows]
    return {"citations": len(labels), "supported": labels.count("supported"),
            "contradicted": labels.count("contradicted"), "not_found": labels.count("not_found"),
            "unreachable": labels.count("unreachable")}


def _ratio(numerator: int, denominator: int) -> str:
    value = f"{numerator / denominator:.4f}" if denominator else "n/a"
    return f"{value} ({numerator}/{denominator})"


def precision_lines(rows: list[dict]) -> list[str]:
    """The two headline lines: supported / all, and supported / (all - unreachable) or n/a."""
    c = counts(rows)
    reachable = c["citations"] - c["unreachable"]
    return [f"citation_precision={_ratio(c['supported'], c['citations'])}",
            f"reachable_precision={_ratio(c['supported'], reachable)}"]


# ---------------------------------------------------------------- review

def needs_review(row: dict, threshold: float) -> bool:
    """A model's verdict below the threshold goes to a person (a guarded one has confidence 0); a
    citation the page settled (dead link, PDF, homepage redirect: no model asked) does not."""
    return row.get("confidence") is not None and row["confidence"] < threshold


def review_share(rows: list[dict], thresholds: list[float]) -> list[dict]:
    """For each threshold: how many citations, and what share of all, would go to a person."""
    out = []
    for threshold in thresholds:
        n = sum(needs_review(row, threshold) for row in rows)
        share = round(n / len(rows), 4) if rows else 0.0
        out.append({"threshold": threshold, "to_review": n, "share": share})
    return out


# ---------------------------------------------------------------- running

def _default_verify(claim: str, url: str) -> dict:
    from .verify import verify_citation
    return verify_citation(claim, url)


def _setting_errors() -> tuple[type[BaseException], ...]:
    """Failures every citation would repeat (a cache miss offline, a missing or rejected key): they stop
    the batch with one clear error instead of filling it with identical rows; what was decided stays."""
    from .cache import CacheError
    from .fetch import CrawlbaseRejected
    return (CacheError, config.MissingSetting, CrawlbaseRejected)


def check_one(verify: Verify, claim: str, url: str) -> dict:
    """One citation -> a row. An unexpected failure, or an answer without a known label, becomes
    not_found / check_failed (the detail goes to the log, the row carries the bare code)."""
    from .aggregate import LABELS
    try:
        result = dict(verify(claim, url))
        if result.get("label") not in LABELS:
            raise ValueError(f"label {result.get('label')!r} is not one of {', '.join(LABELS)}")
    except _setting_errors():
        raise
    except Exception as exc:         # noqa: BLE001 - one citation's failure must not stop the batch
        log.warning("%s", config.redact(f"{url}: check failed: {type(exc).__name__}: {exc}"))
        result = {"label": "not_found", "reason": "check_failed"}
    result["url"] = url
    for key in ("label", "reason", "evidence_quote", "confidence", "final_url", "original_status", "rid"):
        result.setdefault(key, None)
    return result


def _fresh(row: dict | None, claim: Claim, model: str) -> bool:
    return (row is not None and row["claim"] == claim.claim and row["model"] == model
            and row["reason"] not in RETRY_REASONS)


def _progress(total: int, show: bool):
    from tqdm import tqdm
    return tqdm(total=total, unit="citation", file=sys.stderr, leave=False,
                disable=not (show and sys.stderr.isatty()))


def run_batch(path: str | Path, *, batch: str | None = None, db: str | Path | None = None,
              verify: Verify | None = None, concurrency: int | None = None,
              progress: bool = False) -> BatchResult:
    """Read the JSONL file and check it as batch `batch` (default: the file name without extension)."""
    parsed = read_claims(path)
    return check_claims(parsed.claims, batch=batch or Path(path).stem, db=db, verify=verify,
                        concurrency=concurrency, progress=progress, problems=parsed.problems)


def check_claims(claims: list[Claim], *, batch: str, db: str | Path | None = None,
                 verify: Verify | None = None, concurrency: int | None = None,
                 progress: bool = False, problems: list[str] | None = None) -> BatchResult:
    """Check every citation not already decided in `batch`; rows come back in input order."""
    from .aggregate import overall

    verify = verify or _default_verify
    concurrency = concurrency or config.batch_concurrency()
    model = config.judge_model()
    conn = audit.connect(db)
    try:
        rows = audit.decided(conn, batch)
        todo = [(c, url) for c in claims for url in c.urls if not _fresh(rows.get((c.id, url)), c, model)]
        with _progress(len(todo), progress) as bar:
            for (c, url), result in _run_pool(verify, todo, concurrency):
                rows[(c.id, url)] = audit.record(conn, batch, c.id, c.claim, result, model)
                bar.update()
    finally:
        conn.close()
    out = []
    for c in claims:
        cited = [rows[(c.id, url)] for url in c.urls]
        verdict = overall([row["label"] for row in cited])
        out.extend({**{k: row[k] for k in CSV_COLUMNS[:-1]}, "overall": verdict} for row in cited)
    return BatchResult(out, list(problems or []), len(out) - len(todo), len(todo), counts(out))


def _run_pool(verify: Verify, todo: list, concurrency: int):
    """Yield ((claim, url), row) as citations finish; `concurrency` run at once, as many queued."""
    pool = cf.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="citecheck-batch")
    in_flight: dict[cf.Future, tuple] = {}
    try:
        for item in todo:
            in_flight[pool.submit(check_one, verify, item[0].claim, item[1])] = item
            if len(in_flight) >= 2 * concurrency:
                done, _ = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    yield in_flight.pop(future), future.result()
        for future in cf.as_completed(list(in_flight)):
            yield in_flight.pop(future), future.result()
    finally:
        pool.shutdown(wait=not in_flight, cancel_futures=True)


def write_csv(rows: list[dict], path: str | Path) -> None:
    """One row per citation; written to a temp file and renamed, so a kill never leaves half a report."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or Path(".")))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: "" if row[k] is None else config.redact(str(row[k]))
                                 for k in CSV_COLUMNS})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- CLI

def add_arguments(parser) -> None:
    parser.add_argument("file", help='JSONL, one {"id", "claim", "urls"} object per line')
    parser.add_argument("--out", help="write one CSV row per citation to this file")
    parser.add_argument("--batch", help="batch name in the audit DB (default: the file name without "
                        "extension); the same name resumes, a new name starts over")
    parser.add_argument("--db", help="audit DB path (default: AUDIT_DB, audit.db)")


def run(args) -> int:
    """Skipped lines on stderr, the two precision lines on stdout; exit 1 when a line was skipped."""
    parsed = read_claims(args.file)
    for message in parsed.problems + parsed.notes:
        print(f"citecheck batch: {args.file}: {message}", file=sys.stderr)
    if not parsed.claims:
        raise ValueError(f"{args.file}: no valid claims to check")
    result = check_claims(parsed.claims, batch=args.batch or Path(args.file).stem, db=args.db,
                          progress=True, problems=parsed.problems)
    if result.reused:
        print(f"citecheck batch: resumed: {result.reused} citation(s) already decided in this batch "
              "were read back from the audit DB", file=sys.stderr)
    for line in precision_lines(result.rows):
        print(line)
    if args.out:
        write_csv(result.rows, args.out)
    return 1 if parsed.problems else 0
