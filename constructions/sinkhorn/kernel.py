"""The Gibbs kernel K = exp(-C/eps) in each domain.

* EE: K_ij = e^{-C_ij/eps} exactly, since -C_ij/eps is rational.
* Ball: an ``arb_mat`` of rigorous enclosures, built from powers of one
  exponential for a rational cost (see :func:`kernel_entries`), and entry by
  entry from the cost's balls for a :class:`~constructions.sinkhorn.problem.CostEnclosure`
  (exp of an EE number that is not rational is not in EE, so a Sinkhorn
  Transformer's kernel can only be enclosed).
"""

from __future__ import annotations

from itertools import accumulate
from operator import mul

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from attncert.exact.domains.ee import EE
from attncert.exact.eenumber import EENumber
from attncert.constructions.sinkhorn.problem import Problem
from attncert.exact.matrices import Rows


def ee_kernel(C: Rows, eps: fmpq) -> list[list[EENumber]]:
    """K = exp(-C/eps), exactly, in EE."""
    return [[EE.exp(-c / eps) for c in row] for row in C]


def ball_kernel(p: Problem, prec: int) -> arb_mat:
    """An arb_mat enclosing K = exp(-C/eps) entrywise, at ``prec`` bits (see :func:`kernel_entries`)."""
    with ctx.workprec(prec):
        return arb_mat(kernel_entries(p, prec).tolist())


def kernel_entries(p: Problem, prec: int) -> np.ndarray:
    """Balls enclosing K = exp(-C/eps), to about ``prec`` bits: an n x m numpy array of arb (dtype object).

    With C = Z / D (Z integer), K_ij = w^{Z_ij} for w = e^{-1/(D eps)}. The
    distinct exponents are visited in increasing order and each power is the
    previous one times w^g, g the gap between them (one power per distinct
    gap: on a grid of costs most gaps are 1): one exp in all, then rigorous
    ball products. w^z has |z| times the relative error of w, and the chain's
    roundings add up over its length N, so they are taken at prec + 16 +
    log2(max(|z|, N)) bits, then rounded to prec. Entries with the same exponent are the same
    ball object, placed by one numpy gather. A cost given as a CostEnclosure is
    enclosed at prec + 16 bits and each entry exponentiated: exp is monotone,
    so the balls contain exp(-C_ij/eps).
    """
    if not p.rational:
        C = p.C.balls(prec + 16)
        with ctx.workprec(prec):
            return ball_array([(-c / p.eps).exp() for row in C for c in row]).reshape(p.n, p.m)
    Z, den = p.integer_cost
    exponents, where = np.unique(Z, return_inverse=True)
    gaps = np.diff(exponents, prepend=0).tolist()  # the first "gap" is the smallest exponent itself
    # w^z carries |z| times w's relative error, and each product in the chain adds its rounding.
    extra = max(abs(int(exponents[0])), abs(int(exponents[-1])), len(gaps)).bit_length()
    with ctx.workprec(prec + 16 + extra):
        w = arb(-1 / (den * p.eps)).exp()
        steps = {g: w**g for g in set(gaps)}
        powers = list(accumulate([steps[g] for g in gaps], mul))
    with ctx.workprec(prec):  # rounded to prec bits: mantissas of up to two limbs are stored inline, and are faster
        table = ball_array([+t for t in powers])
    return table[where.reshape(-1)].reshape(p.n, p.m)


def ball_array(xs: list[arb]) -> np.ndarray:
    """A list of balls as a 1-D object array (np.fromiter: np.array would probe every ball for nesting)."""
    return np.fromiter(xs, dtype=object, count=len(xs))
