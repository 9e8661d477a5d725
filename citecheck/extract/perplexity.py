"""Perplexity (Sonar) chat-completions responses: `[n]` markers in the text and a list of sources.

Documentation followed: the Sonar API reference for POST /chat/completions (docs.perplexity.ai,
api-reference), stored copy of 2025-2026: response fields id, model, created, usage (with
search_context_size, citation_tokens, num_search_queries), object "chat.completion", choices[].message,
`citations` (a list of URL strings) and `search_results` (title, url, date, and in newer responses
last_updated and `snippet`, "text snippet from the search result": the API's published schema,
ApiPublicSearchResult). Older responses carry only `citations`; some newer ones only `search_results`.

Rules:
- The answer is `choices[0].message.content` (Markdown); other choices are alternatives, not read
  (reported). A leading `<think>` block is not prose.
- `[n]` cites the n-th URL (1-based) of `citations`; without `citations`, of `search_results` (by
  their `url`). `search_results` titles name the sources, and a non-empty `snippet` is the text the
  source is said to hold: every marker to it carries it (`verify` matches it on the fetched page).
  Inline links cite as in Markdown.
- Problems: a marker with no source (dangling_marker), a source never cited (uncited_source), a
  malformed source entry (skipped: a marker to it is then dangling).
"""
from __future__ import annotations

from ..vocabulary import PERPLEXITY_ANSWER
from . import markdown
from .base import JsonReader
from .jsondoc import Malformed, entries, get, top
from .parsed import AnswerFormatError, Documents, Link, Parsed, Problem
from .prose import line_cols


class PerplexityReader(JsonReader):
    name = PERPLEXITY_ANSWER

    @classmethod
    def looks_like(cls, data: object) -> bool:
        return (isinstance(data, dict) and isinstance(data.get("choices"), list)
                and ("citations" in data or "search_results" in data or data.get("object") == "chat.completion"))

    def read(self, data: object, documents: Documents) -> Parsed:
        if not isinstance(data, dict):
            raise AnswerFormatError(self.name, "$", "is not a JSON object (a chat completion is one)")
        choices = top(self.name, data, "choices", list)
        if not choices:
            raise AnswerFormatError(self.name, "$.choices", "is empty: there is no answer")
        message = top(self.name, choices[0], "message", dict, "$.choices[0]")
        content = top(self.name, message, "content", str, "$.choices[0].message")
        problems: list[Problem] = []
        if len(choices) > 1:
            problems.append(Problem("$.choices", "ignored", f"{len(choices)} choices; only choices[0] is read"))
        numbered = _sources(data, problems)
        path = "$.choices[0].message.content"
        cols = line_cols(content)
        rendered = markdown.render(content, lambda p: f"{path}, {cols(p)}", markers=True,
                                   numbered=numbered)
        parsed = markdown.parsed_from(rendered)
        parsed.problems[:0] = problems
        return parsed


def _sources(data: dict, problems: list[Problem]) -> dict[str, markdown.Defined]:
    """The numbered sources: `citations` URLs (titled from search_results), else search_results' URLs."""
    found: list[tuple[str, str | None]] = []          # (where, url or None when malformed), in order
    titles: dict[str, str | None] = {}
    snippets: dict[str, str | None] = {}
    for where, result in entries(data, "search_results", "$", problems):
        try:
            url = get(result, "url", str, where)
            titles.setdefault(url, get(result, "title", str, where, optional=True))
            snippets.setdefault(url, get(result, "snippet", str, where, optional=True) or None)
        except Malformed as exc:
            problems.append(Problem(exc.where, "malformed", f"{exc.what}; search result skipped"))
            url = None
        found.append((where, url))
    if "citations" in data:
        found = []
        for where, entry in entries(data, "citations", "$", problems):
            if not isinstance(entry, str):
                problems.append(Problem(where, "malformed", "must be a URL string; source skipped"))
                entry = None
            found.append((where, entry))
    numbered = {}
    for n, (where, url) in enumerate(found, 1):
        if url is not None and not markdown.is_web_url(url):
            problems.append(Problem(where, "malformed", f"{url!r} is not an http(s) URL; source skipped"))
        elif url is not None:
            numbered[str(n)] = markdown.Defined(Link(url, titles.get(url), snippets.get(url)), where)
    return numbered
