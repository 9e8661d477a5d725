"""Twenty quotes that are not verbatim in RFC 7519 (three copies of it, so sections tie), shared by
tests/test_near_miss_cutoff.py and benchmarks/bench_matching.py: near misses (every 7th word changed),
heavier damage (every 3rd or 5th word replaced), invented sentences and two quotes over
matching.EXACT_CHARS, some citing their section, some another, some none. `results` is what
`matching.locate` says of each."""
from __future__ import annotations

import sys
from pathlib import Path

from citecheck import matching
from citecheck.source import sources
from citecheck.source.document import Document

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_growth import repeated  # noqa: E402  (the growth benchmark's copies of a document)
INVENTED = ["The JWT MUST be signed twice by every recipient before it is cached.",
            "Tokens issued on a Sunday carry no expiration time at all.",
            "Base64url encoding is forbidden for the header of an unsecured JWT.",
            "The audience claim lists the issuer's previous public keys in order."]


def document(copies: int = 3) -> Document:
    """RFC 7519 `copies` times over, copy n's sections named `id~n` (copy 0 keeps its names)."""
    return repeated(sources.load(ROOT / "data" / "rfc7519.txt", "rfc"), copies)


def damaged(text: str, start: int, words: int, every: int, replace: bool = False) -> str:
    """`words` words of `text` from word `start`, every `every`-th one changed (a letter added, or the
    word replaced)."""
    picked = text.split()[start:start + words]
    return " ".join(("qqq" if replace else w + "x") if i % every == 3 % every else w
                    for i, w in enumerate(picked))


def quotes(doc: Document) -> list[tuple[str, str | None]]:
    """(quote, cited section) x 20 (module docstring)."""
    keys = [k for k, s in doc.sections.items() if "~" not in k and len(s.text.split()) >= 60]
    out: list[tuple[str, str | None]] = []
    for i, key in enumerate(keys[:10]):                    # near misses: cited, another section, none
        cited = [key, keys[(i + 5) % len(keys)], None][i % 3]
        out.append((damaged(doc.sections[key].text, 4 + i, 18, 7), cited))
    for i, key in enumerate(keys[10:14]):                  # heavier damage
        quote = damaged(doc.sections[key].text, 2, 14, 3 + 2 * (i // 2), replace=True)
        out.append((quote, key if i % 2 else None))
    out += [(text, keys[i] if i % 2 else None) for i, text in enumerate(INVENTED)]
    for i, key in enumerate(sorted(keys, key=lambda k: -len(doc.sections[k].text))[:2]):   # long ones
        out.append((damaged(doc.sections[key].text, 3, 70, 9), key if i else None))
    return out


def results(doc: Document) -> list[dict]:
    """What `matching.locate` says of each quote: status, section, score, closest span and where."""
    sections = matching.Sections(doc)
    out = []
    for quote, cited in quotes(doc):
        m = matching.locate(quote, sections, cited)
        out.append({"status": m.status, "section": m.section, "score": m.score, "closest": m.closest,
                    "diff": m.diff, "start": m.start, "end": m.end})
    return out
