"""Which language a text is in: English, French, German, Russian, or one the cookbook does not read.

Rules (no model, no dependency; docs/languages.md):
- Letters are counted by script (the first word of their Unicode name). Fewer than MIN_LETTERS letters:
  nothing to tell, the text is read as English (a bare figure, "100 °C"). Letters of a script other than
  Latin and Cyrillic making up OTHER_SCRIPT_SHARE or more of them: unsupported (mixed text with that much
  of a script no one reads here is not read as if the rest were all of it).
- Cyrillic letters outnumbering Latin ones: Russian, unless a letter Russian does not use appears
  (Ukrainian і ї є ґ, Belarusian ў, Serbian/Macedonian ђ ј љ њ ћ џ ѓ ќ ѕ): unsupported.
- Latin script: each language's score is how many of the text's words are in its short list of function
  words (STOPWORDS), plus MARK_WEIGHT for each letter only it writes (MARKS: ß for German, ñ for Spanish,
  ...). Scored against English, French, German and four languages it must not mistake for them
  (Spanish, Italian, Portuguese, Dutch). The highest score wins; a tie goes to the first supported
  language in SUPPORTED order, then English; no score at all is English, and so is a win by another
  language on a score under MIN_OTHER.
- The flows ask `unsupported` of the claim (the whole rule) and `unreadable` of the cited text (the script
  steps alone); either True means no judge is asked and the row is `unsupported_language`, never supported.
- A judge prompt states the languages (`stated`) only when the claim is not English, so every English
  prompt, and its cache key, is what it was.
"""
from __future__ import annotations

import functools
import re
import unicodedata

SUPPORTED = ("en", "fr", "de", "ru")
NAMES = {"en": "English", "fr": "French", "de": "German", "ru": "Russian", "es": "Spanish",
         "it": "Italian", "pt": "Portuguese", "nl": "Dutch", "uk": "Ukrainian or another Cyrillic language"}
STEMMERS = {"fr": "french", "de": "german", "ru": "russian"}
"""The snowball stemmer of each supported language but English (whose BM25 tokens stay unstemmed)."""
PYSBD = {"en": "en", "fr": "fr", "de": "de", "ru": "ru"}
MIN_LETTERS = 3
OTHER_SCRIPT_SHARE = 0.2
MARK_WEIGHT = 2
MIN_OTHER = 2
"""A Latin-script text is refused as another language only on at least this score (one "per" or "con"
in an English sentence is not enough)."""
READ_CHARS = 20_000
"""A long text is judged on its first READ_CHARS characters (a page's language shows in its start)."""
STOPWORDS = {
    "en": set("the of and to in is are was were at it that with for on by from this which be as not its has "
              "have an or than into above below when".split()),
    "fr": set("le la les des du et est une un dans que qui pour sur au aux par pas sont avec ce cette il "
              "elle "
              "à où l d qu se plus ne n de en son sa ses leur mais comme été très".split()),
    "de": set("der die das und ist nicht ein eine einer einem mit von zu den dem des auf für im bei sich "
              "wird "
              "auch es sind wie oder über nach viel unter hier ich wir uns mir sie ob wenn dass kein "
              "keine nur "
              "noch schon sehr dann aber vom zum zur um".split()),
    "es": set("de el los las del y que es un una por con para se su al lo como más está son".split()),
    "it": set("il lo la gli di che è un una per con del della non sono al nel alla si".split()),
    "pt": set("de os da dos das é que um uma para com não em na ao".split()),
    "nl": set("de het een en van is dat op te met voor niet zijn bij wordt ook".split()),
}
MARKS = {"de": "ßäöü", "fr": "çœêëîïûùâ", "es": "ñ¿¡", "pt": "ãõ", "it": "ìò"}
NOT_RUSSIAN = set("іїєґўђјљњћџѓќѕ")
_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=None)               # bounded by the distinct characters seen
def _script(char: str) -> str:
    return unicodedata.name(char, "UNKNOWN").split(" ")[0]


def script(text: str) -> str:
    """The script step of the module rules: "en" (too few letters), "latin", "ru", "uk" (a Cyrillic
    language other than Russian) or "script:NAME"."""
    text = text[:READ_CHARS]
    scripts: dict[str, int] = {}
    for char in text:
        if char.isalpha():
            name = "LATIN" if char.isascii() else _script(char)      # an ASCII letter is Latin
            scripts[name] = scripts.get(name, 0) + 1
    letters = sum(scripts.values())
    if letters < MIN_LETTERS:
        return "en"
    latin, cyrillic = scripts.get("LATIN", 0), scripts.get("CYRILLIC", 0)
    if letters - latin - cyrillic >= OTHER_SCRIPT_SHARE * letters:
        other = max((s for s in scripts if s not in ("LATIN", "CYRILLIC")), key=scripts.__getitem__)
        return f"script:{other}"
    if cyrillic > latin:
        return "uk" if NOT_RUSSIAN & set(text.lower()) else "ru"
    return "latin"


@functools.lru_cache(maxsize=4096)               # a claim is read by several steps of one check
def detect(text: str) -> str:
    """The language code of `text` (module rules): one of SUPPORTED, or another code ("es", "uk",
    "script:CJK", ...) the cookbook does not read."""
    found = script(text)
    if found != "latin":
        return found
    words = _WORD.findall(text[:READ_CHARS].lower())
    low = text[:READ_CHARS].lower()
    scores = {lang: sum(w in stop for w in words) for lang, stop in STOPWORDS.items()}
    for lang, marks in MARKS.items():
        scores[lang] += MARK_WEIGHT * sum(low.count(m) for m in marks)
    best = max(scores.values())
    if best == 0:
        return "en"
    found = next(lang for lang in (*SUPPORTED[:3], *STOPWORDS) if scores[lang] == best)
    return found if found in SUPPORTED or best >= MIN_OTHER else "en"


def unsupported(text: str) -> bool:
    """True when `text` (a claim) is in a language or script the cookbook does not read (module rules)."""
    return detect(text) not in SUPPORTED


def unreadable(text: str) -> bool:
    """True when `text` (a cited page or section) is in a script the cookbook does not read, or in a Cyrillic
    language other than Russian. A Latin-script source is not second-guessed by its function words: pages
    mix navigation, names and tables, and one misread English page would lose a real verdict."""
    return script(text) not in ("en", "latin", "ru")


def name(code: str) -> str:
    """A language's English name ("French"; "CJK script" for "script:CJK"); else the code itself."""
    if code.startswith("script:"):
        return f"{code.removeprefix('script:')} script"
    return NAMES.get(code, code)


def stated(claim: str, texts: list[str] | tuple[str, ...] = ()) -> str | None:
    """The line a judge prompt adds about language, or None for English (whose prompts stay as they are):
    "The claim and the text are in French." / "The claim is in French; the text is in English."."""
    said = detect(claim)
    if said == "en":
        return None
    read = detect("\n".join(texts)) if texts else said
    if said == read:
        return f"The claim and the text are in {name(said)}."
    return f"The claim is in {name(said)}; the text is in {name(read)}."
