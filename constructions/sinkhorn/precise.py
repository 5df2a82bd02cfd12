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
With Q = 32 S - 1 + G and 3 (number of values) <= 2^G, F_z = floor(N_z / 2^G) satisfies

    F_z 2^{1 - 32 S} <= K'_z < (F_z + 2) 2^{1 - 32 S},

so K' = F + E with 0 <= E < 2^{2 - 32 S}, F held as S base-2^32 digits (:class:`exact.slices.MatrixDigits`).

**An iteration.** u^ = U 2^-L (integers U). F^T u^ and F v~ are exact integer products in BLAS
(:mod:`exact.slices`), read as Python integers; then (K'^T u^)_j lies in [F^T u^, F^T u^ + E sum u^],
v^_j = b_j / (K'^T u^)_j is an arb ball, v~ its midpoints on a grid (v^ = v~ * [1 - rho, 1 + rho]), and
(K' v^)_i lies in [F v~, F v~ + E sum v~] [1 - rho, 1 + rho]: balls around the row sums r_i, whose
d_H to a bounds beta (:func:`constructions.sinkhorn.hilbert.hilbert_distance_upper`). Only vectors become
arb objects. Until beta <= tol, u^ takes a Newton step for the row sums, solved in float64 (dense for
n <= :data:`DENSE_NEWTON`, else by the fixed-point iteration delta <- A B^T delta - 1 w^T delta - s, two
float products with the kernel each), from the float iterations of :mod:`constructions.sinkhorn.verified`.
The step only chooses the next point; the bound is a posteriori.
"""

from __future__ import annotations

import math
from functools import reduce
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn.hilbert import a_posteriori_bound, hilbert_distance_upper
from attncert.constructions.sinkhorn.kernel import ball_array
from attncert.constructions.sinkhorn.scaled import ScaledKernel
from attncert.constructions.sinkhorn.shifted import ShiftedKernel
from attncert.constructions.sinkhorn.verified import plan_error
from attncert.exact.roundoff import U as UNIT, Factor, gamma
from attncert.exact.slices import MATRIX_BITS, MatrixDigits, integer_digits, integer_value, table_digits, vector_bits

#: Newton's linear system is solved densely up to this n (O(n^3)), iteratively beyond.
DENSE_NEWTON = 256
#: Iterations of the fixed-point solve of Newton's system, at most.
NEWTON_SWEEPS = 200
#: Evaluations of the bound (each after a Newton step), at most.
MAX_EVALUATIONS = 8


@dataclass(frozen=True)
class FixedKernel:
    """K' = F + E, 0 <= E < error, F = 2 sum_s digits[s] 2^(-32 (s+1)) (module docstring), and the table behind it."""

    digits: MatrixDigits
    error: fmpq
    values: np.ndarray  # the distinct z, increasing
    fixed: list[int]  # F_z (value F_z 2^(1 - 32 S)) for each of them
    where: np.ndarray  # Z' as positions in ``values``


def fixed_kernel(K: ShiftedKernel, count: int) -> FixedKernel:
    """F for an integer cost, with ``count`` digits of 32 bits (module docstring)."""
    values, where = np.unique(K.index, return_inverse=True)
    guard = (3 * len(values)).bit_length()
    Q = MATRIX_BITS * count - 1 + guard
    gaps = np.diff(values, prepend=0).tolist()
    W = {}
    with ctx.workprec(Q + 64):
        for g in set(gaps):
            t = (-arb(K.scale) * g).exp() * arb(2) ** Q
            lo, hi = int(t.lower().floor().unique_fmpz()), t.upper()
            if not hi < lo + 2:
                raise ArithmeticError("the kernel's fixed-point multiplier is not resolved at this precision")
            W[g] = lo
    N, chain = W[gaps[0]], []
    for g in gaps:
        if chain:
            N = (N * W[g]) >> Q
        chain.append(N >> guard)
    table = table_digits(chain, count)
    return FixedKernel(MatrixDigits.of_table(table, where.reshape(K.shape), 1), fmpq(2) ** (2 - MATRIX_BITS * count), values, chain, where)


def _exact_products(F: MatrixDigits, ints: list[int], transpose: bool, width: int) -> tuple[list[int], int]:
    """F x (or F^T x) for x = ints 2^0 exactly: (values, g) with (F x)_i = values_i 2^g."""
    top = max(ints).bit_length()
    count = -(-top // width)
    R = F.products(integer_digits(ints, width, count), transpose)
    v, g = integer_value(R, width)
    return v, g + F.exponent + width * count


def _balls(ints: list[int], g: int, extra: arb) -> list[arb]:
    """[x_i 2^g, x_i 2^g + extra]: the interval from an exact product to it plus the truncation's share."""
    half = extra / 2
    return [arb((x, g)) + half + arb(0, half) for x in ints]


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of the bound at the witness u^ = U 2^-L."""

    U: list[int]
    L: int
    v: list[arb]  # balls containing v^
    cols: list[arb]  # balls containing K'^T u^ (so v^ (K'^T u^) = b)
    rows: list[arb]  # balls containing r = P^ 1
    bound: arb


def evaluate(FK: FixedKernel, U: list[int], L: int, a: Sequence[arb], b: Sequence[arb], delta: fmpq, prec: int) -> Evaluation:
    """The Hilbert bound at u^ = U 2^-L (module docstring, "An iteration")."""
    F = FK.digits
    n, m = F.digits[0].shape
    with ctx.workprec(prec):
        s_ints, gs = _exact_products(F, U, True, vector_bits(n))
        cols = _balls(s_ints, gs - L, arb(FK.error) * arb((sum(U), -L)))
        v = [bj / c for bj, c in zip(b, cols)]
        # v~: the midpoints on one grid 2^e, prec bits below the largest
        e = max(x.mid().man_exp()[1] + int(x.mid().man_exp()[0]).bit_length() for x in v) - prec
        V = [int((x.mid() * arb(2) ** -e).floor().unique_fmpz()) for x in v]
        ratio = reduce(arb.union, [x / arb((t, e)) for x, t in zip(v, V)])  # v^_j / v~_j, for every j
        t_ints, gt = _exact_products(F, V, False, vector_bits(m))
        rows_K = _balls(t_ints, gt + e, arb(FK.error) * arb((sum(V), e)))
        rows = [arb((x, -L)) * k * ratio for x, k in zip(U, rows_K)]
        bound = a_posteriori_bound(hilbert_distance_upper(rows, a, prec), delta, prec)
    return Evaluation(U, L, v, cols, rows, bound)


def newton_step(K: np.ndarray, u: np.ndarray, v: np.ndarray, s: np.ndarray) -> np.ndarray:
    """delta with (I - A B^T + 1 w^T) delta = -s, float64 (a Newton step for the row sums; float only).

    A, B the row- and column-normalised plan P = diag(u) K diag(v), w = P 1 / sum(P), as in
    :func:`constructions.sinkhorn.logdomain.row_correction` (which derives it).
    """
    Kv, KTu = K @ v, K.T @ u
    r, c = u * Kv, v * KTu
    w = r / r.sum()
    if len(u) <= DENSE_NEWTON:
        P = u[:, None] * K * v[None, :]
        J = np.eye(len(u)) - (P / r[:, None]) @ (P / c[None, :]).T + w[None, :]
        return np.linalg.solve(J, -s)
    d = -s
    for _ in range(NEWTON_SWEEPS):
        new = u * (K @ (v * (v * (K.T @ (u * d)) / c))) / r - (w @ d) - s
        if np.abs(new - d).max() <= 1e-15 * np.abs(new).max():
            return new
        d = new
    return d


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
        return [fmpq(x, 2**self.evaluation.L) for x in self.evaluation.U]

    def _kernel_balls(self) -> np.ndarray:
        """Balls containing K'_ij, [F_z, F_z + 2] 2^(1 - 32 S), by one gather from the table."""
        S = len(self.kernel.digits.digits)
        with ctx.workprec(self.prec):
            table = ball_array([arb((2 * f + 2, -32 * S)) + arb(0, arb((1, 1 - 32 * S))) for f in self.kernel.fixed])
        return table[self.kernel.where.reshape(self.shifted.shape)]

    def float_plan(self) -> tuple[np.ndarray, fmpq]:
        """G = fl(fl(u_f K_f) v_f) (a float64 plan) and an exact bound >= max_ij |G_ij - P*_ij|.

        u_f = fl(u^) and K_f = fl(F_z 2^(1 - 32 S)) (each within u), v_f = fl(mid v^) (within eps_v of v^, measured),
        K' within [F_z, F_z + 2] 2^(1 - 32 S) of K_f's point, and P* within [e^-beta, e^beta] of P^ = u^ K' v^.
        """
        e, S = self.evaluation, len(self.kernel.digits.digits)
        table = np.ldexp(np.array([float(f) for f in self.kernel.fixed]), 1 - MATRIX_BITS * S)
        u = np.ldexp(np.array([float(x) for x in e.U]), -e.L)
        v = np.array([float(x.mid()) for x in e.v])
        G = np.take(table, self.kernel.where.reshape(self.shifted.shape))
        G *= u[:, None]
        G *= v[None, :]
        with ctx.workprec(self.prec):
            eps_v = max(((x - arb(f)) / arb(f)).abs_upper() for x, f in zip(e.v, v.tolist()))
            beta = e.bound
            one = Factor.within(UNIT).inverse()  # x / fl(x)
            psi = (
                Factor((-beta).exp(), beta.exp())
                * one  # u^ / u_f
                * one * Factor.between(1, 1 + arb(2) / min(self.kernel.fixed))  # K' / K_f
                * Factor.within(eps_v)  # v^ / v_f
                / Factor.within(gamma(2))  # the two products
            )
        return G, plan_error(G, psi, float(v.max()))

    def plan(self, widen: arb | None = None) -> ScaledKernel:
        """diag(u^ f) K' diag(v^) as balls formed when read: P^ (f = 1), or P* (f = [e^-beta, e^beta])."""
        e = self.evaluation
        with ctx.workprec(self.prec):
            u = [arb((x, -e.L)) for x in e.U]
            if widen is not None:
                u = [x * widen for x in u]
        return ScaledKernel(u, self._kernel_balls(), e.v, self.prec)


def precise(K: ShiftedKernel, a: Sequence[fmpq], b: Sequence[fmpq], tol: fmpq, u0: np.ndarray, prec: int) -> PreciseRun:
    """Evaluations at ``prec`` bits from the float point u0 (> 0), with Newton steps, until the bound is <= tol."""
    n, m = K.shape
    ratio = math.log2(float(u0.max() / u0.min())) if n > 1 else 0.0
    bits = prec + int(ratio) + 8  # u^'s fixed point: prec bits below its smallest entry
    count = -(-(prec + 16) // MATRIX_BITS)  # the kernel's digits
    FK = fixed_kernel(K, count)
    L = bits - int(np.frexp(u0.max())[1])
    U = [max(1, int(x)) for x in np.ldexp(u0, 53).tolist()]
    U = [x << (L - 53) for x in U] if L >= 53 else [max(1, x >> (53 - L)) for x in U]
    with ctx.workprec(prec):
        ab, bb = [arb(x) for x in a], [arb(x) for x in b]
    tol_b, newton = arb(tol), 0
    for count_ev in range(1, MAX_EVALUATIONS + 1):
        ev = evaluate(FK, U, L, ab, bb, K.delta, prec)
        if ev.bound <= tol_b or count_ev == MAX_EVALUATIONS:
            break
        with ctx.workprec(prec):
            s = np.array([float((r / x - 1).mid()) for r, x in zip(ev.rows, ab)])
        uf = np.ldexp(np.array([float(x) for x in U]), -L)
        vf = np.array([float(x.mid()) for x in ev.v])
        try:
            step = newton_step(K.K, uf / uf.max(), vf * uf.max(), s)
        except np.linalg.LinAlgError:
            step = -np.log1p(s)
        newton += 1
        U = _rescaled(U, np.expm1(step))

    return PreciseRun(FK, K, ev, count_ev, newton, prec)
