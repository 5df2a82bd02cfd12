r"""The shifted Gibbs kernel in float64, with a proven bound on its relative error; and the exact cost as one array.

**Shift.** For a cost C (n x m), let alpha_i = min_j C_ij and beta_j = min_i (C_ij - alpha_i), and

    C' = C - alpha 1^T - 1 beta^T >= 0,    K' = exp(-C'/eps) = diag(e^{alpha/eps}) K diag(e^{beta/eps}).

K' has the same Sinkhorn plan as K = exp(-C/eps) (the plans diag(u) K diag(v) and diag(u') K' diag(v')
are the same matrices) and the same projective diameter (cross differences cancel the shifts). Every row and
column of C' has a 0 (row i at its minimum j0, where beta_{j0} = 0), so K' has a 1 in every row and column,
and C'_ij = C_ij - C_ik - C_i'j + C_i'k' <= C_ij - C_ik - C_i'j + C_i'k <= Delta eps (k, k' the row minima
of i, i', and i' the minimum of column j), so K' lies in [e^-Delta, 1]: float64 holds it for Delta up to
about 700, where K itself may underflow. A certificate's witness u^ scales K'.

**Two exact forms of the cost** (:class:`ExactCost`):

* *integers*: C = Z / D, Z an integer array, D > 0. Then alpha, beta are integers over D, C' = Z'/D with
  Z' = Z - A 1^T - 1 B^T computed exactly in integers, and y = C'/eps = Z' s, s = 1/(D eps). The kernel is a table
  over the distinct z = Z'_ij (one gather), or computed entry by entry when the range of Z' is larger than the matrix.
* *binary floats*: C the exact values of doubles, alpha_i = min_j C_ij exactly. t1 + e1 = C - alpha and
  t2 + e2 = t1 - beta~ exactly (Knuth's TwoSum), beta~_j = min_i t1_ij; the shift is alpha_i + beta~_j (any shift has
  the same plan), so C' = t2 + e1 + e2 exactly and y = (t2 + e) s with s = 1/eps, e = fl(e1 + e2).

In both, ỹ = fl(t s~) (t = Z' or t2, s~ = fl(s)), its rounding error r is computed (Dekker's product) with
|y - ỹ - r| <= R, and K~ = fl(exp_neg(ỹ) fl(1 - r)) (:func:`exact.roundoff.shifted_exponent`,
:func:`exact.roundoff.corrected_exp_neg`), so that entrywise

    K'_ij / K~_ij in [e^-E / (1 + delta_exp), e^E / (1 - delta_exp)],   E = R + 2 max r^2 + 2u / (1 - u)

(:attr:`ShiftedKernel.factor`): about 1.5e-15 whatever the exponent's size, where the rounded exponent alone costs
gamma_2 y (1.5e-13 at ỹ = 700) and made the bounds at small eps a hundred times wider.

**A cost known as balls** (a Sinkhorn Transformer's, :class:`~constructions.sinkhorn.problem.CostEnclosure`):
alpha, beta are doubles chosen from the balls' midpoints (any shift has the same plan), each K'_ij is
enclosed in arb from the cost's ball, K~_ij is the double nearest its midpoint, and the factor is the
hull of the ratios ball / K~ over all entries: computed, not derived, so the recipe (``balls``) needs one
arb exponential per entry and is used up to :data:`BALL_ENTRIES` entries. Its witness records alpha and
beta, and a checker evaluates the bound in arb from its own enclosure of the cost.

**Delta, cheaply.** C_jk + C_il - C_ik - C_jl = (C_jk - C_jl) + (C_il - C_ik) is at most the sum of the ranges
of rows i and j when i != j, and 0 when i = j; the same by columns. So Delta eps is at most the sum of the two
largest row ranges of C' (row maxima: its rows have minimum 0), and at most that of the column ranges
(:attr:`ShiftedKernel.delta`): O(n m) instead of the exact O(n^2 m). An upper bound is all the Hilbert bound
needs (lambda = tanh(Delta/4) grows with Delta). For binary floats the ranges are those of C, each
fl(max - min) <= range (1 - u)^-1 away from the exact one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from flint import arb, ctx, fmpq

from attncert.exact.roundoff import EXP_MAX, LARGEST, SMALLEST_NORMAL, U, Factor, corrected_exp_neg, exact, exp_error, float_of, shifted_exponent, two_sum

#: Precision of the scalar bounds (arb), bits.
BOUND_BITS = 128
#: The ``balls`` recipe (one arb exponential per entry) is used up to this many entries.
BALL_ENTRIES = 4096
#: The tail's entries are min(K~, TAIL) (``verified.py``): above every truncated digit (2^-63).
TAIL = 2.0**-62


class UnsupportedKernel(ValueError):
    """float64 cannot hold this kernel with a proven error (it would under- or overflow): use arb."""


@dataclass(frozen=True)
class ExactCost:
    """An exact cost matrix held as one numpy array: integers ``values`` over ``den`` (C = Z / D), or, with ``den``
    None, float64 values read as the doubles' exact binary values."""

    values: np.ndarray
    den: int | None

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape  # type: ignore[return-value]

    def rows(self) -> list[list[fmpq]]:
        """The cost as rows of rationals (n m Python objects: for small problems and for certificates)."""
        if self.den is None:
            return [[fmpq(*x.as_integer_ratio()) for x in row] for row in self.values.tolist()]
        return [[fmpq(int(x), self.den) for x in row] for row in self.values.tolist()]


