"""Pick the passages worth showing the judge: BM25 (the default) or all-MiniLM-L6-v2 cosine, top 3.

Rules:
- The MiniLM encoder is `citecheck.web.vectors.model` (loaded on first use, never at import).
- Score = the passage's BM25 (Okapi, rank-bm25) score for the claim (RETRIEVAL=bm25, the default), or
  cosine similarity between the claim and each passage (RETRIEVAL=minilm). BM25 is the rule chosen on
  WiCE's tune split: it put a whole gold evidence set in the top 3 more often (0.862) than MiniLM (0.824)
  or their reciprocal-rank fusion (0.849, k = 60); `how` is always passed (the setting, read once).
- Tokens (`tokens`): lower-cased runs of word characters. For a French, German or Russian claim
  (`source.language.detect` of the query) the query's and the passages' tokens are snowball-stemmed in that
  language ("bout", "bouillir" -> "bout"; "кипит", "кипения" -> "кип"), so inflections meet; an English claim
  (or one of no detectable language) keeps the unstemmed tokens, so English rankings are unchanged.
- Top `k` (3) by score; ties (scores equal to 6 decimals) keep page order (stable sort).
- At most MAX_PASSAGES passages of a page are encoded (`shortlist`): on a longer page, the ones
  sharing the most distinct words with the claim (lower-cased runs of word characters; ties keep page
  order), kept in page order. Chosen on WiCE's tune split over page order and BM25
  (benchmarks/bench_passage_cap.py): it loses no evidence recall@3 on WiCE's pages and keeps more
  than encoding every passage when the article is buried in a long page; page order loses most.
- Each text is encoded once (`citecheck.web.vectors`: new texts in one batch, known ones remembered in
  memory and under .models/), so a page cited by several claims, or read again by a replay, is not
  encoded again; the scores of the last 512 distinct (query, passages) calls are remembered too, and
  the notebooks' calls are recorded (`recorded_scores`): a fresh clone's replay encodes nothing.
- A page's BM25 index and the word sets `shortlist` compares are made once per page and process
  (`page_memo`), whichever claims cite it.
"""
from __future__ import annotations

import functools
import re
import threading

from .. import config
from ..source import language
from . import page_memo, recorded_scores
from .vectors import encode

TOP_K = 3
_TIE_DECIMALS = 6
def similarities(query: str, passages: list[str]) -> list[float]:
    """Cosine similarity between `query` and each passage, in page order."""
    if not passages:
        return []
    return list(_similarities(query, tuple(passages)))


@functools.lru_cache(maxsize=512)
def _similarities(query: str, passages: tuple[str, ...]) -> tuple[float, ...]:
    if (scores := recorded_scores.recorded(query, passages)) is not None:
        return scores
    vectors = encode([query, *passages])
    scores = tuple(float(x) for x in (vectors[1:] @ vectors[0]).tolist())
    recorded_scores.keep(query, passages, scores)
    return scores


def tokens(text: str, lang: str = "en") -> list[str]:
    """Lower-cased runs of word characters (BM25's tokens; `shortlist` counts the distinct ones), stemmed
    in `lang` when it is French, German or Russian (module rules)."""
    found = re.findall(r"\w+", text.lower())
    return _stemmer(language.STEMMERS[lang]).stemWords(found) if lang in language.STEMMERS else found


_STEMMERS = threading.local()


def _stemmer(name: str):
    """This thread's snowball stemmer for `name`: a stemmer keeps the word it works on in itself, so two
    threads sharing one garble each other's words (batch and check-answer stem in threads)."""
    import snowballstemmer
    mine = _STEMMERS.__dict__
    if name not in mine:
        mine[name] = snowballstemmer.stemmer(name)
    return mine[name]


def words(text: str, lang: str = "en") -> set[str]:
    """The distinct tokens of `text`."""
    return set(tokens(text, lang))


def shortlist(query: str, passages: list[str], cap: int) -> list[int]:
    """Page indices of the passages worth encoding, in page order: every one when there are at most
    `cap`, else the `cap` sharing the most distinct words with `query` (module rules)."""
    if cap < 1:
        raise ValueError(f"cap must be >= 1, got {cap!r}")
    if len(passages) <= cap:
        return list(range(len(passages)))
    lang = language.detect(query)
    asked, held = words(query, lang), page_memo.remembered(word_sets_in(lang), passages)
    by_overlap = sorted(range(len(passages)), key=lambda i: -len(asked & held[i]))
    return sorted(by_overlap[:cap])


def bm25_scores(query: str, passages: list[str]) -> list[float]:
    """rank-bm25's Okapi score of each passage for `query` (its idf is zero for a word in exactly half the
    passages and floored at a small epsilon below that, so on short pages common words barely count)."""
    if not passages:
        return []
    lang = language.detect(query)
    index = page_memo.remembered(bm25_index_in(lang), passages)
    return [float(s) for s in index.get_scores(tokens(query, lang))]


@functools.cache
def word_sets_in(lang: str):
    """The function giving the distinct tokens in `lang` of each passage (what `shortlist` compares; one
    page's, made once: `page_memo`, keyed by this function, so each language has its own entry)."""
    def word_sets(passages: list[str]) -> list[frozenset[str]]:
        return [frozenset(words(p, lang)) for p in passages]
    return word_sets


@functools.cache
def bm25_index_in(lang: str):
    """The function giving rank-bm25's Okapi index of the passages, tokens in `lang` (one page's, made
    once: `page_memo`, keyed by this function, so each language has its own entry)."""
    def bm25_index(passages: list[str]):
        from rank_bm25 import BM25Okapi
        return BM25Okapi([tokens(p, lang) or [""] for p in passages])
    return bm25_index


def rank(query: str, passages: list[str], k: int = TOP_K, *, how: str) -> list[tuple[int, float]]:
    """(page index, score) of the `k` best passages, best first, by MiniLM cosine or BM25 (RETRIEVAL);
    ties keep page order."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    if how not in config.RETRIEVALS:
        raise ValueError(f"how must be one of {', '.join(config.RETRIEVALS)}, got {how!r}")
    scores = similarities(query, passages) if how == "minilm" else bm25_scores(query, passages)
    order = sorted(range(len(scores)), key=lambda i: -round(scores[i], _TIE_DECIMALS))
    return [(i, scores[i]) for i in order[:k]]


def top_passages(query: str, passages: list[str], k: int = TOP_K, *, how: str) -> list[str]:
    """The `k` best passages for `query`, best first (what the judge is shown)."""
    return [passages[i] for i, _ in rank(query, passages, k, how=how)]
