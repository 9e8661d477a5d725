"""Judge methods: how a claim is judged against the passages shown, selected by JUDGE_METHOD.

Rules:
- One module per method, each a `base.JudgeMethod`: `one_pass.ChoiceMethod` and `one_pass.JsonMethod`
  (the one-pass baselines), `pooled.PooledMethod` (short premises, pooled), `decompose.DecomposeMethod`
  (atomic facts, each checked; names the failed fact), `qa.QaMethod` (question-answer consistency).
- JUDGE_METHOD names the method every flow uses; the default is pooled, the method chosen on tune
  (docs/DESIGN.md). one_pass keeps each flow's own one-call baseline: the JSON judge in verify, batch
  and /verify (their rows need a quote), the Choice judge in check (the cited section).
- `judge` answers in the JSON label space (verify, batch, /verify); `relation_judge` in the Choice
  relation space (check), raising JudgeOutputInvalid when the method had no usable answer.
"""
from __future__ import annotations

from ... import config
from ...context import RunContext
from ...vocabulary import JUDGE_LABELS, RELATIONS
from .. import judges
from .base import JudgeMethod
from .chunks import ChunksMethod
from .decompose import DecomposeMethod
from .one_pass import ChoiceMethod, JsonMethod
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


def chosen(ctx: RunContext, one_pass: str) -> JudgeMethod:
    """The run's method; `one_pass` names the flow's baseline for JUDGE_METHOD=one_pass."""
    name = ctx.settings.judge_method
    return METHODS[one_pass if name == ONE_PASS else name]


def judge(claim: str, passages: list[str], ctx: RunContext) -> dict:
    """The verify flow's verdict (the JSON judge for one_pass) over the shown passages."""
    return chosen(ctx, "json").judge(claim, passages, ctx)


def relation_judge(claim: str, source: str, ctx: RunContext) -> dict:
    """The check flow's answer {relation, confidence, model} (the Choice judge for one_pass)."""
    method = chosen(ctx, "choice")
    if method.name == "choice":
        return judges.choice_judge(claim, source, ctx)
    verdict = method.judge(claim, [source], ctx)
    if verdict["reason"]:
        raise judges.JudgeOutputInvalid(f"{method.name} method: {verdict['reason']}")
    return {"relation": RELATION_OF[verdict["label"]], "confidence": verdict["confidence"],
            "model": verdict["model"], "p_supported": verdict["p_supported"]}
