"""Quote matching: exact rule, normalisation, near misses on both sides of the threshold."""
import pytest

from citecheck import matching
from citecheck.source import sources

DOC = sources.load("data/rfc7519.txt")


def test_normalise_folds_quotes_dashes_whitespace_and_hyphen_wraps():
    assert matching.normalise("\u201cexp\u201d \u2014  it\u2019s\n  case-\n   sensitive ") == '"exp" - it\'s case-sensitive'


def test_quote_spanning_a_line_wrap_is_found_in_the_cited_section():
    quote = ("The \"exp\" (expiration time) claim identifies the expiration time on or after which "
             "the JWT MUST NOT be accepted for processing.")
    m = matching.locate(quote, DOC, "4.1.4")
    assert (m.status, m.section, m.elsewhere) == ("found", "4.1.4", False)


def test_quote_found_in_another_section_than_cited():
    m = matching.locate("Use of this claim is OPTIONAL.", DOC, "1")
    assert m.status == "found" and m.elsewhere and m.section != "1"


def test_typographic_quotes_match():
    m = matching.locate("The \u201ciss\u201d (issuer) claim identifies the principal that issued the JWT.", DOC, "4.1.1")
    assert m.status == "found"


def test_claim_only_citation_is_section_only():
    assert matching.locate(None, DOC, "4.1.5").status == "section-only"
    assert matching.locate("   ", DOC, None).status == "missing"


def test_near_miss_above_threshold_is_misquoted_with_span_and_diff():
    m = matching.locate('The "aud" (audience) claim identifies the recipients the JWT is intended for.', DOC, "4.1.3")
    assert m.status == "misquoted" and m.score >= matching.NEAR_MISS
    assert m.closest == 'The "aud" (audience) claim identifies the recipients that the JWT is intended for.'
    assert m.diff == 'The "aud" (audience) claim identifies the recipients {+that+} the JWT is intended for.'


def test_reworded_quote_below_threshold_is_missing():
    m = matching.locate("The aud claim identifies the recipients that the JWT is for.", DOC, "4.1.3")
    assert m.status == "missing" and m.score < matching.NEAR_MISS


def test_invented_quote_is_missing():
    m = matching.locate("All JWTs MUST be encrypted using AES-256-GCM prior to transmission.", DOC, "11.1")
    assert m.status == "missing" and m.section is None


def test_word_diff():
    assert matching.word_diff("a b c d", "a x c d e") == "a [-b-] {+x+} c d {+e+}"


def test_a_quote_without_words_is_no_quote():
    for quote in (".", "\u2014", "-", "“”", "a."):
        assert matching.locate(quote, DOC, "4.1.4").status == "section-only"
        assert matching.locate(quote, DOC, None).status == "missing"
    assert matching.locate("JWT.", DOC, None).status == "missing"                 # 3 letters: not evidence
    assert matching.locate("JSON Web Token", DOC, None).status == "found"
    assert matching.has_content("100 °C") and not matching.has_content(". — …")


# ---------------------------------------------------------------- bounded work

def _altered(n: int) -> str:
    """A span of section 13.2 with every 7th word changed: a near miss of about n characters."""
    words, out = normalise_section("13.2").split(), []
    for i, word in enumerate(words):
        out.append(word + "x" if i % 7 == 3 else word)
        if sum(map(len, out)) + len(out) >= n:
            break
    return " ".join(out)


def normalise_section(key: str) -> str:
    return matching.normalise(DOC.sections[key].text)


def test_a_long_near_miss_is_found_through_the_lcs_alignment():
    for n in (matching.EXACT_CHARS + 40, 2000):
        m = matching.locate(_altered(n), DOC, None)
        assert m.status == "misquoted" and m.section == "13.2" and m.score >= 99


def test_a_quote_over_the_cap_is_missing_without_a_near_miss_search(monkeypatch):
    monkeypatch.setattr(matching, "_aligned", lambda *a: pytest.fail("no near-miss search past the cap"))
    m = matching.locate("x" * 5_000_001, DOC, "4.1.4", max_chars=5000)
    assert (m.status, m.score, m.section) == ("missing", None, None)
    verbatim = normalise_section("13.2")
    assert len(verbatim) > 2000 and matching.locate(verbatim, DOC, None, max_chars=100).status == "found"


def test_the_work_per_quote_is_bounded(monkeypatch):
    """One alignment per section and at most MAX_EDGES**2 ratios to refine, whatever the quote's length."""
    from rapidfuzz import fuzz
    calls = {"ratio": 0}
    ratio = fuzz.ratio

    def counted(*args, **kwargs):
        calls["ratio"] += 1
        return ratio(*args, **kwargs)

    monkeypatch.setattr(matching.fuzz, "ratio", counted)
    matching.locate(_altered(4000), DOC, None)
    assert calls["ratio"] <= len(DOC.sections) + matching.MAX_EDGES ** 2 + 1


def test_a_long_quote_is_aligned_only_where_its_anchors_place_it(monkeypatch):
    """On a 5 MB text the LCS alignment sees a window about the quote's size, not the whole text; a quote
    none of whose anchors stands there is missing with no alignment at all."""
    from citecheck.source.document import Document, Section
    body = normalise_section("13.2")
    page = "filler words " * 200_000 + body + " more filler" * 200_000
    doc = Document("page", page, {"page": Section("page", "page", page)})
    seen, opcodes = [], matching.Indel.opcodes
    monkeypatch.setattr(matching.Indel, "opcodes", lambda a, b: seen.append(len(b)) or opcodes(a, b))
    quote = _altered(2000)
    m = matching.locate(quote, doc, None)
    assert m.status == "misquoted" and m.score >= 99 and max(seen) <= 2 * len(quote)
    seen.clear()
    nowhere = " ".join(f"w{i:05d}" for i in range(300))
    assert matching.locate(nowhere, doc, None).status == "missing" and seen == []
