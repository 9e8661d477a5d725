"""Retraction and correction notices: what a page's title, banner and first screen say about the page itself.

Rules (chosen on the tune half of data/notices/, measured on its report half: scripts/notice_rule.py):
- Only the first screen is read: the first FIRST_SCREEN_CHARS characters of the page's text (the title
  and any banner come first; `fetch.html_text` puts a banner the main-content extractor dropped there).
  A notice further down is part of the article's body (a study it cites was retracted), not of the page.
- A notice is a HEADING (a line that starts with the notice's name and a colon, or is that name alone:
  "RETRACTED: …", "Retraction Note to: …", "Correction to: …", "Zurückgezogen: …", "Исправление") or a
  BANNER sentence at the start of a line that speaks of this page ("This article has been retracted",
  "The Editors have retracted this Article", "An earlier version of this article …", "Cet article a été
  rétracté", "Статья отозвана …"), in English, French, German or Russian.
- Kinds, first match wins in this order: a retraction-and-replacement (a corrected version replaces
  it) is a correction; then retracted, withdrawn, expression_of_concern, correction.
- Plural or general uses are not notices: "Retractions rise", a "Corrections policy" link, "withdrawal
  symptoms", the "droit de rétractation" or "Widerrufsrecht" of a shop, "Отзывы" (reviews).
- retracted, withdrawn and expression_of_concern SETTLE the citation (its reason, never supported); a
  correction travels beside the verdict (`notice`), the verdict unchanged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..vocabulary import CORRECTION, EXPRESSION_OF_CONCERN, RETRACTED, SETTLING_NOTICES, WITHDRAWN

FIRST_SCREEN_CHARS = 1500
"""How much of a page's text (from its start) is its first screen: title, banner and the opening lines."""
NOTICE_CHARS = 200
"""The notice's words kept in a row's `notice` field, at most."""

_SEP = r"\s*(?:[:：.–—-]|$)"           # the heading's colon (or dash, or the line's end)
_THIS_EN = r"(?:this|the above|the following)\s+(?:article|paper|study|publication|letter|review|chapter" \
           r"|preprint|manuscript|report|abstract|commentary|editorial|story|post)"
_THIS_FR = r"(?:cet|l['’])\s*(?:article|étude|publication)"
_THIS_DE = r"(?:dieser|der|diese|die)\s+(?:artikel|beitrag|arbeit|publikation|studie|text)"
_THIS_RU = r"(?:данная|настоящая|эта|статья)"


def _lines(*patterns: str) -> re.Pattern:
    """Patterns that must start a line (after Markdown marks and spaces)."""
    return re.compile(r"(?im)^[ \t>#*_\-|]*(?:comments?\s*:\s*)?(?:" + "|".join(patterns) + ")")


