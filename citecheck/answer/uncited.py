"""Which sentences of an answer assert a checkable fact: the rule behind `uncited`.

The rule (chosen on data/uncited/tune.jsonl only, measured on report.jsonl: docs/answer-report.md): a
sentence asserts a checkable fact unless
- it is not a statement: it ends with "?" or ":", or has fewer than MIN_WORDS words ("Sources",
  "Under pressure:", "Why does this happen?");
- it speaks about the conversation or the answer itself: it opens with a first-person or discourse phrase
  (`CONVERSATION`: "I'll", "Let me", "Here is", "Feel free", "Now for", …) or points at the answer's own
  parts (`POINTERS`: "below");
- it is an instruction: it opens with one of the bare verbs `INSTRUCTIONS` ("Use a thermometer …");
- it hedges: an opinion or hedge phrase (`HEDGES`: "I think", "it seems", "might", …) and no figure;
- its subject is vague ("That", "There", "Each", "Both", "It": `VAGUE_SUBJECTS`) and it carries no figure
  and no name;
- it has no content a source could confirm: no figure (a digit or a number word), no name (a capitalised
  word after the first), none of the verbs of fact `FACTUAL` ("is", "was", "must", …) and no word ending in
  "s" or "ed" after the first (a verb's third-person or past form: "boils", "raised").
The word lists hold only what the tune half shows, so the report half's numbers are not fitted to it.
Words match case-insensitively on word boundaries; nothing is fetched and no model is asked.
"""
from __future__ import annotations

import re

MIN_WORDS = 4
CONVERSATION = ("i", "i'll", "i'm", "i've", "i'd", "we'll", "let me", "let's", "here is", "here's",
                "here are", "sure", "feel free", "happy", "the short version", "now for", "one more thing", "you asked",
                "that covers", "there are a few")
POINTERS = ("below",)
HEDGES = ("i think", "it seems", "seems", "might", "it depends on what", "may want", "a matter of taste")
INSTRUCTIONS = ("use", "keep", "consider", "salt")
VAGUE_SUBJECTS = ("that", "there", "each", "both", "it")
FACTUAL = ("is", "are", "was", "were", "has", "have", "had", "does", "did", "must", "cannot", "can",
           "will", "should", "may", "shall")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\d.,]*")
_FIGURE = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
                     r"hundred|thousand|million|billion|dozen|half)\b", re.I)


def _opens_with(low: str, phrases: tuple[str, ...]) -> bool:
    return any(re.match(rf"{re.escape(p)}\b", low) for p in phrases)


def _has(low: str, phrases: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(p)}\b", low) for p in phrases)


def asserts_fact(sentence: str) -> bool:
    """True when the sentence asserts a checkable fact (module rule)."""
    text = " ".join(sentence.split())
    words = _WORD.findall(text)
    low = text.lower().replace("’", "'")
    if text.endswith(("?", ":")) or len(words) < MIN_WORDS:
        return False
    if _opens_with(low, CONVERSATION) or _has(low, POINTERS) or _opens_with(low, INSTRUCTIONS):
        return False
    figure = bool(_FIGURE.search(text))
    name = any(w[0].isupper() for w in words[1:])
    if _has(low, HEDGES) and not figure:
        return False
    if _opens_with(low, VAGUE_SUBJECTS) and not (figure or name):
        return False
    return figure or name or _has(low, FACTUAL) or any(w.lower().endswith(("s", "ed")) for w in words[1:])