def exact_cost(integer_cost: tuple[np.ndarray, int]) -> ExactCost | None:
    """The integer form (Z, D) of a rational cost as an ExactCost, or None when Z does not fit int64."""
    Z, den = integer_cost
    return None if Z.dtype == object else ExactCost(Z, den)


def array_cost(M: Any) -> ExactCost:
    """A numpy array as an exact cost: integer dtypes over 1, floating dtypes as float64 binary values (NaN and
    infinity refused with ValueError)."""
    M = np.asarray(M)
    if M.ndim != 2 or not M.size:
        raise ValueError("the cost must be a non-empty matrix")
    if M.dtype.kind in "iu":
        return ExactCost(M.astype(np.int64), 1)
    if M.dtype.kind != "f":
        raise ValueError(f"the cost has dtype {M.dtype}, not a number type")
    M = M.astype(np.float64, copy=False)  # float16/32 values are doubles exactly; a float64 array is read, never written
    if not np.isfinite(M).all():
        raise ValueError("the cost has NaN or infinite entries")
    return ExactCost(M, None)


@dataclass
class ShiftedKernel:
    """K~ (doubles) with K' in K~ * factor entrywise, K' = exp(-(C - alpha 1^T - 1 beta^T)/eps) (module docstring)."""

    K: np.ndarray
    factor: Factor  # contains every K'_ij / K~_ij
    delta: fmpq  # an exact upper bound on Delta(K)
    mode: str  # "integers" or "floats": which exact form of the cost; "balls": a cost enclosure
    shifts: tuple[Any, Any]  # (A, B) integer arrays (C' = Z'/D), (alpha, beta~) doubles, or (alpha, beta) chosen doubles
    index: np.ndarray | None = None  # integers: Z' (K'_ij = w^{Z'_ij}, w = e^-scale)
    scale: fmpq | None = None  # integers: 1/(D eps)
    #: An entrywise upper bound on K'_ij / factor_hi for the entries the sums treat as a tail (verified.py): by default
    #: min(K~, TAIL); a kernel balanced by a witness (convexity.py) adds the entries whose products underflowed.
    tail: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.K.shape  # type: ignore[return-value]


def _two_largest(x: np.ndarray) -> fmpq:
    """The exact sum of the two largest entries (0 for a single entry: Delta has only i = j then)."""
    if len(x) < 2:
        return fmpq(0)
    top = np.partition(x, len(x) - 2)[-2:]
    return exact(top[0]) + exact(top[1])


