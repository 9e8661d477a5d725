"""Numbers: read the numbers a text states, normalised, and compare a claim's with its evidence's.

Rules (reading, `extract`):
- Digits in any script (`\\d`: Arabic-Indic `٣` too) with en/fr/de/ru separators: "8,849", "8 849" (a
  space, no-break or thin space, or an apostrophe between groups of exactly 3), "1.234.567" (de); "3,5" and
  "3.5" are decimals. One group of 3 after a single comma or dot ("8,849", "8.849") reads both ways
  (8849 and 8.849: en thousands, de/fr decimal) and either reading may match.
- Exotic forms are read: `1e3`, `2 × 10⁶`, `10^6`, `½`, `1½`, single numeric characters (`Ⅻ`); what cannot be
  read as a finite number (`1e999`) is kept, flagged (no value): it matches only the same text, so it is
  never silently dropped.
- Spelled-out numbers in English, French, German and Russian (the text's language guessed from its common
  words; Cyrillic: Russian): units, teens, tens, hundreds, thousand, million, billion, dozen (12; "dozens"
  is no number); German compounds ("zweiundzwanzig") are split into words. A lone "one", "un(e)",
  "ein(e)", "один" is an article or pronoun, not a number (it counts in "one hundred", "vingt et un" and
  before a unit: "one degree"). A Latin text with none of the common words is read with all three tables.
- A scale word multiplies ("1.5 million", "3 Mio.", "5 тыс."); a unit after the number (°C, m, km, kg, %,
  years, …, in the four languages) is attached and converted within its family (°F to °C, km to m).
- Ranges: "80–90 %", "80 to 90", "between 80 and 90", "entre … et", "zwischen … und", "от … до"; bounds:
  "more than 8,000" is (8000, ∞), "up to 5" (−∞, 5]. Hedges ("about", "environ", "etwa", "около") mark a
  number as approximate.
- Not a claim's number: references ("RFC 7519", "section 4.1.4", "§ 3", "Table 2", "Abschnitt 5",
  "раздел 3"), dotted identifiers (4.1.4, 1.2.3.4), digits glued to letters ("HS256", "SHA-256", "3D"),
  bracket markers "[12]" and anything inside a URL.
- Years: an integer 1000–2100 written without separators; dates "2015-05-19", "19.05.2015" give their year
  and day; "19 May 2015" its day and year.
Rules (comparing, `compare`):
- A claim number agrees with an evidence number when their units are compatible (one absent, or the same
  family: compared after conversion) and the evidence rounds to it at the coarser of their precisions
  ("8.8 km" agrees with "8,849 m", "100" not with "96"); a hedged number also within HEDGE of it; a claim
  range holds an evidence value; two ranges agree by their ends; a claim value inside an evidence range
  only with RANGE_HOLDS (off: "88 %" is not stated by "80-90 %").
- A claim number no evidence number agrees with is `missing`; its counterpart is the first evidence number
  of the same kind (year, day, time, value) and the claim's unit family (a bare claim number: any) that no
  claim number agrees with (same family first). Status:
  `none` (the claim states no number), `same`, `changed` (some missing number has a counterpart: the claim
  changed it), `unread` (a flagged claim number), `absent` (the evidence states no such number).
Bounded work: one pass of bounded regular expressions and a word scan; linear in the text.
"""
from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass, field

HEDGE = 0.02
"""Relative tolerance of a hedged number ("about 9,000" agrees with 8,849 through its precision; "about
100 °C" with 98 °C through HEDGE): chosen on the tune half of data/numbers/pairs.jsonl by
scripts/number_rule.py."""
RANGE_HOLDS = False
"""Whether a claim's single value inside an evidence range agrees ("88 %" in "80-90 %"): chosen on tune
too."""
STATUSES = ("none", "same", "changed", "unread", "absent")
NONE, SAME, CHANGED, UNREAD, ABSENT = STATUSES
MISMATCHES = frozenset((CHANGED, UNREAD, ABSENT))
KINDS = ("value", "year", "day", "time")
VALUE, YEAR, DAY, TIME = KINDS
INF = math.inf

# ---------------------------------------------------------------- units: alias -> (unit, family, factor)

_UNITS: dict[str, tuple[str, str, float | None, float]] = {}
_WORDS: set[str] = set()
"""Unit aliases read case-insensitively (words); the others (symbols: "m", "GB", "Pa") as written."""


def _unit(unit: str, family: str, factor: float | None, aliases: str, offset: float = 0.0) -> None:
    for alias in [unit, *aliases.split("|")]:
        word = len(alias) >= 3 and not any(c.isupper() for c in alias[1:])
        _UNITS[alias.lower() if word else alias] = (unit, family, factor, offset)
        if word:
            _WORDS.add(alias.lower())


def unit_of(alias: str) -> tuple[str, str, float | None, float] | None:
    """(unit, family, factor to the family's base, offset) of a unit as written; None: not a unit."""
    return _UNITS.get(alias) or _UNITS.get(alias.lower())


_unit("°C", "temperature", 1.0, "℃|° C|°c|degrees celsius|degree celsius|degrés celsius|degrés c|"
      "grad celsius|"
      "градусов цельсия|градуса цельсия|градус цельсия")
_unit("°F", "temperature", 5 / 9, "℉|° F|degrees fahrenheit|degrés fahrenheit|grad fahrenheit|"
      "градусов фаренгейта", offset=-160 / 9)
