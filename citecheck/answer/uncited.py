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

French, German and Russian (`source.language.detect` of the sentence) follow the same steps with their own
cues (`CUES`, chosen on data/uncited/<lang>_tune.jsonl, measured on <lang>_report.jsonl): an instruction
is also a first word in the imperative form (German "Verwenden Sie", Russian "-йте"/"-ите"); German names
are not a cue (every noun is capitalised); the verb-form cue is the language's third-person or past
endings (`ENDINGS`; German: lower-case words only). A sentence in a language the cookbook does not read
asserts a fact when it is a statement of MIN_WORDS words (it cannot be read, so it is not waved through).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..source import language

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


@dataclass(frozen=True)
class Cues:
    """One language's cues for the module rule."""
    conversation: tuple[str, ...]
    pointers: tuple[str, ...]
    hedges: tuple[str, ...]
    instructions: tuple[str, ...]
    vague_subjects: tuple[str, ...]
    factual: tuple[str, ...]
    endings: tuple[str, ...]
    figure: re.Pattern
    word: re.Pattern = _WORD
    imperative: re.Pattern | None = None
    names: bool = True
    lower_endings: bool = False


_LETTERS = re.compile(r"[^\W\d_][\w'’-]*|\d[\d.,]*")
CUES = {
    "en": Cues(CONVERSATION, POINTERS, HEDGES, INSTRUCTIONS, VAGUE_SUBJECTS, FACTUAL, ("s", "ed"), _FIGURE),
    "fr": Cues(("je", "j'", "voici", "bonjour", "merci", "n'hésitez", "dites-moi", "passons", "voyons",
                "bonne question", "excellente", "c'est là", "pour faire court", "en résumé"),
               ("ci-dessous",), ("je pense", "il me semble", "semble", "peut-être", "cela dépend de ce que"),
               ("utilisez", "ajoutez", "gardez", "vérifiez", "évitez", "salez"),
               ("cela", "ça", "ce", "chacun", "les deux"),
               ("est", "sont", "était", "étaient", "a", "ont", "doit", "doivent", "peut", "peuvent"),
               ("ent", "é", "ée", "és", "e", "t", "d"),
               re.compile(r"\d|\b(?:deux|trois|quatre|cinq|six|sept|huit|neuf|dix|cent|mille|million|"
                          r"milliard|moitié|douzaine)s?\b", re.I), _LETTERS),
    "de": Cues(("ich", "hier ist", "hallo", "danke", "gute frage", "guter punkt", "nun zu", "schauen wir",
                "jetzt wird", "kurz gesagt", "zusammenfassung"),
               ("unten",), ("ich denke", "es scheint", "vielleicht", "das hängt davon ab, was"),
               (), ("das", "es", "dies", "jeder", "beide"),
               ("ist", "sind", "war", "waren", "hat", "haben", "wird", "werden", "muss", "müssen", "kann",
                "können", "liegt", "beträgt"),
               ("t", "te", "en"),
               re.compile(r"\d|\b(?:zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|hundert|tausend|"
                          r"millionen?|milliarden?|hälfte|dutzend)\b", re.I), _LETTERS,
               re.compile(r"\w+en sie\b"), names=False, lower_endings=True),
    "ru": Cues(("я", "вот что", "здравствуйте", "привет", "спасибо", "хороший вопрос", "отличное",
                "не стесняйтесь", "давайте", "теперь перейд", "вот тут", "коротко говоря", "итог"),
               ("ниже",), ("я думаю", "кажется", "возможно", "наверное", "это зависит от того, что"),
               (), ("это", "там", "каждый", "оба"),
               ("есть", "является", "был", "была", "было", "были", "может", "должен", "должны",
                "составляет", "равно"),
               ("ет", "ит", "ют", "ят", "ется", "ится", "ются", "ятся", "л", "ла", "ло", "ли"),
               re.compile(r"\d|\b(?:два|две|три|четыре|пять|шесть|семь|восемь|девять|десять|сто|тысяч\w*|"
                          r"миллион\w*|миллиард\w*|половин\w*)\b", re.I), _LETTERS,
               re.compile(r"\w+(?:йте|ите)\b")),
}
"""The cues of each language the rule reads (English's are the constants above)."""


def asserts_fact(sentence: str) -> bool:
    """True when the sentence asserts a checkable fact (module rule)."""
    text = " ".join(sentence.split())
    lang = language.detect(text)
    cues = CUES.get(lang)
    words = (cues.word if cues else _LETTERS).findall(text)
    if text.endswith(("?", ":")) or len(words) < MIN_WORDS:
        return False
    if cues is None:
        return True
    low = text.lower().replace("’", "'")
    if (_opens_with(low, cues.conversation) or _has(low, cues.pointers) or _opens_with(low, cues.instructions)
            or (cues.imperative is not None and cues.imperative.match(low))):
        return False
    figure = bool(cues.figure.search(text))
    name = cues.names and any(w[0].isupper() for w in words[1:])
    if _has(low, cues.hedges) and not figure:
        return False
    if _opens_with(low, cues.vague_subjects) and not (figure or name):
        return False
    verbs = [w for w in words[1:] if not cues.lower_endings or w.islower()]
    return figure or name or _has(low, cues.factual) or any(w.lower().endswith(cues.endings) for w in verbs)
