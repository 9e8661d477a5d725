"""Judge levels (issue 23, items 3 and 4): the gold the perfect judge answers from, the run contexts of
each configured judge, the flows run over it, and the agreement tables. Shared by tests/test_levels.py
and benchmarks/bench_levels.py.

Rules:
- Gold (`stories`): WiCE (supported rows: every sentence of a gold supporting set supports; not_supported
  rows: those sentences are the evidence against; partially_supported: none), the RFC pairs (the quote
  supports or contradicts; says_nothing: none), notebook 01's citations (data/citations.json `expected`),
  and the fixture site's planted stories (SITE_CASES: notebooks 02 and 03's claims; the label a reader
  gives the page, notebook 03's reviewer decisions and issue 23's reading of the survey PDF).
- A judge is configured as a user would (`context`): `typesafe` = TYPESAFE_ENDPOINT only; `openai` =
  OPENAI_BASE_URL (+ JUDGE_PROVIDER=openai); `anthropic` = ANTHROPIC_BASE_URL + ANTHROPIC_API_KEY=fake;
  `ollama` = OLLAMA_HOST; `both` = the Choice endpoint and OpenAI (every step of every method on main).
  Each context has its own cache file under the caller's temporary directory, never the repository's.
- Flows: check (`check.check_citations`), verify (`verify.trace_text` on the page text;
  `verify.verify_claim` on the fixture site) and batch (`batch.run_batch` on the site's claims files).
  An exception a flow raises is the row's answer `error: <type>` (wrong, never a crash of the table).
- WiCE agreement is binary (supported vs not, `evaluation.GOLD_OF`); RFC 3-class; the stories by verdict
  (check) or label (verify, batch). `gold_shown`: the oracle saw a gold span in some question of that row
  (what the method was shown held the evidence); a row where it did not is a retrieval miss.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from citecheck import check, evaluation, verify
from citecheck.batch import run_batch
from citecheck.config import Settings
from citecheck.context import RunContext
from citecheck.evaluation import method_comparison
from citecheck.source import sources
from citecheck.vocabulary import NUMBER_MISMATCH, VERDICT_OF

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("pooled", "decompose", "qa", "choice", "json", "one_pass")
PROVIDERS = ("typesafe", "openai", "anthropic", "ollama")
RFC_LABEL = {"supports": "supported", "contradicts": "contradicted", "says_nothing": "not_found"}
CHECK_SPANS = {
    "C6": ["Use of this claim is OPTIONAL."],
    "C8": ["The \"nbf\" (not before) claim identifies the time before which the JWT MUST NOT be accepted for "
           "processing."],
    "C9": ["The \"aud\" (audience) claim identifies the recipients that the JWT is intended for."]}
"""Spans the citation's quote does not give, from its section: C6's section says what makes the claim false
(the quote is only the cited evidence), C8 cites no quote, C9 misquotes the sentence."""

# the fixture site's planted stories: (id, claim, page path, the reader's label)
HUNDRED = "Water boils at 100 °C at sea level."
FIFTY = "Water boils at 50 °C at sea level."
ALTITUDE = "At 3,000 metres above sea level, water boils at roughly 90 °C."
SEA_LEVEL = "At sea level, pure water boils at 100 °C (212 °F)."
GUIDE_90 = ("In a mountain hut at 3,000 metres above sea level, a pot of water comes to a full boil at "
            "roughly 90 °C, ten degrees short of what a sea-level recipe expects.")
SURVEY_90 = ("At 1,500 metres above sea level the water boiled at about 95 °C, and at 3,000 metres above sea "
             "level it came to a full boil at roughly 90 °C.")
SALT = ("A tablespoon of salt in a large pot of pasta water lifts it by a small fraction of a degree, far "
        "too little to change cooking times.")
SCALD = "Water at 50 °C is hot enough to scald skin if you hold a hand in it, but it is far from boiling."
COOKER = ("By trapping steam, it raises the pressure inside the pot to about one atmosphere above the air "
          "outside, and at that pressure water does not boil until it reaches about 120 °C.")
SALT_CLAIM = "A tablespoon of salt raises the boiling point of pasta water by several degrees."
CLIMB = "It has to climb another fifty degrees before it boils at sea level."
SITE_STORIES = [
    {"claim": HUNDRED, "support": [SEA_LEVEL]},
    {"claim": FIFTY, "against": [SCALD, SEA_LEVEL, CLIMB]},
    {"claim": ALTITUDE, "support": [SURVEY_90, GUIDE_90]},
    {"claim": SEA_LEVEL, "support": [SEA_LEVEL]},
    {"claim": "Water boils at 212 °F at sea level.", "support": [SEA_LEVEL]},
    {"claim": "Inside a pressure cooker, water does not boil until it reaches about 120 °C.",
     "support": [COOKER]},
    {"claim": "Limescale inside a kettle raises the temperature at which its water boils."},
    {"claim": SALT_CLAIM, "against": [SALT]},
    {"claim": "Water does not boil at 100 °C at sea level.", "against": [SEA_LEVEL]},
    {"claim": "At sea level, pure water boils at 100 °C.", "support": [SEA_LEVEL]},
    {"claim": "In a mountain hut at 3,000 metres, water boils at roughly 90 °C.", "support": [GUIDE_90]},
]
SITE_CASES = [
    ("n02-hundred", HUNDRED, "/articles/boiling-point", "supported"),
    ("n02-fifty", FIFTY, "/articles/boiling-point", "contradicted"),
    ("n02-altitude", ALTITUDE, "/guides/cooking-at-altitude", "supported"),
    ("n02-home", HUNDRED, "/", "not_found"),
    ("n02-guide", HUNDRED, "/guides/cooking-at-altitude", "not_found"),
    ("n02-paywall", HUNDRED, "/premium/pressure-cooking", "not_found"),
    ("n03-c5-survey", ALTITUDE, "/reports/boiling-point-survey.pdf", "supported"),
]
"""verify's planted stories on judged pages (notebook 02; c5 on the survey PDF: issue 23's reading)."""
BATCH_FILES = ("data/claims.jsonl", "data/claims_more.jsonl")
BATCH_GOLD = {
    ("c1", "/articles/boiling-point"): "supported", ("c2", "/articles/water-boiling-point"): "supported",
    ("c3", "/premium/pressure-cooking"): "not_found",
    ("c5", "/reports/boiling-point-survey.pdf"): "supported",
    ("m1", "/articles/boiling-point"): "contradicted", ("m2", "/articles/boiling-point"): "contradicted",
    ("m3", "/articles/boiling-point"): "supported", ("m4", "/guides/cooking-at-altitude"): "supported"}
"""Notebook 03's reviewer labels for the judged rows (+ c5 on the survey); settled rows: routes.json."""