def _normal_scale(s: fmpq) -> float:
    """fl(s), refused outside the normal range (below it its relative error would not be <= u; above it there is
    no double)."""
    if s > LARGEST:
        raise UnsupportedKernel(f"1/eps = {arb(s).str(3, radius=False)} is above float64's range")
    s_f = float_of(s)
    if not s_f >= SMALLEST_NORMAL:
        raise UnsupportedKernel(f"1/eps = {s_f:.3g} is below float64's normal range")
    return s_f


def shifted_kernel(cost: ExactCost, eps: fmpq) -> ShiftedKernel:
    """K~, its error factor and Delta's upper bound (module docstring); UnsupportedKernel where float64 cannot hold
    them (a kernel entry below e^-700, or integers beyond 2^53)."""
    if cost.den is not None:
        return _from_integers(cost.values, cost.den, eps)
    return _from_floats(cost.values, eps)


def _kernel_factor(E_y: fmpq) -> Factor:
    with ctx.workprec(BOUND_BITS):
        d, e = arb(exp_error()), arb(E_y)
        return Factor((-e).exp() / (1 + d), e.exp() / (1 - d))


def _from_integers(Z: np.ndarray, den: int, eps: fmpq) -> ShiftedKernel:
    if int(Z.max()) - int(Z.min()) >= 2**63:  # Z - A, B and Z' lie in [-range, range]: no int64 wrap-around below this
        raise UnsupportedKernel("the cost's numerators span 2^63 or more: their differences do not fit int64")
    A = Z.min(1)
    Zs = Z - A[:, None]
    B = Zs.min(0)
    Zs -= B[None, :]
    rows, cols = Zs.max(1), Zs.max(0)
    top = int(rows.max())
    s = 1 / (den * eps)
    s_f = _normal_scale(s)
    y_top = top * s_f
    if top >= 2**53 or not y_top <= EXP_MAX:
        raise UnsupportedKernel(f"the kernel spans e^-{y_top:.3g}, beyond float64's proven range (e^-{EXP_MAX:g})")
    # one corrected exponential per distinct value, then a gather, or entry by entry where the range is larger
    z = np.arange(top + 1, dtype=np.float64) if top < Zs.size else Zs.astype(np.float64)
    K, E_y = _corrected(z, None, s)
    if top < Zs.size:
        K = np.take(K, Zs)
    delta = min(_two_largest(rows), _two_largest(cols)) * s
    return ShiftedKernel(K, _kernel_factor(E_y), delta, "integers", (A, B), Zs, s)


def _from_floats(C: np.ndarray, eps: fmpq) -> ShiftedKernel:
    alpha = C.min(1)
    t1, e1 = two_sum(C, -alpha[:, None])  # C - alpha = t1 + e1 exactly
    beta = t1.min(0)  # beta~: the shift is alpha_i + beta~_j, doubles
    t2, e2 = two_sum(t1, -beta[None, :])  # t1 - beta~ = t2 + e2 exactly, t2 >= 0
    del t1
    if not (np.isfinite(t2).all() and np.isfinite(e1).all() and np.isfinite(e2).all()):
        raise UnsupportedKernel("the shifted cost leaves float64's range")
    e1 += e2  # e = fl(e1 + e2): C'_ij = t2 + e1 + e2 exactly
    s = 1 / eps
    s_f = _normal_scale(s)
    y_top = t2.max() * s_f
    if not y_top <= EXP_MAX:
        raise UnsupportedKernel(f"the kernel spans e^-{y_top:.3g}, beyond float64's proven range (e^-{EXP_MAX:g})")
    K, E_y = _corrected(t2, e1, s)
    rows = C.max(1) - alpha
    with np.errstate(over="ignore"):
        cols = C.max(0) - C.min(0)  # may overflow where the rows' ranges do not: then the rows' bound alone
    spread = (min(_two_largest(rows), _two_largest(cols)) if np.isfinite(cols).all() else _two_largest(rows)) / (1 - U)
    return ShiftedKernel(K, _kernel_factor(E_y), spread / eps, "floats", (alpha, beta))


