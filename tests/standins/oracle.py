"""The perfect judge: a stand-in on 127.0.0.1 that answers every judge question from gold.

Rules:
- Gold is a list of stories {claim, support: [spans], against: [spans]}: a span supports (or is the cited
  evidence against) its claim. Spans and texts are compared after `matching.normalise` (the guard's
  comparison): a text "holds" a span when the normalised span is a substring of the normalised text.
- A per-sentence question {claim, text} (options yes / no / unknown): yes where the text holds a support
  span of the claim, else no where it holds an against span, else unknown. The one-pass Choice question
  {claim, source}: supports / contradicts / says_nothing by the same rule over the whole source. A
  yes / no question {claim, document} (LLM-AggreFact's): yes where the document holds a support span.
- JSON verdicts: the label by the same rule over the passages, the evidence quote the span as the passage
  writes it (verbatim), confidence 1 (or the profile's). decompose's facts: the claim as its one fact. qa:
  the question is the claim, the claim's answer "yes"; the source's answer is the held span's opening words
  as the text writes them (at most 80 characters: verbatim, so qa's quote is on the page), null when the
  text holds none; same when that answer opens a support span, else different.
- Wire formats: the Jev/TypeSafe Choice API (POST /v1/systemone, `jev.choice_answer`), OpenAI chat
  completions (a Choice question as the JSON schema "choice" carries logprobs: the answer value is its own
  token), Anthropic messages (a forced tool's input) and Ollama /api/chat, told apart by the request path
  and the schema's properties. A question whose claim is in no story is answered unknown and counted in
  `Oracle.unknown_claims` (tests check it stays empty).
- `profile(right, options)` gives the probabilities: the perfect judge puts 1 on the right option;
  capable.py spreads a little.
"""
from __future__ import annotations

import json
import math
import re
import threading

from citecheck.matching import normalise

from .http import Recorded, StandIn
from .jev import choice_answer
from .judge import models_reply, wire_reply

SENTENCE_OPTIONS = ("yes", "no", "unknown")
SOURCE_OPTIONS = ("supports", "contradicts", "says_nothing")
SAME_OPTIONS = ("same", "different")
SUPPORT_OPTIONS = ("yes", "no")
LABEL_OF = dict(zip(SOURCE_OPTIONS, ("supported", "contradicted", "not_found")))
ANSWER_CHARS = 80
_PASSAGE_LINE = re.compile(r"^--- passage \d+ ---$", re.M)


def perfect(right: str, options: tuple[str, ...], key: str = "") -> dict[str, float]:
    """All probability on the right option."""
    return {option: 1.0 if option == right else 0.0 for option in options}


def verbatim(span: str, text: str) -> str | None:
    """`span` as `text` writes it (whitespace and folded characters as there), or None when not held."""
    needle = normalise(span)
    if not needle or needle not in normalise(text):
        return None
    words = needle.split(" ")
    pattern = r"\s+".join(re.escape(w) for w in words)
    found = re.search(pattern, text)
    return found.group(0) if found else needle       # folded quotes or dashes: the guard's form


def opening(span: str, limit: int = ANSWER_CHARS) -> str:
    """The span's first words, at most `limit` characters (a few words copied from the text)."""
    out = ""
    for word in span.split():
        if len(out) + len(word) + bool(out) > limit:
            break
        out = f"{out} {word}" if out else word
    return out or span[:limit]


class Gold:
    """Stories by normalised claim (a claim in several stories keeps every span)."""

    def __init__(self, stories: list[dict]):
        self.by_claim: dict[str, dict] = {}
        for story in stories:
            entry = self.by_claim.setdefault(normalise(story["claim"]), {"support": [], "against": []})
            entry["support"] += [s for s in story.get("support", []) if s not in entry["support"]]
            entry["against"] += [s for s in story.get("against", []) if s not in entry["against"]]

    def entry(self, claim: str) -> dict | None:
        return self.by_claim.get(normalise(claim))

    def held(self, claim: str, text: str) -> tuple[str, str | None]:
        """('support' | 'against' | 'none', the held span as `text` writes it)."""
        entry = self.entry(claim) or {"support": [], "against": []}
        for kind in ("support", "against"):
            for span in entry[kind]:
                found = verbatim(span, text)
                if found:
                    return kind, found
        return "none", None


