"""Judge methods: how a claim is judged against the passages shown, selected by JUDGE_METHOD.

Rules:
- One module per method, each a `base.JudgeMethod`: `one_pass.ChoiceMethod` and `one_pass.JsonMethod`
  (the one-pass baselines), `pooled.PooledMethod` (short premises, pooled), `decompose.DecomposeMethod`
  (atomic facts, each checked; names the failed fact), `qa.QaMethod` (question-answer consistency),
  `chunks.ChunksMethod` (LLM-AggreFact's yes/no per passage; tried on tune, lost to pooled).
- JUDGE_METHOD names the method every flow uses; the default is pooled, the method chosen on tune
  (docs/DESIGN.md). one_pass keeps each flow's own one-call baseline: the JSON judge in verify, batch
  and /verify (their rows need a quote), the Choice judge in check (the cited section).
- `judge` answers in the JSON label space (verify, batch, /verify); `relation_judge` in the Choice
  relation space (check), raising JudgeOutputInvalid when the method had no usable answer. Both name the
  method that answered (`method`).
- Every method runs on whichever judge is configured: Choice questions go where `Settings.choice_via`
  says (a JSON provider answers them as JSON, `choice_json`). Only JSON generation needs a JSON provider:
  with a Choice endpoint alone (`Settings.only_choice`), json (and one_pass's JSON baseline) falls back to
  choice, decompose and qa to pooled (FALLBACK), said once per process on stderr (`fallback_line`).
"""
from __future__ import annotations

import sys
import threading

from ... import config
from ...context import RunContext
from ...vocabulary import JUDGE_LABELS, RELATIONS
from .. import judges
from .base import JudgeMethod
from .chunks import ChunksMethod
from .decompose import DecomposeMethod
from .one_pass import ChoiceMethod, JsonMethod, choice_relation
from .pooled import PooledMethod
from .qa import QaMethod

METHODS: dict[str, JudgeMethod] = {m.name: m for m in (ChoiceMethod(), JsonMethod(), PooledMethod(),
                                                       DecomposeMethod(), QaMethod(), ChunksMethod())}
ONE_PASS = "one_pass"
NAMES = (ONE_PASS, *METHODS)
"""What JUDGE_METHOD may be (config.JUDGE_METHODS validates the setting)."""
if set(NAMES) != set(config.JUDGE_METHODS):
    raise ImportError(f"config.JUDGE_METHODS {config.JUDGE_METHODS} and citecheck.judge.methods {NAMES} disagree")
RELATION_OF = dict(zip(JUDGE_LABELS, RELATIONS))
FALLBACK = {"json": "choice", "decompose": "pooled", "qa": "pooled"}
"""Methods that generate JSON -> what answers instead when only a Choice endpoint is configured."""
_said: set[str] = set()
_saying = threading.Lock()              # batch threads choose at once: still one line


def fallback_line(name: str, instead: str) -> str:
    """The one stderr line a fallback prints: both methods and the variables that would enable the first."""
    return (f"citecheck: the {name} method needs a JSON judge and only a Choice judge (TYPESAFE_*) is "
            f"configured: the {instead} method answers instead (set OPENAI_API_KEY, OPENAI_BASE_URL, "
            f"ANTHROPIC_API_KEY or OLLAMA_HOST to run {name})")


def chosen(ctx: RunContext, one_pass: str) -> JudgeMethod:
    """The run's method; `one_pass` names the flow's baseline for JUDGE_METHOD=one_pass; a method needing
    JSON generation on a Choice-only judge falls back (FALLBACK), said once per process on stderr."""
    name = ctx.settings.judge_method
    name = one_pass if name == ONE_PASS else name
    if name in FALLBACK and ctx.settings.only_choice:
        name, asked = FALLBACK[name], name
        with _saying:
            first = asked not in _said
            _said.add(asked)
        if first:
            print(fallback_line(asked, name), file=sys.stderr, flush=True)
    return METHODS[name]


def judge(claim: str, passages: list[str], ctx: RunContext) -> dict:
    """The verify flow's verdict (the JSON judge for one_pass) over the shown passages."""
    return chosen(ctx, "json").judge(claim, passages, ctx)


def relation_judge(claim: str, source: str, ctx: RunContext) -> dict:
    """The check flow's answer {relation, confidence, model} (the Choice judge for one_pass)."""
    method = chosen(ctx, "choice")
    if method.name == "choice":
        return {**choice_relation(claim, source, ctx), "method": method.name}
    verdict = method.judge(claim, [source], ctx)
    if verdict["reason"]:
        raise judges.JudgeOutputInvalid(f"{method.name} method: {verdict['reason']}")
    return {"relation": RELATION_OF[verdict["label"]], "confidence": verdict["confidence"],
            "model": verdict["model"], "p_supported": verdict["p_supported"], "method": verdict["method"]}
