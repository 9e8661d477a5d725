"""guard: a verdict stands only if its quote is on the page shown to the judge."""
import pytest

from citecheck.verdict.guard import NOT_IN_SOURCE, guard, quote_in_passages

PASSAGES = [
    "Pure water boils at 100 °C (212 °F) at sea level.",
    "At higher altitudes, water boils at a lower temperature \u2014 about 93 \u00b0C in Denver.",
    "Chefs call this \u201cthe altitude adjustment\u201d.",
]


def verdict(label, quote, confidence=0.9, reason=None):
    return {"label": label, "evidence_quote": quote, "confidence": confidence, "reason": reason,
            "model": "m"}


DOWNGRADED = ("not_found", None, 0.0, NOT_IN_SOURCE)


@pytest.mark.parametrize("given, expected", [
    # a verbatim quote stands, whatever the label
    (verdict("supported", "Pure water boils at 100 °C (212 °F) at sea level."),
     ("supported", "Pure water boils at 100 °C (212 °F) at sea level.", 0.9, None)),
    (verdict("contradicted", "boils at 100 °C"), ("contradicted", "boils at 100 °C", 0.9, None)),
    (verdict("not_found", "Chefs call this"), ("not_found", "Chefs call this", 0.9, None)),
    # typographic quotes, dashes and whitespace are folded on both sides
    (verdict("supported", 'call this "the altitude adjustment"'),
     ("supported", 'call this "the altitude adjustment"', 0.9, None)),
    (verdict("supported", "lower temperature - about 93 \u00b0C"),
     ("supported", "lower temperature - about 93 \u00b0C", 0.9, None)),
    (verdict("supported", "  Pure   water\nboils  "), ("supported", "  Pure   water\nboils  ", 0.9, None)),
    # not on the page -> not_found, confidence 0, quote cleared
    (verdict("supported", "Water boils at 50 °C at sea level."), DOWNGRADED),
    (verdict("contradicted", "pure water boils at 100 °C"), DOWNGRADED),          # case differs
    (verdict("supported", "boils at 100 °C at sea level. At higher"), DOWNGRADED),  # spans two passages
    (verdict("supported", None), DOWNGRADED),
    (verdict("contradicted", "   "), DOWNGRADED),
    (verdict("not_found", "an invented sentence", 0.7), DOWNGRADED),
    # a quoteless not_found (including an invalid judge output) passes through untouched
    (verdict("not_found", None, 0.4), ("not_found", None, 0.4, None)),
    (verdict("not_found", None, 0.0, "judge_output_invalid: not JSON"),
     ("not_found", None, 0.0, "judge_output_invalid: not JSON")),
])
def test_guard_table(given, expected):
    out = guard(given, PASSAGES)
    assert (out["label"], out["evidence_quote"], out["confidence"], out["reason"]) == expected
    assert out["model"] == "m"


def test_guard_only_looks_at_the_passages_shown():
    assert guard(verdict("supported", "Chefs call this"), PASSAGES[:2])["label"] == "not_found"
    assert guard(verdict("supported", "Chefs call this"), [])["reason"] == NOT_IN_SOURCE


def test_guard_does_not_mutate_its_input():
    given = verdict("supported", "invented")
    guard(given, PASSAGES)
    assert given["label"] == "supported" and given["evidence_quote"] == "invented"


def test_quote_in_passages():
    assert quote_in_passages("\u201cthe altitude adjustment\u201d", PASSAGES)
    assert not quote_in_passages("", PASSAGES) and not quote_in_passages(None, PASSAGES)


@pytest.mark.parametrize("quote", [".", "\u2014", "a", "(1)", " . . "])
@pytest.mark.parametrize("label", ["supported", "contradicted", "not_found"])
def test_a_quote_without_words_is_not_evidence_even_when_it_is_on_the_page(quote, label):
    passages = [*PASSAGES, "Footnote (1) a \u2014 ."]
    out = guard(verdict(label, quote, 0.99), passages)
    assert (out["label"], out["evidence_quote"], out["confidence"], out["reason"]) == DOWNGRADED


def test_the_shortest_quote_that_is_evidence():
    assert guard(verdict("supported", "100 °C"), PASSAGES)["label"] == "supported"     # 4 letters or digits
