r"""Hilbert's projective metric and the a-posteriori bound for Sinkhorn iterates.

Definitions
-----------
For positive vectors x, y:  d_H(x, y) = log max_i(x_i/y_i) - log min_i(x_i/y_i).
It is a metric on rays (d_H(cx, y) = d_H(x, y) for c > 0). For a positive
matrix K its projective diameter is

    Delta(K) = log max_{i,j,k,l} K_ik K_jl / (K_jk K_il),

and Birkhoff's theorem (Birkhoff 1957; Bushell 1973; Seneta, *Non-negative
Matrices and Markov Chains*, 2nd ed., 2006, ch. 3) says x -> Kx contracts d_H by
lambda(K) = tanh(Delta(K)/4):  d_H(Kx, Ky) <= lambda d_H(x, y). Since
Delta(K^T) = Delta(K), K^T contracts by the same factor. With K = exp(-C/eps),

    Delta(K) = max_{i,j,k,l} (C_jk + C_il - C_ik - C_jl) / eps,

a rational number when C and eps are rational (:func:`projective_diameter`).
For a cost that is exact in EE but not rational (a Sinkhorn Transformer's), Delta
is not rational; :func:`projective_diameter` then returns an exact rational
upper bound, which is all the bound (*) needs: lambda = tanh(Delta/4) and
1/(1 - lambda) increase with Delta.

The bound (Franklin & Lorenz, "On the scaling of multidimensional matrices",
Linear Algebra Appl. 114/115 (1989) 717-735; Peyre & Cuturi, *Computational
Optimal Transport*, 2019, Thm 4.2)
-----------------------------------------------------------------------------
Let u be any positive vector, v = b / (K^T u) (a column update, so the plan
P = diag(u) K diag(v) has column sums exactly b) and r = P 1 its row sums.
Let P* = diag(u*) K diag(v*) be the Sinkhorn plan. Then

    || log P - log P* ||_inf  <=  d_H(r, a) / (1 - lambda),            (*)

the maximum taken entrywise over log P_ij - log P*_ij. Derivation (we check it
here because the two inequalities of Peyre-Cuturi Thm 4.2 cannot simply be
added: their bound on d_H(v, v*) by the column residual would give 0 after a
column update, which is false):

1. u = r / (K v) and u* = a / (K v*), so
   d_H(u, u*) <= d_H(r, a) + d_H(Kv, Kv*) <= d_H(r, a) + lambda d_H(v, v*).
2. v = b / (K^T u) and v* = b / (K^T u*), so d_H(v, v*) <= lambda d_H(u, u*).
3. Hence d_H(u, u*) <= d_H(r, a) / (1 - lambda^2) and
   d_H(v, v*) <= lambda d_H(r, a) / (1 - lambda^2).
4. log P_ij - log P*_ij = s_i + t_j with s = log u - log u*, t = log v - log v*;
   its oscillation over (i, j) is osc(s) + osc(t) = d_H(u, u*) + d_H(v, v*).
   Both plans have total mass sum(b) = sum(a), so
   sum_ij P*_ij (e^{s_i + t_j} - 1) = 0 and s_i + t_j takes both signs (or is
   0): its sup-norm is at most its oscillation.
5. So || log P - log P* ||_inf <= (1 + lambda) d_H(r, a) / (1 - lambda^2)
   = d_H(r, a) / (1 - lambda).

So the founding design's bound d_H(P1, a)/(1 - lambda) is correct as stated, *provided* it is applied right
after a column update (column sums exactly b, hence equal total mass); step 4
fails without equal masses. No factor is missing; the sharper-looking
1/(1 - lambda^2) of step 3 bounds d_H(u, u*) only, not the plan.

Everything is evaluated in arb. 1 - lambda is computed as 2 / (e^{Delta/2} + 1)
(equal to 1 - tanh(Delta/4)), which has no cancellation for large Delta.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn.problem import Problem


def projective_diameter(p: Problem) -> fmpq:
    """Delta(exp(-C/eps)) = max_{i,j,k,l} (C_jk + C_il - C_ik - C_jl) / eps: exactly for a rational C,
    an exact rational upper bound for a CostEnclosure.

    For each pair of rows (i, j) the maximum over (k, l) splits into
    M_ij + M_ji with M_ij = max_k (C_jk - C_ik), so Delta eps = max_ij (M_ij + M_ji).
    The entries are scaled to integers by their common denominator, so numpy's
    integer arithmetic is exact (``Problem.integer_cost`` picks int32, int64 or Python
    integers so that it cannot overflow); M is computed a block of rows i at a time, as one
    broadcast difference of at most about DIAMETER_BLOCK entries. For a
    CostEnclosure the same maximum is taken over upper endpoints of balls at
    DIAMETER_BITS bits.
    """
    if not p.rational:
        return _diameter_upper(p.C.balls(DIAMETER_BITS), p.eps)
    Z, den = p.integer_cost
    n, m = Z.shape
    step = max(1, DIAMETER_BLOCK // (n * m))
    M = np.concatenate([(Z[None, :, :] - Z[i : i + step, None, :]).max(axis=2) for i in range(0, n, step)])
    return fmpq(int((M + M.T).max()), den) / p.eps


#: Entries of one broadcast block in :func:`projective_diameter`.
DIAMETER_BLOCK = 1 << 20
#: Precision of the cost balls behind an upper bound on Delta.
DIAMETER_BITS = 128


def _diameter_upper(C: list[list[arb]], eps: fmpq) -> fmpq:
    """An exact rational >= max_{i,j} [max_k (C_jk - C_ik) - min_l (C_jl - C_il)] / eps for all costs in the balls."""
    best = fmpq(0)
    with ctx.workprec(DIAMETER_BITS):
        for ci in C:
            for cj in C:
                d = [y - x for x, y in zip(ci, cj)]
                hi = max((t.upper() for t in d), key=lambda t: t.mid())
                lo = min((t.lower() for t in d), key=lambda t: t.mid())
                best = max(best, (hi - lo).upper().fmpq())
    return best / eps


def contraction(delta: fmpq, prec: int) -> arb:
    """An enclosure of lambda = tanh(Delta/4), Birkhoff's contraction ratio."""
    with ctx.workprec(prec):
        return (arb(delta) / 4).tanh()


def inverse_gap(delta: fmpq, prec: int) -> arb:
    """An enclosure of 1 / (1 - lambda) = (e^{Delta/2} + 1) / 2, without cancellation."""
    with ctx.workprec(prec):
        return ((arb(delta) / 2).exp() + 1) / 2


def hilbert_distance_upper(x: Sequence[arb], y: Sequence[arb], prec: int) -> arb:
    """An exact arb >= d_H(x', y') for every x' in the balls x and y' in the balls y (all > 0).

    d_H = log(max q / min q) with q = x/y: one logarithm, of the ratio of the
    largest upper endpoint to the smallest lower endpoint.
    """
    with ctx.workprec(prec):
        q = [xi / yi for xi, yi in zip(x, y)]
        hi = max([t.upper() for t in q])  # endpoints are exact points, so arb's comparisons decide them
        lo = min([t.lower() for t in q])
        return (hi / lo).log().upper()


def a_posteriori_bound(dH: arb, delta: fmpq, prec: int) -> arb:
    """An exact arb >= dH / (1 - lambda): the bound (*) on ||log P - log P*||_inf."""
    with ctx.workprec(prec):
        return (dH * inverse_gap(delta, prec)).upper()
