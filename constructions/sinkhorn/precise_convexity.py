r"""The strong-convexity bound on the high-precision evaluation: tolerances like 1e-30 with no precision growing
with Delta / eps.

**The theorem** is :mod:`constructions.sinkhorn.convexity`'s: for the plan P^ = diag(u^) K' diag(v^) of a witness
u^ (v^ = b / (K'^T u^), so P^ has column sums b exactly), eta >= the dual norm of P^ 1 - a and mu > 0 with
H(P^) >= mu D on S, t = 2 eta kappa / mu < 0.34 gives max |log P* - log P^| <= kappa eta e^{2t} / mu. Here u^ is the
high-precision witness U 2^-L of :mod:`constructions.sinkhorn.precise`, and:

**eta from the high-precision evaluation.** It bounds d_H(r, a) = log(max_i q_i / min_i q_i) <= d, q_i = r_i / a_i.
Since sum_i a_i q_i = sum r = sum b = sum a, the a-weighted mean of q is 1, so min q <= 1 <= max q and
|q_i - 1| <= max q - min q = (max q / min q - 1) min q <= e^d - 1. Hence
eta^2 = sum_i a_i (q_i - 1)^2 <= sum(a) (e^d - 1)^2.

**mu from the float witness's verified Cholesky, transferred.** The convexity run
(:func:`~constructions.sinkhorn.convexity.convexity_run`) proves H(W') >= sigma D on S for the doubles
W' = K^ diag(v~) of the float evaluation on the balanced kernel K2 = diag(x) K' diag(y), K2 >= phi_lo K^
entrywise. Since K'_ij = K2_ij / (x_i y_j),

    P^_ij = (u^_i / x_i) K2_ij (v^_j / y_j) >= omega W'_ij,   omega = phi_lo min_i (u^_i / x_i) min_j (v^_j / (y_j v~_j)),

and H is monotone in P (a positive combination of fixed rank-one matrices), so H(P^) >= omega sigma D on S:
mu = omega sigma, from n + m scalars (exact rationals, then arb). u^ and x differ by about one common factor and
v^ and y v~ by its inverse, so omega is about phi_lo.

**Precision.** The bound is about kappa (e^d - 1) / mu, so d must reach about tol mu / kappa: the evaluation runs at
log2(1/tol) + log2(kappa / mu) + log2(n + m) + GUARD bits, and the kernel's fixed point (its truncation is absolute,
the sums are relative to their least terms) at that plus the binary spread of the witness's scalings and
log2 max(n, m). Neither grows with Delta / eps, where Hilbert's bound needs Delta / (2 ln 2) bits more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

import numpy as np
from flint import arb, ctx, fmpq, fmpz

from attncert.constructions.sinkhorn.convexity import T_MAX, convexity_run, moved_gap
from attncert.constructions.sinkhorn.precise import KERNEL_BITS, Evaluation, PreciseRun, fixed_kernel, float_fixed_kernel, precise
from attncert.constructions.sinkhorn.shifted import BOUND_BITS, ExactCost, ShiftedKernel, UnsupportedKernel
from attncert.constructions.sinkhorn.verified import FloatRun, round_up
from attncert.exact.roundoff import exact

#: Guard bits of the evaluation's precision (the estimate of mu, the evaluation's own roundings).
GUARD = 24
#: The most bits of the kernel in fixed point (23 fractional digits of 24 bits; the witness's scalings spreading over
#: hundreds of bits would take them beyond): a run needing more is not certified here.
MAX_KERNEL_BITS = 552
#: Newton's system is solved densely up to this n (an O(n^3) solve): at Delta / eps in the hundreds the iterative
#: solve's fixed point contracts slowly, and its stopping test at 1e-15 left steps that gained about 1e-13 each (six
#: evaluations at n = 512, reg 0.01, where the dense steps take three).
DENSE_NEWTON = 1024


@dataclass(frozen=True)
class PreciseConvexityRun:
    """The convexity run that proved the Hessian's gap (x, y, sigma) and the high-precision run bounded by it (None,
    with the reason, where the float run certified no gap)."""

    convexity: FloatRun
    precise: PreciseRun | None
    reason: str

    @property
    def witness(self) -> dict[str, list[fmpq] | fmpq]:
        """u^ (the high-precision witness), x and y (the balanced kernel's scalings, doubles) and sigma."""
        x, y = self.convexity.balance
        return {
            "u": self.precise.witness,
            "x": [fmpq(*t.as_integer_ratio()) for t in x.tolist()],
            "y": [fmpq(*t.as_integer_ratio()) for t in y.tolist()],
            "sigma": fmpq(*self.convexity.convexity.sigma.as_integer_ratio()),
        }


def convexity_bound_of(run: FloatRun, a: Sequence[fmpq], prec: int) -> Callable[[Evaluation], arb]:
    """The bound kappa eta e^{2t} / mu of a high-precision evaluation (module docstring), +inf where t >= 0.34."""
    x, y = run.balance
    cb = run.convexity
    xs = [exact(t) for t in x.tolist()]
    w = [exact(s) * exact(t) for s, t in zip(y.tolist(), run.evaluation.v.tolist())]  # y_j v~_j, exactly
    phi_lo = run.kernel.factor.lo
    total = sum(a, fmpq(0))

    def bound(e: Evaluation) -> arb:
        den = fmpz(2) ** e.L
        ru = min(fmpq(int(U), 1) / (den * xi) for U, xi in zip(e.U.tolist(), xs))  # min_i u^_i / x_i
        rv = min(fmpq(int(V), 1) / wj for V, wj in zip(e.V.tolist(), w))  # min_j v~^_j / (y_j v~_j), v^ = v~^ v_ratio
        with ctx.workprec(prec):
            omega = (phi_lo * arb(ru) * arb(rv * e.v_scale) * e.v_ratio.lo).lower()
            mu = (omega * arb(moved_gap(cb.sigma))).lower()
            eta = (arb(total).sqrt() * e.d_h.expm1()).upper()
            t = 2 * eta * cb.kappa / mu
            if not (mu > 0 and t < arb(T_MAX)):
                return arb("inf")
            return arb(round_up(cb.kappa * eta * (2 * t).exp() / mu))  # 2^-30 above: the checker's arb may differ in its last bits

    return bound


def precision(run: FloatRun, tol: fmpq, prec: int) -> tuple[int, int]:
    """The evaluation's bits and the kernel's (module docstring, "Precision"), at least ``prec``."""
    x, y = run.balance
    n, m = run.kernel.shape
    cb = run.convexity
    with ctx.workprec(BOUND_BITS):
        scale = float((cb.kappa / cb.mu).log()) / math.log(2)
    need = math.ceil(math.log2(int(tol.q)) - math.log2(int(tol.p)) + max(scale, 0.0) + math.log2(n + m)) + GUARD
    # logarithms of each double, not of their quotient or product: max x / min x need not be a double (2^128 / 2^-900)
    lx, lyv = np.log2(x), np.log2(y) + np.log2(run.evaluation.v)
    spread = float(lx.max() - lx.min() + lyv.max() - lyv.min())
    bits = max(prec, need)
    return bits, bits + math.ceil(spread) + max(n, m).bit_length()


def precise_convexity(
    K: ShiftedKernel, cost: ExactCost, eps: fmpq, a: Sequence[fmpq], b: Sequence[fmpq], tol: fmpq, prec: int, u0: np.ndarray | None, max_iter: int
) -> PreciseConvexityRun:
    """The convexity run on the float kernel (its Hessian's gap), then high-precision evaluations from its witness x,
    with Newton steps, until the convexity bound is <= tol. K is the shifted kernel of ``cost`` at ``eps``: an integer
    cost's fixed-point kernel is a table (:func:`~constructions.sinkhorn.precise.fixed_kernel`), a float cost's
    is computed entry by entry in numpy (:func:`~constructions.sinkhorn.precise.float_fixed_kernel`)."""
    run = convexity_run(K, a, b, u0, max_iter)
    if run.convexity is None:
        return PreciseConvexityRun(run, None, run.reason)
    bits, kernel_bits = precision(run, tol, prec)
    if kernel_bits > MAX_KERNEL_BITS:
        return PreciseConvexityRun(run, None, f"the kernel would need {kernel_bits} bits in fixed point, over {MAX_KERNEL_BITS}")
    if K.mode == "floats":
        try:
            FK = float_fixed_kernel(cost.values, eps, kernel_bits)
        except UnsupportedKernel as e:
            return PreciseConvexityRun(run, None, str(e))
    else:
        FK = fixed_kernel(K, -(-kernel_bits // KERNEL_BITS))
    x = run.balance[0]
    return PreciseConvexityRun(run, precise(K, a, b, tol, x, bits, convexity_bound_of(run, a, bits), FK, DENSE_NEWTON), "")
