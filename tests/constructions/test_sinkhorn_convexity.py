"""The strong-convexity bound (constructions/sinkhorn/convexity.py) against 60-digit mpmath, on small adversarial cases.

The reference is independent of the bound: P* by Newton's method on the dual in mpmath at 80 digits (from log-domain
float Sinkhorn; residual below 1e-65), and P^ = diag(u^) K' diag(b / K'^T u^) of the recorded witness at 60 digits.
Where the run certifies, the true max |log P^ - log P*| must lie within the bound, and the independent checker's bound
within the recorded one."""

from __future__ import annotations

from itertools import product

import mpmath
import numpy as np
import pytest
from flint import fmpq
from scipy.special import logsumexp

from attncert.constructions.sinkhorn import sinkhorn
from attncert.exact import Ball
from attncert.exact.roundoff import exact
from attncert.proofs.checkers.sinkhorn.convexity import convexity_enclosure
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, sinkhorn_problem

DPS = 60


def _mp(q: fmpq) -> mpmath.mpf:
    return mpmath.mpf(int(q.p)) / int(q.q)


def newton_plan(C, a, b, eps) -> list[list[mpmath.mpf]]:
    """P* at DPS + 20 digits: log-domain float Sinkhorn for a start, then Newton on the dual (gauge g_m = 0)."""
    n, m = len(a), len(b)
    Cf = np.array([[float(c) for c in row] for row in C])
    af, bf, ef = np.array([float(x) for x in a]), np.array([float(x) for x in b]), float(eps)
    f, g = np.zeros(n), np.zeros(m)
    for _ in range(5000):
        f = ef * np.log(af) - ef * logsumexp((g[None, :] - Cf) / ef, axis=1)
        g = ef * np.log(bf) - ef * logsumexp((f[:, None] - Cf) / ef, axis=0)
    f, g = f + g[-1], g - g[-1]
    with mpmath.workdps(DPS + 20):
        Cm, am, bm, e = [[_mp(c) for c in row] for row in C], [_mp(x) for x in a], [_mp(x) for x in b], _mp(eps)
        F, G = [mpmath.mpf(x) for x in f], [mpmath.mpf(x) for x in g]
        for _ in range(100):
            P = [[mpmath.exp((F[i] + G[j] - Cm[i][j]) / e) for j in range(m)] for i in range(n)]
            r = [mpmath.fsum(P[i]) - am[i] for i in range(n)]
            c = [mpmath.fsum(P[i][j] for i in range(n)) - bm[j] for j in range(m)]
            if max(abs(x) for x in r + c) < mpmath.mpf(10) ** -(DPS + 5):
                return P
            J = mpmath.zeros(n + m - 1, n + m - 1)
            for i in range(n):
                J[i, i] = mpmath.fsum(P[i]) / e
                for j in range(m - 1):
                    J[i, n + j] = J[n + j, i] = P[i][j] / e
            for j in range(m - 1):
                J[n + j, n + j] = mpmath.fsum(P[i][j] for i in range(n)) / e
            d = mpmath.lu_solve(J, mpmath.matrix([-x for x in r] + [-x for x in c[: m - 1]]))
            F = [F[i] + d[i] for i in range(n)]
            G = [G[j] + d[n + j] for j in range(m - 1)] + [G[-1]]
    raise AssertionError("the Newton reference did not converge")


def true_distance(C, a, b, eps, u) -> mpmath.mpf:
    ref = newton_plan(C, a, b, eps)
    with mpmath.workdps(DPS):
        K = [[mpmath.exp(-(_mp(c) - _mp(min(row))) / _mp(eps)) for c in row] for row in C]
        U = [_mp(x) for x in u]
        v = [_mp(bj) / mpmath.fsum(K[i][j] * U[i] for i in range(len(U))) for j, bj in enumerate(b)]
        return max(abs(mpmath.log(U[i] * K[i][j] * v[j] / ref[i][j])) for i, j in product(range(len(a)), range(len(b))))


def problem(n, m, reg, kind, seed):
    """Squared distances of uniform points (exact doubles); uniform or random masses; duplicated points; a cost x 200."""
    rng = np.random.default_rng(seed)
    x, y = rng.random((n, 2)), rng.random((m, 2))
    if kind == "duplicated":
        y[1], x[2] = y[0], x[1]
    M = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1) * (200 if kind == "range 200" else 1)
    C = [[exact(v) for v in row] for row in M.tolist()]
    if kind == "random masses":
        a, b = rng.random(n) + 1e-3, rng.random(m) + 1e-3
        a, b = [exact(v) for v in a / a.sum()], [exact(v) for v in b / b.sum()]
        b = [v * sum(a) / sum(b) for v in b]
    elif kind == "tiny mass":
        a = [fmpq(1, 10**6)] + [(1 - fmpq(1, 10**6)) / (n - 1)] * (n - 1)
        b = [fmpq(1, m)] * m
    else:
        a, b = [fmpq(1, n)] * n, [fmpq(1, m)] * m
    return C, a, b, exact(reg)


CASES = [
    (3, 3, 0.1, "uniform", 1),
    (6, 6, 0.05, "uniform", 2),
    (8, 8, 0.02, "uniform", 3),  # Delta about 100: Hilbert's factor e^50
    (8, 8, 0.02, "random masses", 4),
    (8, 8, 0.01, "uniform", 8),
    (8, 8, 0.05, "duplicated", 5),
    (7, 5, 0.05, "tiny mass", 6),
    (5, 8, 1.0, "range 200", 9),  # costs up to about 400 at eps 1: Delta in the hundreds
]


@pytest.mark.parametrize("n, m, reg, kind, seed", CASES)
def test_the_bound_holds_against_mpmath_and_the_checker_agrees(n, m, reg, kind, seed):
    C, a, b, eps = problem(n, m, reg, kind, seed)
    r = sinkhorn(C, a, b, eps, Ball(64), tol="1e-6", method="convexity")
    assert r.method == "convexity" and r.certified, r.status
    bound = r.bound.fmpq()
    assert true_distance(C, a, b, eps, r.witness["u"]) <= _mp(bound)
    e = convexity_enclosure(sinkhorn_problem(C, a, b, eps), r.witness["u"], r.witness["v"], r.witness["sigma"], r.details["kernel"], plan=False)
    assert e.log_error <= bound <= e.log_error * (1 + fmpq(1, 2**20))


def test_a_plan_near_a_vertex_is_not_certified_and_auto_goes_on():
    C, a, b, eps = problem(6, 6, 0.5, "range 200", 7)  # Delta about 400 on a cost of range 200: the gap is tiny
    r = sinkhorn(C, a, b, eps, Ball(64), tol="1e-6", method="convexity")
    assert not r.certified and r.bound is None and "NOT certified" in r.status
    auto = sinkhorn(C, a, b, eps, Ball(64), tol="1e-6")
    assert auto.certified and auto.method == "krawczyk", auto.status


def test_a_larger_sigma_than_the_hessian_has_is_refused_by_the_checker():
    C, a, b, eps = problem(6, 6, 0.05, "uniform", 2)
    r = sinkhorn(C, a, b, eps, Ball(64), tol="1e-6", method="convexity")
    p = sinkhorn_problem(C, a, b, eps)
    with pytest.raises(HypothesisError, match="Cholesky"):
        convexity_enclosure(p, r.witness["u"], r.witness["v"], r.witness["sigma"] * 4, r.details["kernel"], plan=False)
    with pytest.raises(HypothesisError, match="binary64"):
        convexity_enclosure(p, r.witness["u"], r.witness["v"], fmpq(1, 3), r.details["kernel"], plan=False)
