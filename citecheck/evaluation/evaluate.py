"""evaluate: measure the configured judge on labelled rows and, with `--write-gate`, earn its AUTO_ACCEPT.

Rules:
- Rows (`--sets`, default every shipped set): `wice` (the WiCE sample, its own tune / report halves;
  binary: a verdict is right when (label == supported) == (gold == supported)), `rfc` (the RFC 7519 pairs,
  3-class, odd lines report), `citations` (notebook 01's citations with a judged `expected`: verified ->
  supported, contradicted, unsupported -> not_found, each against its RFC section; a `fabricated` one is
  settled by string matching, no judge, and left out). The notebooks' claims files carry no labels.
- `--labels FILE` adds the user's own rows: JSONL, one object a line, {id, claim, label, text | url}:
  `label` one of the JSON judge's labels (supported, contradicted, not_found: the audit row's and the
  review's label), `text` the page text the judge reads, else `url` fetched as verify fetches it. Split
  like `calibrate`: the sha256 of ("labels", id, url or ""), last byte even tune, odd report. A line that
  is not such an object, with an unknown label or a repeated id (the first kept) is one problem line
  naming its line number; the rest are evaluated.
- Every row runs through the flow verify ships (`verify.trace_text` on the text; `trace_citation` on a
  URL), with the configured judge and JUDGE_METHOD; the row's label (after the guard) is what is scored.
- Cost first: a replay-only pass takes every row the cache already answers; the rest are counted, and
  before the first call one line says how many rows, calls (at most the method's calls a verdict,
  MOST_CALLS, capped by JUDGE_CALL_BUDGET) and tokens (estimated: TOKENS_A_CALL + the claim and at most
  SHOWN_CHARS of page, CHARS_A_TOKEN characters a token, a call) it will make. `--max-calls N` refuses a
  run that may make more, before any call. Offline (CITECHECK_OFFLINE=1), rows not recorded are left out
  and counted.
- Every answered call is in the cache store as it is made, so a run the judge stops (a row labelled
  judge_unavailable) stops there with one line, exit 1; the same command resumes, replaying what was
  measured. Progress: a tqdm bar on stderr with an ETA, only on a terminal (TQDM_DISABLE silences it).
- Results: a table (per set and half: rows, right, accuracy with its 95 % Wilson interval, ECE), the
  gate (`calibrate.measure`: threshold chosen on every selected tune row with a model confidence, notebook
  04's rule; precision and intervals on the report rows); `--json` prints them as JSON, `--out FILE`
  writes the JSON, `--report FILE.html` a self-contained page (reliability diagram, threshold sweep).
- `--write-gate`: the entry (`calibrate.entry` + method and the command) for the model that ANSWERED
  (the model its cache entries carry, as the server reported it; never the name asked for, e.g. the local
  model's default name sent to another endpoint) goes into AUTO_ACCEPT_TABLE (`calibrate.write_entry`).
  The flows gate a verdict by the model it names (the one asked for): when that differs, one line says to
  set JUDGE_MODEL / TYPESAFE_MODEL to the answering model. Refused with one line: too few rows
  (2 x MIN_ACCEPTED with a model confidence, MIN_ACCEPTED each half; checked before any call too), no
  model answered, or more than one did.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter
from pathlib import Path

from .. import evaluation as ev
from .. import files, verify
from ..cache import CacheMiss
from ..config import printable, redact
from ..context import RunContext
from ..extract.command import report as report_problems
from ..judge.methods import decompose, pooled
from ..paths import DATA, shown
from ..report import plots, render_html
from ..source import sources
from ..source.text import decode, not_text, read_file, too_deep
from ..vocabulary import FABRICATED, JUDGE_LABELS, JUDGE_UNAVAILABLE, SUPPORTED, VERDICT_OF
from . import calibrate, method_comparison

SETS = ("wice", "rfc", "citations")
LABELS_SET = "labels"
CITATIONS = DATA / "citations.json"
MOST_CALLS = {"one_pass": 1, "choice": 1, "json": 1, "pooled": pooled.SENTENCES,
              "decompose": 1 + decompose.MAX_FACTS, "qa": 3, "chunks": 3}
"""The most model calls one verdict of each method makes (qa: question, answer, compare; chunks: top 3)."""
TOKENS_A_CALL = 300
"""A call's instructions and answer, in tokens (the estimate's fixed part)."""
SHOWN_CHARS = 3600
"""The most page text one call is counted as reading: three 200-word passages."""
CHARS_A_TOKEN = 4
LABEL_OF_RELATION = {relation: label for label, relation in method_comparison.RFC_OF.items()}
LABEL_OF_VERDICT = {VERDICT_OF[relation]: label for relation, label in LABEL_OF_RELATION.items()}


# ---------------------------------------------------------------- rows

def _row(name: str, item_id: str, split: str, claim: str, gold: str, *, text: str | None = None,
         url: str | None = None, binary: bool = False) -> dict:
    return {"set": name, "id": item_id, "split": split, "claim": claim, "gold": gold, "text": text,
            "url": url or f"{name}:{item_id}", "binary": binary}


def wice_rows() -> list[dict]:
    return [_row("wice", r["id"], r["split"], r["claim"], r["gold"], text=ev.wice_page(r["evidence"]),
                 binary=True) for r in ev.load_sample()]


def rfc_rows() -> list[dict]:
    return [_row("rfc", i["id"], i["split"], i["claim"], LABEL_OF_RELATION[i["gold"]], text=i["text"])
            for i in method_comparison.rfc_items()]


def citation_rows() -> list[dict]:
    """Notebook 01's judged citations, each against its RFC section; even position tune, odd report."""
    document = sources.load(method_comparison.RFC_DOCUMENT)
    cited = [c for c in json.loads(CITATIONS.read_text("utf-8")) if c["expected"] != FABRICATED]
    return [_row("citations", c["id"], ev.SPLITS[i % 2], c["claim"], LABEL_OF_VERDICT[c["expected"]],
                 text=document.sections[c["section"]].text) for i, c in enumerate(cited)]