def _corrected(t: np.ndarray, e: np.ndarray | None, s: fmpq) -> tuple[np.ndarray, fmpq]:
    """K~ = e^-(t + e) s with its exponent's rounding error corrected (:func:`exact.roundoff.shifted_exponent`,
    :func:`exact.roundoff.corrected_exp_neg`) and E with K'/K~ in [e^-E/(1 + delta), e^E/(1 - delta)]; the exponent's
    rounding then costs about u whatever its size, where a plain fl(t s~) cost gamma_2 y (1.5e-13 at y = 700)."""
    try:
        y, r, R = shifted_exponent(t, e, s)
        if not y.max() <= EXP_MAX:
            raise ValueError(f"the kernel spans e^-{y.max():.3g}")
        return corrected_exp_neg(y, r, R)
    except ValueError as err:
        raise UnsupportedKernel(f"{err}: not certified in float64") from None


def enclosed_kernel(C: Any, eps: fmpq, prec: int = BOUND_BITS) -> ShiftedKernel:
    """The ``balls`` recipe (module docstring) for a cost enclosure C (``C.balls(prec)``, ``C.shape``)."""
    n, m = C.shape
    if n * m > BALL_ENTRIES:
        raise UnsupportedKernel(f"a cost known as balls is enclosed entry by entry, up to {BALL_ENTRIES} entries")
    balls = C.balls(prec)
    mids = np.array([[float(x.mid()) for x in row] for row in balls])
    if not np.isfinite(mids).all():
        raise UnsupportedKernel("the cost's balls are not finite")
    alpha = mids.min(1)
    beta = (mids - alpha[:, None]).min(0)
    with ctx.workprec(prec):
        s = 1 / arb(eps)
        kb = [[(-(c - arb(al) - arb(be)) * s).exp() for c, be in zip(row, beta.tolist())] for row, al in zip(balls, alpha.tolist())]
        K = np.array([[float(x.mid()) for x in row] for row in kb])
        if not (K.min() >= SMALLEST_NORMAL and np.isfinite(K).all()):
            raise UnsupportedKernel("the kernel leaves float64's normal range")
        ratios = [(x / arb(k)) for row, krow in zip(kb, K.tolist()) for x, k in zip(row, krow)]
        lo = min((r.lower() for r in ratios), key=lambda t: t.mid())
        hi = max((r.upper() for r in ratios), key=lambda t: t.mid())
        rows = [max((x.upper() for x in row), key=lambda t: t.mid()) - min((x.lower() for x in row), key=lambda t: t.mid()) for row in balls]
        cols = [max((row[j].upper() for row in balls), key=lambda t: t.mid()) - min((row[j].lower() for row in balls), key=lambda t: t.mid()) for j in range(m)]
        spread = min(_top_two_balls(rows), _top_two_balls(cols))
        return ShiftedKernel(K, Factor(lo, hi), spread / eps, "balls", (alpha, beta))


def _top_two_balls(x: list[arb]) -> fmpq:
    """An exact rational >= the sum of the two largest (0 for one)."""
    if len(x) < 2:
        return fmpq(0)
    ups = sorted((t.upper().fmpq() for t in x), reverse=True)
    return ups[0] + ups[1]


class ArrayRows(Sequence):
    """An ExactCost read as rows of rationals, formed when first read (for code that wants rows)."""

    def __init__(self, cost: ExactCost) -> None:
        self.cost = cost
        self._rows: list[list[fmpq]] | None = None

    def _all(self) -> list[list[fmpq]]:
        if self._rows is None:
            self._rows = self.cost.rows()
        return self._rows

    def __len__(self) -> int:
        return self.cost.shape[0]

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]