# the capable judge's cases: a page, a supported / contradicted / silent claim, and the foundation case
CAPABLE_PAGE = (
    f"{SEA_LEVEL} That figure holds at standard atmospheric pressure, 101.325 kilopascals, which is the "
    "average pressure of the air at sea level.\n\n"
    "Turning up the flame makes the water boil faster, not hotter. Cooks who crank the burner to "
    "\"speed up\" pasta only waste gas and splash the stove.\n\n"
    f"Dissolved salt does raise the boiling point, but only a little. {SALT} "
    "Salt the water for flavour, not for heat.")
SILENT = "Water boils faster with a lid on the pot."
CAPABLE_CASES = {"supported": (HUNDRED, "supported"),
                 "contradicted": (SALT_CLAIM, "contradicted"),
                 "silent": (SILENT, "not_found")}
"""case -> (claim on CAPABLE_PAGE, the label it must get). The silent claim shares most of its words with the
page (coverage 0.8): on topic, and the page does not say it."""
CAPABLE_STORIES = [{"claim": HUNDRED, "support": [SEA_LEVEL]}, {"claim": SALT_CLAIM, "against": [SALT]},
                   {"claim": SILENT}]
FOUNDATION = {"id": "F1", "claim": "Every JWT is required to carry an exp claim.", "section": "4.1.4",
              "quote": "Use of this claim is OPTIONAL.", "expected": "contradicted"}