class Oracle:
    """The judge's answers (module rules) over `gold`, with `profile` giving each answer's probabilities."""

    def __init__(self, gold: Gold, profile=perfect):
        self.gold, self.profile = gold, profile
        self.unknown_claims: set[str] = set()
        self.saw: dict[str, set[str]] = {}          # normalised claim -> the span kinds its questions held
        self.asked = 0
        self._lock = threading.Lock()

    def _known(self, claim: str) -> None:
        with self._lock:
            self.asked += 1
            if self.gold.entry(claim) is None:
                self.unknown_claims.add(claim)

    def _held(self, claim: str, text: str) -> tuple[str, str | None]:
        held, span = self.gold.held(claim, text)
        if held != "none":
            with self._lock:
                self.saw.setdefault(normalise(claim), set()).add(held)
        return held, span

    def shown_gold(self, claim: str) -> bool:
        """True when some question about `claim` showed a gold span (since `forget`)."""
        return bool(self.saw.get(normalise(claim)))

    def forget(self) -> None:
        with self._lock:
            self.saw.clear()
            self.unknown_claims.clear()

    # ------------------------------------------------ the right option of each question

    def right(self, state: dict, options: tuple[str, ...]) -> str:
        """The right option of a Choice question over `state`."""
        kinds = set(options)
        if kinds == set(SAME_OPTIONS):
            self._known(state["question"])
            entry = self.gold.entry(state["question"]) or {"support": []}
            answer = normalise(str(state.get("answer_2") or ""))
            same = any(answer and normalise(span).startswith(answer) for span in entry["support"])
            return "same" if same else "different"
        claim = state.get("claim", "")
        self._known(claim)
        text = next((state[k] for k in ("text", "source", "document") if k in state), "")
        held, _ = self._held(claim, text)
        if kinds == set(SENTENCE_OPTIONS):
            return {"support": "yes", "against": "no"}.get(held, "unknown")
        if kinds == set(SUPPORT_OPTIONS):
            return "yes" if held == "support" else "no"
        if kinds == set(SOURCE_OPTIONS):
            return {"support": "supports", "against": "contradicts"}.get(held, "says_nothing")
        return options[-1]

    def probabilities(self, state: dict, options: tuple[str, ...]) -> dict[str, float]:
        right = self.right(state, options)
        return self.profile(right, options, json.dumps(state, sort_keys=True, ensure_ascii=False))

    def verdict(self, claim: str, passages: list[str]) -> dict:
        """The JSON verdict over the shown passages."""
        self._known(claim)
        for passage in passages:
            held, quote = self._held(claim, passage)
            if held != "none":
                label = "supported" if held == "support" else "contradicted"
                break
        else:
            label, quote = "not_found", None
        options = ("supported", "contradicted", "not_found")
        p = self.profile(label, options, claim + "\n".join(passages))[label]
        return {"label": label, "evidence_quote": quote, "confidence": round(p, 4)}

    def qa_answer(self, question: str, text: str) -> dict:
        self._known(question)
        held, quote = self._held(question, text)
        return {"answer": opening(quote) if quote else None}

    # ------------------------------------------------ wire formats

    def jev(self, body: dict) -> dict:
        answers = {}
        for name, question in body["questions"].items():
            options = tuple(question["criteria"])
            answers[name] = choice_answer(self.probabilities(body["state"], options))
        return {"model": "oracle-jev", "usage": {"input_tokens": 42, "output_tokens": 1}, "answers": answers}

    def json_content(self, system: str, user: str, schema: dict) -> tuple[dict, dict | None]:
        """(the answer object, the Choice probabilities when it was a Choice question)."""
        props = set(schema.get("properties", {}))
        if props == {"answer", "confidence"}:
            options = tuple(schema["properties"]["answer"]["enum"])
            probs = self.probabilities(json.loads(user), options)
            best = max(probs, key=probs.get)
            return {"answer": best, "confidence": round(probs[best], 4)}, probs
        if props == {"facts"}:
            claim = user.removeprefix("Claim: ")
            self._known(claim)
            return {"facts": [claim]}, None
        if props == {"question", "answer"}:
            claim = user.removeprefix("Claim: ")
            self._known(claim)
            return {"question": claim, "answer": "yes"}, None
        if props == {"answer"}:
            text, _, question = user.removeprefix("Text:\n").rpartition("\n\nQuestion: ")
            return self.qa_answer(question, text), None
        if {"label", "evidence_quote", "confidence"} <= props:
            head, _, shown = user.partition("\n\nPassages:\n")
            passages = [p.strip("\n") for p in _PASSAGE_LINE.split(shown) if p.strip()]
            return self.verdict(head.removeprefix("Claim: "), passages), None
        raise ValueError(f"oracle: a schema it does not know: {sorted(props)}")

    def handle(self, request: Recorded):
        if request.method == "GET" and request.path.endswith("/models"):   # the model list: the stand-in's name
            return models_reply()
        body = request.json()
        if request.path.endswith("/systemone"):
            return 200, {}, self.jev(body)
        if request.path.endswith("/chat/completions"):
            messages, schema = body["messages"], body["response_format"]["json_schema"]["schema"]
            system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        elif request.path.endswith("/messages"):
            messages, schema = body["messages"], body["tools"][0]["input_schema"]
            system = body.get("system", "")
        else:
            messages, schema = body["messages"], body["format"]
            system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        answer, probs = self.json_content(system, messages[-1]["content"], schema)
        content = json.dumps(answer, ensure_ascii=False)
        reply = wire_reply(request.path, content)
        if request.path.endswith("/messages") and reply["content"][0]["type"] == "tool_use":
            reply["content"][0]["name"] = body["tools"][0]["name"]
        if request.path.endswith("/chat/completions") and probs is not None and body.get("logprobs"):
            tokens = logprob_tokens(answer, probs, body.get("top_logprobs", 5))
            reply["choices"][0]["logprobs"] = {"content": tokens}
        return 200, {}, reply


