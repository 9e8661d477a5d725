"""Evaluate judge methods as verify ships them, or prompt and readout variants of the local Choice judge.

    .venv/bin/python scripts/eval_judge.py --methods pooled[,choice,json] [--replay choice,json]
                                          [--import-answers lab/cache/units.json ...] [--limit N]
    .venv/bin/python scripts/eval_judge.py [--wice-rows 40] [--wice-report] [--variants base,...]
                                          [--write-calibration]

Methods (`--methods`): every WiCE sample row (tune and report) and every RFC pair runs through
`evaluation.judged`, i.e. `verify.trace_text` with JUDGE_METHOD set (the passages, retrieval, judge,
guard and gate verify, batch and /verify ship), recording into CITECHECK_CACHE (settings from the
environment: point TYPESAFE_ENDPOINT / OPENAI_BASE_URL at the judge). `--replay` methods only replay
(offline: a row that misses is counted, not asked). Anything chosen (the pooled method's SUPPORT_AT, the
AUTO_ACCEPT threshold) is chosen on tune; the report split's numbers are printed with 95 % bootstrap
intervals (`method_comparison.intervals`). Records go to build/eval_judge/methods.jsonl. The recorded
answers under the current rules, offline:
    CITECHECK_OFFLINE=1 CITECHECK_CACHE_STORE=off .venv/bin/python scripts/eval_judge.py --methods pooled
                                                  --replay pooled
`--import-answers` copies into the cache an answer another recorder made for exactly a request this run
sends (same key: function, model, request), entry unchanged (its model and date stamp).

Held out (`--heldout DEV_JSONL [--heldout-per-class N] [--until HH:MM]`): the shipped default (pooled at
its SUPPORT_AT, nothing chosen) on WiCE dev rows not in the sample (`method_comparison.heldout_items`: the
first N of each WiCE label in file order, interleaved), same path as `--methods pooled`; prints the scores
with 95 % bootstrap intervals and what the gate auto-accepts at AUTO_ACCEPT=0.8 and under the shipped
table. Records go to build/eval_judge/heldout.jsonl.

Data and rules:
- RFC: data/rfc_pairs.jsonl (36 hand-labelled RFC 7519 claim/section pairs, 12 per class);
  WiCE: data/wice/sample.jsonl (or any WiCE-format JSONL given with --wice, e.g. the full dev split),
  gold `supported` vs not (partially_supported and not_supported are "not supported"); `--methods`
  shows each judge the top 3 passages RETRIEVAL ranks (BM25 by default), the prompt variants the MiniLM
  top 3 they were recorded over.
- Split: 0-based line index in the WiCE dev file even -> tune (everything is chosen there), odd ->
  report (the sample keeps that index in its `line` field).
- Readouts over the same forward pass: raw; `mean` (subtract each option's mean log-prob over the
  tune calls of that dataset); `fit` (offsets grid-searched for tune accuracy). Offsets always come
  from the tune split and are scored on both splits.
- WiCE is binary: the prediction is right when (answer == supports) == (gold == supported).
- Baseline: always answer "supports". Latency is the server's compute seconds per call (lock wait
  excluded); a row's variants run back to back, so prompts sharing a prefix reuse the KV cache.
- The model calls go to a running judge server (`python -m citecheck judge-server`): what is
  measured is what is served.
- The server holds one set of offsets per question, so the candidate served readout is `joint`:
  offsets fitted for the mean of the datasets' tune accuracies (RFC 3-class, WiCE binary).
  `rfc-fit` shows how RFC-fitted offsets transfer to WiCE.
- --write-calibration stores the `joint` offsets of the production question ("base") in
  data/judge_calibration.json, which the server loads at start (restart it).
Raw log-probabilities are kept in build/eval_judge/raw.jsonl so a re-run only computes new prompts.
"""
from __future__ import annotations