"""Issue 23's foundation case: an exact quote; the judge answers no at 0.97 (yes and unknown 0.015)."""
FOUNDATION_STORIES = [{"claim": FOUNDATION["claim"], "against": [FOUNDATION["quote"]]}]


# ---------------------------------------------------------------- gold

def wice_rows() -> list[dict]:
    """WiCE sample rows: claim, split, binary gold, page text, support / against spans."""
    out = []
    for row in evaluation.load_sample():
        spans = [" ".join(row["evidence"][i].split()) for group in row["supporting_sentences"] for i in group]
        spans = list(dict.fromkeys(spans))
        out.append({"dataset": "wice", "id": row["id"], "split": row["split"], "label": row["label"],
                    "gold": row["gold"], "claim": row["claim"], "text": evaluation.wice_page(row["evidence"]),
                    "support": spans if row["label"] == "supported" else [],
                    "against": spans if row["label"] == "not_supported" else []})
    return out


def rfc_rows() -> list[dict]:
    """The RFC pairs: claim, section text, 3-class gold (as a JSON label), the quote as its span."""
    return [{**item, "gold": RFC_LABEL[item["gold"]],
             "support": [item["quote"]] if item["gold"] == "supports" else [],
             "against": [item["quote"]] if item["gold"] == "contradicts" else []}
            for item in method_comparison.rfc_items()]


def check_rows() -> list[dict]:
    """Notebook 01's citations with their expected verdicts and spans."""
    rows = json.loads((ROOT / "data" / "citations.json").read_text("utf-8"))
    spans = {"verified": "support", "contradicted": "against"}
    return [{**c, "gold": c["expected"],
             **{kind: [*([c["quote"]] if c["quote"] else []), *CHECK_SPANS.get(c["id"], [])]
                if spans.get(c["expected"]) == kind else [] for kind in ("support", "against")}}
            for c in rows]


def stories() -> list[dict]:
    """Every story the perfect judge knows."""
    return [*({"claim": r["claim"], "support": r["support"], "against": r["against"]}
              for r in wice_rows() + rfc_rows() + check_rows()), *SITE_STORIES]


# ---------------------------------------------------------------- contexts

def environment(provider: str, url: str) -> dict[str, str]:
    """The variables of a user whose only judge is `provider` at `url` ('both': Choice and OpenAI)."""
    if provider == "typesafe":
        return {"TYPESAFE_ENDPOINT": url}
    if provider == "openai":
        return {"OPENAI_BASE_URL": f"{url}/v1", "JUDGE_PROVIDER": "openai"}
    if provider == "anthropic":
        return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "fake", "JUDGE_PROVIDER": "anthropic"}
    if provider == "ollama":
        return {"OLLAMA_HOST": url, "JUDGE_PROVIDER": "ollama"}
    if provider == "both":
        return {"TYPESAFE_ENDPOINT": url, "OPENAI_BASE_URL": f"{url}/v1", "JUDGE_PROVIDER": "openai"}
    raise ValueError(f"no such provider {provider!r}")


def context(directory: Path, provider: str, url: str, method: str, **extra: str) -> RunContext:
    """A run context for `method` over `provider`'s stand-in, with its own cache and audit DB."""
    directory = Path(tempfile.mkdtemp(prefix=f"{provider}-{method}-", dir=directory))
    env = {**environment(provider, url), "JUDGE_METHOD": method, "JUDGE_RETRIES": "0",
           "CITECHECK_CACHE": str(directory / "cache.json"), "AUDIT_DB": str(directory / "audit.db"),
           "CITECHECK_ALLOW_PRIVATE": "1", **extra}
    return RunContext.build(Settings.from_env(env))


# ---------------------------------------------------------------- flows

def _error(exc: Exception) -> str:
    return f"error: {type(exc).__name__}"


def traced(ctx: RunContext, claim: str, text: str, url: str = "text:") -> dict:
    """verify.trace_text -> {label, reason, quote, method (when the row names what answered)}."""
    try:
        trace = verify.trace_text(claim, text, ctx, url)
    except Exception as exc:                    # noqa: BLE001 - a flow that raises is a wrong answer
        return {"label": _error(exc), "reason": str(exc)[:200], "quote": None}
    return {"label": trace.row["label"], "reason": trace.row["reason"], "quote": trace.row["evidence_quote"],
            "method": (trace.judged or {}).get("method")}


