r"""Every positive plan is a Sinkhorn plan, exactly.

Let pi > 0 be an n x m matrix with row sums a and column sums b, and eps > 0.
Put C_ij = -eps log pi_ij. Then K = exp(-C/eps) = pi *exactly* (exp and log
are inverse; C is kept symbolic and never rounded), so u = 1, v = 1 satisfy
the Sinkhorn equations u * (K v) = pi 1 = a and v * (K^T u) = pi^T 1 = b.
By Sinkhorn's theorem (R. Sinkhorn, "Diagonal equivalence to matrices with
prescribed row and column sums", Amer. Math. Monthly 74 (1967) 402-405; the
scaled matrix diag(u) K diag(v) with given positive marginals is unique for a
positive K), pi is therefore *the* Sinkhorn plan S_eps(C; a, b). The marginal
identities are decided in QQ, so the statement is exact.

C is not rational (log of a rational), so C lives here only as the pair
(pi, eps) with the rule C_ij = -eps * log(pi_ij).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from flint import fmpq

from attncert.constructions.sinkhorn.problem import SinkhornInputError, read_marginal
from attncert.exact.domains.qq import QQ
from attncert.exact.matrices import Rows, convert_rows

#: How the cost is recorded: symbolic, never rounded.
COST_RULE = "C_ij = -eps * log(pi_ij)"


@dataclass(frozen=True)
class FixedPoint:
    """The exact check that pi is S_eps(-eps log pi; a, b)."""

    pi: Rows
    a: list[fmpq]
    b: list[fmpq]
    eps: fmpq
    u: list[fmpq]  # all 1
    v: list[fmpq]  # all 1
    row_sums: list[fmpq]  # u * (K v) with K = pi
    col_sums: list[fmpq]  # v * (K^T u)

    @property
    def holds(self) -> bool:
        """pi > 0 and the scaling equations hold exactly in QQ."""
        positive = all(x > 0 for row in self.pi for x in row)
        return positive and self.row_sums == self.a and self.col_sums == self.b


def fixed_point(pi: Sequence[Sequence[object]], a: Sequence[object], b: Sequence[object], eps: object) -> FixedPoint:
    """Check exactly that the positive plan pi is the Sinkhorn plan of C = -eps log pi with marginals a, b.

    SinkhornInputError if pi has an entry <= 0 (log is undefined; see
    ``sinkhorn_limit`` for plans with zeros), shapes disagree or eps <= 0.
    """
    P = convert_rows(pi, QQ)
    av, bv = read_marginal(a, "a"), read_marginal(b, "b")
    e = QQ.convert(eps)
    if e <= 0:
        raise SinkhornInputError(f"the temperature eps must be > 0, got {e}")
    if (len(P), len(P[0])) != (len(av), len(bv)):
        raise SinkhornInputError(f"shapes disagree: pi is {len(P)}x{len(P[0])}, a has {len(av)}, b has {len(bv)} entries")
    for i, row in enumerate(P):
        for j, x in enumerate(row):
            if x <= 0:
                raise SinkhornInputError(f"pi must be positive for C = -eps log pi to exist, but pi[{i}][{j}] = {x}")
    one = fmpq(1)
    u, v = [one] * len(P), [one] * len(P[0])
    K = P  # K = exp(-C/eps) = exp(log pi) = pi, exactly
    rows = [ui * sum((kij * vj for kij, vj in zip(Ki, v)), fmpq(0)) for ui, Ki in zip(u, K)]
    cols = [vj * sum((K[i][j] * u[i] for i in range(len(K))), fmpq(0)) for j, vj in enumerate(v)]
    return FixedPoint(P, av, bv, e, u, v, rows, cols)


def interpolate(pi: Rows, a: Sequence[fmpq], b: Sequence[fmpq], t: fmpq) -> Rows:
    """pi_t = (1 - t) pi + t a b^T / s (s the total mass): marginals a and b, positive for 0 < t <= 1."""
    s = sum(a, fmpq(0))
    return [[(1 - t) * x + t * ai * bj / s for x, bj in zip(row, b)] for row, ai in zip(pi, a)]
