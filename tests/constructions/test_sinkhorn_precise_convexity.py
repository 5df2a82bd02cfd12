"""The strong-convexity bound on the high-precision evaluation (constructions/sinkhorn/precise_convexity.py) against
60-digit mpmath, at tol 1e-30 on small adversarial integer costs whose Delta / eps is far beyond Hilbert's reach.

The reference is independent of the bound: P* by Newton's method on the dual in mpmath at 80 digits (residual below
1e-65, :func:`tests.constructions.test_sinkhorn_convexity.newton_plan`) and P^ = diag(u^) K' diag(b / K'^T u^) of the
recorded witness at 60 digits. Where the run certifies, the true max |log P^ - log P*| must lie within the bound, and
the independent checker's bound within the recorded one."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn import sinkhorn
from attncert.exact import Ball
from attncert.proofs.checkers.sinkhorn.precise_convexity import precise_convexity_enclosure
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, sinkhorn_problem
from tests.constructions.test_sinkhorn_convexity import _mp, newton_plan, true_distance
from tests.constructions.test_sinkhorn_convexity import problem as float_problem


def problem(n, m, eps, kind, seed):
    """Squared distances of uniform points rounded to thousandths (an integer cost over 1000), ``eps`` a rational;
    uniform or random masses, a mass of 1e-6, duplicated points, or integer costs up to 200."""
    rng = np.random.default_rng(seed)
    x, y = rng.random((n, 2)), rng.random((m, 2))
    if kind == "duplicated":
        y[1], x[2] = y[0], x[1]
    if kind == "range 200":
        C = [[fmpq(int(v)) for v in row] for row in rng.integers(0, 201, (n, m))]
    else:
        Z = np.round(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1) * 1000).astype(int)
        C = [[fmpq(int(v), 1000) for v in row] for row in Z]
    if kind == "random masses":
        a, b = [fmpq(int(v), 1) for v in rng.integers(1, 1000, n)], [fmpq(int(v), 1) for v in rng.integers(1, 1000, m)]
        a, b = [v / sum(a) for v in a], [v / sum(b) for v in b]
    elif kind == "tiny mass":
        a = [fmpq(1, 10**6)] + [(1 - fmpq(1, 10**6)) / (n - 1)] * (n - 1)
        b = [fmpq(1, m)] * m
    else:
        a, b = [fmpq(1, n)] * n, [fmpq(1, m)] * m
    return C, a, b, fmpq(eps)


CASES = [
    (3, 3, "1/10", "uniform", 1),
    (6, 6, "1/50", "uniform", 2),  # Delta about 100: Hilbert's factor e^50
    (8, 8, "1/100", "uniform", 3),
    (8, 8, "1/50", "random masses", 4),
    (8, 8, "1/20", "duplicated", 5),
    (7, 5, "1/20", "tiny mass", 6),
    (5, 8, "1", "range 200", 9),  # Delta in the hundreds
]


def _some_slow(cases: list[tuple]) -> list:
    """The first three cases in the default run, the rest in the slow one (each is a 60-digit reference)."""
    return [pytest.param(*c, marks=[pytest.mark.slow] if k >= 3 else []) for k, c in enumerate(cases)]


@pytest.mark.parametrize("n, m, eps, kind, seed", _some_slow(CASES))
def test_the_bound_holds_against_mpmath_and_the_checker_agrees(n, m, eps, kind, seed):
    C, a, b, eps = problem(n, m, eps, kind, seed)
    r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-30", method="precise-convexity")
    assert r.method == "precise-convexity" and r.certified, r.status
    bound = r.bound.fmpq()
    assert true_distance(C, a, b, eps, r.witness["u"]) <= _mp(bound)
    w = r.witness
    e = precise_convexity_enclosure(sinkhorn_problem(C, a, b, eps), w["u"], w["x"], w["y"], w["sigma"], r.details["prec"] + 64, r.details["kernel"], plan=False)
    assert e.log_error <= bound


FLOAT_CASES = [  # float64 costs (squared distances of uniform points, exact doubles): the kernel computed entry by entry
    (6, 6, 0.05, "uniform", 2),
    (8, 8, 0.02, "uniform", 3),  # Delta about 100
    (8, 8, 0.02, "random masses", 4),
    (8, 8, 0.01, "uniform", 8),
    (8, 8, 0.05, "duplicated", 5),
    (7, 5, 0.05, "tiny mass", 6),
    (5, 8, 1.0, "range 200", 9),  # Delta in the hundreds
]


@pytest.mark.parametrize("n, m, reg, kind, seed", _some_slow(FLOAT_CASES))
def test_on_float_costs_the_bound_holds_against_mpmath_and_the_checker_agrees(n, m, reg, kind, seed):
    C, a, b, eps = float_problem(n, m, reg, kind, seed)
    r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-30", method="precise-convexity")
    assert r.method == "precise-convexity" and r.certified and r.details["kernel"] == "floats", r.status
    bound = r.bound.fmpq()
    assert true_distance(C, a, b, eps, r.witness["u"]) <= _mp(bound)
    w = r.witness
    e = precise_convexity_enclosure(sinkhorn_problem(C, a, b, eps), w["u"], w["x"], w["y"], w["sigma"], r.details["prec"] + 64, "floats")
    assert e.log_error <= bound
    plan = r.plan  # the prover's enclosure of P*, and the checker's: both contain the 80-digit P*
    ref = newton_plan(C, a, b, eps)
    for i, j in ((0, 0), (n - 1, m - 1), (1, 2)):
        assert _mp_in(plan[i][j], ref[i][j]) and _mp_in(e.plan[i][j], ref[i][j])


def _mp_in(ball, x) -> bool:
    """Whether the arb ball contains the mpmath number x (read at 300 bits from its 80-digit decimal string)."""
    with ctx.workprec(300):
        return bool(ball.contains(arb(mpmath.nstr(x, 80, min_fixed=-1000, max_fixed=1000)).mid()))


def test_a_plan_near_a_vertex_is_not_certified():
    C, a, b, eps = problem(6, 6, "1/2", "range 200", 7)  # Delta about 400 on costs up to 200: the gap is tiny
    r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-30", method="precise-convexity")
    assert not r.certified and r.bound is None and "NOT certified" in r.status, r.status


def test_the_checker_refuses_a_sigma_the_hessian_does_not_have_and_a_moved_witness():
    C, a, b, eps = problem(6, 6, "1/50", "uniform", 2)
    r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-30", method="precise-convexity")
    p, w, prec = sinkhorn_problem(C, a, b, eps), r.witness, r.details["prec"] + 64
    with pytest.raises(HypothesisError, match="Cholesky"):
        precise_convexity_enclosure(p, w["u"], w["x"], w["y"], w["sigma"] * 4, prec, "integers", plan=False)
    moved = [w["u"][0] * 2, *w["u"][1:]]  # a row's mass doubles: eta is far past the gap
    with pytest.raises(HypothesisError, match="does not apply"):
        precise_convexity_enclosure(p, moved, w["x"], w["y"], w["sigma"], prec, "integers", plan=False)
    nudged = [w["u"][0] * (1 + fmpq(1, 2**60)), *w["u"][1:]]  # still certified, but not to the recorded bound
    assert precise_convexity_enclosure(p, nudged, w["x"], w["y"], w["sigma"], prec, "integers", plan=False).log_error > r.bound.fmpq()


def test_auto_takes_it_on_a_large_plan_beyond_hilbert():
    rng = np.random.default_rng(11)
    C = [[fmpq(int(v), 100) for v in row] for row in rng.integers(0, 100, (70, 70))]
    a = [fmpq(1, 70)] * 70
    r = sinkhorn(C, a, a, fmpq(1, 100), Ball(128), tol="1e-30")
    assert r.method == "precise-convexity" and r.certified and r.delta > 40, r.status


def test_the_kernel_bits_of_a_witness_wider_than_a_double_are_counted_not_an_overflow() -> None:
    # x = (2^128, 2^-900): max x / min x = 2^1028 is no double (float division gave inf, then OverflowError in ceil);
    # the binary spread is 1028 bits, so the kernel needs over MAX_KERNEL_BITS and the path refuses the witness
    from types import SimpleNamespace

    from attncert.constructions.sinkhorn.precise_convexity import MAX_KERNEL_BITS, precision

    run = SimpleNamespace(
        balance=(np.array([2.0**128, 2.0**-900]), np.array([1.0, 2.0**-1000])),
        kernel=SimpleNamespace(shape=(2, 2)),
        convexity=SimpleNamespace(kappa=arb(2), mu=arb(0.5)),
        evaluation=SimpleNamespace(v=np.array([1.0, 2.0**1000])),
    )
    bits, kernel_bits = precision(run, fmpq(1, 10**30), 128)
    assert bits >= 128 and kernel_bits >= bits + 1028 > MAX_KERNEL_BITS