SHIPPED = {"wice": wice_rows, "rfc": rfc_rows, "citations": citation_rows}


def split_of(item_id: str, url: str | None) -> str:
    """A labels-file row's half: calibrate's rule over ("labels", id, url)."""
    return calibrate.split_of({"batch": LABELS_SET, "id": item_id, "url": url or ""})


def _labelled(line: str) -> dict | str:
    """One labels-file line -> a row, or what is wrong with it."""
    if too_deep(line):
        return "nested too deep"
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg})"
    if not isinstance(raw, dict):
        return "not an object {id, claim, label, text | url}"
    item_id, claim, label = raw.get("id"), raw.get("claim"), raw.get("label")
    text, url = raw.get("text"), raw.get("url")
    if not isinstance(item_id, (str, int)) or isinstance(item_id, bool) or str(item_id) == "":
        return "no id"
    if not isinstance(claim, str) or not claim.strip():
        return f"id {item_id!r}: no claim"
    if label not in JUDGE_LABELS:
        return f"id {item_id!r}: unknown label {label!r} (one of {', '.join(JUDGE_LABELS)})"
    if not (isinstance(text, str) and text.strip()) and not (isinstance(url, str) and url.strip()):
        return f"id {item_id!r}: neither text nor url"
    strings = [claim, *(s for s in (text, url) if isinstance(s, str))]
    bad = next((not_text(s) for s in strings if not_text(s)), None)
    if bad:
        return f"id {item_id!r}: {bad}"
    item_id = str(item_id)
    text = text if isinstance(text, str) and text.strip() else None
    url = url if isinstance(url, str) and url.strip() else None
    return _row(LABELS_SET, item_id, split_of(item_id, url), claim, label, text=text, url=url)


