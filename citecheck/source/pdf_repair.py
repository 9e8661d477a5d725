"""Repair what PDF text extraction does to prose, so that a quote of the document matches its text.

Rules, applied in this order to the pages of one document (each page a list of lines):
1. Ligatures U+FB00-FB06 become their letters (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ -> ff fi fl ffi ffl ft st); only these:
   NFKC would also rewrite characters a quote may hold on purpose (², ½, ™).
2. Running headers and footers are dropped: a line among the first or last EDGE_LINES non-blank lines
   of a page that recurs, with its digits blanked ("Page 3 of 9" ~ "Page 4 of 9"), in that zone on at
   least max(2, 40 %) of the pages. A first or last line that is only a page number ("7", "- 7 -",
   "Page 7", "7 of 9", "vii") is dropped on every page.
3. Soft hyphens (U+00AD): one ending a line joins that line to the next with no hyphen; the others
   are invisible and are removed.
4. A line ending in letters and "-" followed by a line starting with letters is one word broken in two:
   a. kept as "a-b" if "a-b" occurs elsewhere in the document;
   b. else joined as "ab" if "ab" occurs elsewhere as a word;
   c. else kept as "a-b" if "a" and "b" each occur elsewhere as words ("case-" / "sensitive");
   d. else joined as "ab" if "b" starts lower-case (the typesetter's break: "veri-" / "fied");
   e. else kept as "a-b" ("JSON-" / "LD"). A line ending "-" before a digit or nothing keeps it.
   "Elsewhere" leaves out the two broken pieces themselves; words compare case-insensitively. A word
   broken across a page end is joined onto the earlier page.
"""
from __future__ import annotations

import math
import re
from collections import Counter

EDGE_LINES = 2
"""How many non-blank lines at the top and at the bottom of a page can be a running header or footer."""
RECUR_SHARE = 0.4

_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "ft", "\ufb06": "st"})
_PAGE_NUMBER = re.compile(r"(?i)(?:page\s+)?(?:\d{1,4}|m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3}))"
                          r"(?:\s*(?:of|/)\s*\d{1,4})?|[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]")
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")
_COMPOUND = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_BROKEN = re.compile(r"(?P<head>[^\W\d_]+)-$")
_TAIL = re.compile(r"^(?P<tail>[^\W\d_]+)")


def repair(pages: list[str]) -> list[str]:
    """The repaired text of each page (see module rules)."""
    lines = [[line.rstrip() for line in page.translate(_LIGATURES).split("\n")] for page in pages]
    lines = drop_running_lines(lines)
    return ["\n".join(page).strip("\n") for page in join_broken_words(lines)]


def _key(line: str) -> str:
    return re.sub(r"\d+", "#", " ".join(line.split())).lower()


def _edges(page: list[str]) -> list[int]:
    filled = [n for n, line in enumerate(page) if line.strip()]
    return sorted(set(filled[:EDGE_LINES] + filled[-EDGE_LINES:]))


def drop_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Pages without their running headers, footers and page numbers (rule 2)."""
    seen = Counter(key for page in pages for key in {_key(page[n]) for n in _edges(page)})
    needed = max(2, math.ceil(RECUR_SHARE * len(pages)))
    out = []
    for page in pages:
        filled = [n for n, line in enumerate(page) if line.strip()]
        outer = {filled[0], filled[-1]} if filled else set()
        drop = {n for n in _edges(page) if seen[_key(page[n])] >= needed
                or (n in outer and _PAGE_NUMBER.fullmatch(page[n].strip()))}
        out.append([line for n, line in enumerate(page) if n not in drop])
    return out


def _breaks(pages: list[list[str]]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(line, next line) positions of each line-end break: a soft hyphen or letters + '-' at the end,
    letters at the start of the next non-blank line (which may be on the next page)."""
    flat = [(p, n) for p, page in enumerate(pages) for n, line in enumerate(page) if line.strip()]
    found = []
    for (here, there) in zip(flat, flat[1:]):
        line, following = pages[here[0]][here[1]], pages[there[0]][there[1]].lstrip()
        if (line.endswith("\u00ad") or _BROKEN.search(line)) and _TAIL.match(following):
            found.append((here, there))
    return found


def _vocabulary(pages: list[list[str]], breaks) -> tuple[set[str], set[str]]:
    """Words and hyphenated compounds of the document, leaving out the pieces of broken words."""
    heads, tails = {here for here, _ in breaks}, {there for _, there in breaks}
    words, compounds = set(), set()
    for p, page in enumerate(pages):
        for n, line in enumerate(page):
            text = line.replace("\u00ad", "")
            if (p, n) in heads:
                text = re.sub(r"[^\W\d_]+-?$", "", text)
            if (p, n) in tails:
                text = _TAIL.sub("", text.lstrip())
            compounds.update(m.lower() for m in _COMPOUND.findall(text))
            words.update(m.lower() for m in _WORD.findall(text))
    return words, compounds


def joined(head: str, tail: str, words: set[str], compounds: set[str]) -> str:
    """The broken word 'head-' + 'tail' as it should read (rule 4)."""
    pair, whole = f"{head}-{tail}".lower(), f"{head}{tail}".lower()
    if pair in compounds:
        return f"{head}-{tail}"
    if whole in words:
        return head + tail
    if head.lower() in words and tail.lower() in words:
        return f"{head}-{tail}"
    return head + tail if tail[0].islower() else f"{head}-{tail}"


def join_broken_words(pages: list[list[str]]) -> list[list[str]]:
    """Pages with soft hyphens resolved and each line-end break joined onto its first line (rules 3-4)."""
    pages = [list(page) for page in pages]
    breaks = _breaks(pages)
    words, compounds = _vocabulary(pages, breaks)
    emptied = set()
    for (p, n), (q, m) in breaks:
        line, following = pages[p][n], pages[q][m].lstrip()
        tail = _TAIL.match(following)["tail"]
        if line.endswith("\u00ad"):
            pages[p][n] = line[:-1] + tail
        else:
            head = _BROKEN.search(line)["head"]
            pages[p][n] = line[:-len(head) - 1] + joined(head, tail, words, compounds)
        pages[q][m] = following[len(tail):].lstrip()
        if not pages[q][m]:
            emptied.add((q, m))
    return [[line.replace("\u00ad", "") for n, line in enumerate(page) if (p, n) not in emptied]
            for p, page in enumerate(pages)]