import argparse
import collections
import datetime as _dt
import hashlib
import itertools
import json
import math
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citecheck import matching
from citecheck.judge import calibration, judges  # noqa: E402
from citecheck.judge.local_judge import prompts, readout, weights  # noqa: E402
from citecheck.paths import shown  # noqa: E402

WICE_DEFAULT = ROOT / "data" / "wice" / "sample.jsonl"
RAW = ROOT / "build" / "eval_judge" / "raw.jsonl"
OPTIONS = tuple(judges.CHOICE_CRITERIA)
GRID = [x / 4 for x in range(-16, 17)]          # offsets from -4 to +4 in steps of 0.25


@dataclass(frozen=True)
class Variant:
    """One prompt: the question's wording and options, where the claim sits, what source text is shown."""
    name: str
    note: str
    instructions: str = judges.CHOICE_INSTRUCTIONS
    criteria: tuple = tuple(judges.CHOICE_CRITERIA.items())
    source_first: bool | None = None       # None: judges.choice_state's own order (production)
    context: str = "section"               # RFC only: "section" or "neighbourhood" of the quote
    datasets: tuple = ("rfc", "wice")

    def state(self, claim: str, source: str) -> dict:
        if self.source_first is None:
            return judges.choice_state(claim, source)
        return {"source": source, "claim": claim} if self.source_first else {"claim": claim, "source": source}


CRITERIA_EXPLICIT = (
    ("supports", "The source explicitly says what the claim says, including its details."),
    ("contradicts", "The source explicitly says something that cannot be true at the same time as the claim."),
    ("says_nothing", "The source is about something else, or does not settle whether the claim is true."),
)
VARIANTS = [
    Variant("base", "production prompt: judges.py question, state as choice_state() orders it"),
    Variant("source_first", "source block before the claim block", source_first=True),
    Variant("criteria_explicit", "explicit criteria wording", criteria=CRITERIA_EXPLICIT),
    Variant("options_reversed", "options listed says_nothing, contradicts, supports",
            criteria=tuple(reversed(tuple(judges.CHOICE_CRITERIA.items())))),
    Variant("neighbourhood", "RFC: the quote's sentence +-2 sentences instead of the whole section",
            context="neighbourhood", datasets=("rfc",)),
]


# ---------------------------------------------------------------- data

@dataclass
class Row:
    dataset: str
    id: str
    split: str
    gold: str            # rfc: supports/contradicts/says_nothing; wice: supported/partially_supported/not_supported
    claim: str
    sources: dict = field(default_factory=dict)     # context -> text


_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[A-Z\"(])")


def neighbourhood(section_text: str, quote: str, around: int = 2) -> str:
    """The sentence(s) holding the quote and `around` sentences either side, from normalised text."""
    text, needle = matching.normalise(section_text), matching.normalise(quote)
    start = text.index(needle)
    sentences, pos, spans = _SENTENCE_END.split(text), 0, []
    for sentence in sentences:
        begin = text.index(sentence, pos)
        spans.append((begin, begin + len(sentence)))
        pos = begin + len(sentence)
    hit = [i for i, (b, e) in enumerate(spans) if e > start and b < start + len(needle)]
    lo, hi = max(0, hit[0] - around), min(len(spans), hit[-1] + around + 1)
    return " ".join(sentences[lo:hi])


def rfc_rows() -> list[Row]:
    from citecheck.evaluation import method_comparison as mc
    return [Row("rfc", i["id"], i["split"], i["gold"], i["claim"],
                {"section": i["text"], "neighbourhood": neighbourhood(i["text"], i["quote"])})
            for i in mc.rfc_items()]


