"""Exact values at rational points (exact/expressions/radicals.py), the structural Lipschitz bound
(exact/expressions/lipschitz.py) and the bounded conversions of enclosures (exact/expressions/enclose.py).

References: mpmath at 60 digits (values, differences of random pairs) and values derived by hand.
"""

from __future__ import annotations

import itertools

import mpmath
import pytest
import sympy
from flint import arb, ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact.expressions import EnclosureError, compile_enclosure, parse_function, point, rational, variables
from attncert.exact.expressions.lipschitz import lipschitz_bound
from attncert.exact.expressions.radicals import Radical, compile_exact

EXPRESSIONS = [
    "Max(1 - 3*(Abs(x1 - 1/3) + Abs(x2 - 2/7)), 0, x1*x2 - 1/5)",
    "x1**(1/2) + x2**(1/3)",
    "sqrt(x1) * sqrt(x2) - x1**(3/2)",
    "Min(sqrt(x1), 7/10) + (x2 - 1/2)**3 / (1 + x1)",
    "exp(x1 - x2) + sin(x1*x2) + cos(x2) + atan(x1) + log(1 + x1)",
    "Abs(x1**(1/2) - x2**(1/2))",
]


def _mp(v) -> mpmath.mpf:
    if isinstance(v, Radical):
        return v.s * (mpmath.mpf(int(v.r.p)) / int(v.r.q)) ** (mpmath.mpf(1) / v.n)
    return mpmath.mpf(int(v.p)) / int(v.q)


@pytest.mark.parametrize("text", EXPRESSIONS)
@settings(max_examples=40, deadline=None)
@given(a=st.fractions(0, 1, max_denominator=16), b=st.fractions(0, 1, max_denominator=16))
def test_an_exact_value_is_the_value(text, a, b):
    expr = parse_function(text, 2)
    x = [fmpq(a.numerator, a.denominator), fmpq(b.numerator, b.denominator)]
    v = compile_exact(expr, variables(2))(x)
    if v is None:
        return
    with mpmath.workdps(60):
        want = sympy.lambdify(variables(2), expr, "mpmath")(*[mpmath.mpf(int(c.p)) / int(c.q) for c in x])
        assert abs(_mp(v) - want) < mpmath.mpf(10) ** -50


def test_exact_values_by_hand():
    run = lambda text, *x: compile_exact(parse_function(text, len(x)), variables(len(x)))([fmpq(*c) for c in x])  # noqa: E731
    assert run("x1**(1/2)", (1, 4)) == fmpq(1, 2)
    assert run("x1**(1/2)", (2, 9)) == Radical(1, fmpq(2, 9), 2)  # irrational: kept as the radical
    assert run("x1**(1/3) * x1**(1/2)", (1, 64)) == fmpq(1, 32)  # (2^-6)^(5/6) = 2^-5
    assert run("Max(sqrt(x1), 7/10)", (1, 2)) == Radical(1, fmpq(1, 2), 2)  # 0.7071 > 0.7
    assert run("Max(1 - 3*Abs(x1 - 1/3), 0)", (1, 8)) == fmpq(3, 8)  # 1 - 3 * 5/24
    assert run("-x1**(1/2) * 2", (1, 2)) == Radical(-1, fmpq(2), 2)  # -2 (1/2)^(1/2) = -(2)^(1/2)
    assert run("exp(x1) + cos(x1) + sin(x1)", (0, 1)) == fmpq(2)
    assert run("sin(pi*x1)", (1, 2)) is None and run("exp(x1)", (1, 2)) is None
    assert run("x1**(-1)", (0, 1)) is None and run("(x1 - 1)**(1/2)", (1, 2)) is None  # no real value
    assert run("(x1 + 1/3)**1000", (1, 3)) == fmpq(2, 3) ** 1000
    assert run("((x1 + 1/3)**1000)**5", (1, 3)) is None  # 10,000 bits: over the size bound, enclosed instead


