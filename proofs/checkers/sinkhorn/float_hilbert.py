r"""The float-verified Hilbert certificate, re-derived: the Hilbert bound evaluated in float64 with proven rounding errors.

Theorem (Birkhoff; the bound of :mod:`proofs.checkers.sinkhorn.hilbert`) for the shifted kernel
K' = exp(-C'/eps), C' = C - alpha 1^T - 1 beta^T, alpha_i = min_j C_ij, beta_j = min_i (C_ij - alpha_i).
K' = diag(e^{alpha/eps}) K diag(e^{beta/eps}) has the Sinkhorn plan of K and the same Delta. For
u^ > 0, v^ = b / (K'^T u^) and r = diag(u^) K' v^:

    max_ij |log P^_ij - log P*_ij| <= beta = d_H(r, a) (e^{Dbar/2} + 1) / 2,     Dbar >= Delta,

with the upper bound Dbar = min(sum of the two largest row ranges, the same for columns) / eps of a
cost with the same K' (a cross difference C_jk + C_il - C_ik - C_jl is at most the ranges of rows i
and j, or of columns k and l, added; 0 when i = j or k = l).

Hypotheses, checked first: the problem's (:mod:`proofs.checkers.sinkhorn.problem`); u^ is n positive binary64
values; the recorded recipe applies: ``integers`` (C = Z/D, Z in int64, C' = Z'/D exactly in
integers, Z' < 2^53) or ``floats`` (every C_ij a binary64 value).

The evaluation, every float operation an IEEE operation on normal numbers (u = 2^-53,
gamma_k = k u / (1 - k u); Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002):

* the exponent y = C'/eps, with its rounding corrected: ``integers``: t = Z' (C' = Z'/D), s = 1/(D eps);
  ``floats``: t1 + e1 = C - alpha and t + e2 = t1 - beta~ exactly (Knuth's TwoSum; beta~_j = min_i t1_ij, the
  shift alpha_i + beta~_j), e = fl(e1 + e2), s = 1/eps. Then ỹ = fl(t fl(s)), its rounding error r computed
  (Dekker's product) with |y - ỹ - r| <= R, and K~ = fl(exp_neg(ỹ) fl(1 - r)), so that K'/K~ lies in
  phi = [e^-E / (1 + delta_exp), e^E / (1 - delta_exp)], E = R + 2 max r^2 + 2u/(1 - u)
  (:func:`exact.roundoff.shifted_exponent`, :func:`exact.roundoff.corrected_exp_neg`): about u whatever the
  exponent's size;
* K~ = F + E with F its first two base-2^32 digits, 0 <= E < 2^-63; F^T u^ and F v~ are exact BLAS
  products (:mod:`exact.slices`) rounded once to doubles with relative error gamma_{q-1}; with the tail
  L = min(K~, 2^-62) >= E, phi_lo (F^T x - L^T x) <= K'^T x <= phi_hi (F^T x + L^T x) for x >= 0, and
  tau >= max_j (L^T x)_j / (F^T x)_j from the float ratio (a BLAS sum of non-negative terms, gamma_n in any order,
  plus 2^-1075 for each product, and the quotient, below the normal range: :func:`exact.roundoff.underflow_charge`);
* v~ = fl(fl(b) / s~), s~ the rounded F^T u^; q~ = fl(fl(u^ t~) / fl(a)), t~ the rounded F v~;
* hence q_i = r_i / a_i lies in q~_i times a ball Q formed in arb from phi (twice), the two gammas,
  the tails [1 - tau, 1 + tau] and five roundings, and
  d_H(r, a) <= log(max q~ Q_hi / (min q~ Q_lo)).

The recipe is the prover's, operation for operation, so the doubles are the same and so is beta; the
recorded bound must be at least this beta. This module shares only :mod:`exact` with the prover.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from flint import arb, ctx, fmpq

from attncert.exact.numberfiles import is_double
from attncert.exact.roundoff import EXP_MAX, LARGEST, SMALLEST_NORMAL, U, Factor, corrected_exp_neg, exact, exp_error, float_of, gamma, shifted_exponent, two_sum, underflow_charge
from attncert.exact.slices import MatrixDigits, float_value, vector_digits
from attncert.proofs.checkers.sinkhorn.problem import BallCost, HypothesisError, PlanEnclosure, Problem, shifted_integers

BITS = 192
RECIPES = ("integers", "floats")
#: A sum's tail: min(K~, TAIL), which is >= the digits' truncation (< 2^-63).
TAIL = 2.0**-62


def _normal(x: np.ndarray, what: str) -> None:
    if not (x.min() >= SMALLEST_NORMAL and np.isfinite(x).all()):
        raise HypothesisError(f"{what} leaves float64's normal range: the float-verified bound does not apply")


def _kernel(p: Problem, recipe: str) -> tuple[np.ndarray, fmpq, fmpq]:
    """K~, the bound E of its factor phi (module docstring) and Dbar, by the recipe."""
    if isinstance(p.C, BallCost):
        raise HypothesisError("the float-verified method needs a rational cost")
    if recipe == "integers":
        Z, den = shifted_integers(p, "float-verified")
        if int(Z.max()) >= 2**53:
            raise HypothesisError("the shifted cost's numerators reach 2^53 (recipe 'integers')")
        s = fmpq(1) / (fmpq(int(den)) * p.eps)
        t, e = Z.astype(np.float64), None
        spread = min(_top_two(Z.max(1)), _top_two(Z.max(0))) * s
    elif recipe == "floats":
        bad = next((x for row in p.C for x in row if not is_double(x)), None)
        if bad is not None:
            raise HypothesisError(f"the cost entry {bad} is not a binary64 value (recipe 'floats')")
        C = np.array([[float(x) for x in row] for row in p.C], dtype=np.float64)
        alpha = C.min(1)
        t1, e1 = two_sum(C, -alpha[:, None])
        t, e2 = two_sum(t1, -t1.min(0)[None, :])
        if not (np.isfinite(t).all() and np.isfinite(e1).all() and np.isfinite(e2).all()):
            raise HypothesisError("the shifted cost leaves float64's range")
        e = e1 + e2
        s = 1 / p.eps
        with np.errstate(over="ignore"):
            cols = C.max(0) - C.min(0)  # may overflow where the rows' ranges do not: then the rows' bound alone
        rows = _top_two(C.max(1) - alpha)
        spread = (min(rows, _top_two(cols)) if np.isfinite(cols).all() else rows) / (1 - U) / p.eps
    else:
        raise HypothesisError(f"unknown float-verified recipe {recipe!r:.20}")
    if s > LARGEST or not float_of(s) >= SMALLEST_NORMAL:
        raise HypothesisError("the exponent's scale 1/eps (or 1/(D eps)) is outside float64's normal range")
    try:
        y, r, R = shifted_exponent(t, e, s)
        if not y.max() <= EXP_MAX:
            raise ValueError(f"the kernel reaches e^-{float(y.max()):.4g}")
        K, E = corrected_exp_neg(y, r, R)
    except ValueError as err:
        raise HypothesisError(f"{err}: not certified in float64") from None
    return K, E, spread


def _top_two(x: np.ndarray) -> fmpq:
    if len(x) < 2:
        return fmpq(0)
    top = np.sort(x)[-2:]
    return exact(top[0]) + exact(top[1])


def _tail(ratio: float, g: fmpq, terms: int, absolute: fmpq) -> Factor:
    """[1 - tau, 1 + tau] for a sum whose tail (entries min(K~, 2^-62)) over its digit sum is at most tau, bounded
    from the float ratio (one division, a BLAS sum of ``terms`` non-negative terms, the digit sum's g) and the
    absolute error of its products and quotient below the normal range (:func:`exact.roundoff.underflow_charge`)."""
    tau = arb(exact(ratio)) * (1 + arb(g)) / ((1 - arb(U)) * (1 - arb(gamma(terms))))
    if absolute:
        tau += arb(absolute) * (1 + arb(g)) / (1 - arb(gamma(terms)))
    if not tau < 1:
        raise HypothesisError("the kernel's tail outweighs the sums: the float-verified bound does not apply")
    return Factor.between(1 - tau, 1 + tau)


@dataclass(frozen=True)
class FloatEvaluation:
    """The float-verified evaluation at a witness u^ (module docstring): what both theorems built on it need."""

    K: np.ndarray  # K~
    u: np.ndarray  # u^ (doubles)
    v: np.ndarray  # v~ = fl(b~ / s~), with v^ in v~ * v_ball
    a: np.ndarray  # a~, b~: the doubles nearest a and b
    b: np.ndarray
    phi: Factor  # K'_ij / K~_ij, entry by entry
    v_ball: Factor
    q_lo: arb  # q_lo <= min_i r_i / a_i, max_i r_i / a_i <= q_hi
    q_hi: arb
    spread: fmpq  # Dbar >= Delta
    #: The balanced evaluation's column scaling y (:func:`balanced_evaluation`), or None: where its K^_ij is below
    #: 2^-1022 (a product that underflowed), K2_ij is not within phi of K^_ij but in [0, (2^-1020 y_j + 2^-1021) phi_hi].
    scale: np.ndarray | None = None

    def balls(self, log_error: arb) -> list[list[tuple[arb, arb]]]:
        """Intervals [lo, hi] (exact endpoints, each rounded outward at the working precision) containing P* when
        max |log P^ - log P*| <= log_error: diag(u^) K~ phi diag(v~ v_ball) e^[-, +]; on the balanced kernel, an entry
        whose K^ is below 2^-1022 has [0, (2^-1020 y_j + 2^-1021) phi_hi v~_j v_ball_hi e^log_error] (P* > 0 everywhere:
        0 alone would exclude it). Endpoints, not arb balls: a ball's radius is rounded to 30 bits, and the recorded
        balls must contain the recomputed enclosure (runs.contains_all), which equal enclosures rounded apart did not."""
        factor = self.phi * self.v_ball * Factor((-log_error).exp(), log_error.exp())
        vb = [arb(x) for x in self.v.tolist()]
        out = [
            [((arb(ui) * arb(k) * vj * factor.lo).lower(), (arb(ui) * arb(k) * vj * factor.hi).upper()) for k, vj in zip(row_k, vb)]
            for ui, row_k in zip(self.u.tolist(), self.K.tolist())
        ]
        if self.scale is not None:
            for i, j in zip(*np.nonzero(self.K < SMALLEST_NORMAL)):
                top = ((arb(2) ** -1020 * arb(float(self.scale[j])) + arb(2) ** -1021) * factor.hi * vb[j] * arb(float(self.u[i]))).upper()
                out[i][j] = (arb(0), top)
        return out


def float_evaluation(p: Problem, u: list[fmpq], recipe: str) -> FloatEvaluation:
    """The evaluation from the witness u^ by the recorded recipe (module docstring); HypothesisError where it does not apply."""
    u_f = _witness(u, p.n, "u")
    K, E, spread = _kernel(p, recipe)
    with ctx.workprec(BITS):
        d = arb(exp_error())
        phi = Factor((-arb(E)).exp() / (1 + d), arb(E).exp() / (1 - d))
    return _evaluate(p, K, phi, np.minimum(K, TAIL), u_f, spread)


def balanced_evaluation(p: Problem, x: list[fmpq], y: list[fmpq], recipe: str) -> FloatEvaluation:
    """The evaluation for the witness x on the balanced kernel K2 = diag(x) K' diag(y) (witness 1 there): K^ =
    fl(fl(x K~) y), K2 in K^ phi (1 +- gamma_2)^-1 entrywise, a product fl(x K~) below 2^-1022 taken as 0 with the tail
    entry 2^-1020 y_j rounded up (above K2_ij / phi_hi), a normal fl(x K~) whose product with y_j is below 2^-1022 as 0 with the
    tail 2^-1021; every column needs a product above 2^-900. P^ = diag(1) K2 diag(b / K2^T 1)
    is the plan of the witness x on K'."""
    x_f, y_f = _witness(x, p.n, "u"), _witness(y, p.m, "v")
    K, E, spread = _kernel(p, recipe)
    t = x_f[:, None] * K
    if not (t.max(axis=0) >= 2.0**-900).all():
        raise HypothesisError("a column of the balanced kernel is all below 2^-900: the balanced evaluation does not apply")
    under = t < 2.0**-1022
    t[under] = 0.0
    with np.errstate(over="ignore"):
        t *= y_f[None, :]
    if not (np.isfinite(t).all() and t.max() < 2.0):
        raise HypothesisError("the balanced kernel leaves [0, 2)")
    # fl(x K~) normal but its product with y_j below 2^-1022: not within a relative u of x K~ y_j, so 0 in K^ with the
    # tail 2^-1021 (the exact product is below 2^-1022 + 2^-1075, and K2_ij / phi_hi below that over 1 - u)
    low = t < 2.0**-1022
    t[low] = 0.0
    # 2^-1020 y_j rounded up: below the normal range the product rounds, to 0 for y_j < 2^-55 (an uncharged tail)
    tail = np.where(under, np.nextafter(2.0**-1020 * y_f[None, :], np.inf), np.where(low, 2.0**-1021, np.minimum(t, TAIL)))
    with ctx.workprec(BITS):
        d = arb(exp_error())
        phi = Factor((-arb(E)).exp() / (1 + d), arb(E).exp() / (1 - d)) / Factor.within(gamma(2))
    return replace(_evaluate(p, t, phi, tail, np.ones(p.n), spread), scale=y_f)


def _witness(u: list[fmpq], size: int, name: str) -> np.ndarray:
    if len(u) != size:
        raise HypothesisError(f"the witness {name} has {len(u)} entries, not {size}")
    if not all(x > 0 and is_double(x) for x in u):
        raise HypothesisError(f"the float-verified witness {name} is not positive binary64 values")
    return np.array([float(x) for x in u])


def _evaluate(p: Problem, K: np.ndarray, phi: Factor, tail: np.ndarray, u_f: np.ndarray, spread: fmpq) -> FloatEvaluation:
    """Steps 2-5 (module docstring) on the kernel doubles K with K'/K in phi entrywise, the digits' truncation (and an
    underflowed entry of a balanced kernel) bounded by tail."""
    a_f = np.array([float_of(x) for x in p.a])
    b_f = np.array([float_of(x) for x in p.b])
    for x, what in ((u_f, "u"), (a_f, "a"), (b_f, "b")):
        _normal(x, what)
    F = MatrixDigits.of(K, 2, 1)
    try:
        kn, km = F.vector_bits(True), F.vector_bits()
        Xu, fu = vector_digits(u_f, kn)
        s, g1 = float_value(F.products(Xu, transpose=True), 1 + fu, kn)
        _normal(s, "K^T u")
        v = b_f / s
        _normal(v, "b / K^T u")
        Xv, fv = vector_digits(v, km)
        t, g2 = float_value(F.products(Xv), 1 + fv, km)
    except ValueError as e:  # digits or scales beyond what exact products in float64 hold
        raise HypothesisError(f"the float-verified evaluation does not apply: {e}") from None
    _normal(t, "K v")
    q = u_f * t
    _normal(q, "u^ K v")  # below the normal range fl(u^ t~) is off by up to 2^-1075, not a relative u (masses near 2^-1022)
    q /= a_f
    _normal(q, "the row sums over a")
    with np.errstate(all="ignore"):
        tail_c, tail_r = float(np.max((tail.T @ u_f) / s)), float(np.max((tail @ v) / t))
    if not (np.isfinite(tail_c) and np.isfinite(tail_r)):
        raise HypothesisError("the kernel's tails leave float64's range")
    with ctx.workprec(BITS):
        r = Factor.within(U)  # one rounding
        col = phi / Factor.within(g1) * _tail(tail_c, g1, p.n, underflow_charge(tail_c, tail, u_f, s))
        v_ball = (r * r * col).inverse()
        row = phi * v_ball / Factor.within(g2) * _tail(tail_r, g2, p.m, underflow_charge(tail_r, tail, v, t))
        Q = row * r * r * r
        q_lo, q_hi = arb(exact(q.min())) * Q.lo, arb(exact(q.max())) * Q.hi
    return FloatEvaluation(K, u_f, v, a_f, b_f, phi, v_ball, q_lo, q_hi, spread)


def float_hilbert_enclosure(p: Problem, u: list[fmpq], recipe: str, plan: bool = True) -> PlanEnclosure:
    """beta from the witness u^ by the recorded recipe (module docstring), and, with ``plan``, balls containing P*."""
    ev = float_evaluation(p, u, recipe)
    with ctx.workprec(BITS):
        d_h = (ev.q_hi / ev.q_lo).log().upper()
        beta = (d_h * ((arb(ev.spread) / 2).exp() + 1) / 2).upper()
        balls = ev.balls(beta) if plan else []
    return PlanEnclosure(balls, beta.fmpq())
