"""OpenAI Responses API responses: `output_text` parts with `url_citation` / `file_citation` annotations.

Documentation followed: the Responses API response object (`"object": "response"`, `output` items) and
its annotation types (url_citation: url, title, start_index, end_index; file_citation: file_id, filename,
index; container_file_citation; file_path) in the API reference, and the web search and file search tool
guides (platform.openai.com/docs/guides/tools-web-search, .../tools-file-search), in the stored copies of
2025-2026 (their navigation lists GPT-5.2). Indices are taken as Python string (code point) indices.

Rules:
- The answer is the `output_text` parts of the assistant `message` items of `output`, in order, each
  part its own paragraph; other items (web_search_call, file_search_call, reasoning, tool calls) and
  `refusal` parts are not prose.
- `url_citation` cites its `url` for text[start_index:end_index] (character indices into that part's
  text, end exclusive); when that span is the inline marker the model printed (`([site](url))`), the
  marker is removed and the citation sits where it stood. A Markdown link inside an annotated span is
  that annotation, not a second citation.
- `file_citation` cites file `filename` at `index` but quotes nothing: it becomes a check citation with
  quote and section null (reported as no_quote: a document-only citation, which `check` skips).
  `container_file_citation` and `file_path` point at files the model made, not at evidence: ignored.
- Problems: a span or index outside its text (out_of_range; that citation is skipped), a malformed item,
  part or annotation (skipped, the rest is read), an annotation type this reader does not know.
"""
from __future__ import annotations

from ..vocabulary import OPENAI_ANSWER
from . import markdown
from .base import JsonReader
from .jsondoc import Malformed, expect, get, index, top
from .parsed import Anchor, AnswerFormatError, Documents, Link, Parsed, Problem, Quote
from .prose import Pieces

IGNORED = ("container_file_citation", "file_path")


class OpenAIReader(JsonReader):
    name = OPENAI_ANSWER

    @classmethod
    def looks_like(cls, data: object) -> bool:
        return (isinstance(data, dict) and isinstance(data.get("output"), list)
                and (data.get("object") == "response"
                     or any(isinstance(item, dict) and item.get("type") == "message" for item in data["output"])))

    def read(self, data: object, documents: Documents) -> Parsed:
        if not isinstance(data, dict):
            raise AnswerFormatError(self.name, "$", "is not a JSON object (a Responses API response is one)")
        expect(self.name, data, "object", "response")
        output = top(self.name, data, "output", list)
        problems: list[Problem] = []
        pieces = Pieces()
        parts: list[tuple[str, int, str, list]] = []       # (path, start in joined text, text, annotations)
        for i, item in enumerate(output):
            for where, part in _text_parts(item, f"$.output[{i}]", problems):
                try:
                    text = get(part, "text", str, where)
                    annotations = get(part, "annotations", list, where, optional=True) or []
                except Malformed as exc:
                    problems.append(Problem(exc.where, "malformed", f"{exc.what}; part skipped"))
                    continue
                pieces.gap()
                start, _ = pieces.add(f"{where}.text", text)
                parts.append((where, start, text, annotations))
        located: list[tuple[int, int, Link | Quote, str]] = []
        for where, offset, text, annotations in parts:
            for k, annotation in enumerate(annotations):
                w = f"{where}.annotations[{k}]"
                try:
                    found = _annotation(annotation, w, text, problems)
                except Malformed as exc:
                    problems.append(Problem(exc.where, "malformed", f"{exc.what}; annotation skipped"))
                    continue
                if found:
                    start, end, source = found
                    located.append((offset + start, offset + end, source, w))
        rendered = markdown.render(pieces.text, pieces.where, markers=False)
        parsed = markdown.parsed_from(rendered, exclude=[(lo, hi) for lo, hi, source, _ in located
                                                         if isinstance(source, Link)])
        prose = rendered.prose
        parsed.anchors += [Anchor(prose.position(lo), prose.position(hi), source, w) for lo, hi, source, w in located]
        parsed.problems[:0] = problems
        return parsed


def _text_parts(item: object, where: str, problems: list[Problem]):
    """(path, part) of each output_text part of an assistant message item."""
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        problems.append(Problem(where, "malformed", "is not an output item (no type); skipped"))
        return []
    if item["type"] != "message" or item.get("role", "assistant") != "assistant":
        return []
    try:
        content = get(item, "content", list, where)
    except Malformed as exc:
        problems.append(Problem(exc.where, "malformed", f"{exc.what}; message skipped"))
        return []
    found = []
    for k, part in enumerate(content):
        path = f"{where}.content[{k}]"
        if isinstance(part, dict) and part.get("type") == "output_text":
            found.append((path, part))
        elif not (isinstance(part, dict) and isinstance(part.get("type"), str)):
            problems.append(Problem(path, "malformed", "is not a content part (no type); skipped"))
    return found


def _annotation(a: object, w: str, text: str, problems: list[Problem]):
    """(start, end, source) of one annotation within its part's text, or None when it cites nothing."""
    kind = get(a, "type", str, w)
    if kind == "url_citation":
        url = get(a, "url", str, w)
        if not markdown.is_web_url(url):
            raise Malformed(f"{w}.url", f"{url!r} is not an http(s) URL")
        start, end = index(a, "start_index", w), index(a, "end_index", w)
        if not start <= end <= len(text):
            problems.append(Problem(w, "out_of_range", f"characters {start}-{end} fall outside the text "
                                                       f"({len(text):,} characters); citation of {url} skipped"))
            return None
        return start, end, Link(url, get(a, "title", str, w, optional=True))
    if kind == "file_citation":
        file_id = get(a, "file_id", str, w)
        filename = get(a, "filename", str, w, optional=True)
        at = index(a, "index", w)
        if at > len(text):
            problems.append(Problem(w, "out_of_range", f"index {at} falls outside the text "
                                                       f"({len(text):,} characters); citation skipped"))
            return None
        problems.append(Problem(w, "no_quote", f"file_citation of {filename or file_id} quotes nothing and "
                                               "names no section: a document-only citation"))
        return at, at, Quote(None, None, (("document", filename or file_id), ("file_id", file_id)))
    if kind not in IGNORED:
        problems.append(Problem(f"{w}.type", "unsupported", f"annotation type {kind!r} is not read; skipped"))
    return None