def read_labels(path: str | Path) -> tuple[list[dict], list[str]]:
    """(rows, problems) of a labels file (see module rules); an unreadable file is a ValueError."""
    name = f"labels file {shown(Path(path))}"
    rows, problems, seen = [], [], {}
    for number, line in enumerate(decode(read_file(path, name), name).splitlines(), 1):
        if not line.strip():
            continue
        row = _labelled(line)
        if isinstance(row, str):
            problems.append(f"line {number}: {row}")
        elif row["id"] in seen:
            problems.append(f"line {number}: id {row['id']!r} repeats line {seen[row['id']]}; left out")
        else:
            seen[row["id"]] = number
            rows.append(row)
    return rows, problems


# ---------------------------------------------------------------- judging

def correct(row: dict, label: str) -> bool:
    """Binary rows: supported or not; the others: the label itself."""
    if row["binary"]:
        return (label == SUPPORTED) == (row["gold"] == SUPPORTED)
    return label == row["gold"]


def judge(row: dict, ctx: RunContext) -> dict:
    """One row through verify's flow -> its record (row fields, label, confidence, model, calls, usage)."""
    if row["text"] is not None:
        trace = verify.trace_text(row["claim"], row["text"], ctx, row["url"])
    else:
        trace = verify.trace_citation(row["claim"], row["url"], ctx)
    judged, label = trace.judged or {}, trace.row["label"]
    steps = judged.get("steps", [])
    keys = [k for step in steps
            for k in ([step["key"]] if isinstance(step.get("key"), str) else step.get("key") or [])]
    entries = {key: ctx.cache.lookup(key) for key in keys}
    answered = sorted({entry["model"] for entry in entries.values() if entry and entry.get("model")})
    return {**{k: row[k] for k in ("set", "id", "split", "gold", "url")}, "label": label,
            "correct": correct(row, label), "confidence": trace.row["confidence"],
            "reason": trace.row["reason"], "method": judged.get("method"),
            "model": ", ".join(answered) or None, "named": verify.answered_by(trace),
            "calls": judged.get("calls", 0),
            **(method_comparison.usage_of(entries, [{"key": k} for k in keys]) if judged else {})}


def replayed(rows: list[dict], ctx: RunContext) -> tuple[list[dict], list[dict]]:
    """(records the cache already answers, rows it does not): nothing is asked."""
    offline, done, todo = ctx.replace(offline=True), [], []
    for row in rows:
        try:
            done.append(judge(row, offline))
        except CacheMiss:
            todo.append(row)
    return done, todo


