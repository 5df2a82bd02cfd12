"""The restricted target parser and the interval enclosures (exact/expressions).

Enclosures are tested against mpmath at 60 digits at random points of random
boxes (an independent evaluation): the value must lie in the interval.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy
from flint import ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact.expressions import EnclosureError, ExpressionError, compile_enclosure, compile_enclosures, interval, parse_function, point, variables

TARGETS = [
    "Max(0, 1 - 3*(Abs(x1 - 1/3) + Abs(x2 - 2/7)), 1/2 - Abs(x2 - 0.9))",
    "sin(pi*x1) * cos(x2) + atan(x1 - x2)",
    "x1**(1/2) + x2^(1/3)",
    "exp(-x1) * log(1 + x2) / (1 + x1**2)",
    "Min(x1, 1 - x1, x2**3 - 1/4) - E*x2",
    "sqrt(Abs(x1 - 1/3)) * (x2 - 1/2)**2",
]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("x3 + x1", "must be a function of d = 2"),
        ("y", "unknown name 'y'"),
        ('__import__("os").system("true")', "not allowed"),
        ("x1.real", "not allowed"),
        ("(lambda: 1)()", "not allowed"),
        ("[x1]", "not allowed"),
        ("x1 if x2 else 0", "not allowed"),
        ("x1 == x2", "not allowed"),
        ("x1 ** x2", "only rational powers"),
        ("2 ** x1", "only rational powers"),
        ("x1 ** (10**9)", "too large"),
        ("(2**1000)**1000", "too large"),
        ("1/0 + x1", "not finite"),
        ("log(0)", "not finite"),
        ("sqrt(-1)", "not real"),
        ("sin(x1, x2)", "takes one argument"),
        ("Max()", "one or more arguments"),
        ("abs(x1)", "not allowed"),
        ("sin", "is a function"),
        ("1j", "not allowed"),
        ("'x1'", "not allowed"),
        ("", "empty"),
        ("x1 +", "not an expression"),
        ("x" * 5000, "longer than"),
    ],
)
def test_refused_with_one_line(text, fragment):
    with pytest.raises(ExpressionError) as e:
        parse_function(text, 2)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_numbers_are_read_exactly():
    assert parse_function("0.1 + 1/3 + 2.5e-1", 1) == sympy.Rational(1, 10) + sympy.Rational(1, 3) + sympy.Rational(1, 4)
    x1, x2 = variables(2)
    assert parse_function("x1^2 - Abs(x2)", 2) == x1**2 - sympy.Abs(x2)


@pytest.mark.parametrize("text", TARGETS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_enclosure_contains_the_value_at_points_of_the_box(text, data):
    expr = parse_function(text, 2)
    f = compile_enclosure(expr, variables(2))
    box, x = [], []
    for _ in range(2):
        a = data.draw(st.fractions(0, 1, max_denominator=64))
        b = data.draw(st.fractions(a, 1, max_denominator=64))
        t = data.draw(st.fractions(0, 1, max_denominator=97))
        box.append((fmpq(a.numerator, a.denominator), fmpq(b.numerator, b.denominator)))
        x.append(a + (b - a) * t)
    with ctx.workprec(64):
        lo, hi = f([interval(a, b) for a, b in box])
        plo, phi = f([point(fmpq(v.numerator, v.denominator)) for v in x])
    with mpmath.workdps(60):
        value = _LAMBDAS.setdefault(text, sympy.lambdify(variables(2), expr, "mpmath"))(*[mpmath.mpf(v.numerator) / v.denominator for v in x])
        assert lo.fmpq() - fmpq(1, 10**40) <= _q(value) <= hi.fmpq() + fmpq(1, 10**40)
        assert plo.fmpq() - fmpq(1, 10**40) <= _q(value) <= phi.fmpq() + fmpq(1, 10**40)
    assert lo.fmpq() <= plo.fmpq() and phi.fmpq() <= hi.fmpq()


_LAMBDAS: dict = {}


def _q(v) -> fmpq:
    """An mpf as the exact rational it is: (-1)^sign man 2^exp."""
    sign, man, exp, _ = mpmath.mpf(v)._mpf_
    q = fmpq(int(man)) * fmpq(2) ** int(exp) if exp >= 0 else fmpq(int(man), 2 ** (-int(exp)))
    return -q if sign else q


def test_endpoints_keep_roots_real_where_balls_would_not():
    # A midpoint-radius ball of [0, 1/2] reaches below 0; the interval does not, so sqrt encloses it.
    f = compile_enclosure(parse_function("sqrt(Abs(x1 - 1/3))", 1), variables(1))
    with ctx.workprec(64):
        lo, hi = f([interval(fmpq(0), fmpq(1, 2))])
    assert lo == 0 and fmpq(577, 1000) < hi.fmpq() < fmpq(578, 1000)


@pytest.mark.parametrize(
    "text, box, fragment",
    [
        ("1/x1", (0, 1), "negative power of an interval that contains 0"),
        ("log(x1)", (0, 1), "log of an interval reaching 0"),
        ("sqrt(x1 - 1/2)", (0, 1), "reaching below 0"),
        ("x1**(-1/2)", (0, 1), "reaching 0 or below"),
    ],
)
def test_what_cannot_be_enclosed_is_refused(text, box, fragment):
    f = compile_enclosure(parse_function(text, 1), variables(1))
    with ctx.workprec(64), pytest.raises(EnclosureError, match=fragment):
        f([interval(fmpq(box[0]), fmpq(box[1]))])


def test_sign_and_heaviside_of_a_straddling_interval_are_their_ranges():
    x1, x2 = variables(2)
    run = compile_enclosures([sympy.sign(x1 - x2), sympy.Heaviside(x1 - x2), sympy.diff(sympy.Max(x1, x2), x1)], (x1, x2))
    with ctx.workprec(64):
        straddle = run([interval(fmpq(0), fmpq(1)), interval(fmpq(1, 2), fmpq(1, 2))])
        above = run([interval(fmpq(3, 4), fmpq(1)), interval(fmpq(0), fmpq(1, 2))])
    assert [(lo, hi) for lo, hi in straddle] == [(-1, 1), (0, 1), (0, 1)]
    assert [(lo, hi) for lo, hi in above] == [(1, 1), (1, 1), (1, 1)]


def test_several_outputs_sharing_a_subexpression_are_each_enclosed():
    x1, x2 = variables(2)
    a = sympy.Abs(x1 - sympy.Rational(1, 3))
    run = compile_enclosures([a + x2, a * x2, sympy.Max(a, x2)], (x1, x2))
    with ctx.workprec(64):
        out = run([point(fmpq(0)), point(fmpq(1, 2))])
    for (lo, hi), value in zip(out, [fmpq(5, 6), fmpq(1, 6), fmpq(1, 2)]):
        assert lo.fmpq() <= value <= hi.fmpq() and hi.fmpq() - lo.fmpq() < fmpq(1, 2**60)
