"""Behaviour shared by the four domains, and what each refuses."""

import math

import pytest
from flint import arb, ctx, fmpq

from attncert.exact import EE, QQ, Ball, Float, NotInFieldError, ParseError, UndecidedError
from attncert.exact.matrices import convert_rows, from_fmpq_mat, to_fmpq_mat

DOMAINS = [QQ, EE, Ball(128), Float]


@pytest.mark.parametrize("D", DOMAINS, ids=str)
def test_basic_arithmetic_agrees_with_fractions(D):
    a, b = D.convert("3/7"), D.convert("-5/2")
    with D.context():
        got = [a + b, a - b, a * b, D.div(a, b)]
    want = [fmpq(3, 7) + fmpq(-5, 2), fmpq(3, 7) + fmpq(5, 2), fmpq(-15, 14), fmpq(-6, 35)]
    for g, w in zip(got, want):
        if D.exact:
            assert D.eq(g, D.convert(w))
        elif D is Float:
            assert math.isclose(g, int(w.p) / int(w.q), rel_tol=1e-15)
        else:
            with ctx.workprec(400):
                assert (g - arb(w)).contains(0)
    assert D.sign(a) == 1 and D.sign(b) == -1 and D.sign(D.zero()) == 0
    assert D.lt(b, a) and D.max(a, b) is a and D.relu(b) == D.zero()


def test_qq_exp_only_at_zero():
    assert QQ.exp(QQ.zero()) == 1
    with pytest.raises(NotInFieldError):
        QQ.exp(QQ.one())


def test_ball_refuses_undecided_comparisons():
    B = Ball(64)
    fuzzy = arb(0, fmpq(1, 10))
    with pytest.raises(UndecidedError):
        B.sign(fuzzy)
    with pytest.raises(UndecidedError):
        B.eq(arb(1), arb(1) + fuzzy)
    assert B.eq(arb(1), arb(1))
    assert not B.eq(arb(1), arb(2))


def test_ball_precision_is_validated():
    with pytest.raises(ParseError):
        Ball(0)
    with pytest.raises(ParseError):
        Ball("64")


def test_ball_context_sets_working_precision():
    B = Ball(300)
    with B.context():
        x = B.convert(1) / 3
    assert x.rel_accuracy_bits() >= 290


def test_float_refuses_nan():
    with pytest.raises(ParseError):
        Float.convert(float("nan"))


def test_convert_rows_and_flint_round_trip():
    rows = convert_rows([[1, "1/2"], ["0.25", -3]], QQ)
    m = to_fmpq_mat(rows)
    assert from_fmpq_mat(m * m) == [[fmpq(9, 8), fmpq(-1)], [fmpq(-1, 2), fmpq(73, 8)]]
    with pytest.raises(ParseError, match="ragged"):
        convert_rows([[1, 2], [3]], QQ)
    with pytest.raises(ParseError):
        convert_rows([[1, "x"]], QQ)