_unit("°", "temperature", None, "degrees|degree|degrés|degré|grad|градусов|градуса|градус")
_unit("m", "length", 1.0, "metres|meters|metre|meter|mètres|mètre|metern|метров|метра|метр|м")
_unit("km", "length", 1000.0, "kilometres|kilometers|kilometre|kilometer|kilomètres|kilomètre|kilometern|"
      "километров|километра|километр|км")
_unit("cm", "length", 0.01, "centimetres|centimeters|centimètres|zentimeter|сантиметров|см")
_unit("mm", "length", 0.001, "millimetres|millimeters|millimètres|millimeter|миллиметров|мм")
_unit("mi", "length", 1609.344, "miles|mile|meilen")
_unit("ft", "length", 0.3048, "feet|foot|fuß")
_unit("m²", "area", 1.0, "square metres|square meters|m2|mètres carrés|quadratmeter|квадратных метров|кв. м")
_unit("km²", "area", 1e6, "square kilometres|square kilometers|km2|kilomètres carrés|quadratkilometer|"
      "квадратных километров|кв. км")
_unit("g", "mass", 1.0, "grams|gram|grammes|gramme|gramm|граммов|грамм")
_unit("kg", "mass", 1000.0, "kilograms|kilogram|kilogrammes|kilogramme|kilogramm|килограммов|килограмма|кг")
_unit("t", "mass", 1e6, "tonnes|tonne|tons|ton|tonnen|тонн|тонны|тонна")
_unit("mg", "mass", 0.001, "milligrams|milligrammes|milligramm|миллиграммов|мг")
_unit("lb", "mass", 453.59237, "lbs|pounds|pound")
_unit("s", "time", 1.0, "sec|seconds|second|secondes|seconde|sekunden|sekunde|секунд|секунды|секунда")
_unit("ms", "time", 0.001, "milliseconds|millisecondes|millisekunden|миллисекунд|мс")
_unit("min", "time", 60.0, "minutes|minute|minuten|минут|минуты|минута|мин")
_unit("h", "time", 3600.0, "hours|hour|hrs|heures|heure|stunden|stunde|часов|часа|час")
_unit("days", "time", 86400.0, "day|jours|jour|tage|tagen|tag|дней|дня|день|суток")
_unit("wk", "time", 604800.0, "weeks|week|semaines|semaine|wochen|woche|недель|недели|неделя")
_unit("mo", "time", 2629746.0, "months|month|mois|monate|monaten|monat|месяцев|месяца|месяц")
_unit("yr", "time", 31556952.0, "years|year|ans|années|année|jahre|jahren|jahr|лет|года|год|г.")
_unit("%", "percent", 1.0, "percent|per cent|pour cent|pourcent|prozent|процентов|процента|процент|pct")
_unit("pp", "points", 1.0, "percentage points|percentage point|points de pourcentage|prozentpunkte|"
      "процентных пункта|процентных пунктов")
_unit("atm", "pressure", 101325.0, "atmospheres|atmosphere|atmosphères|atmosphäre|атмосфер|атмосферы")
_unit("bar", "pressure", 100000.0, "bars|бар")
_unit("Pa", "pressure", 1.0, "pascals|pascal|паскаль|паскалей")
_unit("kPa", "pressure", 1000.0, "kilopascals|kilopascal|килопаскалей|кпа")
_unit("hPa", "pressure", 100.0, "hectopascals|гпа")
_unit("km/h", "speed", 1 / 3.6, "kmh|km/h|kilometres per hour|kilometers per hour|км/ч")
_unit("mph", "speed", 0.44704, "miles per hour")
_unit("B", "data", 1.0, "bytes|byte|octets|octet|байт|байта")
_unit("KB", "data", 1e3, "kilobytes|кб")
_unit("MB", "data", 1e6, "megabytes|мб")
_unit("GB", "data", 1e9, "gigabytes|гб")
_unit("TB", "data", 1e12, "terabytes|тб")
_unit("bit", "bits", 1.0, "bits|бит|бита")
_unit("W", "power", 1.0, "watts|watt|ватт")
_unit("kW", "power", 1e3, "kilowatts|kilowatt|киловатт|квт")
_unit("MW", "power", 1e6, "megawatts|megawatt|мегаватт|мвт")
_unit("$", "usd", 1.0, "usd|dollars|dollar|us$|долларов|доллара")
_unit("€", "eur", 1.0, "eur|euros|euro|евро")
_unit("£", "gbp", 1.0, "gbp|pounds sterling")
_unit("₽", "rub", 1.0, "rub|руб.|руб|рублей|рубля|рубль")
_unit("people", "people", 1.0, "persons|personnes|personen|menschen|человек")
_CURRENCY_BEFORE = {"$": "$", "€": "€", "£": "£", "us$": "$"}
_SCALES = {"thousand": 1e3, "thousands": 1e3, "mille": 1e3, "tausend": 1e3, "тысяча": 1e3, "тысячи": 1e3,
           "тысяч": 1e3, "тыс.": 1e3, "тыс": 1e3, "k": 1e3, "million": 1e6, "millions": 1e6, "mio.": 1e6,
           "mio": 1e6, "millionen": 1e6, "миллион": 1e6, "миллиона": 1e6, "миллионов": 1e6, "млн": 1e6,
           "млн.": 1e6, "billion": 1e9, "billions": 1e9, "bn": 1e9, "milliard": 1e9, "milliards": 1e9,
           "milliarde": 1e9, "milliarden": 1e9, "mrd.": 1e9, "mrd": 1e9, "миллиард": 1e9, "миллиарда": 1e9,
           "миллиардов": 1e9, "млрд": 1e9, "млрд.": 1e9, "trillion": 1e12, "trillions": 1e12}