_RULES: tuple[tuple[str, re.Pattern], ...] = (
    (CORRECTION, _lines(r"notice of retraction and replacement", r"retraction and replacement" + _SEP)),
    (RETRACTED, _lines(
        r"retracted(?:\s+article)?" + _SEP, r"retraction(?:\s+note)?(?:\s+(?:to|of|for))?" + _SEP,
        r"(?:notice|statement|note)\s+of\s+retraction" + _SEP, r"retraction\s+notice" + _SEP,
        r"r[ée]tractation" + _SEP, r"article\s+r[ée]tract[ée]" + _SEP, r"avis\s+de\s+r[ée]tractation",
        r"zur[üu]ckgezogen(?:er\s+(?:artikel|beitrag))?" + _SEP, r"widerruf" + _SEP, r"r[üu]cknahme" + _SEP,
        r"ретракция" + _SEP, r"статья\s+отозвана", r"отозванная\s+статья" + _SEP,
        r"уведомление\s+об\s+отзыве",
        _THIS_EN + r"\s+(?:has\s+been|was|is\s+being|is)\s+retracted",
        r"(?:the\s+)?(?:editors?(?:-in-chief)?|publishers?|authors?|journal)(?:\s+and\s+(?:the\s+)?"
        r"(?:publishers?|editors?(?:-in-chief)?|authors?))?\s+(?:have|has|hereby)\s+retract(?:ed)?\s+"
        r"(?:this|the\s+(?:following|above))",
        r"(?:the\s+)?(?:editor-in-chief|editors?|journal|publisher)\s+(?:is\s+retracting|retracts?)\s+this",
        r"(?:the\s+)?[\w\s]{0,40}?editors\s+retract\s+this", r"we,\s+the\s+editors?\s+and\s+publishers?",
        r"this\s+article\s+was\s+retracted\s+on",
        _THIS_FR + r"\s+a\s+été\s+r[ée]tract[ée]", r"la\s+revue\s+r[ée]tracte",
        _THIS_DE + r"\s+wurde\s+(?:von\s+[\w\s]{0,40}?)?(?:zur[üu]ckgezogen|widerrufen)",
        _THIS_RU + r"[\w\s«»\"]{0,80}?отозвана",
        r"редакция\s+(?:журнала\s+)?отзывает\s+(?:статью|публикацию)",
    )),
    (WITHDRAWN, _lines(
        r"withdrawn\b" + _SEP, r"withdrawal\s+(?:notice|statement|note)" + _SEP, r"retir[ée]\s*:",
        r"article\s+retir[ée]" + _SEP,
        _THIS_EN + r"\s+(?:has\s+been|was|is)\s+withdrawn",
        r"(?:the\s+)?authors?\s+(?:have|has)\s+withdrawn\s+(?:this|the)",
        r"this\s+(?:paper|preprint|submission)\s+has\s+been\s+withdrawn",
        r"withdrawn\s+by\s+the\s+authors?", _THIS_FR + r"\s+a\s+été\s+retir[ée]",
        _THIS_DE + r"\s+wurde\s+(?:vom|von\s+den)\s+autor",
        r"(?:статья|препринт|публикация)\s+снята?\s+с\s+публикации",
        r"препринт\s+отозван",
    )),
    (EXPRESSION_OF_CONCERN, _lines(
        r"(?:editorial\s+)?expressions?\s+of\s+concern" + _SEP,
        r"editor['’]?s['’]?\s+note\s*:\s*readers\s+are\s+alerted",
        r"readers\s+are\s+alerted\s+that\s+(?:concerns|the\s+(?:conclusions|reliability|data))",
        r"the\s+[\w\s]{0,40}?editors?\s+issue\s+this\s+expression\s+of\s+concern",
        r"(?:avis|expression|d[ée]claration)\s+de\s+pr[ée]occupation" + _SEP,
        r"les\s+lecteurs\s+sont\s+(?:avertis|informés)\s+que\s+des\s+(?:doutes|préoccupations|inquiétudes)",
        r"besorgnis(?:äußerung|erklärung)" + _SEP, r"(?:redaktionelle\s+)?bedenkenmitteilung" + _SEP,
        r"leser\s+werden\s+darauf\s+hingewiesen,\s+dass\s+(?:bedenken|zweifel)",
        r"(?:редакционное\s+)?выражение\s+(?:обеспокоенности|озабоченности)" + _SEP,
        r"редакция\s+(?:журнала\s+)?выражает\s+(?:обеспокоенность|озабоченность)",
    )),
    (CORRECTION, _lines(
        r"(?:author|publisher)?\s*(?:correction|corrigendum|erratum|errata|addendum)(?:\s+(?:to|for|of))?"
        r"\s*[:：]", r"(?:correction|corrigendum|erratum)\s*$", r"correction\s+appended",
        r"an?\s+(?:earlier|previous|prior|original)\s+version\s+of\s+this\s+"
        r"(?:article|story|post|piece|report)",
        _THIS_EN + r"\s+(?:has\s+been|was)\s+(?:corrected|amended|updated\s+to\s+correct)",
        r"an?\s+(?:correction|erratum|corrigendum)\s+to\s+this\s+(?:article|paper)\s+"
        r"(?:has\s+been|was)\s+publ",
        r"editor['’]?s['’]?\s+note\s*:\s*(?:this|an\s+earlier)\s+[\w\s]{0,40}?"
        r"(?:corrected|earlier\s+version)",
        r"rectificatif" + _SEP,
        r"(?:une|la)\s+(?:précédente|première|ancienne)\s+version\s+de\s+cet\s+article",
        _THIS_FR + r"\s+a\s+été\s+(?:corrigé|modifié|rectifié)",
        r"(?:korrektur|berichtigung|korrigendum|richtigstellung)" + _SEP,
        r"in\s+einer\s+(?:früheren|ersten|vorherigen)\s+(?:version|fassung)\s+(?:dieses|des)",
        _THIS_DE + r"\s+wurde\s+(?:korrigiert|berichtigt)",
        r"(?:исправление|опровержение|поправка|уточнение)" + _SEP,
        r"(?:исправление|поправка|уточнение)\s+к\s+(?:статье|публикации|материалу)",
        r"в\s+(?:первоначальной|предыдущей|ранней|первой)\s+версии\s+(?:этой\s+|данной\s+)?"
        r"(?:статьи|материала|текста|публикации)", r"(?:статья|материал)\s+(?:был[аo]?\s+)?исправлен",
    )),
)
_STRAY_MARKS = re.compile(r"^[ \t>#*_\-|]+|[*_`]+")


@dataclass(frozen=True)
class Notice:
    kind: str      # one of NOTICE_KINDS
    words: str     # the line that says so, at most NOTICE_CHARS characters

    @property
    def settles(self) -> bool:
        """A retraction, a withdrawal or an expression of concern: the citation is never supported."""
        return self.kind in SETTLING_NOTICES

    def field(self) -> str:
        """The row's `notice` field: "<kind>: <the notice's words>"."""
        return f"{self.kind}: {self.words}"


def first_screen(text: str) -> str:
    """The first FIRST_SCREEN_CHARS characters of a page's text."""
    return text[:FIRST_SCREEN_CHARS]


def find(text: str, title: str | None = None) -> Notice | None:
    """The notice the page's `title` or first screen gives (module rules), or None."""
    screen = first_screen(text) if title is None else f"{title}\n{first_screen(text)}"
    for kind, rule in _RULES:
        match = rule.search(screen)
        if match:
            start = match.start()
            end = screen.find("\n", match.end())
            line = _STRAY_MARKS.sub("", screen[start:end if end >= 0 else len(screen)]).strip()
            return Notice(kind, " ".join(line.split())[:NOTICE_CHARS])
    return None