def _logp(p: float) -> float:
    return math.log(p) if p > 0 else -9999.0


def logprob_tokens(answer: dict, probs: dict[str, float], top: int) -> list[dict]:
    """OpenAI's logprobs.content for a Choice answer: the answer value is its own token, its alternatives
    the other options; the other tokens are certain."""
    confidence = json.dumps(answer["confidence"])
    pieces = ['{"answer": "', answer["answer"], '", "confidence": ', confidence, "}"]
    tokens = []
    for piece in pieces:
        if piece == answer["answer"]:
            ranked = sorted(probs.items(), key=lambda kv: -kv[1])[:top]
            tokens.append({"token": piece, "logprob": _logp(probs[piece]), "bytes": list(piece.encode()),
                           "top_logprobs": [{"token": t, "logprob": _logp(p), "bytes": list(t.encode())}
                                            for t, p in ranked]})
        else:
            tokens.append({"token": piece, "logprob": 0.0, "bytes": list(piece.encode()),
                           "top_logprobs": [{"token": piece, "logprob": 0.0, "bytes": list(piece.encode())}]})
    return tokens


def oracle_standin(stories: list[dict], profile=perfect) -> StandIn:
    """A StandIn answering every wire format from `stories`; `server.oracle` is its Oracle."""
    oracle = Oracle(Gold(stories), profile)
    server = StandIn(oracle.handle)
    server.oracle = oracle
    return server


__all__ = ["Gold", "Oracle", "oracle_standin", "perfect", "verbatim"]