_ORDINAL = re.compile(r"(?:st|nd|rd|th|er|re|e|ème|eme|te|ten|ter|tes|й|го|я|е|м)(?!\w)")


def _alternation(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_AFTER = re.compile(r"[ \u00a0\u202f\u2009]?(?:(?P<scale>(?i:" + _alternation(_SCALES) + r"))(?![^\W\d_])"
                    r"[ \u00a0\u202f\u2009]?)?(?:(?P<unit>(?i:" + _alternation(_WORDS) + r")|"
                    + _alternation(set(_UNITS) - _WORDS) + r")(?![^\W\d_]))?")

# ---------------------------------------------------------------- what is not a claim's number

_REFERENCE_WORDS = (
    r"rfcs?|sections?|sect\.|§§?|figures?|figs?\.|tables?|chapters?|ch\.|pages?|pp?\.|appendix|appendices|"
    r"annex|clauses?|paragraphs?|articles?|art\.|lines?|footnotes?|steps?|versions?|v\.|iso|ieee|ietf|"
    r"equations?|eq\.|theorem|lemma|chapitres?|tableaux?|annexes?|paragraphes?|kapitel|abschnitte?s?|"
    r"abbildung(?:en)?|abb\.|tabellen?|seiten?|s\.|anhang|absatz|artikel|nr\.|no\.|n°|№|"
    r"раздел\w*|глав\w*|рисун\w*|рис\.|таблиц\w*|страниц\w*|стр\.|стать\w*|приложени\w*|пункт\w*|п\.")
_REFERENCE = re.compile(r"(?<![^\W_])(?:" + _REFERENCE_WORDS + r")[ \u00a0]?\d+(?:[.\-]\d+)*[a-z]?"
                        r"(?:(?:, ?| and | or | et | und | и |[-–])\d+(?:\.\d+)*[a-z]?){0,8}(?![\d])",
                        re.IGNORECASE)
_URL = re.compile(r"(?:https?://|www\.)\S{1,2000}|\S{1,200}@\S{1,200}\.\w{2,10}"
                  r"|\[\d{1,4}(?:[,–-] ?\d{1,4}){0,20}\]")

# ---------------------------------------------------------------- numerals

_FRACTIONS = "½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒"
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SPACES = " \u00a0\u202f\u2009'"
_TOKEN = re.compile(
    r"(?P<date>\d{4}-\d{1,2}-\d{1,2}(?!\d)|\d{1,2}[./]\d{1,2}[./]\d{4}(?![\d]))"
    r"|(?P<time>\d{1,2}:\d{2}(?![\d:]))"
    r"|(?P<sci>\d{1,30}(?:[.,]\d{1,30})?[eE][-+−]?\d{1,6}(?![\w]))"
    r"|(?P<pow>(?:\d{1,30}(?:[.,]\d{1,30})?[ ]?[×x·*][ ]?)?10(?:\^[-+−]?\d{1,6}|[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,6}))"
    r"|(?P<grouped>\d{1,3}(?:,\d{3}){2,}(?:\.\d{1,30})?(?![\d]|[.,]\d)"
    r"|\d{1,3}(?:\.\d{3}){2,}(?:,\d{1,30})?(?![\d]|[.,]\d)"
    r"|\d{1,3}(?:,\d{3})\.\d{1,30}(?![\d]|[.,]\d)|\d{1,3}(?:\.\d{3}),\d{1,30}(?![\d]|[.,]\d)"
    r"|\d{1,3}(?:[ \u00a0\u202f\u2009']\d{3}){1,6}(?:[.,]\d{1,30})?(?![\d]|[.,]\d))"
    r"|(?P<dotted>\d{1,30}(?:\.\d{1,30}){2,})"
    r"|(?P<plain>\d{1,30}(?:[.,]\d{1,30})?)(?P<frac>[" + _FRACTIONS + r"])?"
    r"|(?P<alone>[" + _FRACTIONS + r"])")
_DIGITS = re.compile(r"\d{31,}")
"""Longer runs of digits are no quantity anyone states: read as flagged text."""


@dataclass(frozen=True)
class Number:
    """One number as stated: `lo`..`hi` (equal for a single value; each a tuple of readings, empty when
    the text could not be read: flagged), its unit (canonical), kind, precision (`step`) and hedge."""
    text: str
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    unit: str | None = None
    kind: str = VALUE
    step: float = 1.0
    hedged: bool = False
    start: int = 0
    end: int = 0

    @property
    def readable(self) -> bool:
        return bool(self.lo)

    @property
    def family(self) -> str | None:
        return unit_of(self.unit)[1] if self.unit else None

    @property
    def factor(self) -> float | None:
        return unit_of(self.unit)[2] if self.unit else 1.0

    def base(self, value: float) -> float:
        """The value in its family's base unit (as written when the unit has no factor)."""
        if not self.unit or self.factor is None or math.isinf(value):
            return value
        return value * self.factor + unit_of(self.unit)[3]


def _decimals(digits: str) -> float:
    """The step a written decimal states: "3.50" -> 0.01, "8849" -> 1."""
    return 10.0 ** -len(digits) if digits else 1.0


def _value(text: str) -> tuple[tuple[float, ...], float]:
    """(readings, step) of a written numeral without scale or unit."""
    compact = text
    for space in _SPACES:
        compact = compact.replace(space, "")
    if compact != text:                                   # grouped with spaces: only the decimal mark left
        whole, _, frac = compact.replace(",", ".").partition(".")
        return (float(f"{int(whole)}.{int(frac) if frac else 0}" if frac else int(whole)),), _decimals(frac)
    commas, dots = compact.count(","), compact.count(".")
    if commas and dots:                                   # the last mark is the decimal one
        mark = "," if compact.rfind(",") > compact.rfind(".") else "."
        whole, frac = compact.rsplit(mark, 1)
        whole = whole.replace(",", "").replace(".", "")
        return (float(f"{int(whole)}.{frac}"),), _decimals(frac)
    if commas + dots > 1:                                 # 1,234,567 / 1.234.567
        return (float(int(compact.replace(",", "").replace(".", ""))),), 1.0
    if commas + dots == 1:
        whole, frac = re.split(r"[.,]", compact)
        decimal = float(f"{int(whole)}.{frac}")
        if len(frac) == 3 and whole != "0" and frac != "000":   # 8,849 / 8.849: both readings, the finer
            return (float(int(whole + frac)), decimal), 0.001          # step (8849 vs 8848 differ either way)
        if len(frac) == 3 and frac == "000":
            return (float(int(whole + frac)),), 1.0
        return (decimal,), _decimals(frac)
    return (float(int(compact)),), 1.0


def _numeral(match: re.Match) -> tuple[tuple[float, ...], float]:
    """(readings, step) of one token of `_TOKEN` (no readings: flagged, it could not be read)."""
    group, text = match.lastgroup, match.group(0)
    try:
        if group == "sci":
            mantissa, exponent = re.split(r"[eE]", text.replace("−", "-"))
            power = int(exponent)
            values = [m * 10.0 ** power for m in _value(mantissa)[0]] if abs(power) < 300 else []
            return tuple(v for v in values if math.isfinite(v)), 1.0 * 10.0 ** max(int(exponent), -300)
        if group == "pow":
            return _power(text), 1.0
        if group == "alone":
            return (unicodedata.numeric(text),), 0.01
        if match.group("frac"):
            return (int(match.group("plain")) + unicodedata.numeric(match.group("frac")),), 0.01
        if _DIGITS.search(text):
            return (), 1.0
        return _value(match.group(0))
    except (ValueError, OverflowError):
        return (), 1.0


def _power(text: str) -> tuple[float, ...]:
    """2 × 10⁶, 10^6 -> readings (none when it overflows)."""
    head, exponent = re.fullmatch(r"(.*?)10(-?\d+)", text.translate(_SUPERSCRIPT).replace("^", "")
                                  .replace("−", "-")).groups()
    head = re.sub(r"[ ×x·*]", "", head)
    if abs(int(exponent)) > 300:
        return ()
    values = [m * 10.0 ** int(exponent) for m in (_value(head)[0] if head else (1.0,))]
    return tuple(v for v in values if math.isfinite(v))


# ---------------------------------------------------------------- spelled-out numbers

_COMMON = {
    "en": "the of and to in is that it for was on are with as by at this from which be an has there were had "
          "have been its",
    "fr": "le la les des du et est une dans pour que qui au aux sur pas il elle sont avec ce cette y avait "
          "était ont nous",
    "de": "der die das und ist nicht mit von zu den dem im auf für sich des eine einer wird sind auch es war "
          "waren hat haben wurde nach bei als wie um",
}
_COMMON_SETS = {lang: frozenset(words.split()) for lang, words in _COMMON.items()}
_WORD = re.compile(r"[^\W\d_]+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
GUESS_CHARS = 20_000
"""The language of a text's number words is guessed from its first GUESS_CHARS characters."""


LATIN = "latin"
"""A Latin-script text with none of the common words: read with the English, French and German words."""


def language(text: str) -> str:
    """en, fr, de or ru: the language whose number words a text is read with (Cyrillic: ru; else the most
    common words of en/fr/de, en on a tie; none of them: LATIN, all three)."""
    head = text[:GUESS_CHARS]
    if len(_CYRILLIC.findall(head)) > len(_LATIN.findall(head)):
        return "ru"
    counts = {lang: 0 for lang in _COMMON_SETS}
    for word in _WORD.findall(head.lower()):
        for lang, words in _COMMON_SETS.items():
            counts[lang] += word in words
    best = max(counts, key=lambda lang: (counts[lang], lang == "en"))
    return best if counts[best] else LATIN


def _lexicon(units: str, tens: str, extra: dict) -> dict[str, tuple[str, float]]:
    table = {word: ("n", float(i)) for i, words in enumerate(units.split(",")) for word in words.split("|")
             if word}
    table.update({word: ("n", float(10 * (i + 2))) for i, words in enumerate(tens.split(","))
                  for word in words.split("|")})
    table.update(extra)
    return table


_SPELLED = {
    "en": _lexicon("zero,one,two,three,four,five,six,seven,eight,nine,ten,eleven,twelve,thirteen,fourteen,"
                   "fifteen,sixteen,seventeen,eighteen,nineteen", "twenty,thirty,forty,fifty,sixty,seventy,"
                   "eighty,ninety",
                   {"hundred": ("h", 100.0), "dozen": ("h", 12.0), "and": ("and", 0.0), "a": ("a", 1.0),
                    "an": ("a", 1.0), **{w: ("s", v) for w, v in _SCALES.items() if w.isalpha() and
                                         w.isascii() and len(w) > 2 and w[-1] != "s"}}),
    "fr": _lexicon("zéro,un|une,deux,trois,quatre,cinq,six,sept,huit,neuf,dix,onze,douze,treize,quatorze,"
                   "quinze,seize", "vingt|vingts,trente,quarante,cinquante,soixante",
                   {"quatrevingt": ("n", 80.0), "quatrevingts": ("n", 80.0), "cent": ("h", 100.0),
                    "cents": ("h", 100.0), "douzaine": ("h", 12.0), "et": ("and", 0.0),
                    "mille": ("s", 1e3), "million": ("s", 1e6), "millions": ("s", 1e6),
                    "milliard": ("s", 1e9), "milliards": ("s", 1e9)}),
    "de": _lexicon(",eins|ein|eine|einen|einem|einer,zwei,drei,vier,fünf,sechs,sieben,acht,neun,zehn,elf,"
                   "zwölf,dreizehn,vierzehn,fünfzehn,sechzehn,siebzehn,achtzehn,neunzehn",
                   "zwanzig,dreißig|dreissig,vierzig,fünfzig,sechzig,siebzig,achtzig,neunzig",
                   {"hundert": ("h", 100.0), "dutzend": ("h", 12.0), "und": ("and", 0.0),
                    "tausend": ("s", 1e3), "million": ("s", 1e6), "millionen": ("s", 1e6),
                    "milliarde": ("s", 1e9), "milliarden": ("s", 1e9)}),
    "ru": _lexicon("ноль,один|одна|одно|одного|одной|одном,два|две|двух|двум,три|трёх|трех|трём,"
                   "четыре|четырёх|четырех,пять|пяти,шесть|шести,семь|семи,восемь|восьми,девять|девяти,"
                   "десять|десяти,одиннадцать,двенадцать,тринадцать,четырнадцать,пятнадцать,шестнадцать,"
                   "семнадцать,восемнадцать,девятнадцать", "двадцать|двадцати,тридцать|тридцати,сорок|сорока,"
                   "пятьдесят|пятидесяти,шестьдесят|шестидесяти,семьдесят|семидесяти,"
                   "восемьдесят|восьмидесяти,девяносто",
                   {"сто": ("n", 100.0), "ста": ("n", 100.0), "двести": ("n", 200.0), "триста": ("n", 300.0),
                    "четыреста": ("n", 400.0), "пятьсот": ("n", 500.0), "шестьсот": ("n", 600.0),
                    "семьсот": ("n", 700.0), "восемьсот": ("n", 800.0), "девятьсот": ("n", 900.0),
                    "дюжина": ("h", 12.0), "тысяча": ("s", 1e3), "тысячи": ("s", 1e3), "тысяч": ("s", 1e3),
                    "тысячу": ("s", 1e3), "миллион": ("s", 1e6), "миллиона": ("s", 1e6),
                    "миллионов": ("s", 1e6), "миллиард": ("s", 1e9), "миллиарда": ("s", 1e9),
                    "миллиардов": ("s", 1e9)}),
}
_SPELLED[LATIN] = {**_SPELLED["de"], **_SPELLED["fr"], **_SPELLED["en"]}
_ONES = frozenset("one un une ein eine einen einem einer один одна одно одного одной одном".split())
"""The words for 1 that are articles or pronouns too: a number only inside a longer number."""
MAX_WORDS = 12
"""A run of number words longer than this is read as separate numbers (no number is said in more words)."""
MAX_COMPOUND = 60
"""Longer words are never split into German number words."""


def _pieces(word: str, lexicon: dict) -> list[tuple[str, float]] | None:
    """A word as number words: itself, or (German) a compound split longest piece first."""
    if word in lexicon:
        return [lexicon[word]]
    if len(word) > MAX_COMPOUND or "und" not in lexicon:
        return None
    out, at = [], 0
    while at < len(word):
        for end in range(len(word), at, -1):
            if word[at:end] in lexicon and word[at:end] not in ("ein", "eine") or word[at:end] == "ein" and \
                    word[end:end + 3] in ("und", "hun", "tau"):
                out.append(lexicon[word[at:end]])
                at = end
                break
        else:
            return None
    return out if len(out) > 1 else None


def _spelled_value(pieces: list[tuple[str, float]]) -> tuple[float, float] | None:
    """(value, step) of a run of number words; None when it states no number (a lone 'one', 'a')."""
    total = current = 0.0
    step, counted = 1.0, 0
    for kind, value in pieces:
        if kind == "n":
            current += value
            counted += 1
        elif kind == "h":
            current = (current or 1.0) * value
            counted += 1
        elif kind == "s":
            total, current, step = total + (current or 1.0) * value, 0.0, value
            counted += 1
    return (total + current, step) if counted else None


def _spelled(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int, float, float]]:
    """(start, end, value, step) of each run of number words outside the `taken` spans."""
    lexicon = _SPELLED[language(text)]
    lower, out, run, taken_at = text.lower(), [], [], 0
    cache: dict[str, list | None] = {}

    def close():
        while run and run[-1][2][0][0] in ("and", "a"):
            run.pop()
        pieces = [p for w in run for p in w[2] if p[0] not in ("and", "a")]
        lone = len(run) == 1 and run[0][3] in _ONES and not _AFTER.match(text, run[0][1]).group("unit")
        if run and not lone and any(p[0] != "a" for p in pieces):
            found = _spelled_value([p for w in run for p in w[2]])
            if found and math.isfinite(found[0]):
                out.append((run[0][0], run[-1][1], *found))
        run.clear()

    for match in _WORD.finditer(lower):
        start, end, word = match.start(), match.end(), match.group(0)
        while taken_at < len(taken) and taken[taken_at][1] <= start:
            taken_at += 1
        inside = taken_at < len(taken) and taken[taken_at][0] < end
        percent = word.startswith("cent") and lower.endswith("pour ", 0, start)
        pieces = None if inside or percent else cache.setdefault(word, _pieces(word, lexicon))
        if word in ("vingt", "vingts") and run and run[-1][3] == "quatre":
            run[-1] = (run[-1][0], end, [("n", 80.0)], "quatrevingt")
            continue
        gap = lower[run[-1][1]:start] if run else ""
        if pieces is None or (run and gap.strip(" -\u00a0") != "") or len(run) >= MAX_WORDS:
            close()
        if pieces is not None:
            if pieces[0][0] == "a" and len(pieces) == 1 and run:
                close()
            run.append((start, end, pieces, word))
    close()
    return out


# ---------------------------------------------------------------- context: hedges, bounds, ranges, dates

def _words(*alternatives: str) -> str:
    return "|".join(alternatives)


_HEDGE = re.compile(r"(?:^|[^\w])(?:" + _words(
    "about", "around", "approximately", r"approx\.", "roughly", "nearly", "almost", "some", "circa", r"ca\.",
    r"c\.", "~", "≈", "close to", "an estimated", "estimated", "environ", "près de", "presque", "quelque",
    "autour de", "approximativement", "etwa", "rund", "ungefähr", "knapp", "fast", "zirka", "gut", "около",
    "примерно", "почти", "приблизительно", "порядка", "where about") + r")\s?$", re.IGNORECASE)
_LOWER = re.compile(r"(?:^|[^\w])(?:" + _words(
    "more than", "over", "above", "at least", "exceeding", "greater than", "upwards of", "in excess of",
    "plus de", "au moins", "supérieure? à", "au-delà de", "mehr als", "über", "mindestens", "более",
    "больше", "свыше", "не менее", "минимум", ">", "≥") + r")\s?$", re.IGNORECASE)
_UPPER = re.compile(r"(?:^|[^\w])(?:" + _words(
    "less than", "fewer than", "under", "below", "at most", "up to", "no more than", "moins de",
    "jusqu'à", "au plus", "au maximum", "weniger als", "unter", "bis zu", "höchstens", "менее",
    "меньше", "не более", "максимум", "<", "≤") + r")\s?$", re.IGNORECASE)
_BETWEEN = re.compile(r"(?:^|[^\w])(?:between|entre|zwischen|между|from|de|von|от)\s?$", re.IGNORECASE)
_TO = re.compile(r"^\s?(?:[-–—]|to|à|a|bis|до|-|through|thru)\s?$", re.IGNORECASE)
_AND = re.compile(r"^\s(?:and|et|und|и)\s$", re.IGNORECASE)
_MONTHS = re.compile(r"(?:" + _words(
    r"jan(?:uary|\.)?", r"feb(?:ruary|\.)?", r"mar(?:ch|\.)?", r"apr(?:il|\.)?", "may", r"june?",
    r"july?", r"aug(?:ust|\.)?", r"sep(?:t|tember|\.)?", r"oct(?:ober|\.)?", r"nov(?:ember|\.)?",
    r"dec(?:ember|\.)?", "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
    "septembre", "octobre", "novembre", "décembre", "januar", "februar", "märz", "juni", "juli",
    "oktober", "dezember", "январ[ья]", "феврал[ья]", "марта?", "апрел[ья]", "ма[йя]", "июн[ья]",
    "июл[ья]", "августа?", "сентябр[ья]", "октябр[ья]", "ноябр[ья]", "декабр[ья]") + r")(?!\w)",
    re.IGNORECASE)
_MONTH_BEFORE = re.compile(_MONTHS.pattern + r"\.? $", re.IGNORECASE)
_YEAR_WORDS = frozenset(("yr",))
_CONTEXT = 32
"""Characters before a number read for its hedge, bound or currency."""


def _year_like(number: Number, numeral: str) -> bool:
    """An integer 1000-2100 written as four digits alone: a year."""
    return (len(number.lo) == 1 and number.lo == number.hi and 1000 <= number.lo[0] <= 2100
            and len(numeral) == 4 and numeral.isdigit())


def _glued(text: str, end: int) -> bool:
    """Letters glued to a numeral (no unit, no ordinal ending): an identifier such as "3D", "5G"."""
    return end < len(text) and (text[end].isalpha() or text[end] == "_")


def _identifier(text: str, start: int) -> bool:
    """Digits glued to letters before them ("HS256", "SHA-256", "HTTP/1.1", "x86"): an identifier."""
    before = text[start - 1] if start else ""
    if before.isalpha() or before == "_":
        return True
    return before in "-/_" and start >= 2 and text[start - 2].isalpha()


def _dated(match: re.Match, start: int) -> list[Number]:
    """The year and the day of a written date."""
    text = match.group(0)
    parts = re.split(r"[-./]", text)
    if len(parts[0]) == 4:
        year, days = int(parts[0]), (float(int(parts[2])),)
    else:
        year, days = int(parts[2]), tuple(dict.fromkeys((float(int(parts[0])), float(int(parts[1])))))
    end = start + len(text)
    return [Number(str(year), (float(year),), (float(year),), kind=YEAR, start=start, end=end),
            Number(text, days, days, kind=DAY, start=start, end=end)]


def _blank(match: re.Match) -> str:
    return " " * len(match.group(0))


def _bounded(before: str, lo: tuple[float, ...], hi: tuple[float, ...]) -> tuple[tuple, tuple]:
    if _LOWER.search(before):
        return lo, (INF,)
    if _UPPER.search(before):
        return (-INF,), hi
    return lo, hi


def _read(text: str, start: int, end: int, readings: tuple[float, ...], step: float,
          kind: str = VALUE) -> tuple[Number, int] | None:
    """The number at text[start:end] with its scale, unit, currency, sign, hedge and bound; None for an
    identifier ("3D")."""
    after = _AFTER.match(text, end)
    unit = unit_of(after.group("unit"))[0] if after.group("unit") else None
    scale = _SCALES[after.group("scale").lower()] if after.group("scale") else 1.0
    stop = after.end() if (unit or after.group("scale")) else end
    if stop == end and _glued(text, end):
        ordinal = _ORDINAL.match(text, end)
        if ordinal is None:
            return None
        stop = ordinal.end()
    first = start
    if start and text[start - 1] in "-−" and (start < 2 or not text[start - 2].isalnum()):
        readings, first = tuple(-v for v in readings), start - 1
    lead = text[max(0, first - 4):first]
    bare = lead.rstrip(" \u00a0")
    for sign, currency in _CURRENCY_BEFORE.items():
        if bare.lower().endswith(sign):
            unit, first = unit or currency, first - (len(lead) - len(bare)) - len(sign)
            break
    readings = tuple(v * scale for v in readings)
    step *= scale
    before = text[max(0, first - _CONTEXT):first]
    lo, hi = _bounded(before, readings, readings)
    number = Number(text[first:stop].strip(), lo, hi, unit, kind, step, bool(_HEDGE.search(before)),
                    first, stop)
    if kind == VALUE and scale == 1.0 and len(readings) == 1 and readings[0].is_integer():
        if 1 <= readings[0] <= 31 and (_MONTHS.match(text, stop + 1 + (text[stop:stop + 1] == "."))
                                       or _MONTH_BEFORE.search(before)):
            return _replace(number, kind=DAY), stop
        if (unit is None or unit in _YEAR_WORDS and not text[end:stop].strip().startswith(("y", "Y", "J", "j",
                                                                                              "a", "л")))\
                and _year_like(number, text[start:end]):
            return _replace(number, kind=YEAR, unit=None), stop
    return number, stop


def _replace(number: Number, **changes) -> Number:
    from dataclasses import replace
    return replace(number, **changes)


def _ranged(numbers: list[Number], text: str) -> list[Number]:
    """Consecutive numbers joined as a range ("80–90 %", "between 80 and 90", "from 80 to 90")."""
    out: list[Number] = []
    for number in numbers:
        prev = out[-1] if out else None
        if prev is not None and prev.readable and number.readable and prev.lo == prev.hi \
                and number.lo == number.hi and prev.kind == number.kind != DAY:
            gap = text[prev.end:number.start]
            between = _BETWEEN.search(text[max(0, prev.start - 12):prev.start])
            if _TO.match(gap) or (_AND.match(gap) and between):
                unit = number.unit or prev.unit
                if prev.unit in (None, unit):
                    ends = (*prev.lo, *number.lo)
                    out[-1] = Number(text[prev.start:number.end], (min(ends),), (max(ends),), unit,
                                     prev.kind, min(prev.step, number.step), prev.hedged or number.hedged,
                                     prev.start, number.end)
                    continue
        out.append(number)
    return out


def extract(text: str) -> list[Number]:
    """The numbers `text` states, in order (module rules); references, identifiers and URLs left out."""
    masked = _REFERENCE.sub(_blank, _URL.sub(_blank, text))
    found: list[Number] = []
    taken: list[tuple[int, int]] = []
    for match in _TOKEN.finditer(masked):
        start, end = match.span()
        group = match.lastgroup
        if group == "dotted" or _identifier(masked, start) or (
                start and masked[start - 1] in "-/" and taken and taken[-1][1] == start - 1
                and not found or start and masked[start - 1] in "-/_" and taken and taken[-1][1] == start - 1
                and found and found[-1].end != start - 1):
            taken.append((start, end))
            continue
        if group == "date":
            found += _dated(match, start)
            taken.append((start, end))
            continue
        if group == "time":
            hours, minutes = match.group(0).split(":")
            found.append(Number(match.group(0), (int(hours) * 60.0 + int(minutes),),
                                (int(hours) * 60.0 + int(minutes),), kind=TIME, start=start, end=end))
            taken.append((start, end))
            continue
        readings, step = _numeral(match)
        read = _read(masked, start, end, readings, step) if readings else (
            Number(match.group(0), (), (), start=start, end=end), end)
        taken.append((start, read[1] if read else end))
        if read is not None:
            found.append(_replace(read[0], text=text[read[0].start:read[0].end].strip()))
    for char in _OTHER.finditer(masked):
        number = _read(masked, char.start(), char.end(), (unicodedata.numeric(char.group(0)),), 1.0)
        if number is not None:
            found.append(_replace(number[0], text=text[number[0].start:number[0].end].strip()))
            taken.append((char.start(), number[1]))
    taken.sort()
    for start, end, value, step in _spelled(masked, taken):
        read = _read(masked, start, end, (value,), step)
        if read is not None:
            found.append(_replace(read[0], text=text[read[0].start:read[0].end].strip()))
    found.sort(key=lambda n: n.start)
    return _ranged(found, masked)


_OTHER = re.compile(r"[\u2150-\u218b\u2460-\u24ff\u2776-\u2793\u3007\u3021-\u3029\u3038-\u303a]")
"""Numeric characters that are not digits nor the fractions `_TOKEN` reads: Roman numerals (Ⅻ), circled
numbers (⑤), Suzhou and ideographic numerals: read with `unicodedata.numeric`."""


# ---------------------------------------------------------------- comparing

def _slack(c: Number, e: Number, cv: float, ev: float, hedge: float) -> float:
    """How far apart two single values may be and still agree (module rules), in base units."""
    both = bool(c.unit and e.unit)
    cf, ef = (abs(c.factor or 1.0), abs(e.factor or 1.0)) if both else (1.0, 1.0)
    slack = max(c.step * cf, e.step * ef) / 2 + 1e-9 * max(abs(cv), abs(ev), 1.0)
    return max(slack, hedge * abs(ev)) if (c.hedged or e.hedged) else slack


def agrees(c: Number, e: Number, hedge: float = HEDGE, holds: bool = RANGE_HOLDS) -> bool:
    """Whether evidence number `e` states claim number `c` (module rules)."""
    if not c.readable or not e.readable:
        return not c.readable and c.text == e.text
    if c.family and e.family and c.family != e.family:
        return False
    convert = bool(c.unit and e.unit and c.factor is not None and e.factor is not None)
    def at(n: Number, v: float) -> float:
        return n.base(v) if convert else v
    for c_lo, c_hi in zip(c.lo, c.hi):
        for e_lo, e_hi in zip(e.lo, e.hi):
            a, b, x, y = at(c, c_lo), at(c, c_hi), at(e, e_lo), at(e, e_hi)
            slack = _slack(c, e, a if math.isfinite(a) else b, x if math.isfinite(x) else y, hedge)
            if math.isinf(slack):
                slack = 0.0
            if a == b and x == y and abs(a - x) <= slack:
                return True
            if a == b and x != y and holds and x - slack <= a <= y + slack:
                return True
            if a != b and x == y and a - slack <= x <= b + slack:
                return True
            if a != b and x != y and (a == x or abs(a - x) <= slack) and (b == y or abs(b - y) <= slack):
                return True
    return False


def _compatible(c: Number, e: Number) -> bool:
    """A counterpart: the same kind, and the claim's unit family (a bare claim number: any)."""
    return c.kind == e.kind and (not c.family or c.family == e.family)


@dataclass(frozen=True)
class Comparison:
    """A claim's numbers against its evidence's: each claim number no evidence number agrees with, with its
    counterpart in the evidence (None: none of its kind and unit)."""
    claim: tuple[Number, ...]
    evidence: tuple[Number, ...]
    missing: tuple[tuple[Number, Number | None], ...] = field(default=())

    @property
    def status(self) -> str:
        if not self.claim:
            return NONE
        if not self.missing:
            return SAME
        if any(other is not None for _, other in self.missing):
            return CHANGED
        return UNREAD if any(not c.readable for c, _ in self.missing) else ABSENT

    @property
    def mismatch(self) -> bool:
        return self.status in MISMATCHES

    def shown(self) -> str:
        """'"90 °C" vs "100 °C"' for each missing claim number ('vs none' when the evidence has none)."""
        return "; ".join(f'"{c.text}" vs ' + (f'"{e.text}"' if e is not None else "none")
                         for c, e in self.missing)


def compare_numbers(claim: list[Number], evidence: list[Number], hedge: float = HEDGE,
                    holds: bool = RANGE_HOLDS) -> Comparison:
    """The claim's numbers against the evidence's (module rules)."""
    agreed = [[agrees(c, e, hedge, holds) for e in evidence] for c in claim]
    used = {j for row in agreed for j, ok in enumerate(row) if ok}
    missing = []
    for i, c in enumerate(claim):
        if any(agreed[i]):
            continue
        free = [e for j, e in enumerate(evidence) if j not in used and _compatible(c, e) and e.readable
                and c.readable]
        same_family = [e for e in free if c.family and e.family == c.family]
        missing.append((c, (same_family or free or [None])[0]))
    return Comparison(tuple(claim), tuple(evidence), tuple(missing))


@functools.lru_cache(maxsize=64)
def _extracted(text: str) -> tuple[Number, ...]:
    """`extract`, kept for the texts read last: a section is read once for all the citations judged on it."""
    return tuple(extract(text))


def compare(claim: str, evidence: str, hedge: float = HEDGE, holds: bool = RANGE_HOLDS) -> Comparison:
    """`compare_numbers` of the numbers the two texts state."""
    return compare_numbers(list(_extracted(claim)), list(_extracted(evidence)), hedge, holds)