def wice_rows(path: Path, per_split: int, splits: tuple[str, ...]) -> list[Row]:
    """The first `per_split` rows of each split in file order, shown the MiniLM top-3 passages."""
    from citecheck.web import passages, retrieval
    rows, taken = [], {s: 0 for s in splits}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        i = json.loads(line).get("line", n)            # the row's line in the WiCE dev file
        split = ("tune", "report")[i % 2]
        if split not in taken or taken[split] >= per_split:
            continue
        taken[split] += 1
        raw = json.loads(line)
        page = "\n\n".join(" ".join(s.split()) for s in raw["evidence"])
        top = retrieval.top_passages(raw["claim"], passages.split_passages(page), how="minilm")
        rows.append(Row("wice", f"W{i:03d}", split, raw["label"], raw["claim"], {"section": "\n\n".join(top)}))
    return rows


# ---------------------------------------------------------------- model calls (memoised on disk)

class Runner:
    """Asks the running judge server (the production path: same rendering, same readout).

    The server's calibration (listed by /health) is undone, so the log-probabilities kept here are raw
    up to a per-call constant, which no readout depends on.
    """

    def __init__(self, endpoint: str, memo_only: bool = False):
        import httpx
        self.http = httpx.Client(base_url=endpoint, timeout=600)
        self.memo_only = memo_only
        try:
            health = self.http.get("/health").json()
        except httpx.HTTPError:
            raise SystemExit(f"no judge server at {endpoint}: start one with `python -m citecheck judge-server`")
        self.model, self.calibration = health["model"], health.get("calibration", {})
        self.memo: dict[str, dict] = {}
        if RAW.exists():
            for line in RAW.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                self.memo[entry["key"]] = entry

    def logprobs(self, state: dict, instructions: str, criteria: dict) -> dict | None:
        messages = prompts.choice_messages(state, instructions, criteria)
        key = hashlib.sha256(json.dumps([weights.MODEL_SHA256, messages, list(criteria)]).encode()).hexdigest()
        if key not in self.memo and self.memo_only:
            return None
        if key not in self.memo:
            body = {"model": self.model, "state": state,
                    "questions": {"q": {"type": "choice", "instructions": instructions, "criteria": criteria}}}
            response = self.http.post("/v1/systemone", json=body)
            response.raise_for_status()
            data = response.json()
            offsets = self.calibration.get(calibration.question_key(instructions, criteria), {})
            probabilities = data["answers"]["q"]["probabilities"]
            entry = {"key": key, "logprobs": {o: math.log(max(p, 1e-300)) + offsets.get(o, 0.0)
                                              for o, p in probabilities.items()},
                     "tokens": data["usage"]["input_tokens"],
                     "seconds": float(response.headers.get("x-judge-seconds", "nan"))}
            RAW.parent.mkdir(parents=True, exist_ok=True)
            with open(RAW, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
            self.memo[key] = entry
        return self.memo[key]


def run_variants(runner: Runner, rows: list[Row], variants: list[Variant]) -> dict[tuple, dict]:
    """{(variant, row id): memo entry}; each row's variants run back to back (shared prefixes)."""
    out = {}
    for n, row in enumerate(rows, 1):
        for v in variants:
            if row.dataset not in v.datasets:
                continue
            source = row.sources.get(v.context, row.sources["section"])
            entry = runner.logprobs(v.state(row.claim, source), v.instructions, dict(v.criteria))
            if entry is not None:
                out[(v.name, row.id)] = entry
        print(f"\r  {rows[0].dataset}: {n}/{len(rows)} rows", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


# ---------------------------------------------------------------- readouts and scores

def correct(row: Row, answer: str) -> bool:
    if row.dataset == "rfc":
        return answer == row.gold
    return (answer == "supports") == (row.gold == "supported")


def predict(entry: dict, offsets: dict | None) -> str:
    return readout.readout(entry["logprobs"], offsets)["choice"]


def accuracy(rows: list[Row], results: dict, variant: str, offsets: dict | None) -> float:
    scored = [correct(r, predict(results[(variant, r.id)], offsets)) for r in rows if (variant, r.id) in results]
    return sum(scored) / len(scored) if scored else float("nan")


def mean_offsets(rows: list[Row], results: dict, variant: str) -> dict:
    entries = [results[(variant, r.id)]["logprobs"] for r in rows if (variant, r.id) in results]
    return {o: statistics.fmean(e[o] for e in entries) for o in OPTIONS} if entries else {}


def fit_offsets(groups: list[tuple[list[Row], dict]], variant: str) -> dict:
    """Offsets (supports fixed at 0) maximising the mean tune accuracy over the groups; ties -> smallest."""
    best, best_key = {o: 0.0 for o in OPTIONS}, None
    for a, b in itertools.product(GRID, GRID):
        offsets = {"supports": 0.0, "contradicts": a, "says_nothing": b}
        score = statistics.fmean(accuracy(rows, results, variant, offsets) for rows, results in groups)
        key = (score, -(abs(a) + abs(b)))
        if best_key is None or key > best_key:
            best, best_key = offsets, key
    return best


def auroc(rows: list[Row], results: dict, variant: str, offsets: dict | None) -> float:
    """P(supports) ranking supported above not-supported (WiCE) / supports above the rest (RFC)."""
    pos, neg = [], []
    for r in rows:
        if (variant, r.id) not in results:
            continue
        p = readout.readout(results[(variant, r.id)]["logprobs"], offsets)["probabilities"]["supports"]
        (pos if r.gold in ("supports", "supported") else neg).append(p)
    if not pos or not neg:
        return float("nan")
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def table_rows(rows: list[Row], results: dict, variants: list[Variant], readouts: dict) -> list[dict]:
    classes = (("supports", "contradicts", "says_nothing") if rows[0].dataset == "rfc"
               else ("supported", "partially_supported", "not_supported"))
    out = []
    for v in variants:
        for split in ("tune", "report"):
            part = [r for r in rows if r.split == split and (v.name, r.id) in results]
            if not part:
                continue
            for readout_name, offsets in readouts[v.name].items():
                line = {"data": rows[0].dataset, "split": split, "variant": v.name, "readout": readout_name,
                        "n": len(part)}
                for c in classes:
                    members = [r for r in part if r.gold == c]
                    hits = sum(correct(r, predict(results[(v.name, r.id)], offsets)) for r in members)
                    line[c] = f"{hits}/{len(members)}"
                line["acc"] = accuracy(part, results, v.name, offsets)
                line["base"] = sum(correct(r, "supports") for r in part) / len(part)
                line["auroc"] = auroc(part, results, v.name, offsets)
                line["s/call"] = statistics.fmean(results[(v.name, r.id)]["seconds"] for r in part)
                out.append(line)
    return out


def print_table(lines: list[dict]) -> None:
    if not lines:
        return
    columns = list(lines[0])
    cells = [[f"{x:.2f}" if isinstance(x, float) else str(x) for x in line.values()] for line in lines]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths)))


