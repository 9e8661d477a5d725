"""The judge-method base: one way to judge a claim against the passages shown, as a sequence of steps.

Rules:
- A method answers in the JSON judge's label space: {label, evidence_quote, confidence, reason, model,
  p_supported, calls, steps}. `p_supported` is the method's probability that the claim is supported
  (what AUROC ranks); `steps` lists each step's question text and answer, for the trace.
- Every step is one model call through the cache, stamped with the model and date like every other call.
  A Choice step goes where `Settings.choice_via` says: typesafe-sdk (`judges.choice_step`) or the JSON
  provider (`choice_json.choice_step`, one call per question); a generation step to JUDGE_PROVIDER.
- Every verdict carries `method`: the name of the method that answered (after any fallback), and `model`:
  the model that answered its Choice steps as their cache entries are stamped (what the server reported),
  never a default name the server did not give.
- A step that answers off its contract makes the verdict not_found with the reason
  `judge_output_invalid: step N: <what was wrong>` (confidence 0); the method's other steps still run,
  and nothing off-contract is cached. A judge that cannot be reached raises JudgeUnavailable (verify
  labels it). A method that would need more calls than JUDGE_CALL_BUDGET stops before spending them:
  not_found, reason `judge_call_budget: ...` naming both numbers.
- The evidence quote is text of the shown passages; verify still passes it through the guard.
"""
from __future__ import annotations

from ...cache import request_key
from ...context import RunContext
from ...vocabulary import JUDGE_CALL_BUDGET, JUDGE_OUTPUT_INVALID, NOT_FOUND
from .. import choice_json, judges
from ..judge_contract import OffContract


class BudgetExceeded(Exception):
    """A method needs more model calls than JUDGE_CALL_BUDGET allows (the message names both)."""


class Steps:
    """The model calls of one citation: counted against the budget; off-contract answers noted."""

    def __init__(self, ctx: RunContext):
        self.ctx, self.calls, self.done, self.invalid = ctx, 0, [], []
        self.answered: list[str] = []       # the models that answered the Choice steps (their cache stamps)

    def reserve(self, n: int) -> None:
        """Raise BudgetExceeded unless `n` more calls fit in JUDGE_CALL_BUDGET."""
        budget = self.ctx.settings.judge_call_budget
        if self.calls + n > budget:
            raise BudgetExceeded(f"needs {self.calls + n} model calls, JUDGE_CALL_BUDGET={budget}")

    def run(self, what: str, call, key: str | None = None) -> object | None:
        """`call()` as the next step (`what` says what it asked, `key` is its cache key); None when off
        contract."""
        self.reserve(1)
        self.calls += 1
        try:
            answer = call()
        except OffContract as exc:
            self.invalid.append(f"step {self.calls}: {exc}")
            answer = None
        self.done.append({"step": self.calls, "asked": what, "answer": answer, "key": key})
        return answer

    def choice(self, what: str, state: dict, questions: dict, model: str) -> dict | None:
        """A Choice step where `choice_via` sends it, under the key it is cached by (one question's key; a
        list for several questions over a JSON provider, one call each)."""
        settings = self.ctx.settings
        if settings.choice_via == "typesafe":
            request = judges.step_request(state, questions)
            key = request_key("typesafe.system_one", model, request)
            def ask():
                return judges.choice_step(state, questions, self.ctx, request, self.answered)
            return self.run(what, ask, key)
        keys = list(choice_json.request_keys(state, questions, settings).values())
        return self.run(what, lambda: choice_json.choice_step(state, questions, self.ctx, self.answered),
                        keys[0] if len(keys) == 1 else keys)

    def ask_each(self, units: list[str], state_of, name: str, question, model: str) -> list[tuple[str, dict]]:
        """One Choice step per unit, the budget for all reserved before the first, state `state_of(unit)`,
        the one question `{name: question}` -> [(unit, probabilities)] of the answers on contract."""
        self.reserve(len(units))
        asked = []
        for unit in units:
            answer = self.choice(unit, state_of(unit), {name: question}, model)
            if answer is not None:
                asked.append((unit, answer[name]["probabilities"]))
        return asked

    def generate(self, what: str, messages: list[dict], schema: dict, check) -> object | None:
        """A JSON generation step (`judges.json_step`, cached as 'judge.<what>/<provider>'), under its key."""
        settings = self.ctx.settings
        key = request_key(f"judge.{what}/{settings.judge_provider}", settings.judge_model,
                          {"messages": messages, "schema": schema})
        return self.run(what, lambda: judges.json_step(messages, schema, what, self.ctx, check), key)


def verdict(label: str, quote: str | None, confidence: float, p_supported: float, model: str,
            steps: Steps, reason: str | None = None) -> dict:
    return {"label": label, "evidence_quote": quote, "confidence": confidence, "reason": reason,
            "model": model, "p_supported": p_supported, "calls": steps.calls, "steps": steps.done}


def unusable(reason: str, model: str, steps: Steps) -> dict:
    """not_found with a reason: no usable answer (confidence 0, so a person reviews it)."""
    return verdict(NOT_FOUND, None, 0.0, 0.0, model, steps, reason)


class JudgeMethod:
    """One judge method. Subclasses set `name` and `model(settings)` and implement `steps`."""
    name = ""

    def model(self, settings) -> str:
        """The model a verdict names before any answer: the one its Choice questions are asked of (once one
        answered, `judge` names that one, as its cache entry is stamped)."""
        return settings.choice_model

    def steps(self, claim: str, passages: list[str], steps: Steps) -> dict:
        """The verdict from the steps' answers (see module rules); called by `judge`."""
        raise NotImplementedError

    def judge(self, claim: str, passages: list[str], ctx: RunContext) -> dict:
        """The verdict for `claim` against the shown `passages` (module rules)."""
        steps = Steps(ctx)
        model = self.model(ctx.settings)
        try:
            out = self.steps(claim, passages, steps)
        except BudgetExceeded as exc:
            out = unusable(f"{JUDGE_CALL_BUDGET}: {self.name} {exc}", model, steps)
        else:
            if steps.invalid:
                out = unusable(f"{JUDGE_OUTPUT_INVALID}: {'; '.join(steps.invalid)}", model, steps)
        return {**out, "model": steps.answered[-1] if steps.answered else out["model"], "method": self.name}
