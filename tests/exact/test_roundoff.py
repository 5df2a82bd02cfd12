"""exact/roundoff.py: gamma_k by hand, the proven error of exp_neg against 50-digit mpmath, Factor intervals, the error-free
sum and product, and the corrected exponential against 80-digit values."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb, ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact.roundoff import EXP_MAX, Factor, U, corrected_exp_neg, exact, exp_error, exp_neg, float_of, gamma, shifted_exponent, two_product, two_sum


def test_gamma_by_hand():
    assert U == fmpq(1, 2**53)
    assert gamma(1) == fmpq(1, 2**53 - 1)  # u / (1 - u)
    assert gamma(3) == fmpq(3, 2**53 - 3)
    with pytest.raises(ValueError):
        gamma(2**53)


def test_float_of_is_the_nearest_double():
    for q in [fmpq(1, 3), fmpq(2, 7), fmpq(10**30 + 1, 3 * 10**29), fmpq(1, 10**300)]:
        d = float_of(q)
        below, above = np.nextafter(d, 0), np.nextafter(d, np.inf)
        x = Fraction(int(q.p), int(q.q))
        assert abs(Fraction(d) - x) <= min(abs(Fraction(float(below)) - x), abs(Fraction(float(above)) - x))
    assert exact(0.1) == fmpq(3602879701896397, 2**55)


def _worst_relative_error(y: np.ndarray) -> mpmath.mpf:
    E = exp_neg(y)
    with mpmath.workdps(50):
        return max(abs(mpmath.mpf(float(e)) / mpmath.exp(-mpmath.mpf(float(v))) - 1) for e, v in zip(E, y))


def test_exp_neg_is_within_its_proven_error_against_mpmath():
    delta = exp_error()
    assert fmpq(1, 10**15) < delta < fmpq(2, 10**15)  # about 12 u: tables, Horner and two products
    rng = np.random.default_rng(7)
    grid = np.arange(0, 4097) * 2.0**-12  # the reduction's grid points and their neighbours
    y = np.concatenate([rng.random(3000) * EXP_MAX, rng.random(1000) * 1e-3, grid, np.nextafter(grid, 1), [0.0, EXP_MAX, 5e-324, 2.0**-1022]])
    assert _worst_relative_error(y) <= mpmath.mpf(int(delta.p)) / int(delta.q)


@settings(deadline=None, max_examples=50)
@given(st.floats(0, EXP_MAX, allow_nan=False))
def test_exp_neg_on_any_double_in_range(x):
    delta = exp_error()
    assert _worst_relative_error(np.array([x])) <= mpmath.mpf(int(delta.p)) / int(delta.q)


@pytest.mark.parametrize("bad", [-1e-300, EXP_MAX * (1 + 2**-52), float("nan"), float("inf")])
def test_exp_neg_refuses_arguments_outside_its_proven_range(bad):
    with pytest.raises(ValueError):
        exp_neg(np.array([1.0, bad]))


def test_exp_neg_overwrite_gives_the_same_doubles():
    y = np.random.default_rng(1).random((7, 9)) * 30
    assert np.array_equal(exp_neg(y), exp_neg(y.copy(), overwrite=True))


def test_factor_arithmetic_contains_every_product_and_quotient():
    rng = np.random.default_rng(3)
    with ctx.workprec(128):
        f, g = Factor.between(fmpq(1, 2), fmpq(3, 4)), Factor.within(fmpq(1, 10))
        for _ in range(200):
            x = fmpq(1, 2) + fmpq(int(rng.integers(0, 1001)), 4000)  # in [1/2, 3/4]
            y = fmpq(9, 10) + fmpq(int(rng.integers(0, 1001)), 5000)  # in [9/10, 11/10]
            for value, interval in ((x * y, f * g), (x / y, f / g), (1 / x, f.inverse()), (x**3, f**3)):
                assert interval.lo <= arb(value) <= interval.hi
        assert (f * g).ball().contains(arb(fmpq(1, 2) * fmpq(9, 10)))
    with pytest.raises(ValueError):
        Factor.between(0, 1)


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False), st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False))
def test_two_sum_is_exact(a, b):
    s, e = two_sum(np.array([a]), np.array([b]))
    assert exact(s[0]) + exact(e[0]) == exact(a) + exact(b)


@settings(max_examples=300, deadline=None)
@given(st.floats(1e-150, 2.0**500, allow_nan=False), st.floats(1e-150, 2.0**490, allow_nan=False))
def test_two_product_is_exact_away_from_underflow_and_the_split_s_overflow(a, b):
    x, e = two_product(np.array([a]), b)
    if abs(x[0]) < 2.0**-960:
        return  # near underflow the error term may not be representable (bounded apart: UNDERFLOW_CORRECTION)
    assert exact(x[0]) + exact(e[0]) == exact(a) * exact(b)


def test_the_corrected_exponential_is_within_its_factor_against_mpmath():
    """e^-(t s) for t up to 2,000 and s = 1/3 (so y up to about 667, s not a double): the corrected doubles lie
    within [e^-E/(1 + delta), e^E/(1 - delta)] of the 80-digit value, and E is about u, not gamma_2 y."""
    t = np.linspace(0.0, 2000.0, 997)
    s = fmpq(1, 3)
    y, r, R = shifted_exponent(t, None, s)
    K, E = corrected_exp_neg(y, r, R)
    d = exp_error()
    with mpmath.workdps(80):
        lo = mpmath.exp(-mpmath.mpf(int(E.p)) / int(E.q)) / (1 + mpmath.mpf(int(d.p)) / int(d.q))
        hi = mpmath.exp(mpmath.mpf(int(E.p)) / int(E.q)) / (1 - mpmath.mpf(int(d.p)) / int(d.q))
        for ti, ki in zip(t.tolist(), K.tolist()):
            ratio = mpmath.exp(-mpmath.mpf(ti) / 3) / mpmath.mpf(ki)
            assert lo <= ratio <= hi
    assert float(E) < 3e-16
