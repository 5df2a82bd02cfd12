"""Every enclosure contains a 100-digit value computed independently with mpmath."""

import mpmath
from flint import arb, ctx
from hypothesis import given, settings

from attncert.exact import QQ, Ball, Float
from attncert.exact.testing import ee_numbers, rationals

DPS = 100


def _contains(ball: arb, value: mpmath.mpf) -> bool:
    """Does the ball contain the 100-digit decimal approximation of value?

    The ball edges would have to fall within 1e-100 of the true value for this to
    differ from containment of the value itself.
    """
    with mpmath.workdps(DPS):
        s = mpmath.nstr(value, DPS, min_fixed=-mpmath.inf, max_fixed=mpmath.inf)
    with ctx.workprec(400):
        return ball.contains(arb(s).mid())


def _mp_value(x):
    def ev(s):
        return mpmath.fsum(mpmath.mpf(int(c.p)) / int(c.q) * mpmath.exp(mpmath.mpf(int(q.p)) / int(q.q)) for q, c in s.terms.items())

    with mpmath.workdps(DPS + 20):
        return ev(x.num) / ev(x.den)


@settings(max_examples=80, deadline=None)
@given(ee_numbers())
def test_ee_enclosures_contain_mpmath_value(x):
    for prec in (64, 200):
        assert _contains(x.enclose(prec), _mp_value(x))


@settings(max_examples=50, deadline=None)
@given(rationals(10**6, 10**6))
def test_qq_and_ball_exp_enclosures(q):
    with mpmath.workdps(DPS + 20):
        v = mpmath.mpf(int(q.p)) / int(q.q)
        ev = mpmath.exp(v)
    assert _contains(QQ.enclose(q, 128), v)
    B = Ball(200)
    assert _contains(B.exp(B.convert(q)), ev)


def test_float_enclosure_is_the_double_itself():
    assert Float.enclose(0.1).is_exact()
    assert Float.enclose(0.1).mid() == arb(0.1)