LIBRARY_CONSTANTS = [
    ("Max(1 - 3*(Abs(x1 - 1/3) + Abs(x2 - 1/3)), 3/4 - 3*(Abs(x1 - 5/7) + Abs(x2 - 2/7)), 0)", 2, fmpq(6)),  # 3 d
    ("Abs(x1 + x2 + x3 - 1)", 3, fmpq(3)),  # d: |sum (x_k - y_k)| <= d max |x_k - y_k|
    ("Min(Max(x1 - 1/4, 1/2 - x2), 2/3 - x1/2)", 2, fmpq(1)),
    ("x1*x2", 2, fmpq(2)),  # |ab - a'b'| <= |a - a'| + |b - b'| on the cube, attained near (1, 1)
]


@pytest.mark.parametrize("text, d, want", LIBRARY_CONSTANTS)
def test_the_structural_bound_is_exact_for_piecewise_linear_targets(text, d, want):
    assert lipschitz_bound(parse_function(text, d), variables(d)) == want


def test_the_structural_bound_of_sin_pi_x_is_pi_from_above():
    bound = lipschitz_bound(parse_function("sin(pi*x1)", 1), variables(1))
    with mpmath.workdps(40):
        assert +mpmath.pi < _mp(bound) < mpmath.pi + mpmath.mpf(2) ** -50 and bound < fmpq(355, 113)


@pytest.mark.parametrize("text", ["sqrt(x1)", "x1**(1/3)", "Min(sqrt(x1), 7/10)"])
def test_no_structural_bound_where_the_derivative_is_unbounded(text):
    assert lipschitz_bound(parse_function(text, 1), variables(1)) is None


@pytest.mark.parametrize("text", [EXPRESSIONS[0], EXPRESSIONS[4], "(x2 - 1/2)**3 / (1 + x1) - Max(x1, x2)**2"])
def test_the_structural_bound_holds_on_random_pairs(text):
    """|f(x) - f(y)| <= L_f ||x - y||_inf at 60 digits on a grid of pairs (an independent evaluation)."""
    expr = parse_function(text, 2)
    bound = lipschitz_bound(expr, variables(2))
    assert bound is not None
    f = sympy.lambdify(variables(2), expr, "mpmath")
    with mpmath.workdps(60):
        pts = [(mpmath.mpf(i) / 7, mpmath.mpf(j) / 5) for i in range(8) for j in range(6)]
        for x, y in itertools.combinations(pts, 2):
            assert abs(f(*x) - f(*y)) <= _mp(bound) * max(abs(x[0] - y[0]), abs(x[1] - y[1])) + mpmath.mpf(10) ** -40


def test_a_huge_node_is_refused_naming_its_magnitude():
    f = compile_enclosure(parse_function("x1 + exp(10**10)", 1), variables(1))
    with ctx.workprec(64), pytest.raises(EnclosureError, match=r"exp\(10000000000\) reaches about 2\^14,426,950,408 in magnitude"):
        f([point(fmpq(0))])  # 10^10 / ln 2 = 14426950408.9


def test_a_tiny_output_is_rounded_outward_and_reads_as_a_small_rational():
    f = compile_enclosure(parse_function("exp(-10000000000*x1)", 1), variables(1))
    with ctx.workprec(64):
        lo, hi = f([point(fmpq(1))])
    # e^(-10^10) is below 2^-1024: its enclosure becomes [0, 2^-1024], whose ends are small rationals
    assert (rational(lo), rational(hi)) == (0, fmpq(1, 2**1024))


def test_reading_a_huge_or_inexact_arb_is_refused():
    with pytest.raises(EnclosureError, match="beyond the bounds"):
        rational(arb(2) ** 2000)
    with pytest.raises(EnclosureError, match="beyond the bounds"):
        rational(arb(2) ** -(1 << 20))
    with ctx.workprec(64), pytest.raises(EnclosureError, match="not a finite exact number"):
        rational(arb(1) / 3)
    assert rational(arb(3) / 4) == fmpq(3, 4)
