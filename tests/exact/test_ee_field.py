"""EE = Frac(Q[e^Q]): field axioms, exact identities and exact signs."""

import mpmath
import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact import EE, EENumber, ExactZeroDivision, NotInFieldError
from attncert.exact.softmax import softmax_row
from attncert.exact.testing import ee_numbers, rationals

e = EE.exp(1)


@settings(max_examples=60, deadline=None)
@given(ee_numbers(), ee_numbers(), ee_numbers())
def test_associativity(a, b, c):
    assert (a + b) + c == a + (b + c)
    assert (a * b) * c == a * (b * c)


@settings(max_examples=60, deadline=None)
@given(ee_numbers(), ee_numbers(), ee_numbers())
def test_distributivity(a, b, c):
    assert a * (b + c) == a * b + a * c


@settings(max_examples=60, deadline=None)
@given(ee_numbers(), ee_numbers())
def test_commutativity_and_inverses(a, b):
    assert a + b == b + a
    assert a * b == b * a
    assert a - a == 0
    assert (a + b) - b == a
    if not a.is_zero():
        assert a * (1 / a) == 1
        assert (b / a) * a == b


@settings(max_examples=60, deadline=None)
@given(ee_numbers(), ee_numbers())
def test_sign_is_consistent_with_an_independent_high_precision_value(a, b):
    d = a - b
    with mpmath.workdps(60):
        ref = _mp(d)
    if d.is_zero():
        assert a == b
    else:
        # A nonzero element is never tiny for these small inputs, so 60 digits decide.
        assert d.sign() == (1 if ref > 0 else -1)
        assert (a < b) == (ref < 0)


def _mp(x: EENumber) -> mpmath.mpf:
    """Independent value: mpmath evaluates the sums term by term."""

    def ev(s):
        return mpmath.fsum(mpmath.mpf(int(c.p)) / int(c.q) * mpmath.exp(mpmath.mpf(int(q.p)) / int(q.q)) for q, c in s.terms.items())

    return ev(x.num) / ev(x.den)


def test_known_identities():
    assert EE.exp("1/2") * EE.exp("1/2") == e
    assert (EE.exp(2) - 1) / (e - 1) == e + 1
    assert EE.exp(3) > 20
    assert EE.exp(3) < EE.convert("201/10")
    assert EE.exp("1/3") + EE.exp("-1/3") > 2
    assert EE.exp(0) == 1
    assert EE.exp("0.25") ** 4 == e


def test_equal_values_written_differently_compare_equal():
    a = (EE.exp(2) - 1) / (e - 1)
    b = e + 1
    assert EE.to_json(a) != EE.to_json(b)  # no gcd is taken ...
    assert a == b  # ... yet equality is exact


@settings(max_examples=40, deadline=None)
@given(st.lists(rationals(30, 7), min_size=1, max_size=12))
def test_softmax_rows_sum_to_exactly_one(scores):
    row = softmax_row(scores, EE)
    assert EE.sum(row) == 1
    total = row[0]
    for x in row[1:]:
        total = total + x
    assert total == 1
    # Equal scores give exactly equal weights.
    for i, s in enumerate(scores):
        for j, t in enumerate(scores):
            assert (row[i] == row[j]) == (s == t)


def test_softmax_row_shares_one_denominator():
    row = softmax_row([fmpq(k, 7) for k in range(50)], EE)
    assert len({id(x.den) for x in row}) == 1
    assert len(EE.sum(row).den) == 1


def test_exp_of_non_rational_is_refused_with_the_element_named():
    with pytest.raises(NotInFieldError, match=r"exp\(e\)"):
        EE.exp(e)
    assert EE.exp((e * 2) / e) == EE.exp(2)  # a rational value in disguise is fine


def test_division_by_exact_zero():
    with pytest.raises(ExactZeroDivision):
        e / (e - e)
    with pytest.raises(ZeroDivisionError):
        EE.div(e, EE.zero())


def test_relu_max_and_rational_detection():
    x = EE.exp("1/3") - EE.exp("1/4")
    assert EE.relu(x) == x and EE.relu(-x) == 0
    assert EE.max(e, EE.convert("2718/1000")) == e
    assert (e * 3 / e).rational_value() == 3
    assert e.rational_value() is None


def test_hash_is_defined_on_rationals_only():
    assert hash(EE.convert("1/2")) == hash(fmpq(1, 2))
    with pytest.raises(TypeError):
        hash(e)


def test_exponent_keys_hash_by_value():
    """Exponents are dictionary keys: equal values hash equally, distinct ones spread out."""
    from attncert.exact.expsum import Exponent

    qs = [fmpq(p, q) for p in range(-20, 21) for q in range(1, 8)]
    keys = [Exponent(q) for q in qs]
    assert all(hash(Exponent(q)) == hash(k) and Exponent(q) == k for q, k in zip(qs, keys))
    # A few collisions are normal (Python hashes -1 and -2 alike); one hash for all is not.
    assert len({hash(k) for k in keys}) >= 0.95 * len(set(qs))
