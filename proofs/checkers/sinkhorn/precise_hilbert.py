r"""The high-precision Hilbert certificate, re-derived: the Hilbert bound for the shifted kernel of an integer cost, with
exact integer products and arb on vectors.

Theorem (Birkhoff; :mod:`proofs.checkers.sinkhorn.float_hilbert` states it for the shifted kernel): for C = Z/D
(integers Z), Z' = Z - A 1^T - 1 B^T with A_i = min_j Z_ij, B_j = min_i (Z_ij - A_i), and
K' = exp(-Z'/(D eps)) (the Sinkhorn plan of exp(-C/eps), the same Delta <= Dbar, Dbar from the two largest
row maxima of Z', or column maxima, over D eps), a positive witness u^, v^ = b / (K'^T u^) and
r = diag(u^) K' v^:  max |log P^ - log P*| <= d_H(r, a) (e^{Dbar/2} + 1) / 2.

Hypotheses, checked first: the problem's; C rational with integer numerators over one denominator in int64;
u^ of n positive dyadic rationals.

Evaluation, at the precision asked: each distinct z of Z' gets a ball w^z (w = e^{-1/(D eps)}) from arb and
an integer F_z with F_z <= w^z 2^Q < F_z + 2 (Q = 24 S - 1; checked), so K' = F 2^-Q + E, 0 <= E < 2^{1-Q}.
F^T u^ and F v~ are exact integer products (:mod:`exact.slices`: digits and BLAS), v^ = b / [F^T u^,
F^T u^ + E sum u^] in arb, v~ its midpoints on a grid of 2^-prec relative, and the row sums lie in
u^ [F v~, F v~ + E sum v~] (v^/v~); then d_H and the bound, in arb.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

import numpy as np
from flint import arb, ctx, fmpq

from attncert.exact.fixed_exp import fixed_exp_neg, normalise
from attncert.exact.numberfiles import is_double
from attncert.exact.roundoff import two_sum
from attncert.exact.slices import MatrixDigits, integer_digits, integer_value, table_digits
from attncert.proofs.checkers.sinkhorn.problem import BallCost, HypothesisError, PlanEnclosure, Problem, shifted_integers

#: Bits per digit of the kernel's fixed-point values (any whole number of bytes up to 32 keeps the products exact).
DIGIT_BITS = 24


def _top_two(x: np.ndarray) -> int:
    return 0 if len(x) < 2 else int(np.sort(x)[-2:].sum())


def _products(F: MatrixDigits, ints: list[int], transpose: bool) -> tuple[list[int], int]:
    """(F x)_i = values_i 2^g for x = ints, exactly."""
    width = F.vector_bits(transpose)
    count = -(-max(ints).bit_length() // width)
    values, g = integer_value(F.products(integer_digits(ints, width, count), transpose), width, F.width)
    return values, g + F.exponent + width * count


@dataclass(frozen=True)
class PreciseEvaluation:
    """The evaluation at u^ = U 2^-L (module docstring): v^ in the balls v, every q_i = r_i / a_i in [q_lo, q_hi], and
    the kernel in fixed point (K' in [F, F + E] entrywise)."""

    U: list[int]
    L: int
    v: list[arb]
    q_lo: arb
    q_hi: arb
    F: MatrixDigits
    E: fmpq
    spread: fmpq | None  # Dbar >= Delta (an integer cost's; None for a float cost's kernel)

    def balls(self, log_error: arb) -> list[list[arb]]:
        """Balls containing P* when max |log P^ - log P*| <= log_error: u^ K' v^ e^[-, +], K' in [F, F + E] from the
        digits entry by entry (a recorded plan has at most 4096 entries)."""
        F, w = self.F, self.F.width
        scale = [arb((1, F.exponent - w * (k + 1))) for k in range(len(F.digits))]
        n, m = F.digits[0].shape
        rows = [[sum((arb(int(d[i, j])) * sc for d, sc in zip(F.digits, scale)), arb(0)) for j in range(m)] for i in range(n)]
        half = arb(self.E) / 2
        widen = arb.union((-log_error).exp(), log_error.exp())
        return [[arb((ui, -self.L)) * widen * (k + half + arb(0, half)) * vj for k, vj in zip(row, self.v)] for ui, row in zip(self.U, rows)]


def _integer_kernel(p: Problem, kernel_bits: int) -> tuple[MatrixDigits, fmpq, fmpq]:
    """An integer cost's K' as F + [0, E] from a table over the distinct z of Z' (module docstring), and Dbar."""
    Zs, den = shifted_integers(p, "high-precision")
    s = fmpq(1) / (fmpq(den) * p.eps)
    spread = min(_top_two(Zs.max(1)), _top_two(Zs.max(0))) * s
    values, where = np.unique(Zs, return_inverse=True)
    S = -(-kernel_bits // DIGIT_BITS)
    Q = DIGIT_BITS * S - 1
    with ctx.workprec(Q + 64):
        w = (-arb(s)).exp()
        fixed = []
        for z in values.tolist():
            t = w**z * arb(2) ** Q
            f = int(t.lower().floor().unique_fmpz())
            if not t.upper() < f + 2:
                raise HypothesisError("the kernel's fixed-point values are not resolved at this precision")
            fixed.append(f)
    F = MatrixDigits.of_table(table_digits(fixed, S, DIGIT_BITS), where.reshape(p.n, p.m), 1, DIGIT_BITS)
    return F, fmpq(2) ** (1 - Q), spread


def _float_kernel(p: Problem, kernel_bits: int) -> tuple[MatrixDigits, fmpq]:
    """A float64 cost's K' as F + [0, E]: the shift of the ``floats`` recipe (C' = t + e1 + e2 exactly, TwoSum), K
    within eps_K of K' by :func:`exact.fixed_exp.fixed_exp_neg`, F = max(K - e', 0) with e' = eps_K rounded up to
    K's last digit, so F <= K' <= F + 2 e'."""
    if isinstance(p.C, BallCost) or not all(is_double(x) for row in p.C for x in row):
        raise HypothesisError("the float kernel in fixed point needs a cost of binary64 values")
    C = np.array([[float(x) for x in row] for row in p.C], dtype=np.float64)
    t1, e1 = two_sum(C, -C.min(1)[:, None])
    t, e2 = two_sum(t1, -t1.min(0)[None, :])
    try:
        fx = fixed_exp_neg(t, e1, e2, 1 / p.eps, -(-kernel_bits // DIGIT_BITS) + 1)
    except (ValueError, ArithmeticError) as e:
        raise HypothesisError(f"the kernel in fixed point does not apply: {e}") from None
    units = int((fx.error / fx.ulp).ceil())
    D = fx.digits
    D[-1] -= float(units)
    normalise(D)
    D[:, D[0] < 0] = 0.0
    return MatrixDigits(list(D), DIGIT_BITS, DIGIT_BITS), 2 * units * fx.ulp


def precise_evaluation(p: Problem, u: list[fmpq], prec: int, kernel_bits: int | None = None, recipe: str = "integers") -> PreciseEvaluation:
    """The evaluation from the witness u^ at ``prec`` bits (module docstring), the kernel's fixed point at ``kernel_bits``
    (default prec + 16) by ``recipe`` (``integers``: a table; ``floats``: a float64 cost, entry by entry in numpy);
    HypothesisError where it does not apply."""
    if len(u) != p.n:
        raise HypothesisError(f"the witness has {len(u)} entries, not n = {p.n}")
    if not all(x > 0 and int(x.q) & (int(x.q) - 1) == 0 for x in u):
        raise HypothesisError("the high-precision witness u is not positive dyadic rationals")
    bits = kernel_bits or prec + 16
    if recipe == "integers":
        F, E, spread = _integer_kernel(p, bits)
    elif recipe == "floats":
        (F, E), spread = _float_kernel(p, bits), None
    else:
        raise HypothesisError(f"unknown kernel recipe {recipe!r:.20}")
    L = max(int(x.q).bit_length() - 1 for x in u)
    U = [int(x.p) << (L - (int(x.q).bit_length() - 1)) for x in u]
    with ctx.workprec(prec):
        cs, gc = _products(F, U, True)
        sum_u = arb((sum(U), -L))
        cols = [arb((x, gc - L)) + arb(E) * sum_u * arb.union(arb(0), arb(1)) for x in cs]
        if not all(c > 0 for c in cols):
            raise HypothesisError("the column sums are not provably positive at this precision")
        v = [arb(bj) / c for bj, c in zip(p.b, cols)]
        e = max(int(np.frexp(float(x.mid()))[1]) for x in v) - prec
        V = [int((x.mid() * arb(2) ** -e).floor().unique_fmpz()) for x in v]
        if min(V) <= 0:
            raise HypothesisError("v^ is not resolved at this precision")
        ratio = reduce(arb.union, [x / arb((t, e)) for x, t in zip(v, V)])
        rs, gr = _products(F, V, False)
        sum_v = arb((sum(V), e))
        rows = [arb((ui, -L)) * (arb((x, gr + e)) + arb(E) * sum_v * arb.union(arb(0), arb(1))) * ratio for ui, x in zip(U, rs)]
        q = [r / arb(ai) for r, ai in zip(rows, p.a)]
        hi = max((t.upper() for t in q), key=lambda t: t.mid())
        lo = min((t.lower() for t in q), key=lambda t: t.mid())
        if not lo > 0:
            raise HypothesisError("the row sums are not provably positive at this precision")
    return PreciseEvaluation(U, L, v, lo, hi, F, E, spread)


def precise_hilbert_enclosure(p: Problem, u: list[fmpq], prec: int, plan: bool = True) -> PlanEnclosure:
    """beta from the witness u^ at ``prec`` bits (module docstring), and with ``plan`` balls containing P*."""
    ev = precise_evaluation(p, u, prec)
    with ctx.workprec(prec):
        beta = ((ev.q_hi / ev.q_lo).log() * ((arb(ev.spread) / 2).exp() + 1) / 2).upper()
        balls = ev.balls(beta) if plan else []
    return PlanEnclosure(balls, beta.fmpq())
