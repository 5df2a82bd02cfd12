"""The Newton correction of the Hilbert iterations against the Jacobian of the row sums, by finite differences in mpmath."""

import mpmath
import numpy as np
import pytest

from attncert.constructions.sinkhorn import logdomain
from attncert.constructions.sinkhorn.logdomain import row_correction


def _log_row_sums(L, lb, x):
    """log r(u) for u = e^x at 60 digits: v = b / (K^T u), r = u (K v), K = e^L."""
    n, m = L.shape
    K = [[mpmath.exp(mpmath.mpf(L[i, j])) for j in range(m)] for i in range(n)]
    u = [mpmath.exp(t) for t in x]
    v = [mpmath.exp(mpmath.mpf(lb[j])) / mpmath.fsum(K[i][j] * u[i] for i in range(n)) for j in range(m)]
    return [mpmath.log(u[i] * mpmath.fsum(K[i][j] * v[j] for j in range(m))) for i in range(n)]


@pytest.mark.parametrize("softmax", [False, True])  # True: as where the plan spans more than the float range
def test_row_correction_solves_the_deflated_newton_system(monkeypatch, softmax):
    if softmax:
        monkeypatch.setattr(logdomain, "SUM_FLOOR", float("inf"))
    rng = np.random.default_rng(1)
    n, m = 4, 5
    L = -3 * rng.random((n, m))
    lb = np.log(rng.random(m) + 0.5)
    x = rng.normal(size=n)
    s = 1e-6 * rng.normal(size=n)
    delta = row_correction(L, lb, x, s)
    with mpmath.workdps(60):
        h = mpmath.mpf(10) ** -20
        base = [mpmath.mpf(t) for t in x]
        J = mpmath.matrix(n, n)
        for k in range(n):
            up = _log_row_sums(L, lb, [t + (h if i == k else 0) for i, t in enumerate(base)])
            dn = _log_row_sums(L, lb, [t - (h if i == k else 0) for i, t in enumerate(base)])
            for i in range(n):
                J[i, k] = (up[i] - dn[i]) / (2 * h)
        r = [mpmath.exp(t) for t in _log_row_sums(L, lb, base)]
        total = mpmath.fsum(r)
        for i in range(n):  # the rank-one deflation 1 r^T / sum r fixes the scale direction
            for k in range(n):
                J[i, k] += r[k] / total
        ref = mpmath.lu_solve(J, mpmath.matrix([-mpmath.mpf(t) for t in s]))
    assert max(abs(float(ref[i]) - delta[i]) for i in range(n)) <= 1e-9 * max(abs(float(t)) for t in ref)