# ---------------------------------------------------------------- judge methods, as verify ships them

METHOD_RECORDS = ROOT / "build" / "eval_judge" / "methods.jsonl"


def seeded(ctx, paths: list[Path]) -> dict:
    """Make `ctx.cache` first copy in, unchanged, any entry of `paths` recorded for the same key (the
    same function, model and request); returns the counter of imported entries."""
    from citecheck.cache import request_key
    seed = {}
    for path in paths:
        seed.update(json.loads(path.read_text(encoding="utf-8")))
    cache, counter = ctx.cache, {"imported": 0}
    have = set(cache.entries())
    seed = {k: v for k, v in seed.items() if k not in have}
    recorded_call = cache.call

    def call(function, model, request, compute, **kw):
        key = request_key(function, model, request)
        entry = seed.pop(key, None)
        if entry is not None:
            cache.put(key, entry)
            counter["imported"] += 1
        return recorded_call(function, model, request, compute, **kw)

    cache.call = call
    return counter


def run_methods(ctx, names: list[str], replay: set[str], limit: int | None,
                splits: tuple[str, ...] = ("tune", "report")) -> list[dict]:
    """Every row of `splits` (the first `limit`) judged by each method; records appended to METHOD_RECORDS."""
    from citecheck.evaluation import method_comparison as mc
    records = []
    METHOD_RECORDS.parent.mkdir(parents=True, exist_ok=True)
    rows = mc.items(splits)[:limit] if limit else mc.items(splits)
    for n, item in enumerate(rows, 1):
        for name in names:
            started = time.time()
            record = mc.judge_item(item, name, ctx.replace(offline=True) if name in replay else ctx)
            records.append({**record, "wall": round(time.time() - started, 1)})
            if not record.get("missing"):
                with open(METHOD_RECORDS, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(records[-1], ensure_ascii=False) + "\n")
        print(f"{n}/{len(rows)} {item['dataset']} {item['id']} {time.strftime('%H:%M:%S')}", flush=True)
    return records


