"""The three-valued decision (exact/decide.py): exact on exact numbers, from the ball on a ball that
lies on one side, UndecidedError on one that does not, and never Python's answer on an arb.

Truths come from Fraction arithmetic and from mpmath at 60 digits, never from the code under test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from flint import arb, ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact import EE, Ball, decide
from attncert.exact.errors import UndecidedError

SETTINGS = settings(max_examples=60, deadline=None)
fractions = st.fractions(min_value=Fraction(-50), max_value=Fraction(50), max_denominator=40)


def ball(center: Fraction, radius: Fraction) -> arb:
    return arb(fmpq(center.numerator, center.denominator), fmpq(radius.numerator, radius.denominator))


def sqrt2() -> arb:
    with ctx.workprec(128):
        return arb(2).sqrt()


@SETTINGS
@given(fractions, fractions, st.sampled_from(list(decide.OPERATORS)), st.integers(1, 30))
def test_a_ball_answers_as_its_centre_or_not_at_all(a, b, op, k):
    """Balls of radius 2^-k around rationals a and b: decided exactly as a op b when they are apart,
    UndecidedError when they overlap (Python's < on the same balls would answer False instead)."""
    r = Fraction(1, 2**k)
    x, y = ball(a, r), ball(b, r)
    truth = decide.OPERATORS[op](a, b)
    if abs(a - b) > 2 * r:
        assert decide.compare(op, x, y) is truth
    else:
        with pytest.raises(UndecidedError):
            decide.compare(op, x, y)


def test_the_failures_of_pythons_operators_are_decisions_here():
    r = sqrt2()
    square = r * r
    assert (square == 2) is False and (square != 2) is False  # Python's operators on arb: both False
    with pytest.raises(UndecidedError, match="== 2 is not decided"):
        decide.compare("==", square, 2)
    assert bool(square - 2) is True and bool(arb(0)) is True  # every arb is truthy
    with pytest.raises(UndecidedError):
        decide.truth(square - 2)
    assert decide.truth(0 * r) is False  # the exact point 0
    assert decide.compare("<", square, 3) is True and decide.compare(">", square, fmpq(19, 10)) is True


def test_recording_counts_decisions_from_balls_of_positive_radius_only():
    record = decide.Decisions()
    with decide.recording(record):
        assert decide.compare("<", fmpq(1), fmpq(2))  # exact: not counted
        assert decide.sign(arb(3)) == 1  # a point ball is the dyadic number itself: exact
        assert not record.any
        assert decide.compare("<", sqrt2(), 2)
        assert decide.floor(sqrt2()) == 1  # two signs decided from the ball
    assert record.from_enclosures == 3
    assert decide.compare("<", sqrt2(), 2) and record.from_enclosures == 3  # outside the block: not counted


@SETTINGS
@given(st.integers(-40, 40), st.integers(1, 12))
def test_floor_and_round_of_irrational_balls_match_mpmath(k, n):
    """x = k + sqrt(n)/7 (irrational unless n is a square): floor and round against mpmath at 60 digits."""
    with ctx.workprec(128):
        x = k + arb(n).sqrt() / 7
    with mpmath.workdps(60):
        exact = k + mpmath.sqrt(n) / 7
        want_floor = int(mpmath.floor(exact))
        nearest = int(mpmath.nint(exact))  # ties cannot occur for an irrational x; for a rational one they are checked below
    assert decide.floor(x) == want_floor
    if mpmath.sqrt(n) % 1 != 0:
        assert decide.round_half_even(x) == nearest


@pytest.mark.parametrize("x,want", [(Fraction(5, 2), 2), (Fraction(7, 2), 4), (Fraction(-5, 2), -2), (Fraction(-7, 3), -2), (Fraction(9, 4), 2)])
def test_round_half_even_of_rationals_and_point_balls(x, want):
    assert round(x) == want  # Python's own rounding, the definition
    q = fmpq(x.numerator, x.denominator)
    assert decide.round_half_even(q) == want and decide.round_half_even(arb(q)) == want


def test_a_tie_in_a_ball_of_positive_radius_is_undecided():
    with pytest.raises(UndecidedError):
        decide.round_half_even(ball(Fraction(5, 2), Fraction(1, 2**40)))
    with pytest.raises(UndecidedError):
        decide.floor(ball(Fraction(3), Fraction(1, 2**40)))


def test_ee_numbers_are_decided_exactly():
    e = EE.exp(fmpq(1))
    assert decide.floor(e) == math.floor(math.e) == 2 and decide.floor(-e) == -3
    assert decide.round_half_even(EE.exp(fmpq(1, 2))) == round(math.exp(0.5)) == 2
    assert decide.compare("<", e, sqrt2() * 2)  # e < 2 sqrt(2) = 2.828..., the EE number enclosed


def test_structured_values_are_unequal_when_one_pair_decidedly_differs():
    r = sqrt2()
    other = sqrt2() + 0  # the same real number, another ball: never decided equal
    assert decide.equal([other, "a"], [r, "b"]) is False  # "a" != "b" decides it, despite the first pair
    with pytest.raises(UndecidedError):
        decide.equal([other, "a"], [r, "a"])
    assert decide.equal([r, "a"], [r, "a"]) is True  # one ball object is one real number
    assert decide.contains([1, r, other], 2) is False
    with pytest.raises(UndecidedError):
        decide.contains([1, other], r)
    assert decide.compare("<", [1, r], [1, 2]) is True and decide.compare(">", (r, 0), (1, 5)) is True
    assert decide.equal({"k": r}, {"k": r}) and not decide.equal({"k": 1}, {"j": 1})
    assert decide.equal(True, 1) and not decide.equal("1", 1) and decide.contains("abc", "bc")
    with pytest.raises(TypeError):
        decide.compare("<", "a", 1)


def test_a_ball_handed_to_user_code_decides_its_comparisons():
    x = decide.DecidingBall(sqrt2())
    assert (x > 1) is True and (x * x < 3) is True and int(x) == 1 and round(x) == 1 and math.floor(x) == 1 and math.ceil(x) == 2
    assert int(-x) == -1  # toward zero
    assert isinstance(x + 1, decide.DecidingBall) and isinstance(x.exp(), decide.DecidingBall)
    with pytest.raises(UndecidedError):
        _ = x * x == 2
    with pytest.raises(UndecidedError):
        bool(x * x - 2)
    with pytest.raises(decide.FloatOfBall):
        float(x)
    assert decide.plain((x, 1)) == (x.ball, 1) and type(decide.plain(x + 1)) is arb


def test_the_ball_domain_decides_through_the_same_function():
    B = Ball(64)
    with B.context():
        r, s = B.convert(2).sqrt(), B.convert(8).sqrt() / 2  # two balls around sqrt(2)
    for op in (lambda: B.lt(r, s), lambda: B.eq(r, s), lambda: B.max(r, s), lambda: B.min(r, s), lambda: B.relu(r - s), lambda: B.sign(r - s)):
        with pytest.raises(UndecidedError):
            op()
    assert B.max(r, B.convert(1)) is r and B.relu(B.convert(1) - r) == 0
