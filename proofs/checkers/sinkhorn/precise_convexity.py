r"""The strong-convexity bound on the high-precision evaluation, re-derived from the witness (u^, x, y, sigma).

**Theorem** (:mod:`proofs.checkers.sinkhorn.convexity`): for P^ = diag(u^) K' diag(v^), v^ = b / (K'^T u^),
eta >= (sum_i (r_i - a_i)^2 / a_i)^{1/2} (r = P^ 1), H(P^) >= mu D on S with mu > 0, kappa = (1/min a + 1/min b)^{1/2}
and t = 2 eta kappa / mu < 0.34: max_ij |log P*_ij - log P^_ij| <= kappa eta e^{2t} / mu.

**eta.** The high-precision evaluation (:func:`~proofs.checkers.sinkhorn.precise_hilbert.precise_evaluation`: an
integer cost's kernel from a table, a float64 cost's by :func:`exact.fixed_exp.fixed_exp_neg`) encloses every q_i = r_i / a_i in [q_lo, q_hi]; so |q_i - 1| <= max(q_hi - 1, 1 - q_lo) and
eta <= sum(a)^{1/2} max(q_hi - 1, 1 - q_lo).

**mu.** The verified Cholesky of a Schur complement, :func:`~proofs.checkers.sinkhorn.convexity.certified_gap`, for the
recorded doubles x, y and sigma on the balanced kernel K2 = diag(x) K' diag(y) (the recorded recipe, ``integers`` or
``floats``), proves H(W') >= sigma' D on S for W' = K^ diag(v~), with K2 >= phi_lo K^ entrywise. Since K'_ij = K2_ij / (x_i y_j),
P^_ij = (u^_i / x_i) K2_ij (v^_j / y_j) >= omega W'_ij with omega = phi_lo min_i (u^_i / x_i) min_j (v^_j / (y_j v~_j)),
and H is monotone in P: mu = omega sigma', sigma' (:func:`~proofs.checkers.sinkhorn.convexity.moved_gap`) the gap
moved from the doubles a~, b~ the Cholesky saw to the exact masses. min_i u^_i / x_i is exact (rationals); v^_j are the evaluation's balls.

The kernel's fixed point is taken at the evaluation's bits plus the binary spread of x and of y v~ and
log2 max(n, m): its truncation is absolute, the sums are relative to their least terms. Everything is this package's
own code; it shares :mod:`exact` with the prover.
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb, ctx, fmpq

from attncert.exact.roundoff import exact
from attncert.proofs.checkers.sinkhorn.convexity import certified_gap, convexity_bound, kappa
from attncert.proofs.checkers.sinkhorn.precise_hilbert import precise_evaluation
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, PlanEnclosure, Problem

#: The most bits of the kernel in fixed point this check computes.
MAX_KERNEL_BITS = 1024


def precise_convexity_enclosure(
    p: Problem, u: list[fmpq], x: list[fmpq], y: list[fmpq], sigma: fmpq, prec: int, recipe: str, plan: bool = True
) -> PlanEnclosure:
    """The bound from the witness (module docstring) at ``prec`` bits, the float evaluation and the kernel by
    ``recipe`` (``integers`` or ``floats``), and with ``plan`` balls containing P*."""
    gap, sigma_exact = certified_gap(p, x, y, sigma, recipe)
    # logarithms of positive doubles, each finite: their ratios and products need not be (2^128 / 2^-900 is no double)
    lyv = np.log2(gap.scale) + np.log2(gap.v)
    spread = math.log2(float(max(x))) - math.log2(float(min(x))) + float(lyv.max() - lyv.min())
    kernel_bits = prec + 16 + math.ceil(spread) + max(p.n, p.m).bit_length()
    if kernel_bits > MAX_KERNEL_BITS:  # the prover stops at 552 bits, this check asks 80 more: a bound on verify's work
        raise HypothesisError(f"the witness's scalings would need the kernel to {kernel_bits} bits, over {MAX_KERNEL_BITS}")
    ev = precise_evaluation(p, u, prec, kernel_bits, recipe)
    with ctx.workprec(prec):
        ru = min(ui / xi for ui, xi in zip(u, x))  # exact
        rv = min(((vj / (arb(exact(yj)) * arb(exact(wj)))).lower() for vj, yj, wj in zip(ev.v, gap.scale.tolist(), gap.v.tolist())), key=lambda t: t.mid())
        mu = (gap.phi.lo * arb(ru) * rv * arb(sigma_exact)).lower()
        dev = max((ev.q_hi - 1).upper(), (1 - ev.q_lo).upper(), key=lambda t: t.mid())
        eta = (arb(sum(p.a, fmpq(0))).sqrt() * max(dev, arb(0))).upper()
        bound = convexity_bound(eta, kappa(p), mu)
        balls = ev.balls(bound) if plan else []
    return PlanEnclosure(balls, bound.fmpq())
