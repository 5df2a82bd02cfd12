r"""The hypotheses shared by every Sinkhorn theorem used here.

An entropic transport problem (C, a, b, eps) with C an n x m rational matrix
has a unique Sinkhorn plan P* = diag(u*) exp(-C/eps) diag(v*) with P* 1 = a and
P*^T 1 = b (Sinkhorn, Amer. Math. Monthly 74 (1967) 402-405) when

* eps > 0 (so that K = exp(-C/eps) is the entropic kernel; eps <= 0 makes the
  projective diameter Delta <= 0 and every contraction estimate meaningless),
* a > 0 and b > 0 entrywise (the scalings divide by them and take their logs),
* sum(a) = sum(b) (otherwise no matrix has both marginals).

:func:`sinkhorn_problem` checks all four, in QQ, from the recorded data, and
returns a :class:`Problem` that the theorem checkers accept.
"""

from __future__ import annotations

from dataclasses import dataclass

from flint import fmpq

from exact.matrices import Rows


class HypothesisError(Exception):
    """A hypothesis of a theorem fails on the recorded data: the theorem cannot be used."""


@dataclass(frozen=True)
class Problem:
    """A checked Sinkhorn problem: C is len(a) x len(b), eps > 0, a, b > 0 with equal sums."""

    C: Rows
    a: list[fmpq]
    b: list[fmpq]
    eps: fmpq

    @property
    def n(self) -> int:
        return len(self.a)

    @property
    def m(self) -> int:
        return len(self.b)


def sinkhorn_problem(C: Rows, a: list[fmpq], b: list[fmpq], eps: fmpq) -> Problem:
    """The problem (C, a, b, eps) once its hypotheses hold; HypothesisError naming the first that fails."""
    if len(C) != len(a) or any(len(row) != len(b) for row in C):
        raise HypothesisError(f"the cost is not {len(a)}x{len(b)} (the lengths of a and b)")
    if not eps > 0:
        raise HypothesisError(f"eps = {eps} is not > 0")
    if not all(x > 0 for x in a) or not all(x > 0 for x in b):
        raise HypothesisError("the marginals a, b are not positive")
    if sum(a, fmpq(0)) != sum(b, fmpq(0)):
        raise HypothesisError(f"unbalanced marginals: sum(a) = {sum(a, fmpq(0))} != sum(b) = {sum(b, fmpq(0))}")
    return Problem(C, list(a), list(b), eps)


def projective_diameter(p: Problem) -> fmpq:
    """Delta(exp(-C/eps)) = max_{i,j} [max_k (C_jk - C_ik) - min_l (C_jl - C_il)] / eps, in QQ.

    This is max_{i,j,k,l} (C_jk + C_il - C_ik - C_jl) / eps, written pairwise in rows.
    """
    best = fmpq(0)
    for ci in p.C:
        for cj in p.C:
            d = [y - x for x, y in zip(ci, cj)]
            best = max(best, max(d) - min(d))
    return best / p.eps


@dataclass(frozen=True)
class PlanEnclosure:
    """What a Sinkhorn theorem concludes: balls containing P*, and a proven bound on max |log P^ - log P*|."""

    plan: list[list]  # arb balls, entry by entry
    log_error: fmpq  # the certificate's recorded bound must be at least this
