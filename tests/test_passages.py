"""passages: the 200-word packing rule, as examples and as properties."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecheck.web.passages import MAX_WORDS, join_wraps, split_passages


def test_short_paragraphs_are_packed_in_order():
    text = "Water boils.\n\nAt sea level.\n\n\n   \n\nAt 100 °C."
    assert split_passages(text) == ["Water boils.\n\nAt sea level.\n\nAt 100 °C."]


def test_pack_closes_when_the_next_paragraph_would_overflow():
    assert split_passages("a b c\n\nd e\n\nf", max_words=4) == ["a b c", "d e\n\nf"]


def test_long_paragraph_is_cut_at_word_boundaries():
    text = " ".join(f"w{i}" for i in range(450))
    pieces = split_passages(text)
    assert [len(p.split()) for p in pieces] == [200, 200, 50]
    assert pieces[0].split()[-1] == "w199" and pieces[1].split()[0] == "w200"


def test_cut_keeps_line_breaks_inside_a_piece():
    assert split_passages("one two\nthree four five", max_words=3) == ["one two\nthree", "four five"]


def test_blank_page_has_no_passages():
    assert split_passages("") == [] and split_passages(" \n\n \t\n") == []


def test_default_is_200_words():
    assert MAX_WORDS == 200


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "200"])
def test_max_words_below_one_or_not_whole_is_an_error(bad):
    with pytest.raises(ValueError, match="max_words"):
        split_passages("text", max_words=bad)


_word = st.text(alphabet=st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs")), min_size=1, max_size=6)
_gap = st.sampled_from([" ", "  ", "\n", "\n\n", "\n \n", "\t", "\n\n\n", "\r\n\r\n"])


@st.composite
def pages(draw):
    words = draw(st.lists(_word, max_size=120))
    gaps = draw(st.lists(_gap, min_size=len(words), max_size=len(words)))
    return "".join(w + g for w, g in zip(words, gaps))


@settings(max_examples=300, deadline=None)
@given(pages(), st.integers(min_value=1, max_value=40))
def test_properties(text, max_words):
    passages = split_passages(text, max_words)
    assert all(len(p.split()) <= max_words for p in passages)          # none over max_words
    assert all(p.strip() for p in passages)                            # none empty
    assert [w for p in passages for w in p.split()] == text.split()    # words preserved, in order
    for passage in passages:                                           # every passage is page text
        assert all(piece in text.replace("\r\n", "\n") for piece in passage.split("\n\n"))


WRAPPED = ("Readings fell by about 1 °C for every 300 m of altitude. Kitchens near sea level read\n"
           "between 99.6 °C and 100.2 °C. At 1,500 metres above sea level the water boiled at about\n"
           "95 °C, and at 3,000 metres above sea level it came to a full boil at roughly 90 °C.")


def test_a_wrapped_pdf_paragraph_gives_whole_sentences():
    from citecheck.judge.methods import sentences
    assert join_wraps("boiled at about\n95 °C, and case-\nsensitive") == (
        "boiled at about 95 °C, and case-\nsensitive")                  # a hyphen wrap: matching.normalise's
    assert sentences.sentences(split_passages(WRAPPED)) == [
        "Readings fell by about 1 °C for every 300 m of altitude.",
        "Kitchens near sea level read between 99.6 °C and 100.2 °C.",
        "At 1,500 metres above sea level the water boiled at about 95 °C, and at 3,000 metres above sea "
        "level it came to a full boil at roughly 90 °C."]


def test_a_long_paragraph_is_cut_after_its_last_sentence_end_within_the_limit():
    pieces = split_passages(WRAPPED, max_words=30)                      # sentences of 12, 11, 30 words
    assert [len(p.split()) for p in pieces] == [23, 30]
    assert pieces[0].endswith("100.2 °C.") and pieces[1].startswith("At 1,500 metres")
    assert "\n" in pieces[0]                                            # each piece keeps its line wraps
    too_long = split_passages("One two. Three four five six seven.", max_words=4)
    assert too_long == ["One two.", "Three four five six", "seven."]      # no sentence end inside: the limit