def estimate(rows: list[dict], ctx: RunContext) -> dict:
    """The most calls and the estimated tokens the rows not in the cache will cost (module rules)."""
    most = min(MOST_CALLS[ctx.settings.judge_method], ctx.settings.judge_call_budget)
    tokens = sum(most * (TOKENS_A_CALL + (len(r["claim"]) + min(len(r["text"] or ""), SHOWN_CHARS))
                         // CHARS_A_TOKEN) for r in rows)
    return {"rows": len(rows), "calls": most * len(rows), "tokens": tokens}


def _progress(total: int):
    """A tqdm bar on stderr with an ETA, only on a terminal (TQDM_DISABLE, read by tqdm, silences it)."""
    from tqdm import tqdm
    quiet = {} if sys.stderr.isatty() else {"disable": True}
    return tqdm(total=total, unit="row", desc="evaluate", file=sys.stderr, leave=False, **quiet)


class JudgeStopped(RuntimeError):
    """The judge stopped answering mid-run; what was answered is cached."""


def ask(rows: list[dict], ctx: RunContext) -> list[dict]:
    """Each row judged live, in order; the first judge_unavailable stops the run (JudgeStopped)."""
    records = []
    with _progress(len(rows)) as bar:
        for row in rows:
            record = judge(row, ctx)
            if record["reason"] == JUDGE_UNAVAILABLE:
                raise JudgeStopped(
                    f"the judge stopped answering at row {row['set']}:{row['id']} ({len(records)} of "
                    f"{len(rows)} rows asked this run were measured); every answered call is cached: run "
                    "the same command again to resume")
            records.append(record)
            bar.update()
    return records


# ---------------------------------------------------------------- results

def scored(records: list[dict]) -> list[dict]:
    """Records the gate decides: a model confidence (no model asked: the gate accepts it whatever)."""
    return [r for r in records if r["confidence"] is not None]


def accuracy_rows(records: list[dict]) -> list[dict]:
    """Per set and half, then all sets per half: rows, right, accuracy, Wilson 95 %, ECE."""
    groups = [(s, h) for s in dict.fromkeys(r["set"] for r in records) for h in ev.SPLITS]
    out = []
    for name, half in [*groups, *(("all", h) for h in ev.SPLITS)]:
        rows = [r for r in records if r["split"] == half and name in ("all", r["set"])]
        if not rows:
            continue
        right, gated = sum(r["correct"] for r in rows), scored(rows)
        lo, hi = ev.wilson(right, len(rows))
        out.append({"set": name, "split": half, "rows": len(rows), "correct": right,
                    "accuracy": right / len(rows), "ci_low": lo, "ci_high": hi,
                    "ece": ev.ece([r["confidence"] for r in gated], [r["correct"] for r in gated])})
    return out


def halves(records: list[dict]) -> dict[str, list[dict]]:
    return {half: [r for r in scored(records) if r["split"] == half] for half in ev.SPLITS}


def gate_of(records: list[dict], target: float) -> calibrate.Calibration:
    """The threshold chosen on the tune rows and measured on the report rows (`calibrate.measure`)."""
    split = halves(records)
    return calibrate.measure(split["tune"], split["report"], target)


def too_few(tune: int, report: int, where: str) -> str | None:
    """The one line refusing --write-gate on too few rows, or None."""
    need = ev.MIN_ACCEPTED
    if tune + report >= 2 * need and min(tune, report) >= need:
        return None
    return (f"--write-gate needs at least {2 * need} labelled rows with a model confidence, {need} in each "
            f"half; {where} {tune + report} ({tune} tune, {report} report): add --sets or --labels rows")


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def gate_lines(result: calibrate.Calibration) -> list[str]:
    """The gate in words: the threshold (or why none), the report half's precision and review share."""
    head = (f"gate: target precision {result.target:g} with at least {result.min_accepted} accepted; "
            f"{result.tune} tune, {result.report} report rows with a model confidence")
    if result.threshold is None:
        best = result.best
        why = (f"the best any threshold reaches is {best['accepted_accuracy']:.3f} (at {best['threshold']:g})"
               if best["threshold"] is not None else f"no threshold accepts {result.min_accepted} verdicts")
        return [head, f"AUTO_ACCEPT: none reached on tune ({why}): every verdict goes to a person"]
    p = result.point
    precision = (f"precision {p['accepted_accuracy']:.3f} (95 % Wilson {result.wilson[0]:.3f}-"
                 f"{result.wilson[1]:.3f}; bootstrap {result.bootstrap[0]:.3f}-{result.bootstrap[1]:.3f})"
                 if p["accepted"] else "precision n/a: the report half accepts none")
    return [head, f"AUTO_ACCEPT: {result.threshold:g} (chosen on tune)",
            f"report half: {p['accepted']} accepted, {p['accepted_correct']} right: {precision}; "
            f"{p['review']} of {result.report} to a person"]


def table_lines(summary: dict) -> list[str]:
    lines = [f"evaluate: JUDGE_METHOD={summary['method']}, answered by "
             f"{', '.join(summary['models']) or 'no model'}; {summary['asked']} rows asked this run",
             f"{'set':<10} {'split':<7} {'rows':>5} {'right':>6} {'accuracy':>9} {'95 % Wilson':>13} "
             f"{'ECE':>6}"]
    for r in summary["accuracy"]:
        interval = _fmt(r["ci_low"]) + "-" + _fmt(r["ci_high"])
        lines.append(f"{r['set']:<10} {r['split']:<7} {r['rows']:>5} {r['correct']:>6} "
                     f"{_fmt(r['accuracy']):>9} {interval:>13} {_fmt(r['ece']):>6}")
    return lines + gate_lines(summary["gate_result"])


def summary_of(records: list[dict], method: str, target: float, asked: int) -> dict:
    models = sorted({r["model"] for r in records if r["model"]})
    result = gate_of(records, target)
    return {"method": method, "models": models, "asked": asked, "accuracy": accuracy_rows(records),
            "gate": {**calibrate.entry(result, None), "lines": gate_lines(result)}, "gate_result": result,
            "records": records}


def public(summary: dict) -> dict:
    """The JSON written and shown: everything but the Calibration object; NaN as null; every text redacted
    (`config.redact`: a secret's value never reaches a file or the page)."""
    def clean(value):
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value
    return clean({k: v for k, v in summary.items() if k != "gate_result"})


def render(summary: dict) -> str:
    """The HTML page: the table, the gate, a reliability diagram and the threshold sweep per half."""
    split = halves(summary["records"])
    result = summary["gate_result"]
    pairs = {h: ([r["confidence"] for r in rows], [r["correct"] for r in rows]) for h, rows in split.items()}
    figures = [plots.reliability_diagram({h: ev.reliability(*pair) for h, pair in pairs.items()},
                                         title="Reliability of the judge"),
               plots.threshold_sweep({h: ev.sweep(*pair) for h, pair in pairs.items()}, result.threshold,
                                     target=result.target, min_accepted=result.min_accepted)]
    return render_html.render("evaluate.html", summary=public(summary), lines=table_lines(summary),
                              plots={plots.alt_text(f): plots.data_uri(f) for f in figures},
                              csp=render_html.content_security_policy(images=True))


# ---------------------------------------------------------------- CLI: python -m citecheck evaluate

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sets", default=",".join(SETS),
                        help=f"the shipped labelled sets to run, comma-separated: {', '.join(SETS)} or none "
                             f"(default: all)")
    parser.add_argument("--labels", metavar="FILE",
                        help="your own labelled rows: JSONL of {id, claim, label, text | url}, label "
                             "supported|contradicted|not_found")
    parser.add_argument("--max-calls", type=int, metavar="N",
                        help="refuse a run that may make more model calls")
    parser.add_argument("--target", type=float, default=ev.TARGET_PRECISION,
                        help=f"precision the accepted verdicts must reach (default {ev.TARGET_PRECISION})")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--out", metavar="FILE.json", help="also write the results as JSON")
    parser.add_argument("--report", metavar="FILE.html", help="also write an HTML page with the plots")
    parser.add_argument("--write-gate", action="store_true",
                        help="write the answering model's AUTO_ACCEPT entry to AUTO_ACCEPT_TABLE "
                             "(default data/gate.json)")


def chosen_sets(value: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in value.split(",") if n.strip() and n.strip() != "none")
    unknown = [n for n in names if n not in SETS]
    if unknown:
        raise ValueError(f"--sets: unknown set {unknown[0]!r}; the sets are {', '.join(SETS)} (or none)")
    return names


def command_line(args: argparse.Namespace, sets: tuple[str, ...]) -> str:
    """The command that measures this entry again (paths as printed)."""
    labels = f" --labels {shown(Path(args.labels))}" if args.labels else ""
    return (f"citecheck evaluate --sets {','.join(sets) or 'none'}{labels} --target {args.target:g} "
            "--write-gate")


def say(line: str) -> None:
    print(printable(f"citecheck evaluate: {line}"), file=sys.stderr)


def run(args: argparse.Namespace, ctx: RunContext) -> int:
    """Evaluate (module rules); exit 1 when labels-file lines were left out or the judge stopped."""
    if not 0 < args.target <= 1:
        raise ValueError(f"--target must be between 0 and 1, got {args.target}")
    sets = chosen_sets(args.sets)
    rows = [row for name in sets for row in SHIPPED[name]()]
    problems: list[str] = []
    if args.labels:
        labelled, problems = read_labels(args.labels)
        report_problems("evaluate", shown(Path(args.labels)), problems)
        rows += labelled
    if not rows:
        raise ValueError("nothing to evaluate: pick --sets or give --labels rows")
    if args.write_gate:
        refused = too_few(*(sum(r["split"] == h for r in rows) for h in ev.SPLITS), "there are only")
        if refused:
            raise ValueError(refused)
    done, todo = replayed(rows, ctx)
    cost = estimate(todo, ctx)
    say(f"{len(rows)} row{'s' * (len(rows) != 1)} ({', '.join(f'{n} {c}' for n, c in Counter(r['set'] for r in rows).items())}): "
        f"{len(done)} replayed from the cache, {cost['rows']} to ask with JUDGE_METHOD="
        f"{ctx.settings.judge_method}: at most {cost['calls']:,} model calls, about {cost['tokens']:,} "
        "tokens (estimated)")
    if args.max_calls is not None and cost["calls"] > args.max_calls:
        raise ValueError(f"at most {cost['calls']:,} model calls needed, over --max-calls {args.max_calls}: "
                         "nothing asked; raise --max-calls or pick fewer --sets")
    if ctx.settings.offline and todo:
        say(f"{len(todo)} rows are not in the cache and CITECHECK_OFFLINE=1: left out")
        todo = []
    try:
        asked = ask(todo, ctx)
    except JudgeStopped as exc:
        say(str(exc))
        return 1
    records = done + asked
    summary = summary_of(records, ctx.settings.judge_method, args.target, len(asked))
    print(printable(json.dumps(public(summary), indent=1) if args.json else "\n".join(table_lines(summary)),
                    lines=True))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(public(summary), indent=1) + "\n"
        files.replace_file(args.out, lambda out: out.write(text))
    if args.report:
        page = render(summary)
        files.replace_file(args.report, lambda out: out.write(page))
    if args.write_gate:
        write_gate(summary, args, sets, ctx)
    return 1 if problems else 0


def write_gate(summary: dict, args: argparse.Namespace, sets: tuple[str, ...], ctx: RunContext) -> None:
    """The answering model's entry into AUTO_ACCEPT_TABLE (module rules)."""
    split = halves(summary["records"])
    refused = too_few(len(split["tune"]), len(split["report"]), "the judge answered")
    if refused:
        raise ValueError(refused)
    if len(summary["models"]) != 1:
        raise ValueError("--write-gate needs one answering model; "
                         + (f"these answered: {', '.join(summary['models'])}" if summary["models"]
                            else "none answered") + ": nothing written")
    (model,) = summary["models"]
    named = sorted({r["named"] for r in summary["records"] if r["named"]} - {model})
    if named:
        say(f"the verdicts name {', '.join(named)} (the model asked for) but {model} answered: the entry is "
            f"written for {model}; the flows gate a verdict by the name it carries, so set "
            f"JUDGE_MODEL={model} (or TYPESAFE_MODEL) for them to use it")
    result = summary["gate_result"]
    batch = "evaluate:" + ",".join([*sets, *([LABELS_SET] if args.labels else [])])
    entry = {**calibrate.entry(result, batch), "method": ctx.settings.judge_method,
             "command": command_line(args, sets)}
    path = ctx.settings.auto_accept_table
    calibrate.write_entry(path, model, entry)
    held = f"AUTO_ACCEPT={result.threshold:g}" if result.threshold is not None else \
        "no threshold reached: every verdict to a person"
    print(printable(f"wrote {shown(path)}: {model} {held}"))
