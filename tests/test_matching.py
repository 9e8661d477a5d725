"""Quote matching: exact rule, normalisation, near misses on both sides of the threshold."""
from citecheck import matching, sources

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
