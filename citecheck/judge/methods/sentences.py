"""Sentences of the shown passages, ranked for a claim, and how much of the claim a text covers.

Rules:
- A passage's paragraphs (split at blank lines) have their line wraps joined first (`passages.join_wraps`:
  a single line break inside a paragraph is a PDF's or a text file's wrap, never a sentence end), are
  normalised (`matching.normalise`, the guard's comparison) and cut at `passages.SENTENCE_END` (after
  . ! ? optionally closed by a quote or bracket, followed by whitespace and an upper-case letter, digit,
  quote or bracket). In a paragraph `source.language.detect` reads as French, German or Russian the
  upper-case letter may be any (É, Ü, Б: `_OTHER_END`); English paragraphs keep the rule above, so
  their units, and the recorded judge calls asked of them, are unchanged. Sentences under MIN_WORDS words
  are dropped. Each sentence is therefore verbatim in
  its passage as the guard reads it.
- Ranking: Okapi BM25 (k1 1.2, b 0.75, Lucene's non-negative idf log(1 + (N - n + .5)/(n + .5))) over the
  sentences, lower-cased word tokens with STOP words removed; ties keep page order.
- Coverage: the share of the claim's distinct content words (crudely stemmed: -ing, -ed, -es, -s off
  words long enough) that occur in a text; 1 when the claim has no content word.
- What the shown passages alone decide (their sentences, the sentences' words, a text's stemmed words) is
  made once per text and process (`web.page_memo`).
"""
from __future__ import annotations

import math
import re

from ...matching import normalise
from ...source import language
from ...web import page_memo
from ...web.passages import SENTENCE_END, join_wraps
from ...web.retrieval import tokens as words

MIN_WORDS = 3
STOP = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being
it its this that these those which who whom whose what when where why how not no nor so than then there
their they them he she his her him we our you your i me my do does did done has have had having can could
may might must shall should will would also into over under about after before between during through up
down out off again further once here all any both each few more most other some such only own same too
very s t just don now""".split())
_BLANK = re.compile(r"\n[ \t\r\f\v]*\n")
_OTHER_END = re.compile(r"[.!?][\"')\]»“”]?\s+(?=(\S))")
_OPENERS = "0123456789\"'([«„"


def split_sentences(paragraph: str) -> list[str]:
    """One paragraph -> its sentences (module rules), line wraps joined first."""
    text = normalise(join_wraps(paragraph))
    out, start = [], 0
    english = language.detect(text) == "en"
    for m in (SENTENCE_END if english else _OTHER_END).finditer(text):
        if not english and not (m.group(1).isupper() or m.group(1) in _OPENERS):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def sentences(passages: list[str]) -> list[str]:
    """Every sentence of at least MIN_WORDS words, in shown order (made once per passages: `page_memo`)."""
    return list(page_memo.remembered(_sentences, passages))


def _sentences(passages: list[str]) -> list[str]:
    return [s for passage in passages for block in _BLANK.split(passage.replace("\r\n", "\n"))
            for s in split_sentences(block) if len(s.split()) >= MIN_WORDS]


def content_words(text: str) -> list[str]:
    return [t for t in words(text) if t not in STOP]


def bm25_scores(query: str, docs: list[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    n, mean_length, df, docs_tf = page_memo.remembered(_bm25_index, docs)
    if not n:
        return []
    scores = []
    asked = set(content_words(query))
    for length, tf in docs_tf:
        score = 0.0
        for t in asked:
            if t in tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * length / mean_length))
        scores.append(score)
    return scores


def _bm25_index(docs: list[str]) -> tuple:
    """(n, mean length, document frequencies, (length, term frequencies) of each doc) of the docs' content
    words: what BM25 reads of them whatever the query."""
    tokens = [content_words(d) for d in docs]
    n = len(tokens)
    df: dict[str, int] = {}
    for doc in tokens:
        for t in set(doc):
            df[t] = df.get(t, 0) + 1
    docs_tf = []
    for doc in tokens:
        tf: dict[str, int] = {}
        for t in doc:
            tf[t] = tf.get(t, 0) + 1
        docs_tf.append((len(doc), tf))
    return n, (sum(map(len, tokens)) / n or 1.0) if n else 1.0, df, tuple(docs_tf)


def ranked(query: str, texts: list[str]) -> list[int]:
    """Indices of `texts` by BM25 score for `query`, best first; ties keep order."""
    scores = bm25_scores(query, texts)
    return sorted(range(len(texts)), key=lambda i: (-round(scores[i], 9), i))


def stem(token: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def coverage(claim: str, text: str) -> float:
    """Share of the claim's distinct content words (stemmed) that occur in `text` (module rules)."""
    wanted = {stem(t) for t in content_words(claim)}
    if not wanted:
        return 1.0
    return len(wanted & page_memo.remembered(_stems, text)) / len(wanted)


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(t) for t in set(words(text)))   # each distinct word stemmed once
