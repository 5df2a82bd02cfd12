"""What the public API returns compares with ordinary Python numbers as a test author expects.

Every exact value (FLINT rationals and integers, EENumbers) is == the same int or Fraction, in
either order, and hashes like it; against a float it is unequal (False, never an error), and
why_unequal gives the reason. Expected values are computed here with Fractions, by hand or
by brute force, never by the code under test.
"""

from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpz
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.exact import EE, QQ
from attncert.exact.errors import FloatRefused
from attncert.exact.rationals import float_equality_message
from attncert.exact.softmax import softmax_row, softmax_rows
from attncert.exact.testing import why_unequal

ints = st.integers(-(10**30), 10**30)
dens = st.integers(1, 10**30)


@given(ints, dens, ints, dens)
def test_flint_rationals_are_fractions_to_python(p, q, r, s):
    x, f, g = fmpq(p, q), Fraction(p, q), Fraction(r, s)
    assert x == f and f == x and not (x != f) and not (f != x)
    assert hash(x) == hash(f) and {f: "found"}[x] == "found"  # equal values hash alike
    assert (x == g) == (f == g) and (x < g) == (f < g) and (g <= x) == (g <= f) and (x > g) == (f > g)
    assert Fraction(x) == f and Fraction(x) + g == f + g  # a Fraction made from one is a working Fraction
    assert x + g == f + g  # fmpq + Fraction is a Fraction (FLINT leaves it to Python's Fraction)


@given(ints)
def test_flint_integers_are_ints_to_python(n):
    z = fmpz(n)
    assert z == Fraction(n) and Fraction(n) == z and hash(z) == hash(n) == hash(Fraction(n))
    assert fmpq(n) == n and fmpq(n) == Fraction(n) and Fraction(n) == fmpq(n)


@given(ints, dens)
def test_domain_conversions_equal_the_fraction(p, q):
    f = Fraction(p, q)
    for value in (QQ.convert(f"{p}/{q}"), QQ.convert(f), EE.convert(f), EE.convert(f"{p}/{q}"), EE.convert(f).rational_value()):
        assert value == f and f == value and hash(value) == hash(f)
    if q == 1:
        assert QQ.convert(p) == p and EE.convert(p) == p and p == EE.convert(p)


@given(st.integers(-20, 20), st.integers(1, 6))
def test_ee_values_equal_to_rationals_compare_with_fractions(k, m):
    a = Fraction(k, m)
    assert EE.exp(a) * EE.exp(-a) == 1 and EE.exp(a) * EE.exp(-a) == Fraction(1)  # e^a e^-a = 1
    half = (EE.exp(a) + 1) / (2 * EE.exp(a) + 2)  # (e^a + 1) / (2 (e^a + 1)) = 1/2
    assert half == Fraction(1, 2) and Fraction(1, 2) == half and hash(half) == hash(Fraction(1, 2))
    assert EE.exp(a) != Fraction(2718, 1000) and not (EE.exp(a) == Fraction(k, m) and k != 0)  # e^a is irrational for a != 0


@settings(max_examples=25)
@given(st.integers(1, 6), st.fractions(-20, 20, max_denominator=7))
def test_softmax_of_equal_scores_is_uniform(n, score):
    # Equal scores: every entry is e^s / (n e^s) = 1/n, by hand.
    for domain in (EE, QQ) if score == 0 else (EE,):
        row = softmax_row([str(score)] * n, domain)
        assert row == [Fraction(1, n)] * n and EE.sum(row) == 1 and EE.sum(row) == Fraction(1)
    assert softmax_rows([[score, score]], EE) == [[Fraction(1, 2), Fraction(1, 2)]]


FRAC_X = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), rasp.numerical(rasp.tokens == "x"), default=0))


@settings(max_examples=30)
@given(st.text(alphabet="xab", min_size=1, max_size=12))
def test_rasp_outputs_equal_lists_of_fractions(word):
    want = [Fraction(word[: i + 1].count("x"), i + 1) for i in range(len(word))]  # brute force: the share of x so far
    assert rasp.evaluate(FRAC_X, word) == want and FRAC_X(word) == want and want == FRAC_X(word)
    assert rasp.evaluate(FRAC_X, word, EE) == want
    got = np.array(FRAC_X(word), dtype=object)
    assert (got == np.array(want, dtype=object)).all()
    assert rasp.evaluate(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)), word) == [word.count(c) for c in word]


FLOATS = [1.5, 0.1, 2.718, np.float64(1.5), np.float32(0.5), float("inf")]


@pytest.mark.parametrize("f", FLOATS, ids=repr)
def test_exact_values_are_unequal_to_floats_without_raising(f):
    for x in (fmpq(3, 2), fmpq(1, 2), fmpz(1), EE.convert("3/2"), EE.convert("1/2"), EE.exp(1), QQ.convert("0.1"), softmax_row(["0", "0"], EE)[0]):
        assert not (x == f) and not (f == x) and x != f and f != x  # even where the float stores the same number
        assert float_equality_message(f) in why_unequal(x, f)
    assert rasp.evaluate(FRAC_X, "x") != [1.0]
    assert (np.array([EE.convert("1/2"), fmpq(1, 2)], dtype=object) == f).tolist() == [False, False]


def test_the_reason_says_what_to_compare_with():
    why = why_unequal(EE.convert("3/2"), 1.5)
    assert "never equal to a float" in why and "Fraction(3, 2), which is 1.5 exactly" in why
    assert "765048986699563/281474976710656, not 1359/500" in why_unequal(EE.exp(1), 2.718)  # the float's binary value


def test_floats_are_still_refused_in_arithmetic_and_ordering():
    for call in (lambda: EE.exp(1) < 2.718, lambda: EE.exp(1) + 0.5, lambda: QQ.eq(fmpq(1), 1.0), lambda: EE.convert(1) >= np.float64(1)):
        with pytest.raises(FloatRefused):
            call()


def test_numpy_arrays_compare_entry_by_entry():
    one = EE.convert(1)
    assert (one == np.array([1, 2])).tolist() == [True, False]
    assert (one == np.array([1.0, 0.5])).tolist() == [False, False]