def _rounded(row: dict) -> dict:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}


def report_methods(records: list[dict]) -> None:
    from citecheck import evaluation as ev
    from citecheck.evaluation import method_comparison as mc
    from citecheck.judge.methods import pooled
    found = [r for r in records if not r.get("missing")]
    for name in ev.judges_of(found):
        mine = [r for r in found if r["judge"] == name]
        missing = sum(1 for r in records if r["judge"] == name and r.get("missing"))
        if name == "pooled":
            tune = [r for r in mine if r["split"] == "tune"]
            if {"wice", "rfc"} <= {r["dataset"] for r in tune}:
                t = mc.choose_support_at(tune)
                print(f"pooled: SUPPORT_AT chosen on tune = {t:.4f} (shipped constant {pooled.SUPPORT_AT})")
                mine = [mc.relabel(r, t) for r in mine]
        for split in ev.SPLITS:
            part = [r for r in mine if r["split"] == split]
            if part:
                print(f"{name} {split}: " + json.dumps({k: _rounded(d) for k, d in mc.scored(part).items()})
                      + f" per citation {json.dumps(_rounded(mc.cost(part)))}"
                      + (f" ({missing} rows not recorded)" if missing and split == "report" else ""))
            if part and split == "report":
                bounds = {d: {k: [round(lo, 3), round(hi, 3)] for k, (lo, hi) in scores.items()}
                          for d, scores in mc.intervals(part).items()}
                print(f"{name} report 95 % bootstrap intervals ({mc.RESAMPLES} resamples, seed {mc.SEED}): "
                      + json.dumps(bounds))
        wice = ev.with_predictions([r for r in mine if r["dataset"] == "wice"])
        for row in ev.threshold_table(wice):
            print(f"{name} AUTO_ACCEPT for 90 % on tune: {json.dumps(_rounded(row))}")


def methods_main(args) -> int:
    from citecheck.context import RunContext
    ctx = RunContext.from_env()
    imported = seeded(ctx, [Path(p) for p in args.import_answers]) if args.import_answers else None
    names = args.methods.split(",")
    records = run_methods(ctx, names, set(filter(None, args.replay.split(","))), args.limit,
                          tuple(args.splits.split(",")))
    if imported is not None:
        print(f"imported {imported['imported']} recorded answers with exactly this run's requests")
    report_methods(records)
    return 0


HELDOUT_RECORDS = ROOT / "build" / "eval_judge" / "heldout.jsonl"
HELDOUT_AUTO_ACCEPT = 0.8


