r"""Float-verified Sinkhorn: float64 iterations as POT runs them, certified a posteriori in float64 with proven rounding errors.

The theorem is the Hilbert bound of :mod:`constructions.sinkhorn.hilbert`, for the shifted kernel K' of
:mod:`constructions.sinkhorn.shifted` (same Sinkhorn plan, same Delta): for any positive u^, with
v^ = b / (K'^T u^) (so P^ = diag(u^) K' diag(v^) has column sums b) and r = P^ 1,

    max_ij |log P^_ij - log P*_ij| <= beta = d_H(r, a) (e^{Delta/2} + 1) / 2,

Delta replaced by the upper bound of :attr:`ShiftedKernel.delta`. What is new is how beta is evaluated:
in float64, vectorised, with every rounding bounded a priori (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., 2002, ch. 2-4; Rump, "Verification methods: rigorous results using
floating-point arithmetic", Acta Numerica 19 (2010) 287-449), and only the final scalars in arb:

1. K' in K~ * phi entrywise (phi a ball, :mod:`~constructions.sinkhorn.shifted`: the exponent's rounding
   corrected, so phi is about 1 +- 1.5e-15 whatever ỹ). K~ = F + E with F its first two base-2^32 digits and
   0 <= E < 2^-63 (:class:`exact.slices.MatrixDigits`). With the tail L = min(K~, 2^-62) (>= E):

       phi_lo (F^T x - L^T x)  <=  K'^T x  <=  phi_hi (F^T x + L^T x)     (x >= 0),

   so (K'^T x)_j lies in (F^T x)_j phi [1 - tau, 1 + tau], tau >= max_j (L^T x)_j / (F^T x)_j
   (the tail is a BLAS product of non-negative terms, within gamma_n in any order; one division; a product or the
   quotient below the normal range off by 2^-1075 more: :func:`exact.roundoff.underflow_charge`).
2. u^ (the witness: the float iterate, exact doubles, normalised to max 1) and F^T u^ exactly by BLAS
   (:mod:`exact.slices`), rounded once to the doubles s~ with |s~ / F^T u^ - 1| <= gamma_{q-1}. Hence
   (K'^T u^)_j in s~_j * phi * (1 +- gamma)^-1 * [1 - tau_c, 1 + tau_c].
3. v~ = fl(fl(b) / s~): v^_j = v~_j / ((1 + e_b)(1 + e_d) c_j), |e| <= u, c_j the factor of step 2.
4. F v~ exactly, rounded to t~; (K' v^)_i in t~_i * phi * V * (1 +- gamma)^-1 * [1 - tau_r, 1 + tau_r].
5. q~ = fl(fl(u^ t~) / fl(a)); q_i = r_i / a_i lies in q~_i * Q, Q the product of the factors above and
   (1 +- u)^3, so d_H(r, a) <= log(max q~ Q_hi / (min q~ Q_lo)).

Every float operation above is an IEEE operation on normal numbers (checked: otherwise
:class:`~constructions.sinkhorn.shifted.UnsupportedKernel`, and the caller uses arb), the products
are exact and their rounding is done in one fixed order, so the evaluation is deterministic: the
checker (:mod:`proofs.checkers.sinkhorn.float_hilbert`) repeats it from u^ and the inputs alone and finds the
same beta. The recorded bound is beta (1 + 2^-30) rounded up to 24 significant bits, which absorbs
any difference in the last bits of the final arb scalars.

The bound reached is limited by float64: d_H cannot go below the width of Q, about 10 u plus the
kernel's error (about 1e-14 in all), times 1/(1 - lambda). Below that, use the high-precision path.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn.shifted import BOUND_BITS, TAIL, ShiftedKernel, UnsupportedKernel
from attncert.exact.roundoff import LARGEST, SMALLEST_NORMAL, U, Factor, exact, float_of, gamma, underflow_charge
from attncert.exact.slices import MAX_DIGITS, MatrixDigits, float_value, grid_floor, vector_digits

#: The kernel's digits: two of 32 bits (entries of [0, 2) to 2^-63).
KERNEL_DIGITS = 2
#: Float iterations without halving the best estimate before the iteration is taken as stalled (its float floor).
STALL = 10
#: The iteration stops once its estimated bound is below this fraction of tol (the certified one is a little larger).
MARGIN = 4
#: Significant bits of a recorded bound (rounded up).
RECORD_BITS = 24


@dataclass(frozen=True)
class FloatBound:
    """The evaluation of the Hilbert bound for the witness u^: what a plan enclosure needs, and beta."""

    u: np.ndarray  # u^, doubles (the witness)
    v: np.ndarray  # v~, doubles, with v^ in v~ * v_factor entrywise
    v_factor: Factor
    rows: np.ndarray  # t~ = fl(F v~) ...
    row_factor: Factor  # ... with (K' v^)_i in t~_i * row_factor
    d_h: arb  # an upper bound on d_H(r, a)
    bound: fmpq  # beta, as recorded: >= d_H (e^{Delta/2} + 1) / 2
    q_range: tuple[arb, arb]  # lo <= min_i r_i / a_i and max_i r_i / a_i <= hi (the ratios' enclosure)


def round_up(x: arb, bits: int = RECORD_BITS) -> fmpq:
    """A short dyadic >= x (1 + 2^-30): ``bits`` significant bits, rounded up."""
    with ctx.workprec(BOUND_BITS):
        q = (x * (1 + arb(2) ** -30)).upper().fmpq()
    if q <= 0:
        return fmpq(0)
    e = int(q.p).bit_length() - int(q.q).bit_length() - bits  # q / 2^e has about `bits` bits
    scaled = q / fmpq(2) ** e if e >= 0 else q * fmpq(2) ** -e
    ceil = -(-int(scaled.p) // int(scaled.q))
    return fmpq(ceil) * fmpq(2) ** e if e >= 0 else fmpq(ceil, 2**-e)


def _normal(x: np.ndarray, what: str) -> None:
    if not (x.min() >= SMALLEST_NORMAL and np.isfinite(x).all()):
        raise UnsupportedKernel(f"{what} leaves float64's normal range")


def _digits(x: np.ndarray, width: int, what: str) -> tuple[np.ndarray, int]:
    """The exact digits of x (:func:`exact.slices.vector_digits`), or UnsupportedKernel."""
    try:
        return vector_digits(x, width)
    except ValueError as e:
        raise UnsupportedKernel(f"{what}: {e}") from None


def witness_point(u: np.ndarray) -> np.ndarray:
    """u itself when its digits are exact within MAX_DIGITS, else u rounded down onto that grid, its zeros raised to
    the grid's step: any positive vector is a witness, and the one certified is the one recorded."""
    try:
        vector_digits(u, 8)
        return u
    except ValueError:
        y = grid_floor(u, 8, MAX_DIGITS)
        return np.maximum(y, 2.0 ** (int(np.frexp(u.max())[1]) - 8 * MAX_DIGITS))


