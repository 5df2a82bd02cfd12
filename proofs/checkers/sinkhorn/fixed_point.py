r"""The fixed-point characterisation of the Sinkhorn plan, decided in QQ.

Theorem (Sinkhorn, Amer. Math. Monthly 74 (1967) 402-405): for a positive matrix
K and positive a, b with sum a = sum b there is exactly one matrix
diag(u) K diag(v) with row sums a and column sums b. Hence (u, v) is a fixed
point of one Sinkhorn step u <- a / (K v), v <- b / (K^T u) exactly when its
plan has marginals a, b, and that plan is P*.

For the cost C = -eps log pi of a positive rational pi (eps > 0), K = exp(-C/eps)
= pi exactly, with no rounding. Hypotheses checked: eps > 0, pi > 0, a, b > 0,
sum a = sum b. The conclusion is then checked by one exact Sinkhorn step from
u = v = 1 in QQ: it must return u = v = 1.
"""

from __future__ import annotations

from flint import fmpq

from attncert.exact.matrices import Rows
from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem


def is_sinkhorn_plan(pi: Rows, a: list[fmpq], b: list[fmpq], eps: fmpq) -> bool:
    """True iff pi = S_eps(-eps log pi; a, b): the hypotheses hold and one exact step fixes u = v = 1.

    HypothesisError when a hypothesis fails for a reason other than pi itself
    (eps, a, b); False when pi is not positive or is not a fixed point.
    """
    sinkhorn_problem(pi, a, b, eps)  # shapes, eps > 0, a, b > 0, balanced
    if not all(x > 0 for row in pi for x in row):
        return False
    one = fmpq(1)
    u = [ai / sum((x * one for x in row), fmpq(0)) for ai, row in zip(a, pi)]
    v = [bj / sum((pi[i][j] * u[i] for i in range(len(a))), fmpq(0)) for j, bj in enumerate(b)]
    return all(x == 1 for x in u) and all(x == 1 for x in v)