def checked(ctx: RunContext, document, citations: list[dict]) -> list[dict]:
    """check.check_citations -> one row per citation (verdict), an error row each when it raises."""
    problems: list = []
    try:
        return check.check_citations(document, citations, ctx, unavailable=problems)
    except Exception as exc:                    # noqa: BLE001
        return [{"id": c["id"], "verdict": _error(exc)} for c in citations]


def rfc_document():
    return sources.load(method_comparison.RFC_DOCUMENT)


def site_verified(ctx: RunContext, base_url: str, claim: str, path: str) -> dict:
    """verify.verify_claim on the fixture site -> the citation row."""
    try:
        return verify.verify_claim(claim, [base_url + path], ctx)["citations"][0]
    except Exception as exc:                    # noqa: BLE001
        return {"label": _error(exc), "reason": str(exc)[:200]}


def batch_file(directory: Path, base_url: str) -> Path:
    """The claims files with the fixture site's address replaced by the running one's."""
    lines = []
    for name in BATCH_FILES:
        text = (ROOT / name).read_text("utf-8").replace("http://127.0.0.1:8731", base_url)
        lines += [line for line in text.splitlines() if line.strip()]
    path = Path(directory) / "claims.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def batch_gold(path: str) -> str | None:
    """The label a batch row on `path` should have: the reader's, or the one the route was built for."""
    from citecheck.web import fixture_site
    routes = fixture_site.load_routes()
    return (routes.get(path) or {}).get("expect", {}).get("label")


def batched(ctx: RunContext, claims: Path, base_url: str) -> list[dict]:
    """batch.run_batch on `claims` -> rows {id, path, label, gold}."""
    try:
        result = run_batch(claims, ctx, batch=f"levels-{ctx.settings.judge_method}")
    except Exception as exc:                    # noqa: BLE001
        return [{"id": "*", "path": "*", "label": _error(exc), "gold": None}]
    out = []
    for row in result.rows:
        path = row["url"].removeprefix(base_url)
        gold = BATCH_GOLD.get((row["id"], path)) or batch_gold(path)
        out.append({"id": row["id"], "path": path, "label": row["label"], "gold": gold,
                    "reason": row["reason"]})
    return out


# ---------------------------------------------------------------- tables

def binary(label: str) -> str:
    return evaluation.LABEL_PREDICTED.get(label, "not_supported")


def verdict_of(relation_label: str) -> str:
    """A JSON label's check verdict (supported -> verified, ...)."""
    relation = {"supported": "supports", "contradicted": "contradicts", "not_found": "says_nothing"}
    return VERDICT_OF.get(relation.get(relation_label), relation_label)


def fmt_cell(agree: int, n: int) -> str:
    return f"{agree / n:.3f} ({agree}/{n})" if n else "-"


def agreement(*datasets: dict[str, dict]) -> str:
    """right/n over one or more datasets' cases (answer == gold), as `fmt_cell`."""
    cases = [r for d in datasets for r in d.values()]
    return fmt_cell(sum(r["answer"] == r["gold"] for r in cases), len(cases))


def wrong(cases: dict[str, dict]) -> list[str]:
    """The ids of the cases whose answer is not their gold."""
    return [cid for cid, r in cases.items() if r["answer"] != r["gold"]]


