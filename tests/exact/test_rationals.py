from fractions import Fraction

import pytest
from flint import fmpq
from hypothesis import given
from hypothesis import strategies as st

from attncert.exact.errors import FloatRefused, LimitExceeded, ParseError
from attncert.exact.rationals import parse_rational, rational_from_json, rational_to_json


@pytest.mark.parametrize(
    "text, p, q",
    [
        ("0.1", 1, 10),
        ("-2.5e-3", -1, 400),
        ("3/-6", -1, 2),
        (" 7 ", 7, 1),
        ("1e3", 1000, 1),
        ("-0", 0, 1),
        ("22/7", 22, 7),
    ],
)
def test_strings_are_read_exactly(text, p, q):
    assert parse_rational(text) == fmpq(p, q)


def test_python_numbers():
    assert parse_rational(Fraction(-3, 9)) == fmpq(-1, 3)
    assert parse_rational(12) == fmpq(12)
    with pytest.raises(FloatRefused, match=r"0\.5"):  # floats are refused in exact arithmetic
        parse_rational(0.5)
    # Only the approximate domains (Ball, Float) ask for a float's stored value.
    assert parse_rational(0.5, dyadic_floats=True) == fmpq(1, 2)
    assert parse_rational(0.1, dyadic_floats=True) == fmpq(3602879701896397, 36028797018963968)  # the stored double


@pytest.mark.parametrize("bad", ["nan", "inf", "-Infinity", "abc", "1/0", "", True, None, float("nan"), float("inf"), [1]])
def test_refused(bad):
    with pytest.raises(ParseError):
        parse_rational(bad)


def test_digit_limit():
    with pytest.raises(LimitExceeded):
        parse_rational("9" * 100_000)
    with pytest.raises(LimitExceeded):
        parse_rational("1e-1000000000")


@given(st.fractions())
def test_json_round_trip(f):
    q = fmpq(f.numerator, f.denominator)
    s = rational_to_json(q)
    assert rational_from_json(s) == q
    assert s == (f"{f.numerator}/{f.denominator}" if f.denominator != 1 else str(f.numerator))


@pytest.mark.parametrize("bad", ["2/4", "-0", "1/1", "01", "+1", "1/-2", " 1", "0.5", 3, None, ["1"]])
def test_json_refuses_non_canonical(bad):
    with pytest.raises(ParseError):
        rational_from_json(bad)


def test_json_reads_beyond_pythons_int_digit_limit():
    s = "7" * 9000
    assert rational_to_json(rational_from_json(s)) == s
