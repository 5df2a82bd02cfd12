"""exact/fixed_exp.py: e^-y in multi-digit fixed point, against arb entry by entry (the digits read as exact integers;
e^-y of the exact y = (t + e1 + e2) s at 400 bits). Every entry must lie within the stated error, on random float
costs, on costs that cancel (the shifted cost slightly negative), tiny and subnormal ones, and 1/eps up to the fields'
limit; and the digit arithmetic (normalise, multiply) must be exact or within its stated bound (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb, ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact.fixed_exp import WIDTH, digits_of, fixed_exp_neg, multiply, normalise, product_error
from attncert.exact.roundoff import exact, two_sum


def value(d) -> fmpq:
    """The exact value sum_k d[k] 2^(-24 k) of one entry's digits."""
    return sum((fmpq(int(x), 2 ** (WIDTH * k)) for k, x in enumerate(d)), fmpq(0))


def shifted(C: np.ndarray):
    """t, e1, e2 of the shifted cost C - alpha - beta~ = t + e1 + e2 exactly (TwoSum), as the float recipe forms them."""
    t1, e1 = two_sum(C, -C.min(1)[:, None])
    t, e2 = two_sum(t1, -t1.min(0)[None, :])
    return t, e1, e2


def worst(t, e1, e2, s, r) -> fmpq:
    """max |K - e^-y| over the entries, an upper bound from 400-bit arb."""
    out = fmpq(0)
    with ctx.workprec(400):
        for idx in np.ndindex(t.shape):
            z = exact(t[idx]) + exact(e1[idx]) + exact(e2[idx])
            d = (arb(value(r.digits[(slice(None),) + idx])) - (-arb(z) * arb(s)).exp()).abs_upper().fmpq()
            out = max(out, d)
    return out


def uniform_points(n, m, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    x, y = rng.random((n, 2)), rng.random((m, 2))
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1) * scale


@pytest.mark.parametrize(
    "C, reg, S",
    [
        (uniform_points(12, 9, 1), 0.05, 7),
        (uniform_points(12, 9, 2), 0.01, 8),
        (uniform_points(10, 10, 3), 0.001, 9),
        (uniform_points(8, 8, 4, 200.0), 1.0, 8),  # costs up to 400
        (uniform_points(8, 8, 5, 1e-9), 1e-11, 8),  # tiny costs, tiny eps
        (np.array([[0.1, 0.2 + 1e-17, 0.3], [0.3, 0.1, 0.7], [1e-300, 5e-324, 0.5]]), 0.05, 7),  # cancelling, subnormal
        (uniform_points(6, 7, 7), 8.0, 7),  # 1/eps' below 16: three byte tables
        (uniform_points(5, 5, 8), 1e-5, 8),  # 1/eps' above 2^16: nine byte tables (most entries below one ulp)
    ],
)
def test_every_entry_within_the_error_against_arb(C, reg, S):
    t, e1, e2 = shifted(C)
    s = 1 / exact(reg)
    r = fixed_exp_neg(t, e1, e2, s, S)
    assert r.error < fmpq(1, 2 ** (WIDTH * (S - 1) - 24))  # a few hundred ulps, and 4 s' ulps more at a large 1/eps
    assert worst(t, e1, e2, s, r) <= r.error


def test_a_negative_shifted_cost_gives_an_entry_above_one_within_the_error():
    t = np.array([[0.0, 0.5]])
    e1 = np.array([[-2.0**-60, 0.0]])  # C' = -2^-60: K' = e^(2^-60 s) > 1
    e2 = np.zeros_like(t)
    s = fmpq(20)
    r = fixed_exp_neg(t, e1, e2, s, 7)
    assert value(r.digits[:, 0, 0]) > 1
    assert worst(t, e1, e2, s, r) <= r.error


def test_one_over_eps_beyond_the_fields_is_refused():
    t, e1, e2 = shifted(uniform_points(4, 4, 6))
    with pytest.raises(ValueError, match="too large"):
        fixed_exp_neg(t, e1, e2, fmpq(10**12), 7)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**52), 2**52), min_size=4, max_size=4), st.lists(st.integers(-(2**52), 2**52), min_size=4, max_size=4))
def test_normalise_is_exact_and_multiply_within_its_bound(a, b):
    A, B = np.array(a, dtype=float)[:, None], np.array(b, dtype=float)[:, None]
    va, vb = value(A[:, 0]), value(B[:, 0])
    normalise(A)
    normalise(B)
    assert value(A[:, 0]) == va and value(B[:, 0]) == vb
    assert ((A[1:] >= 0) & (A[1:] < 2**WIDTH)).all()
    if abs(A[0, 0]) <= 2**WIDTH and abs(B[0, 0]) <= 2**WIDTH:
        P = multiply(A, B, 4)
        assert abs(value(P[:, 0]) - va * vb) <= product_error(4) * fmpq(1, 2 ** (WIDTH * 3))


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1e3, max_value=1e3, allow_subnormal=True))
def test_the_digits_of_a_double_are_within_one_ulp(x):
    d = digits_of(np.array([x]), 6)[:, 0]
    assert 0 <= abs(exact(x)) - abs(value(d)) < fmpq(1, 2 ** (WIDTH * 5)) and (value(d) * exact(x) >= 0)
