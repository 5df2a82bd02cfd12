"""The Gibbs kernel K = exp(-C/eps) in each domain.

* EE: K_ij = e^{-C_ij/eps} exactly, since -C_ij/eps is rational.
* Ball: an ``arb_mat`` of rigorous enclosures, built from powers of one
  exponential for a rational cost (see :func:`kernel_entries`), and entry by
  entry from the cost's balls for a :class:`~constructions.sinkhorn.problem.CostEnclosure`
  (exp of an EE number that is not rational is not in EE, so a Sinkhorn
  Transformer's kernel can only be enclosed).
"""

from __future__ import annotations

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from exact.domains.ee import EE
from exact.eenumber import EENumber
from constructions.sinkhorn.problem import Problem
from exact.matrices import Rows


def ee_kernel(C: Rows, eps: fmpq) -> list[list[EENumber]]:
    """K = exp(-C/eps), exactly, in EE."""
    return [[EE.exp(-c / eps) for c in row] for row in C]


def ball_kernel(p: Problem, prec: int) -> arb_mat:
    """An arb_mat enclosing K = exp(-C/eps) entrywise, at ``prec`` bits (see :func:`kernel_entries`)."""
    with ctx.workprec(prec):
        return arb_mat(p.n, p.m, kernel_entries(p, prec))


def kernel_entries(p: Problem, prec: int) -> list[arb]:
    """Balls enclosing K = exp(-C/eps), row by row (K_ij at index i m + j), with at least ``prec`` bits.

    With C = Z / D (Z integer), K_ij = w^{Z_ij} for w = e^{-1/(D eps)}. The
    distinct exponents are visited in increasing order and each power is the
    previous one times a power of w: one exp in all, then multiplications at
    prec + 16 bits (rigorous ball products; the radius grows by a few ulps per
    step). Entries with the same exponent are the same ball object.
    A cost given as a CostEnclosure is enclosed at prec + 16 bits and each
    entry exponentiated: exp is monotone, so the balls contain exp(-C_ij/eps).
    """
    if not p.rational:
        C = p.C.balls(prec + 16)
        with ctx.workprec(prec):
            return [(-c / p.eps).exp() for row in C for c in row]
    Z, den = p.integer_cost
    exponents, where = np.unique(Z, return_inverse=True)
    with ctx.workprec(prec + 16):
        w = arb(-1 / (den * p.eps)).exp()
        powers: list[arb] = []
        last = None
        for z in exponents.tolist():
            powers.append(w**z if last is None else powers[-1] * w ** (z - last))
            last = z
    return [powers[k] for k in where.ravel().tolist()]
