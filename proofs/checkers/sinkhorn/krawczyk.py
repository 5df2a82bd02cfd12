r"""Krawczyk's test on the dual Sinkhorn equations: an enclosure of the Sinkhorn plan from a box.

The dual equations in log-potentials z = (x_1..x_n, y_2..y_m), y_1 = 0 fixed:

    F_i(z)  = x_i + log sum_j K_ij e^{y_j} - log a_i      (i = 1..n)
    G_j(z)  = y_j + log sum_i K_ij e^{x_i} - log b_j      (j = 2..m)

(the column equation for j = 1 follows from the others since sum a = sum b).
Theorem (Krawczyk 1969; Moore, *Interval Analysis*; Neumaier, *Interval Methods
for Systems of Equations*, 1990, Thm 5.1.8). Hypotheses:

1. (C, a, b, eps) satisfies :mod:`proofs.checkers.sinkhorn.problem`;
2. the witness is a point z^ with y^_1 = 0, of length n + m - 1, and a radius rho > 0;
3. for D = [-rho, rho]^N, any matrix R and an interval matrix J(z^ + D) containing
   the Jacobian on the box, the Krawczyk image
   k = -R F(z^) + (I - R J(z^ + D)) D lies in the interior of D.

Then F has exactly one zero z* in z^ + D, and P*_ij = K_ij e^{x*_i + y*_j} is the
Sinkhorn plan. Since |x*_i - x^_i| <= rho and |y*_j - y^_j| <= rho (0 for j = 1),

    max_ij |log P^_ij - log P*_ij| <= rho + rho [m > 1],    P^ = K e^{x^ + y^},

which is the least bound a certificate may record (not rho alone).
"""

from __future__ import annotations

from flint import arb, arb_mat, ctx, fmpq

from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, PlanEnclosure, Problem, kernel


def krawczyk_enclosure(p: Problem, x: list[fmpq], y: list[fmpq], rho: fmpq, prec: int) -> PlanEnclosure:
    """Balls containing P* over the verified box, and the least admissible bound rho (1 + [m > 1])."""
    n, m = p.n, p.m
    if len(x) != n or len(y) != m:
        raise HypothesisError(f"the Krawczyk witness has {len(x)} + {len(y)} potentials, not {n} + {m}")
    if y[0] != 0:
        raise HypothesisError("the Krawczyk witness does not fix y_1 = 0")
    if not rho > 0:
        raise HypothesisError("the Krawczyk radius rho is not > 0")
    K = kernel(p, prec)
    N = n + m - 1

    def system(X: list[arb], Y: list[arb]) -> tuple[list[arb], list[list[arb]]]:
        eX, eY = [t.exp() for t in X], [t.exp() for t in Y]
        s = [sum((K[i][j] * eY[j] for j in range(m)), arb(0)) for i in range(n)]
        t = [sum((K[i][j] * eX[i] for i in range(n)), arb(0)) for j in range(m)]
        F = [X[i] + s[i].log() - arb(p.a[i]).log() for i in range(n)] + [Y[j] + t[j].log() - arb(p.b[j]).log() for j in range(1, m)]
        J = [[arb(0)] * N for _ in range(N)]
        for i in range(n):
            J[i][i] = arb(1)
            for j in range(1, m):
                J[i][n + j - 1] = K[i][j] * eY[j] / s[i]
        for j in range(1, m):
            J[n + j - 1][n + j - 1] = arb(1)
            for i in range(n):
                J[n + j - 1][i] = K[i][j] * eX[i] / t[j]
        return F, J

    with ctx.workprec(prec):
        X0, Y0 = [arb(v) for v in x], [arb(v) for v in y]
        F0, J0 = system(X0, Y0)
        try:
            R = arb_mat(J0).mid().inv().mid()
        except (ZeroDivisionError, ValueError):
            raise HypothesisError("the Jacobian at the witness is singular at this precision") from None
        D = arb(0, rho)
        XD, YD = [t + D for t in X0], [Y0[0]] + [t + D for t in Y0[1:]]
        _, JD = system(XD, YD)
        eye = arb_mat(N, N, [int(i == j) for i in range(N) for j in range(N)])
        k = (eye - R * arb_mat(JD)) * arb_mat(N, 1, [D] * N) - R * arb_mat(N, 1, F0)
        if not all(abs(k[i, 0]).upper() < rho for i in range(N)):
            raise HypothesisError("Krawczyk's inclusion K(box) in int(box) does not hold on the recorded box")
        plan = [[K[i][j] * (XD[i] + YD[j]).exp() for j in range(m)] for i in range(n)]
    return PlanEnclosure(plan, rho * (2 if m > 1 else 1))
