r"""The hypotheses shared by every Sinkhorn theorem used here.

An entropic transport problem (C, a, b, eps) with C an n x m rational matrix
has a unique Sinkhorn plan P* = diag(u*) exp(-C/eps) diag(v*) with P* 1 = a and
P*^T 1 = b (Sinkhorn, Amer. Math. Monthly 74 (1967) 402-405) when

* eps > 0 (so that K = exp(-C/eps) is the entropic kernel; eps <= 0 makes the
  projective diameter Delta <= 0 and every contraction estimate meaningless),
* a > 0 and b > 0 entrywise (the scalings divide by them and take their logs),
* sum(a) = sum(b) (otherwise no matrix has both marginals).

:func:`sinkhorn_problem` checks all four, in QQ, from the recorded data, and
returns a :class:`Problem` that the theorem checkers accept. The cost is a
rational matrix, or a :class:`BallCost`: a cost that is not rational (a
Sinkhorn Transformer's -<Q, K>), known to the checker through its own forward
pass as balls at any precision; the theorems then use the kernel's balls and an
upper bound on Delta, which is all they need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from flint import arb, ctx, fmpq, fmpq_mat

from attncert.exact.matrices import Rows


class HypothesisError(Exception):
    """A hypothesis of a theorem fails on the recorded data: the theorem cannot be used."""


@dataclass
class BallCost:
    """A cost matrix known as balls: ``balls(prec)`` encloses every entry at about prec bits (cached)."""

    forward: Callable[[int], list[list[arb]]]
    shape: tuple[int, int]

    def __post_init__(self) -> None:
        self._cache: dict[int, list[list[arb]]] = {}

    def balls(self, prec: int) -> list[list[arb]]:
        if prec not in self._cache:
            self._cache[prec] = self.forward(prec)
        return self._cache[prec]


@dataclass(frozen=True)
class Problem:
    """A checked Sinkhorn problem: C is len(a) x len(b), eps > 0, a, b > 0 with equal sums."""

    C: Rows | BallCost
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
    if (C.shape != (len(a), len(b))) if isinstance(C, BallCost) else (len(C) != len(a) or any(len(row) != len(b) for row in C)):
        raise HypothesisError(f"the cost is not {len(a)}x{len(b)} (the lengths of a and b)")
    if not eps > 0:
        raise HypothesisError(f"eps = {eps} is not > 0")
    if not all(x > 0 for x in a) or not all(x > 0 for x in b):
        raise HypothesisError("the marginals a, b are not positive")
    if sum(a, fmpq(0)) != sum(b, fmpq(0)):
        raise HypothesisError(f"unbalanced marginals: sum(a) = {sum(a, fmpq(0))} != sum(b) = {sum(b, fmpq(0))}")
    return Problem(C, list(a), list(b), eps)


def projective_diameter(p: Problem, prec: int = 128) -> fmpq:
    """Delta(exp(-C/eps)) = max_{i,j} [max_k (C_jk - C_ik) - min_l (C_jl - C_il)] / eps: in QQ for a rational C,
    an exact rational upper bound (from the balls at ``prec`` bits) for a BallCost.

    This is max_{i,j,k,l} (C_jk + C_il - C_ik - C_jl) / eps, written pairwise in rows.
    """
    if isinstance(p.C, BallCost):
        return _diameter_upper(p.C.balls(prec), prec) / p.eps
    best = fmpq(0)
    for ci in p.C:
        for cj in p.C:
            d = [y - x for x, y in zip(ci, cj)]
            best = max(best, max(d) - min(d))
    return best / p.eps


def _diameter_upper(C: list[list[arb]], prec: int) -> fmpq:
    """An exact rational >= max_{i,j} [max_k (C_jk - C_ik) - min_l (C_jl - C_il)] for every cost in the balls."""
    best = fmpq(0)
    with ctx.workprec(prec):
        for ci in C:
            for cj in C:
                d = [y - x for x, y in zip(ci, cj)]
                spread = max(t.upper().fmpq() for t in d) - min(t.lower().fmpq() for t in d)
                best = max(best, spread)
    return best


def shifted_integers(p: Problem, method: str) -> tuple[np.ndarray, int]:
    """(Z', D): C = Z / D over the least common denominator D, and Z' = Z - A 1^T - 1 B^T with A_i = min_j Z_ij and
    B_j = min_i (Z_ij - A_i), the numerators of the shifted cost C' = Z'/D >= 0 (a zero in every row and column), in
    int64. HypothesisError (naming ``method``) for a cost that is not rational or whose numerators do not fit int64."""
    if isinstance(p.C, BallCost):
        raise HypothesisError(f"the {method} method needs a rational cost")
    num, den = fmpq_mat(p.C).numer_denom()
    try:
        Z = np.array([int(x) for x in num.entries()], dtype=np.int64).reshape(p.n, p.m)
    except OverflowError:
        raise HypothesisError(f"the cost's numerators do not fit int64 ({method})") from None
    if int(Z.max()) - int(Z.min()) >= 2**63:  # Z - A, B and Z' lie in [-range, range]: no int64 wrap-around below this
        raise HypothesisError(f"the cost's numerators span 2^63 or more: their differences do not fit int64 ({method})")
    Z = Z - Z.min(1)[:, None]
    return Z - Z.min(0)[None, :], int(den)


def kernel(p: Problem, prec: int, shift: tuple[list[fmpq], list[fmpq]] | None = None) -> list[list[arb]]:
    """Balls containing K_ij = exp(-C_ij / eps) (exp is monotone, so balls around C give balls around K), or with
    ``shift`` = (alpha, beta) the shifted kernel's exp(-(C_ij - alpha_i - beta_j) / eps)."""
    C = p.C.balls(prec) if isinstance(p.C, BallCost) else p.C
    with ctx.workprec(prec):
        if shift is None:
            return [[(-arb(c) / arb(p.eps)).exp() for c in row] for row in C]
        alpha, beta = [arb(x) for x in shift[0]], [arb(x) for x in shift[1]]
        return [[(-(arb(c) - al - be) / arb(p.eps)).exp() for c, be in zip(row, beta)] for row, al in zip(C, alpha)]


@dataclass(frozen=True)
class PlanEnclosure:
    """What a Sinkhorn theorem concludes: balls containing P*, and a proven bound on max |log P^ - log P*|."""

    plan: list[list]  # arb balls, or intervals (lo, hi) of exact arb endpoints, entry by entry
    log_error: fmpq  # the certificate's recorded bound must be at least this


