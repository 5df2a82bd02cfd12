r"""Certified Sinkhorn plans by interval Newton (Krawczyk) on the dual equations.

For small eps the Hilbert bound of :mod:`constructions.sinkhorn.hilbert`
certifies nothing (lambda = tanh(Delta/4) -> 1). We certify instead a zero of
the dual equations. With x = log u, y = log v and the gauge y_1 = 0, the
N = n + m - 1 unknowns z = (x_1..x_n, y_2..y_m) solve

    F_i(z)   = x_i + log sum_j K_ij e^{y_j} - log a_i = 0      (i = 1..n)
    F_n+j(z) = y_j + log sum_i K_ij e^{x_i} - log b_j = 0      (j = 2..m).

A zero gives a plan diag(e^x) K diag(e^y) with row sums a and column sums
b_2..b_m, hence also b_1 (equal totals), so by Sinkhorn's uniqueness theorem
(Sinkhorn, Amer. Math. Monthly 74 (1967) 402-405) it *is* the Sinkhorn plan.
The Jacobian is [[I, A], [B, I]] with A_il = K_il e^{y_l} / sum_j K_ij e^{y_j}
(l >= 2) and B_jk = K_kj e^{x_k} / sum_i K_ij e^{x_i} (j >= 2).

Krawczyk's test (Krawczyk, Computing 4 (1969) 187-201; Moore, SIAM J. Numer.
Anal. 14 (1977) 611-615; Rump, Acta Numerica 19 (2010) 287-449): let z^ be a
point, R any matrix, D = [-rho, rho]^N and J(z^ + D) an interval matrix that
contains F'(z) for every z in z^ + D. If

    k(D) = -R F(z^) + (I - R J(z^ + D)) D   lies in the interior of D,

then F has exactly one zero in z^ + D, and it lies in z^ + k(D). We report
the box z^ + D itself (the radius rho is part of the witness), so that anyone
can re-run the test on the same box from the inputs alone. Everything
is evaluated in arb, so the inclusions are rigorous; R (an approximate
inverse of F'(z^)) and z^ (from Newton steps) need no rigour at all.

The starting point comes from float eps-continuation (log-domain Sinkhorn and
semi-dual Newton at a decreasing sequence of eps,
:mod:`constructions.sinkhorn.continuation`), refined by capped Newton steps
(:mod:`constructions.sinkhorn.newton`) on arb midpoints at the working
precision, where Newton converges quadratically while Sinkhorn's rate is
1 - O(e^{-gap/eps}). The precision must exceed log2 of the Jacobian's
condition number, about gap/eps * log2(e) bits; the operator retries at
doubled precision when the test fails.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import arb, arb_mat, ctx

from attncert.constructions.sinkhorn.kernel import ball_kernel
from attncert.constructions.sinkhorn.newton import capped_newton
from attncert.constructions.sinkhorn.problem import Problem

#: Inflations of the candidate box tried before giving up at one precision.
INFLATIONS = 6


@dataclass(frozen=True)
class DualEnclosure:
    """Result of :func:`certify_dual`: points, verified boxes (or None) and effort."""

    x_hat: list[arb]  # exact points: the potentials log u, log v of the computed plan
    y_hat: list[arb]  # y_hat[0] = 0 (gauge)
    x_box: list[arb] | None  # the balls x^ +- rho, which contain log u* (None: not verified)
    y_box: list[arb] | None
    newton_steps: int  # Newton steps on arb midpoints
    prec: int
    reason: str  # why verification failed, or ""
    rho: arb | None = None  # radius of the verified box z^ + [-rho, rho]^N

    @property
    def verified(self) -> bool:
        return self.x_box is not None


class _DualSystem:
    """F and its Jacobian, evaluated in arb at points or over boxes."""

    def __init__(self, p: Problem, prec: int):
        self.p, self.prec, self.n, self.m = p, prec, p.n, p.m
        self.K = ball_kernel(p, prec)
        self.KT = self.K.transpose()
        self.Kl = self.K.tolist()
        with ctx.workprec(prec):
            self.la = [arb(v).log() for v in p.a]
            self.lb = [arb(v).log() for v in p.b]

    def evaluate(self, x: list[arb], y: list[arb], jacobian: bool) -> tuple[list[arb], arb_mat | None]:
        n, m = self.n, self.m
        with ctx.workprec(self.prec):
            ex, ey = [t.exp() for t in x], [t.exp() for t in y]
            s = self.K * arb_mat(m, 1, ey)
            t = self.KT * arb_mat(n, 1, ex)
            F = [x[i] + s[i, 0].log() - self.la[i] for i in range(n)]
            F += [y[j] + t[j, 0].log() - self.lb[j] for j in range(1, m)]
            if not jacobian:
                return F, None
            N, zero, one = n + m - 1, arb(0), arb(1)
            ent: list[arb] = []
            for i in range(n):
                inv, Ki = 1 / s[i, 0], self.Kl[i]
                row = [zero] * n
                row[i] = one
                ent += row
                ent += [Ki[l] * ey[l] * inv for l in range(1, m)]
            for j in range(1, m):
                inv = 1 / t[j, 0]
                ent += [self.Kl[k][j] * ex[k] * inv for k in range(n)]
                row = [zero] * (m - 1)
                row[j - 1] = one
                ent += row
            return F, arb_mat(N, N, ent)

    def split(self, z: list[arb]) -> tuple[list[arb], list[arb]]:
        return z[: self.n], [arb(0)] + z[self.n :]


def _norm2(values: list[arb]) -> arb:
    """The midpoint of sum |v|^2: a merit value for the Newton steps (no rigour needed)."""
    return sum((v.mid() ** 2 for v in values), arb(0)).mid()


def _sup(values: list[arb]) -> arb:
    return max((abs(v).upper() for v in values), key=lambda t: t.mid())


def certify_dual(
    p: Problem, prec: int, start: tuple[np.ndarray, np.ndarray], max_newton: int = 1000
) -> DualEnclosure:
    """Enclose the Sinkhorn potentials (gauge y_1 = 0) by Newton steps from the float
    potentials ``start`` (see :mod:`constructions.sinkhorn.continuation`) and Krawczyk's test at ``prec`` bits."""
    system = _DualSystem(p, prec)
    xf, yf = start
    with ctx.workprec(prec):
        z0 = [arb(float(v)) for v in xf] + [arb(float(v)) for v in yf[1:]]
        N = len(z0)

        def direction(z: list[arb]) -> tuple[arb_mat, arb] | None:
            F, J = system.evaluate(*system.split(z), jacobian=True)
            try:
                d = J.mid().solve(arb_mat(N, 1, [f.mid() for f in F]), algorithm="approx")
            except ZeroDivisionError:
                return None
            return d, max((abs(d[k, 0].mid()) for k in range(N)), key=lambda t: t.mid())  # may exceed any float

        def merit(z: list[arb]) -> arb:
            return _norm2(system.evaluate(*system.split(z), jacobian=False)[0])

        def move(z: list[arb], d: arb_mat, s: arb) -> list[arb]:
            return [(z[k] - s * d[k, 0]).mid() for k in range(N)]

        z, steps = capped_newton(z0, direction, merit, move, max_newton)
        F, J = system.evaluate(*system.split(z), jacobian=True)
        try:
            R = J.mid().inv().mid()
        except ZeroDivisionError:
            return _failed(system, z, steps, "the Jacobian is numerically singular")
        delta = R * arb_mat(N, 1, F)
        rho = (2 * _sup([delta[k, 0] for k in range(N)]) + arb(2) ** (8 - prec)).upper()
        eye = arb_mat(N, N, [1 if i == j else 0 for i in range(N) for j in range(N)])
        for _ in range(INFLATIONS):
            D = arb(0, rho)
            _, JD = system.evaluate(*system.split([zk + D for zk in z]), jacobian=True)
            k = (eye - R * JD) * arb_mat(N, 1, [D] * N) - delta
            kk = [k[i, 0] for i in range(N)]
            if all(abs(t).upper() < rho for t in kk):
                box = [zi + D for zi in z]  # the proven statement: one zero in z^ + D (and in z^ + k(D))
                xh, yh = system.split(z)
                xb, yb = system.split(box)
                return DualEnclosure(xh, yh, xb, yb, steps, prec, "", rho)
            rho = (rho * 8).upper()
    return _failed(system, z, steps, f"Krawczyk's test failed after {INFLATIONS} box inflations at {prec} bits")


def _failed(system: _DualSystem, z: list[arb], steps: int, reason: str) -> DualEnclosure:
    xh, yh = system.split(z)
    return DualEnclosure(xh, yh, None, None, steps, system.prec, reason)