def _float_value(R: list[np.ndarray], exponent: int, width: int) -> tuple[np.ndarray, fmpq]:
    try:
        return float_value(R, exponent, width)
    except ValueError as e:
        raise UnsupportedKernel(str(e)) from None


def hilbert_float_bound(K: ShiftedKernel, u: np.ndarray, a: Sequence[fmpq], b: Sequence[fmpq], af: np.ndarray, bf: np.ndarray) -> FloatBound:
    """Steps 1-5 of the module docstring for the witness u (positive doubles); UnsupportedKernel where a step
    leaves the normal range. ``af``, ``bf`` are the doubles nearest a and b."""
    n, m = K.shape
    _normal(u, "the witness")
    F = MatrixDigits.of(K.K, KERNEL_DIGITS, 1)
    try:
        kn, km = F.vector_bits(True), F.vector_bits()
    except ValueError as e:  # more than 2^13 rows or columns: the digit products are not exact in float64
        raise UnsupportedKernel(str(e)) from None
    Xu, fu = _digits(u, kn, "the witness")
    s, g1 = _float_value(F.products(Xu, transpose=True), 1 + fu, kn)
    _normal(s, "K^T u")
    v = bf / s
    _normal(v, "b / K^T u")
    Xv, fv = _digits(v, km, "b / K^T u")
    t, g2 = _float_value(F.products(Xv), 1 + fv, km)
    _normal(t, "K v")
    q = u * t
    _normal(q, "u K v")  # below the normal range fl(u t~) is off by up to 2^-1075, not a relative u (masses near 2^-1022)
    q /= af
    _normal(q, "the row sums over a")
    tail = np.minimum(K.K, TAIL) if K.tail is None else K.tail  # >= K~ - F (digits past 2^-63)
    with np.errstate(all="ignore"):
        tail_c = float(np.max((tail.T @ u) / s))  # fl(fl(tail^T u) / s~): the column tails over the digit sums
        tail_r = float(np.max((tail @ v) / t))
    if not (np.isfinite(tail_c) and np.isfinite(tail_r)):
        raise UnsupportedKernel("the kernel's tails leave float64's range")
    with ctx.workprec(BOUND_BITS):
        rounding = Factor.within(U)
        col_factor = K.factor * Factor.within(g1).inverse() * _tail(tail_c, g1, n, underflow_charge(tail_c, tail, u, s))  # (K'^T u^)_j / s~_j
        v_factor = (rounding**2 * col_factor).inverse()  # v^_j / v~_j
        row_factor = K.factor * v_factor * Factor.within(g2).inverse() * _tail(tail_r, g2, m, underflow_charge(tail_r, tail, v, t))  # (K' v^)_i / t~_i
        Q = row_factor * rounding**3
        q_lo, q_hi = arb(exact(q.min())) * Q.lo, arb(exact(q.max())) * Q.hi
        d_h = (q_hi / q_lo).log().upper()
        beta = d_h * ((arb(K.delta) / 2).exp() + 1) / 2
    return FloatBound(u, v, v_factor, t, row_factor, d_h, round_up(beta), (q_lo, q_hi))