def table(rows: list[dict], columns: list[str]) -> str:
    """Plain text table (no pandas)."""
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(str(r.get(c, "")).ljust(w) for c, w in zip(columns, widths)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


# ---------------------------------------------------------------- one method at a level, every dataset

DATASETS = ("rfc verify", "rfc check", "n01 check", "site verify", "batch judged", "batch settled",
            "wice report", "wice tune")


def perfect_results(ctx: RunContext, oracle, base_url: str, directory: Path,
                    datasets: tuple[str, ...] = DATASETS) -> dict[str, dict[str, dict]]:
    """dataset -> case id -> {gold, answer, ...} for one method's context over the perfect judge. WiCE
    rows carry `shown` (the oracle saw a gold span in that row's questions) and compare binary labels."""
    out: dict[str, dict[str, dict]] = {}
    rfc = rfc_rows()
    if "rfc verify" in datasets:
        out["rfc verify"] = {r["id"]: {"gold": r["gold"], **_answer(traced(ctx, r["claim"], r["text"],
                                                                           f"rfc:{r['id']}"))} for r in rfc}
    if "rfc check" in datasets:
        citations = [{k: r[k] for k in ("id", "claim", "quote", "section")} for r in rfc]
        rows = checked(ctx, rfc_document(), citations)
        out["rfc check"] = {r["id"]: {"gold": verdict_of(r["gold"]), "answer": row["verdict"]}
                            for r, row in zip(rfc, rows)}
    if "n01 check" in datasets:
        stories_ = check_rows()
        rows = checked(ctx, rfc_document(), [{k: c[k] for k in ("id", "claim", "quote", "section")}
                                             for c in stories_])
        out["n01 check"] = {c["id"]: {"gold": c["gold"], "answer": row["verdict"]}
                            for c, row in zip(stories_, rows)}
    if "site verify" in datasets:
        out["site verify"] = {}
        for cid, claim, path, gold in SITE_CASES:
            row = site_verified(ctx, base_url, claim, path)
            out["site verify"][cid] = {"gold": gold, "answer": row["label"], "reason": row.get("reason")}
    if "batch judged" in datasets or "batch settled" in datasets:
        rows = batched(ctx, batch_file(directory, base_url), base_url)
        for name, judged_ in (("batch judged", True), ("batch settled", False)):
            out[name] = {f"{r['id']}:{r['path']}": {"gold": r["gold"], "answer": r["label"],
                                                     "reason": r["reason"]}
                         for r in rows if ((r["id"], r["path"]) in BATCH_GOLD) == judged_}
    for split in ("report", "tune"):
        if f"wice {split}" not in datasets:
            continue
        out[f"wice {split}"] = {}
        for row in (r for r in wice_rows() if r["split"] == split):
            oracle.forget()
            got = traced(ctx, row["claim"], row["text"], f"wice:{row['id']}")
            out[f"wice {split}"][row["id"]] = {
                "gold": row["gold"], "answer": binary(got["label"]), "label": got["label"],
                "wice": row["label"], "shown": oracle.shown_gold(row["claim"]), "reason": got["reason"],
                "unknown": sorted(oracle.unknown_claims)}
    return out


def _answer(got: dict) -> dict:
    return {"answer": got["label"], "reason": got.get("reason"), "method": got.get("method")}


def retrieval_misses(rows: dict[str, dict]) -> list[str]:
    """WiCE supported rows whose gold sentence the method was never shown."""
    return [cid for cid, r in rows.items() if r["wice"] == "supported" and not r["shown"]]


def number_downgrades(rows: dict[str, dict]) -> list[str]:
    """WiCE rows whose supported the number rule sent to a person: a claim number nowhere in what was shown."""
    return [cid for cid, r in rows.items() if r.get("reason") == NUMBER_MISMATCH]


def capable_results(ctx: RunContext, foundation_ctx: RunContext) -> dict[str, dict]:
    """case -> {gold, answer} for one (method, judge): CAPABLE_CASES on CAPABLE_PAGE (verify.trace_text),
    and the foundation case through check and through verify."""
    out = {case: {"gold": gold, **_answer(traced(ctx, claim, CAPABLE_PAGE))}
           for case, (claim, gold) in CAPABLE_CASES.items()}
    citation = {k: FOUNDATION[k] for k in ("id", "claim", "quote", "section")}
    row = checked(foundation_ctx, rfc_document(), [citation])[0]
    out["foundation check"] = {"gold": "contradicted", "answer": row["verdict"], "status": row.get("status")}
    section = rfc_document().sections[FOUNDATION["section"]].text
    out["foundation verify"] = {"gold": "contradicted",
                                **_answer(traced(foundation_ctx, FOUNDATION["claim"], section))}
    return out
