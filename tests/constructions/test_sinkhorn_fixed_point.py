"""Positive plans are exactly Sinkhorn plans of C = -eps log pi; plans with zeros are refused."""

from fractions import Fraction

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions.sinkhorn import SinkhornInputError
from attncert.constructions.sinkhorn.fixed_point import fixed_point, interpolate
from attncert.constructions.sinkhorn.problem import northwest_corner, random_marginal, random_plan

positive_plans = st.tuples(st.integers(1, 5), st.integers(1, 5)).flatmap(
    lambda s: st.lists(st.lists(st.integers(1, 50), min_size=s[1], max_size=s[1]), min_size=s[0], max_size=s[0])
)


@settings(deadline=None, max_examples=50)
@given(positive_plans, st.integers(1, 100))
def test_positive_plan_is_its_own_sinkhorn_fixed_point(weights, k):
    total = sum(map(sum, weights))
    pi = [[fmpq(w, total) for w in row] for row in weights]
    # marginals computed independently with Python Fractions
    a = [Fraction(sum(row), total) for row in weights]
    b = [Fraction(sum(row[j] for row in weights), total) for j in range(len(weights[0]))]
    fp = fixed_point(pi, a, b, fmpq(1, k))
    assert fp.holds
    assert fp.u == [1] * len(a) and fp.v == [1] * len(b)


def test_wrong_marginals_do_not_hold():
    pi = [[fmpq(1, 4), fmpq(1, 4)], [fmpq(1, 4), fmpq(1, 4)]]
    assert not fixed_point(pi, ["1/2", "1/2"], ["1/3", "2/3"], "1").holds


def test_zeros_are_refused_with_a_clear_error():
    pi = northwest_corner([fmpq(1, 2), fmpq(1, 2)], [fmpq(1, 2), fmpq(1, 2)])
    with pytest.raises(SinkhornInputError, match="positive"):
        fixed_point(pi, ["1/2", "1/2"], ["1/2", "1/2"], "1")


def test_generators_keep_marginals_exactly():
    a, b = random_marginal(4, 1), random_marginal(5, 2)
    for pi in (random_plan(a, b, 3), northwest_corner(a, b)):
        assert [sum(r, fmpq(0)) for r in pi] == a
        assert [sum((r[j] for r in pi), fmpq(0)) for j in range(5)] == b
    assert all(x > 0 for r in random_plan(a, b, 3) for x in r)
    nw = northwest_corner(a, b)
    assert sum(x != 0 for r in nw for x in r) <= 4 + 5 - 1
    pt = interpolate(nw, a, b, fmpq(1, 1000))
    assert fixed_point(pt, a, b, "1/10").holds