def _tail(ratio: float, g: fmpq, terms: int, absolute: fmpq) -> Factor:
    """The factor [1 - tau, 1 + tau] a sum's tail contributes (module docstring, step 1), tau an upper bound on
    max_j (tail^T x)_j / (F^T x)_j from the float ratio: one division, a BLAS sum of ``terms`` non-negative terms
    (gamma_terms, any order), the digit sum's own rounding g, and the absolute error of products and a quotient below
    the normal range (:func:`exact.roundoff.underflow_charge`)."""
    tau = arb(exact(ratio)) * (1 + arb(g)) / ((1 - arb(U)) * (1 - arb(gamma(terms))))
    if absolute:
        tau += arb(absolute) * (1 + arb(g)) / (1 - arb(gamma(terms)))
    if not tau < 1:
        raise UnsupportedKernel("the kernel's tail outweighs the sums (entries below 2^-62 carry them)")
    return Factor.between(1 - tau, 1 + tau)


def plan_error(G: np.ndarray, psi: Factor, v_max: float) -> fmpq:
    """An exact bound >= max |G_ij - P*_ij| when P*_ij lies in G_ij * psi (up to underflow: 2^-1075 (1 + v_max) more)."""
    with ctx.workprec(BOUND_BITS):
        w = max(psi.hi - 1, 1 - psi.lo, key=lambda t: t.mid())
        bound = arb(exact(G.max())) * w + arb(fmpq(1, 2**1075)) * (1 + arb(exact(v_max)))
        return bound.upper().fmpq()


# -- the float iterations ---------------------------------------------------------------------


