"""The Gibbs kernel K = exp(-C/eps) in each domain.

* EE: K_ij = e^{-C_ij/eps} exactly, since -C_ij/eps is rational.
* Ball: an ``arb_mat`` of rigorous enclosures. A cost usually has few distinct
  values (a random cost k/1000 has at most 1001), so each distinct entry is
  exponentiated once (keyed by its integer numerator over the common
  denominator: hashing Python integers is much cheaper than hashing fmpq).
"""

from __future__ import annotations

from flint import arb, arb_mat, ctx, fmpq

from exact.domains.ee import EE
from exact.eenumber import EENumber
from constructions.sinkhorn.problem import Problem
from exact.matrices import Rows


def ee_kernel(C: Rows, eps: fmpq) -> list[list[EENumber]]:
    """K = exp(-C/eps), exactly, in EE."""
    return [[EE.exp(-c / eps) for c in row] for row in C]


def ball_kernel(p: Problem, prec: int) -> arb_mat:
    """An arb_mat enclosing K = exp(-C/eps) entrywise, at ``prec`` bits."""
    ints, den = p.integer_cost
    scale = -1 / (den * p.eps)
    cache: dict[int, arb] = {}
    entries = []
    with ctx.workprec(prec):
        for row in ints:
            for z in row:
                k = cache.get(z)
                if k is None:
                    k = cache[z] = arb(z * scale).exp()
                entries.append(k)
        return arb_mat(p.n, p.m, entries)
