"""Floats never enter the exact domains (QQ, EE); Ball and Float keep reading them.

Every refusal is a FloatRefused (a ParseError, so the CLI prints one line and
exits 2; and a TypeError, as for an unsupported operand) whose message names
the value and says how to write it exactly.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, fmpq
from hypothesis import given
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.exact import EE, QQ, Ball, Float, ParseError
from attncert.exact.domains import domain_of
from attncert.exact.errors import AttncertError, FloatRefused
from attncert.exact.matrices import convert_rows
from attncert.exact.rationals import parse_rational

# (the float, how its message names it)
FLOATS = [
    (0.1, "0.1"),
    (2.5, "2.5"),
    (-0.25, "-0.25"),
    (1.0, "1.0"),
    (np.float64(0.1), "np.float64(0.1)"),
    (np.float64(-3.0), "np.float64(-3.0)"),
    (np.float32(0.1), "np.float32(0.1)"),
    (np.float32(0.5), "np.float32(0.5)"),
    (np.float16(0.25), "np.float16(0.25)"),
]
FLOAT_IDS = [f"{type(x).__name__}-{x}" for x, _ in FLOATS]


def refused(call, *names):
    """call() raises FloatRefused with a one-line message naming the value (one of names) and the string spelling."""
    with pytest.raises(FloatRefused) as info:
        call()
    msg = str(info.value)
    assert any(n in msg for n in names), (names, msg)
    assert "\n" not in msg
    assert 'write decimals as strings ("' in msg or "holds binary floats" in msg
    return msg


def spellings(x):
    """How a message may name x: its repr, or the repr of the Python float numpy hands to __eq__."""
    return repr(x), repr(float(x))


def test_the_error_is_a_one_line_user_error():
    assert issubclass(FloatRefused, ParseError) and issubclass(FloatRefused, AttncertError)
    assert issubclass(FloatRefused, TypeError)
    msg = refused(lambda: QQ.convert(0.1), "0.1")
    # the message says what 0.1 stores and how to write 1/10 exactly
    assert "3602879701896397/36028797018963968" in msg
    assert 'write decimals as strings ("0.1" is exactly 1/10)' in msg


@pytest.mark.parametrize("x, name", FLOATS, ids=FLOAT_IDS)
def test_every_exact_conversion_refuses_floats(x, name):
    refused(lambda: parse_rational(x), name)
    refused(lambda: QQ.convert(x), name)
    refused(lambda: QQ.native(x), name)
    refused(lambda: EE.convert(x), name)
    refused(lambda: EE.native(x), name)
    refused(lambda: EE.exp(x), name)
    refused(lambda: QQ.exp(x), name)


def test_exp_of_a_float_is_refused_not_read_in_binary():
    msg = refused(lambda: EE.exp(0.1), "0.1")
    assert "in EE" in msg
    assert EE.exp("0.1") == EE.exp(fmpq(1, 10))  # the string is exactly 1/10
    refused(lambda: QQ.exp(0.0), "0.0")  # was e^0 = 1: the float 0.0 is refused as well


@pytest.mark.parametrize("x, name", FLOATS, ids=FLOAT_IDS)
def test_ordering_ee_values_against_floats_raises_and_equality_is_false(x, name):
    v = EE.convert(1)
    e = EE.exp(1)
    # == and != answer, never raise: an exact value is never equal to a float (even 1 and 1.0).
    assert not (v == x) and not (x == v) and v != x and x != v and not (e == x) and x not in [v, e]
    for call in (
        lambda: v < x,
        lambda: x < v,
        lambda: v >= x,
        lambda: EE.eq(v, x),
        lambda: EE.eq(fmpq(1), x),  # FLINT's own fmpq == float would say False
        lambda: EE.eq(x, fmpq(1)),
        lambda: EE.lt(fmpq(0), x),
    ):
        refused(call, *spellings(x))


@pytest.mark.parametrize("x, name", FLOATS, ids=FLOAT_IDS)
def test_arithmetic_between_ee_values_and_floats_raises(x, name):
    v = EE.exp(1)
    for call in (lambda: v + x, lambda: x + v, lambda: v - x, lambda: x * v, lambda: v / x, lambda: x / v):
        refused(call, *spellings(x))


@pytest.mark.parametrize("x, name", FLOATS, ids=FLOAT_IDS)
def test_qq_comparisons_and_signs_through_the_domain_raise(x, name):
    # fmpq(1) == 1.0 is FLINT's operator and says False; the domain refuses instead.
    for call in (lambda: QQ.eq(fmpq(1), x), lambda: QQ.eq(x, fmpq(1)), lambda: QQ.lt(fmpq(0), x), lambda: QQ.sign(x)):
        refused(call, name)
    refused(lambda: EE.sign(x), name)


def test_ee_value_equal_to_one_compared_with_one_point_zero():
    one = EE.convert(1)
    assert one == 1 and one == fmpq(1) and one == Fraction(1)  # exact numbers still compare
    # == answers (False: an exact value is never equal to a float); ordering and arithmetic refuse.
    assert (one == 1.0) is False and (one != 1.0) is True and (one == np.float64(1.0)) is False
    with pytest.raises(FloatRefused, match=r"float 1\.0 refused"):
        one < 1.0  # noqa: B015
    with pytest.raises(FloatRefused, match=r"np\.float64\(1\.0\)"):
        one + np.float64(1.0)  # noqa: B015
    assert (one == "1") is False and (one == None) is False  # noqa: E711  non-numbers are simply unequal


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_float_arrays_are_refused_where_a_matrix_is_converted(dtype):
    m = np.array([[0.1, 1.0], [2.0, 0.5]], dtype=dtype)
    for domain in (QQ, EE):
        msg = refused(lambda: convert_rows(m, domain), "array([[0.1")
        assert f"numpy array of dtype {np.dtype(dtype).name}" in msg
        refused(lambda: convert_rows([m[0], m[1]], domain), "array([0.1")  # rows that are float arrays
        refused(lambda: convert_rows(m.tolist(), domain), "0.1")  # a list of Python floats
        refused(lambda: convert_rows([[dtype(0.5), 1]], domain), "0.5")
        refused(lambda: domain.convert(m), "array([[0.1")
    refused(lambda: EE.convert(1) + np.array([0.5]), "array([0.5")


def test_decimal_strings_and_exact_numbers_are_still_exact():
    assert QQ.convert("0.1") == fmpq(1, 10)
    assert QQ.convert("-2.5e-3") == fmpq(-1, 400)
    assert QQ.convert(np.int64(7)) == 7 and QQ.convert(Fraction(2, 6)) == fmpq(1, 3)
    assert EE.convert("0.1") * 10 == 1
    assert convert_rows([["0.1", "1/3"], [2, Fraction(1, 2)]], QQ) == [[fmpq(1, 10), fmpq(1, 3)], [2, fmpq(1, 2)]]
    assert convert_rows(np.array([[1, 2]]).tolist(), QQ) == [[1, 2]]


@given(st.integers(-(10**30), 10**30), st.integers(0, 25))
def test_decimal_strings_are_read_exactly(n, k):
    # n / 10^k written as a decimal string by hand: "-12.345" for n = -12345, k = 3
    digits = str(abs(n)).rjust(k + 1, "0")
    text = ("-" if n < 0 else "") + (digits[: len(digits) - k] + "." + digits[len(digits) - k :] if k else digits)
    want = fmpq(n, 10**k)
    assert QQ.convert(text) == want
    assert EE.convert(text) == want
    assert EE.exp(text) == EE.exp(want)
    assert convert_rows([[text]], QQ) == [[want]]


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_is_refused_in_qq_and_ee_and_named(x):
    for call in (lambda: QQ.convert(x), lambda: EE.convert(x), lambda: EE.exp(x), lambda: EE.exp(1) < x):
        with pytest.raises(FloatRefused) as info:
            call()
        assert repr(x) in str(info.value) and "\n" not in str(info.value)


@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_every_float32_is_refused_and_named(x):
    y = np.float32(x)
    with pytest.raises(FloatRefused) as info:
        QQ.convert(y)
    assert repr(y) in str(info.value)


@pytest.mark.parametrize("x", [float("nan"), float("inf"), -math.inf, np.float64("nan"), np.float32("inf")])
def test_non_finite_floats_are_refused_everywhere(x):
    for call in (lambda: QQ.convert(x), lambda: EE.convert(x), lambda: Ball(64).convert(x), lambda: Float.convert(x)):
        with pytest.raises(ParseError):
            call()


# --- the approximate domains keep reading floats ----------------------------------------------


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_ball_reads_a_float_as_its_exact_binary_value(x):
    b = Ball(128).convert(x)
    assert isinstance(b, arb)
    # the dyadic value, exactly (53 bits fit in 128): Fraction(x) is Python's exact reading
    f = Fraction(x)
    assert Ball(128).to_json(b) == {"mid": f"{f.numerator}/{f.denominator}" if f.denominator != 1 else str(f.numerator), "rad": "0"}


def test_ball_and_float_accept_numpy_floats():
    assert Ball(128).to_json(Ball(128).convert(np.float32(0.1))) == {"mid": "13421773/134217728", "rad": "0"}
    assert Ball(128).to_json(Ball(128).convert(0.1)) == {"mid": "3602879701896397/36028797018963968", "rad": "0"}
    f = Float.convert(np.float64(0.1))
    assert type(f) is float and f == 0.1
    g = Float.convert(np.float32(0.5))
    assert type(g) is float and g == 0.5
    assert Float.to_json(0.1) == "3602879701896397/36028797018963968"  # the stored double, never a JSON float
    assert Float.convert("0.1") == 0.1
    assert domain_of(np.float32(1)) is Float and domain_of(1.0) is Float and domain_of(fmpq(1)) is QQ


def test_dyadic_reading_is_explicit():
    assert parse_rational(0.1, dyadic_floats=True) == fmpq(3602879701896397, 2**55)
    assert parse_rational(np.float32(0.1), dyadic_floats=True) == fmpq(13421773, 2**27)
    with pytest.raises(ParseError, match="not a finite number"):
        parse_rational(float("nan"), dyadic_floats=True)


# --- RASP: graph constants and maps --------------------------------------------------------


@pytest.mark.parametrize("c", [0.5, np.float64(0.1), np.float32(0.25)], ids=str)
def test_a_float_constant_in_a_rasp_graph_is_refused(c):
    prog = rasp.numerical(rasp.tokens * c)
    with pytest.raises(FloatRefused) as info:
        rasp.to_graph(prog)
    msg = str(info.value)
    assert repr(c) in msg and "Fraction(" in msg and "token" in msg  # strings would be tokens here
    assert rasp.evaluate(rasp.numerical(rasp.tokens * Fraction(1, 2)), [3], QQ) == [fmpq(3, 2)]


@pytest.mark.parametrize("domain", [QQ, EE], ids=str)
@pytest.mark.parametrize("make, name", [(np.float64, "np.float64(1.0)"), (np.float32, "np.float32(1.0)"), (float, "(1.0)")])
def test_a_map_returning_a_numpy_or_python_float_is_refused_in_exact_domains(domain, make, name):
    prog = rasp.numerical(rasp.Map(lambda x: make(1), rasp.tokens))
    with pytest.raises(rasp.EvaluationError) as info:
        rasp.evaluate(prog, [1, 2], domain)
    msg = str(info.value)
    assert "returned a float" in msg and name in msg and domain.name in msg


def test_a_map_returning_numpy_floats_gives_domain_values_in_float_and_ball():
    prog = rasp.numerical(rasp.Map(lambda x: np.float32(0.5), rasp.tokens))
    out = rasp.evaluate(prog, [1, 2], Float)
    assert out == [0.5, 0.5] and all(type(v) is float for v in out)
    out = rasp.evaluate(prog, [1, 2], Ball(64))
    assert all(isinstance(v, arb) and Ball(64).to_json(v) == {"mid": "1/2", "rad": "0"} for v in out)