def heldout_main(args) -> int:
    """The shipped default (JUDGE_METHOD=pooled at pooled.SUPPORT_AT; nothing chosen) on WiCE dev rows the
    sample does not hold: scores with 95 % bootstrap intervals, and what the gate auto-accepts."""
    from citecheck import evaluation as ev
    from citecheck.context import RunContext
    from citecheck.evaluation import method_comparison as mc
    from citecheck.judge.methods import pooled
    from citecheck.verdict import review
    ctx = RunContext.from_env()
    rows = mc.heldout_items(args.heldout, args.heldout_per_class)[:args.limit]
    print(f"held out: {len(rows)} rows ({json.dumps(collections.Counter(r['label'] for r in rows))}), "
          f"pooled at SUPPORT_AT {pooled.SUPPORT_AT}", flush=True)
    records = []
    HELDOUT_RECORDS.parent.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(rows, 1):
        if args.until and time.strftime("%H:%M", time.gmtime()) >= args.until:
            print(f"--until {args.until} UTC reached: {n - 1} of {len(rows)} rows judged", flush=True)
            break
        started = time.time()
        records.append({**mc.judge_item(item, "pooled", ctx), "label": item["label"],
                        "wall": round(time.time() - started, 1)})
        with open(HELDOUT_RECORDS, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(records[-1], ensure_ascii=False) + "\n")
        print(f"{n}/{len(rows)} {item['id']} {item['label']} -> {records[-1].get('answer')} "
              f"({records[-1]['wall']} s) {time.strftime('%H:%M:%S', time.gmtime())}", flush=True)
    found = ev.with_predictions([r for r in records if not r.get("missing")])
    if not found:
        return 1
    print(f"judged: {json.dumps(collections.Counter(r['label'] for r in found))}"
          f" ({len(records) - len(found)} missing)")
    print("pooled held out: " + json.dumps({k: _rounded(d) for k, d in mc.scored(found).items()})
          + f" per citation {json.dumps(_rounded(mc.cost(found)))}")
    bounds = {d: {k: [round(lo, 3), round(hi, 3)] for k, (lo, hi) in scores.items()}
              for d, scores in mc.intervals(found).items()}
    print(f"pooled held out 95 % bootstrap intervals ({mc.RESAMPLES} resamples, seed {mc.SEED}): "
          + json.dumps(bounds))
    shipped = review.Gate.of(ctx.settings)
    for name, accepted in ((f"AUTO_ACCEPT={HELDOUT_AUTO_ACCEPT}",
                            [r for r in found if review.gate(r["confidence"], HELDOUT_AUTO_ACCEPT)]),
                           (f"shipped gate ({shown(ctx.settings.auto_accept_table)}: threshold in force "
                            f"{sorted({str(shipped.threshold(r['model'])) for r in found})})",
                            [r for r in found if shipped.route(r["confidence"], r["model"])["auto"]])):
        wrong = sum(not r["correct"] for r in accepted)
        print(f"gate at {name}: {len(accepted)} of {len(found)} auto-accepted, {wrong} of them wrong")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="", help="judge methods to evaluate as verify ships them")
    parser.add_argument("--replay", default="", help="of --methods: replay only (offline)")
    parser.add_argument("--import-answers", nargs="*", default=[], metavar="CACHE_JSON")
    parser.add_argument("--limit", type=int, default=None, help="--methods: the first N items only")
    parser.add_argument("--splits", default="tune,report", help="--methods: the splits to run")
    parser.add_argument("--wice-rows", type=int, default=40, help="WiCE rows per split (0: skip WiCE)")
    parser.add_argument("--wice", type=Path, default=WICE_DEFAULT,
                        help="WiCE-format JSONL (default: the committed sample; e.g. the full dev split)")
    parser.add_argument("--wice-report", action="store_true", help="also run WiCE report rows")
    parser.add_argument("--wice-variants", default="base,criteria_explicit,options_reversed",
                        help="variants run on WiCE (the others are RFC only)")
    parser.add_argument("--variants", default=",".join(v.name for v in VARIANTS))
    parser.add_argument("--endpoint", default="http://127.0.0.1:8765", help="the running judge server")
    parser.add_argument("--write-calibration", action="store_true")
    parser.add_argument("--memo-only", action="store_true", help="score only prompts already answered (no calls)")
    parser.add_argument("--heldout", type=Path, default=None, metavar="DEV_JSONL",
                        help="the shipped pooled default on WiCE dev rows not in the sample (held out)")
    parser.add_argument("--heldout-per-class", type=int, default=20, help="--heldout: rows per WiCE label")
    parser.add_argument("--until", default="", metavar="HH:MM",
                        help="--heldout: start no row at or after this UTC time; score what is done")
    args = parser.parse_args(argv)
    if args.heldout:
        return heldout_main(args)
    if args.methods:
        return methods_main(args)
    chosen = [v for v in VARIANTS if v.name in args.variants.split(",")]
    runner = Runner(args.endpoint, args.memo_only)

    datasets = {"rfc": rfc_rows()}
    if args.wice_rows:
        splits = ("tune", "report") if args.wice_report else ("tune",)
        datasets["wice"] = wice_rows(args.wice, args.wice_rows, splits)
    results, readouts = {}, {}
    for name, rows in datasets.items():
        variants = chosen if name == "rfc" else [v for v in chosen if v.name in args.wice_variants.split(",")]
        rows = sorted(rows, key=lambda r: (r.sources["section"], r.id))     # same section back to back
        results[name] = run_variants(runner, rows, variants)
        tune = [r for r in rows if r.split == "tune"]
        readouts[name] = {v.name: {"raw": None, "mean": mean_offsets(tune, results[name], v.name),
                                   "fit": fit_offsets([(tune, results[name])], v.name)} for v in variants}

    # The server holds one set of offsets per question. "rfc-fit": the RFC tune offsets applied to
    # WiCE (transfer); "joint": offsets fitted on every dataset's tune split at once.
    tunes = {name: [r for r in rows if r.split == "tune"] for name, rows in datasets.items()}
    if len(datasets) > 1:
        for v in set.intersection(*(set(readouts[name]) for name in datasets)):
            joint = fit_offsets([(tunes[name], results[name]) for name in datasets], v)
            readouts["wice"][v]["rfc-fit"] = readouts["rfc"][v]["fit"]
            for name in datasets:
                readouts[name][v]["joint"] = joint

    for name, rows in datasets.items():
        variants = [v for v in chosen if v.name in readouts[name]]
        print_table(table_rows(sorted(rows, key=lambda r: r.id), results[name], variants, readouts[name]))
        print()
    used = [e for part in results.values() for e in part.values()]
    print(f"{len(used)} model calls (server compute seconds per call: median "
          f"{statistics.median(e['seconds'] for e in used):.2f}, max {max(e['seconds'] for e in used):.2f}; "
          f"prompt tokens median {statistics.median(e['tokens'] for e in used):.0f}); "
          f"judge server peak RSS {runner.http.get('/health').json().get('peak_rss_mib')} MiB")
    for name in readouts:
        for v, r in readouts[name].items():
            print(f"offsets {name}/{v}: " + " ".join(f"{k}={_fmt(o)}" for k, o in r.items() if o))

    if args.write_calibration:
        offsets = readouts["rfc"]["base"].get("joint") or readouts["rfc"]["base"]["fit"]
        key = calibration.question_key(judges.CHOICE_INSTRUCTIONS, judges.CHOICE_CRITERIA)
        fitted_on = " + ".join(f"{name} tune ({len(tunes[name])} rows)" for name in datasets)
        payload = {"model": weights.MODEL_FILE, "sha256": weights.MODEL_SHA256,
                   "fitted": _dt.date.today().isoformat(),
                   "how": "scripts/eval_judge.py --write-calibration: per-option offsets subtracted from the "
                          "log-probabilities before the softmax, grid-searched for the mean tune accuracy on "
                          + fitted_on,
                   "questions": {key: {"instructions": judges.CHOICE_INSTRUCTIONS, "options": list(OPTIONS),
                                       "offsets": offsets}}}
        calibration.CALIBRATION_FILE.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {shown(calibration.CALIBRATION_FILE)}: {_fmt(offsets)} "
              "(restart the judge server to load it)")
    return 0


def _fmt(offsets: dict) -> str:
    return "{" + ", ".join(f"{k}: {v:+.2f}" for k, v in offsets.items()) + "}"


if __name__ == "__main__":
    raise SystemExit(main())