@dataclass(frozen=True)
class FloatIterations:
    u: np.ndarray  # after the last column update (normalised to max 1)
    iterations: int
    estimate: float  # the last estimated d_H (float)


def float_sinkhorn(
    K: np.ndarray, af: np.ndarray, bf: np.ndarray, u0: np.ndarray | None, target: float, max_iter: int, halving: bool = True, stall: int = STALL
) -> FloatIterations:
    """u <- a / (K v), v <- b / (K^T u) (POT's iterations), until the estimated d_H(r, a) <= target, it stalls, or max_iter.

    After each column update the row sums are r = u (K v), computed with the next row update's K v, so the
    estimate log(max r/a / min r/a) costs nothing extra. Float only: the bound is certified afterwards.
    Stalled: ``stall`` iterations without halving the best estimate (``halving``), or without lowering it at all
    (a slow but steady iteration at small eps goes on: only the float floor stops it).
    """
    u = np.ones(len(af)) if u0 is None else u0
    best, since, it, est = math.inf, 0, 0, math.inf
    with np.errstate(all="ignore"):
        v = bf / (K.T @ u)
        while True:
            Kv = K @ v
            q = u * Kv / af
            est = float(np.log(q.max() / q.min()))
            if not np.isfinite(est) or est <= target or it >= max_iter:
                break
            best, since = (est, 0) if est < (best / 2 if halving else best) else (best, since + 1)
            if since >= stall:
                break
            u = af / Kv
            v = bf / (K.T @ u)
            it += 1
    return FloatIterations(u / u.max(), it, est)


# -- the result -------------------------------------------------------------------------------


class FactoredPlan(Sequence):
    """The balls u_i K~_ij v_j * f (f a Factor), as rows of arb, formed when first read (like :class:`ScaledKernel`).

    ``scale``: the column scaling y of a balanced kernel (:func:`constructions.sinkhorn.convexity.balanced`), whose
    entries K^ below 2^-1022 (products that underflowed) are not within the factor of the true ones: each of them has
    the ball [0, (2^-1020 y_j + 2^-1021) f_hi u_i v_j] instead (the true entry is positive, and at most that)."""

    def __init__(self, u: np.ndarray, K: np.ndarray, v: np.ndarray, f: Factor, prec: int, scale: np.ndarray | None = None) -> None:
        self.u, self.K, self.v, self.f, self.prec, self.scale = u, K, v, f, prec, scale

    @cached_property
    def _rows(self) -> list[list[arb]]:
        with ctx.workprec(self.prec):
            f = self.f.ball()
            v = [arb(x) for x in self.v.tolist()]
            rows = [[arb(ui) * arb(k) * vj * f for k, vj in zip(row, v)] for ui, row in zip(self.u.tolist(), self.K.tolist())]
            if self.scale is not None:
                for i, j in zip(*np.nonzero(self.K < 2.0**-1022)):
                    top = ((arb(2) ** -1020 * arb(float(self.scale[j])) + arb(2) ** -1021) * self.f.hi * v[j] * arb(float(self.u[i]))).upper()
                    rows[i][j] = arb(top / 2, top / 2)
            return rows

    def __len__(self) -> int:
        return len(self.u)

    def __getitem__(self, i: Any) -> Any:
        return self._rows[i]

    def __iter__(self) -> Iterator[list[arb]]:
        return iter(self._rows)


