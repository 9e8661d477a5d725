"""aggregate: the fixed per-claim rule, as a table."""
import pytest

from citecheck.verdict.aggregate import overall

S, C, N, U = "supported", "contradicted", "not_found", "unreachable"


@pytest.mark.parametrize("labels, expected", [
    ([], N),
    ([S], S), ([C], C), ([N], N), ([U], U),
    ([S, C], C), ([C, S, S, S], C), ([U, C], C), ([N, C], C),   # one contradiction outweighs all
    ([S, U], S), ([U, S], S), ([S, N], S), ([N, U, S], S),
    ([U, U], U), ([U, U, U], U),
    ([U, N], N), ([N, N], N), ([N, U, U], N),
])
def test_overall_table(labels, expected):
    assert overall(labels) == expected


def test_order_does_not_matter():
    assert overall([U, N, S, C]) == overall([C, S, N, U]) == C


def test_accepts_any_iterable():
    assert overall(iter([U, S])) == S


def test_unknown_label_is_an_error():
    with pytest.raises(ValueError, match="unknown citation label"):
        overall([S, "verified"])
