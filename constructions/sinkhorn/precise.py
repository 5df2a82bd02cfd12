r"""High-precision Sinkhorn (tolerances like 1e-30) with the n m work in exact BLAS products, not in arb objects.

The theorem is the Hilbert bound for the shifted kernel K' (:mod:`constructions.sinkhorn.shifted`):
for a positive dyadic witness u^, v^ = b / (K'^T u^) and r = diag(u^) K' v^,
max |log P^ - log P*| <= d_H(r, a) (e^{Dbar/2} + 1) / 2, Dbar >= Delta. For an integer cost C = Z/D,
K'_ij = w^{Z'_ij} with w = e^-s, s = 1/(D eps), Z' >= 0 integers.

**The kernel in fixed point.** For the distinct values z_0 < z_1 < ... of Z', with gaps g_k = z_k - z_{k-1}
(g_0 = z_0), integers W_g with W_g <= w^g 2^Q < W_g + 2 (from arb, checked) and the chain
N_0 = W_{g_0}, N_k = floor(N_{k-1} W_{g_k} / 2^Q) give

    N_k <= w^{z_k} 2^Q  and  w^{z_k} 2^Q - N_k <= 3 (k + 1)

(by induction: N_{k-1} W / 2^Q - 1 >= (w^{z_{k-1}} 2^Q - d)(w^g 2^Q - 2) / 2^Q - 1 >= w^{z_k} 2^Q - d - 3).
With Q = 24 S - 1 + G and 3 (number of values) <= 2^G, F_z = floor(N_z / 2^G) satisfies

    F_z 2^{1 - 24 S} <= K'_z < (F_z + 2) 2^{1 - 24 S},

so K' = F + E with 0 <= E < 2^{2 - 24 S}, F held as S base-2^24 digits (:class:`exact.slices.MatrixDigits`).

**A float64 cost** (:func:`float_fixed_kernel`, for the strong-convexity bound of
:mod:`constructions.sinkhorn.precise_convexity`): K' entry by entry in fixed point by
:func:`exact.fixed_exp.fixed_exp_neg` (24-bit digits in float64 arrays, a proven absolute error), lowered by that
error so that again K' = F + E with 0 <= E < error; no table (its distinct values are about n m).

**An iteration** (:func:`evaluate`), in exact integers: u^ = U 2^-L; F^T U and F V are exact products in
BLAS (:mod:`exact.slices`), read as Python integers, so (K'^T u^)_j lies in [S_j, S_j + dS] (in units,
dS the truncation E's share); v~ = V 2^-kv... with V_j = floor(B_j 2^kv / S_j) differs from
v^_j = b_j / (K'^T u^)_j by a factor in [min S / (min S + dS), 1 + 1 / min V]; and u^_i (F V)_i / a_i,
floored and ceiled on a grid of 2^-(prec + 8) relative, bound the ratios r_i / a_i up to one common constant,
hence d_H(r, a), with one logarithm in arb. Nothing with n m entries becomes a Python object. Until
beta <= tol, u^ takes a Newton step for the row sums, solved in float64 (dense for n <= :data:`DENSE_NEWTON`,
else by the fixed-point iteration delta <- A B^T delta - 1 w^T delta - s, two float products with the kernel
each), from the float iterations of :mod:`constructions.sinkhorn.verified`.
The step only chooses the next point; the bound is a posteriori.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.linalg
from flint import arb, ctx, fmpq, fmpz

from attncert.constructions.sinkhorn.hilbert import a_posteriori_bound
from attncert.constructions.sinkhorn.kernel import ball_array
from attncert.constructions.sinkhorn.scaled import ScaledKernel
from attncert.constructions.sinkhorn.shifted import ShiftedKernel, UnsupportedKernel
from attncert.constructions.sinkhorn.verified import plan_error
from attncert.exact.fixed_exp import fixed_exp_neg, normalise
from attncert.exact.roundoff import U as UNIT, Factor, gamma, two_sum
from attncert.exact.slices import MatrixDigits, integer_digits, integer_value, table_digits

#: Bits per digit of the kernel: with 24, vectors take 16-bit digits up to 2^13 rows (24 + 16 + 13 = 53), so
#: each product is about S T = (prec / 24) (prec / 16) float products (32 and 8 would make it prec^2 / 256).
KERNEL_BITS = 24
#: Newton's linear system is solved densely up to this n (O(n^3)), iteratively beyond.
DENSE_NEWTON = 64
#: Iterations of the fixed-point solve of Newton's system, at most.
NEWTON_SWEEPS = 200
#: Evaluations of the bound (each after a Newton step), at most.
MAX_EVALUATIONS = 8


@dataclass(frozen=True)
class FixedKernel:
    """K' = F + E, 0 <= E < error, F = 2^exponent sum_s digits[s] 2^(-24 (s+1)) (module docstring), and the table
    behind it (an integer cost; None for a float cost's kernel, :func:`float_fixed_kernel`)."""

    digits: MatrixDigits
    error: fmpq
    values: np.ndarray | None  # the distinct z, increasing
    fixed: list[int] | None  # F_z (value F_z 2^(1 - 24 S)) for each of them
    where: np.ndarray | None  # Z' as positions in ``values``


def fixed_kernel(K: ShiftedKernel, count: int) -> FixedKernel:
    """F for an integer cost, with ``count`` digits of 24 bits (module docstring).

    The values z are the distinct ones of Z', found by counting when max Z' is at most a few times the number of
    entries, else by sorting."""
    top = int(K.index.max())
    if top < 4 * K.index.size:
        present = np.bincount(K.index.ravel(), minlength=top + 1) > 0
        values = np.flatnonzero(present)
        where = np.take(np.cumsum(present) - 1, K.index)  # intp: the gathers would convert it each time
    else:
        values, where = np.unique(K.index, return_inverse=True)
    guard = (3 * len(values)).bit_length()
    Q = KERNEL_BITS * count - 1 + guard
    gaps = np.diff(values, prepend=0).tolist()
    W = {}
    with ctx.workprec(Q + 64):
        for g in set(gaps):
            t = (-arb(K.scale) * g).exp() * arb(2) ** Q
            lo, hi = int(t.lower().floor().unique_fmpz()), t.upper()
            if not hi < lo + 2:
                raise ArithmeticError("the kernel's fixed-point multiplier is not resolved at this precision")
            W[g] = lo
    N = W[gaps[0]]
    chain = [N >> guard]
    append = chain.append
    for w in [W[g] for g in gaps[1:]]:
        N = N * w >> Q
        append(N >> guard)
    table = table_digits(chain, count, KERNEL_BITS)
    return FixedKernel(MatrixDigits.of_table(table, where.reshape(K.shape), 1, KERNEL_BITS), fmpq(2) ** (2 - KERNEL_BITS * count), values, chain, where)


def float_fixed_kernel(C: np.ndarray, eps: fmpq, bits: int) -> FixedKernel:
    """F for a float64 cost C (the doubles' exact values) to about ``bits`` bits: the shift of
    :mod:`constructions.sinkhorn.shifted` (alpha, beta~; C' = t + e1 + e2 exactly by TwoSum), K' in fixed point by
    :func:`exact.fixed_exp.fixed_exp_neg` (|K - K'| <= eps_K), lowered by e' = eps_K rounded up to its last digit:
    F = max(K - e', 0) <= K' <= F + 2 e'. Digits of 24 bits with the integer part first (exponent 24)."""
    alpha = C.min(1)
    t1, e1 = two_sum(C, -alpha[:, None])
    t, e2 = two_sum(t1, -t1.min(0)[None, :])
    del t1  # n m doubles: the fixed-point digits below are S times that
    S = -(-(bits + 10) // KERNEL_BITS) + 1  # the integer digit, and 10 bits for fixed_exp's few hundred ulps
    try:
        fx = fixed_exp_neg(t, e1, e2, 1 / eps, S)
    except (ValueError, ArithmeticError) as e:  # beyond its fields or digits, or a table entry not resolved
        raise UnsupportedKernel(f"the kernel in fixed point: {e}") from None
    del t, e1, e2
    units = int((fx.error / fx.ulp).ceil())  # e' in ulps, an integer
    D = fx.digits
    D[-1] -= float(units)
    normalise(D)
    if (D[0] < 0).any():
        D[:, D[0] < 0] = 0.0
    return FixedKernel(MatrixDigits(list(D), KERNEL_BITS, KERNEL_BITS), 2 * units * fx.ulp, None, None, None)


def _exact_products(F: MatrixDigits, ints: np.ndarray, transpose: bool) -> tuple[np.ndarray, int]:
    """F x (or F^T x) for x = ints 2^0 (integers >= 0) exactly: (values, g) with (F x)_i = values_i 2^g (object arrays)."""
    width = F.vector_bits(transpose)
    count = max(1, -(-max(ints).bit_length() // width))
    R = F.products(integer_digits(ints.tolist(), width, count), transpose)
    v, g = integer_value(R, width, F.width)
    return np.array(v, dtype=object), g + F.exponent + width * count


def _floor_shift(x: float, L: int) -> int:
    """floor(x 2^L) for a double x >= 0, exactly (an entry far below the largest keeps its own bits: ldexp(x, 53)
    first made every entry below 2^-53 one unit at that scale)."""
    p, q = x.as_integer_ratio()  # q a power of two
    return p << L >> (q.bit_length() - 1) if L >= 0 else p >> (q.bit_length() - 1 - L)


def _ceil_shift(x: int, g: int) -> int:
    """ceil(x 2^g) for integers x >= 0, g (any sign)."""
    return x << g if g >= 0 else -((-x) >> -g)


@dataclass(frozen=True)
class Marginal:
    """A marginal as integers over one denominator, x_i = N_i / D (object array N)."""

    N: np.ndarray
    D: int

    @classmethod
    def of(cls, xs: Sequence[fmpq]) -> Marginal:
        D = math.lcm(*(int(x.q) for x in xs))
        return cls(np.array([int(x.p) * (D // int(x.q)) for x in xs], dtype=object), D)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of the bound at the witness u^ = U 2^-L, in integers (module docstring, "An iteration").

    v~ = V * v_scale exactly (dyadic up to the common 1/D of b), and v^ = v~ * v_ratio entrywise; the row sums are
    r_i = u^_i (K' v^)_i with (K' v~)_i in [T_i, T_i + t_err] t_scale.
    """

    U: np.ndarray
    L: int
    V: np.ndarray
    v_scale: fmpq
    v_ratio: Factor
    T: np.ndarray
    t_err: int
    t_scale: fmpq
    residual: np.ndarray  # s = r / a - 1 at the point values, float64 (for the next Newton step)
    bound: arb  # the Hilbert bound, or the bound a run's ``bound_of`` put in its place
    d_h: arb  # an upper bound on d_H(r, a) = log(max_i q_i / min_i q_i), q = r / a

    def v_balls(self, prec: int) -> list[arb]:
        """Balls containing v^."""
        with ctx.workprec(prec):
            f, c = self.v_ratio.ball(), arb(self.v_scale)
            return [arb(x) * c * f for x in self.V.tolist()]

    def row_balls(self, prec: int) -> list[arb]:
        """Balls containing r = P^ 1."""
        with ctx.workprec(prec):
            f = self.v_ratio.ball() * arb(self.t_scale) * arb((1, -self.L))
            return [arb(u) * (arb(t) + arb(self.t_err) * arb.union(arb(0), arb(1))) * f for u, t in zip(self.U.tolist(), self.T.tolist())]


def evaluate(FK: FixedKernel, U: np.ndarray, L: int, a: Marginal, b: Marginal, delta: fmpq, prec: int) -> Evaluation:
    """The Hilbert bound at u^ = U 2^-L (module docstring), with exact integer vectors and one logarithm in arb.

    K'^T u^ lies in [S, S + dS] 2^(gs - L) (S = F^T U exactly, dS the truncation's share); v^_j = b_j / that, and
    V_j = floor(B_j 2^kv / S_j) gives v~ = V 2^(L - gs - kv) / D_b with v^ / v~ in [S_j / (S_j + dS), (V_j + 1) / V_j].
    Then F V = T exactly, and q_i = r_i / a_i lies in U_i [T_i, T_i + dT] D_a / A_i times one constant and that
    ratio, so d_H(r, a) <= log(max_i ceil(U_i (T_i + dT) 2^k / A_i) / min_i floor(U_i T_i 2^k / A_i)) + log(hi / lo).
    """
    F, err = FK.digits, FK.error
    S, gs = _exact_products(F, U, True)
    dS = _ceil_shift(int(err.p) * int(sum(U)), -gs - (int(err.q).bit_length() - 1))  # err = 2^-e: E^T U <= err sum U
    kv = prec + 8 + max(S.tolist()).bit_length() - min(b.N.tolist()).bit_length()
    V = (b.N * (1 << kv)) // S
    T, gt = _exact_products(F, V, False)
    dT = _ceil_shift(int(err.p) * int(sum(V)), -gt - (int(err.q).bit_length() - 1))
    num = U * T  # q_i up to the constant C = 2^(gt - gs - kv) D_a / D_b and the ratio: num_i / A_i
    k = prec + 8 + max(a.N.tolist()).bit_length() - min(num.tolist()).bit_length()
    lo = (num << k) // a.N if k >= 0 else (num >> -k) // a.N
    hi = -((-(U * (T + dT) << k)) // a.N) if k >= 0 else -((-(U * (T + dT) >> -k)) // a.N) + 1
    with ctx.workprec(prec):
        ratio = Factor(arb(min(S.tolist())) / arb(min(S.tolist()) + dS), 1 + 1 / arb(min(V.tolist())))
        d_h = (arb(max(hi.tolist())) * ratio.hi / (arb(min(lo.tolist())) * ratio.lo)).log().upper()
        bound = a_posteriori_bound(d_h, delta, prec)
    shift = gt - gs - kv  # q~_i = num_i D_a 2^shift / (A_i D_b): the residual, free of cancellation
    top, bottom = (num * a.D << shift, a.N * b.D) if shift >= 0 else (num * a.D, a.N * b.D << -shift)
    residual = np.array([d / t for d, t in zip((top - bottom).tolist(), bottom.tolist())])  # int / int: correctly rounded
    v_scale = fmpq(2) ** (L - gs - kv) / b.D
    return Evaluation(U, L, V, v_scale, ratio, T, dT, fmpq(2) ** gt * v_scale, residual, bound, d_h)


def newton_step(K: np.ndarray, u: np.ndarray, v: np.ndarray, s: np.ndarray, dense: int = DENSE_NEWTON) -> np.ndarray:
    """delta with (I - A B^T + 1 w^T) delta = -s, float64 (a Newton step for the row sums; float only).

    A, B the row- and column-normalised plan P = diag(u) K diag(v), w = P 1 / sum(P), as in
    :func:`constructions.sinkhorn.logdomain.row_correction` (which derives it).
    """
    Kv, KTu = K @ v, K.T @ u
    r, c = u * Kv, v * KTu
    w = r / r.sum()
    if len(u) <= dense:  # in place where it can be: at n = 1024 each n x n temporary is 8 MiB of the run's peak
        P = u[:, None] * K
        P *= v[None, :]
        A = P / r[:, None]
        P /= c[None, :]
        J = A @ P.T
        del A, P
        J *= -1.0
        J[np.diag_indices_from(J)] += 1.0
        J += w[None, :]  # I - A B^T + 1 w^T
        return scipy.linalg.solve(J, -s, overwrite_a=True, check_finite=False)
    d = -s
    for _ in range(NEWTON_SWEEPS):
        new = u * (K @ (v * (v * (K.T @ (u * d)) / c))) / r - (w @ d) - s
        if np.abs(new - d).max() <= 1e-15 * np.abs(new).max():
            return new
        d = new
    return d


class LazyPlan(Sequence):
    """A :class:`ScaledKernel` of a high-precision run, built (the kernel's balls gathered) when first read."""

    def __init__(self, run: PreciseRun, widen: arb | None) -> None:
        self.run, self.widen, self._plan = run, widen, None

    def _built(self) -> ScaledKernel:
        if self._plan is None:
            r, e = self.run, self.run.evaluation
            with ctx.workprec(r.prec):
                u = [arb((x, -e.L)) for x in e.U.tolist()]
                if self.widen is not None:
                    u = [x * self.widen for x in u]
            self._plan = ScaledKernel(u, r._kernel_balls(), e.v_balls(r.prec), r.prec)
        return self._plan

    def __len__(self) -> int:
        return self.run.shifted.shape[0]

    def __getitem__(self, i: Any) -> Any:
        return self._built()[i]


def _rescaled(U: list[int], e: np.ndarray) -> list[int]:
    """U (1 + e) on the same grid (floored, kept >= 1): e scaled to 52-bit integers first, so that the
    correction keeps its own float accuracy however small it is."""
    top = float(np.abs(e).max())
    if top == 0.0 or not np.isfinite(top):
        return U
    shift = 52 - int(np.frexp(top)[1])
    D = np.round(np.ldexp(e, shift)).astype(np.int64).astype(object)
    Uo = np.array(U, dtype=object)
    new = Uo + (Uo * D >> shift) if shift >= 0 else Uo + Uo * (D << -shift)
    return [max(1, x) for x in new.tolist()]


@dataclass(frozen=True)
class PreciseRun:
    """The last evaluation, how many were made, and the kernel they used."""

    kernel: FixedKernel
    shifted: ShiftedKernel
    evaluation: Evaluation
    evaluations: int
    newton: int
    prec: int

    @property
    def witness(self) -> list[fmpq]:
        den = fmpz(2) ** self.evaluation.L
        return [fmpq(x, den) for x in self.evaluation.U.tolist()]

    def _kernel_balls(self) -> np.ndarray:
        """Balls containing K'_ij, [F_z, F_z + 2] 2^(1 - 24 S), by one gather from the table; for a float cost's kernel
        [F, F + error] from the digits, entry by entry (formed only when the plan is read)."""
        S = len(self.kernel.digits.digits)
        if self.kernel.where is None:
            d, err = self.kernel.digits.digits, self.kernel.error
            with ctx.workprec(self.prec):
                half = arb(err) / 2
                values = sum(arb((1, -KERNEL_BITS * k)) * np.array([[arb(x) for x in row] for row in dk.tolist()], dtype=object) for k, dk in enumerate(d))
                return values + half + arb(0, half)
        with ctx.workprec(self.prec):
            table = ball_array([arb((2 * f + 2, -KERNEL_BITS * S)) + arb(0, arb((1, 1 - KERNEL_BITS * S))) for f in self.kernel.fixed])
        return table[self.kernel.where.reshape(self.shifted.shape)]

    def float_plan(self) -> tuple[np.ndarray, fmpq]:
        """G = fl(fl(u_f K_f) v_f) (a float64 plan) and an exact bound >= max_ij |G_ij - P*_ij|.

        u_f = fl(u^) and K_f = fl(F_z 2^(1 - 24 S)) (each within u), v_f = fl(mid v^) (within eps_v of v^, measured),
        K' within [F_z, F_z + 2] 2^(1 - 24 S) of K_f's point, and P* within [e^-beta, e^beta] of P^ = u^ K' v^.
        """
        e, S = self.evaluation, len(self.kernel.digits.digits)
        u = np.ldexp(np.array([float(x) for x in e.U.tolist()]), -e.L)
        vb = e.v_balls(self.prec)
        v = np.array([float(x.mid()) for x in vb])
        if self.kernel.where is None:  # a float cost: K_f = K~, the float kernel, within its proven factor
            G = self.shifted.K.copy()
            with ctx.workprec(self.prec):
                k_factor = self.shifted.factor
        else:
            table = np.ldexp(np.array([float(f) for f in self.kernel.fixed]), 1 - KERNEL_BITS * S)
            G = np.take(table, self.kernel.where.reshape(self.shifted.shape))
            with ctx.workprec(self.prec):
                k_factor = Factor.within(UNIT).inverse() * Factor.between(1, 1 + arb(2) / min(self.kernel.fixed))
        G *= u[:, None]
        G *= v[None, :]
        with ctx.workprec(self.prec):
            eps_v = max(((x - arb(f)) / arb(f)).abs_upper() for x, f in zip(vb, v.tolist()))
            beta = e.bound
            one = Factor.within(UNIT).inverse()  # x / fl(x)
            psi = (
                Factor((-beta).exp(), beta.exp())
                * one  # u^ / u_f
                * k_factor  # K' / K_f
                * Factor.within(eps_v)  # v^ / v_f
                / Factor.within(gamma(2))  # the two products
            )
        return G, plan_error(G, psi, float(v.max()))

    def plan(self, widen: arb | None = None) -> LazyPlan:
        """diag(u^ f) K' diag(v^) as balls formed when first read: P^ (f = 1), or P* (f = [e^-beta, e^beta])."""
        return LazyPlan(self, widen)


def precise(
    K: ShiftedKernel,
    a: Sequence[fmpq],
    b: Sequence[fmpq],
    tol: fmpq,
    u0: np.ndarray,
    prec: int,
    bound_of: Callable[[Evaluation], arb] | None = None,
    kernel: FixedKernel | None = None,
    dense: int = DENSE_NEWTON,
) -> PreciseRun:
    """Evaluations at ``prec`` bits from the float point u0 (> 0), with Newton steps, until the bound is <= tol.

    ``bound_of``: the bound of an evaluation in place of Hilbert's (another theorem on the same evaluation);
    ``kernel``: the kernel in fixed point (default: an integer cost's at prec - 8 bits, enough when prec counts
    Delta's bits too); ``dense``: Newton's system is solved densely up to this n (:func:`newton_step`)."""
    n, m = K.shape
    spread = math.log2(float(u0.max() / u0.min())) if n > 1 else 0.0
    bits = prec + int(spread) + 8  # u^'s fixed point: prec bits below its smallest entry
    FK = kernel or fixed_kernel(K, -(-(prec - 8) // KERNEL_BITS))  # E <= 2^(2 - 24 S): its share of d_H ~2^-(prec - 12)
    L = bits - int(np.frexp(u0.max())[1])
    U = np.array([max(1, _floor_shift(x, L)) for x in u0.tolist()], dtype=object)
    am, bm = Marginal.of(a), Marginal.of(b)
    tol_b, newton = arb(tol), 0
    for count in range(1, MAX_EVALUATIONS + 1):
        ev = evaluate(FK, U, L, am, bm, K.delta, prec)
        if bound_of is not None:
            ev = replace(ev, bound=bound_of(ev))
        if ev.bound <= tol_b or count == MAX_EVALUATIONS:
            break
        uf = np.ldexp(np.array([float(x) for x in U.tolist()]), -L)
        vf = np.array([float(x) for x in ev.V.tolist()])
        try:
            step = newton_step(K.K, uf / uf.max(), vf / vf.max(), ev.residual, dense)
        except np.linalg.LinAlgError:
            step = -np.log1p(ev.residual)
        newton += 1
        U = np.array(_rescaled(U.tolist(), np.expm1(step)), dtype=object)
    return PreciseRun(FK, K, ev, count, newton, prec)