@dataclass(frozen=True)
class FloatRun:
    """A float-verified run: the kernel, the iterations and the certified evaluation (None if a step left float64)."""

    kernel: ShiftedKernel
    iterations: FloatIterations
    evaluation: FloatBound | None
    reason: str  # why there is no evaluation ("" when there is one)
    #: The strong-convexity certificate (constructions/sinkhorn/convexity.py) whose bound replaced Hilbert's in the
    #: evaluation, or None for the Hilbert bound.
    convexity: Any = None
    #: (x, y): the witness's scalings of a balanced kernel diag(x) K' diag(y) (convexity.py), whose witness is then 1.
    balance: Any = None

    @property
    def bound(self) -> fmpq | None:
        return None if self.evaluation is None else self.evaluation.bound

    def widened(self, prec: int = 64) -> FactoredPlan:
        """Balls containing the Sinkhorn plan P*: diag(u^ [e^-beta, e^beta]) K' diag(v^)."""
        e = self.evaluation
        with ctx.workprec(BOUND_BITS):
            f = self.kernel.factor * e.v_factor * Factor.between((-arb(e.bound)).exp(), arb(e.bound).exp())
        return FactoredPlan(e.u, self.kernel.K, e.v, f, prec, None if self.balance is None else self.balance[1])

    def iterate(self, prec: int = 64) -> FactoredPlan:
        """Balls containing the computed plan P^ = diag(u^) K' diag(v^)."""
        e = self.evaluation
        with ctx.workprec(BOUND_BITS):
            f = self.kernel.factor * e.v_factor
        return FactoredPlan(e.u, self.kernel.K, e.v, f, prec, None if self.balance is None else self.balance[1])

    def float_plan(self) -> tuple[np.ndarray, fmpq]:
        """G = fl(fl(u^ K~) v~) (POT's float64 plan) and an exact bound >= max_ij |G_ij - P*_ij|.

        P* lies in G0 * phi * v_factor * [e^-beta, e^beta] with G0 = u^ K~ v~ exactly, and G is G0 within gamma_2
        (two roundings; a product that underflows adds at most 2^-1075, times max v~ for the first).
        """
        e = self.evaluation
        G = e.u[:, None] * self.kernel.K
        G *= e.v[None, :]
        with ctx.workprec(BOUND_BITS):
            psi = self.kernel.factor * e.v_factor * Factor((-arb(e.bound)).exp(), arb(e.bound).exp()) / Factor.within(gamma(2))
        return G, plan_error(G, psi, float(e.v.max()))

    def row_sums(self, prec: int = 64) -> list[arb]:
        """Balls containing P^ 1 = u^ (K' v^)."""
        e = self.evaluation
        with ctx.workprec(prec):
            f = e.row_factor.ball()
            return [arb(x) * arb(y) * f for x, y in zip(e.u.tolist(), e.rows.tolist())]


#: The high-precision path starts from float iterations run to this estimated d_H (or until they stall): two
#: Newton steps take it below 1e-30 (each squares the residual, up to the float solve's 1e-16 relative error).
START_TARGET = 1e-11


def float_start(K: ShiftedKernel, a: Sequence[fmpq], b: Sequence[fmpq], max_iter: int = 10_000, u0: np.ndarray | None = None) -> FloatIterations:
    """Float iterations (from u0, else ones) to START_TARGET or their floor: a starting point for the high-precision path."""
    return float_sinkhorn(K.K, np.array([float_of(x) for x in a]), np.array([float_of(x) for x in b]), u0, START_TARGET, max_iter)


def float_verified(
    K: ShiftedKernel, a: Sequence[fmpq], b: Sequence[fmpq], tol: fmpq, u0: np.ndarray | None = None, max_iter: int = 10_000
) -> FloatRun:
    """Iterate in float64 until the estimated bound is below tol / MARGIN (or the float floor), then certify."""
    af = np.array([float_of(x) for x in a])
    bf = np.array([float_of(x) for x in b])
    with ctx.workprec(BOUND_BITS):
        gap = float(((arb(K.delta) / 2).exp() + 1) / 2)
    target = float_of(min(tol, LARGEST)) / (MARGIN * gap) if gap < math.inf else 0.0  # a tol beyond the doubles: the largest
    its = float_sinkhorn(K.K, af, bf, u0, target, max_iter)
    try:
        return FloatRun(K, its, hilbert_float_bound(K, witness_point(its.u), a, b, af, bf), "")
    except UnsupportedKernel as e:
        return FloatRun(K, its, None, str(e))
