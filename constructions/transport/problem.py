r"""The data of an exact transport problem (a, b, M), read exactly and validated once.

The problem is the linear program of optimal transport (Kantorovich; Dantzig's transportation problem):

    minimise <P, M> = sum_ij P_ij M_ij   over   P >= 0,  P 1 = a,  P^T 1 = b,

with a (length n) and b (length m) non-negative masses of equal total and M an n x m matrix of finite
rationals. It is feasible (a b^T / sum(a) is a plan) and bounded (a compact polytope), so it has an optimal
vertex, and LP duality holds exactly (no float enters the statement).

**Numbers** are read exactly: a float is its exact binary value (a dyadic rational), strings, ints and
Fractions the rationals they spell. An empty ``a`` or ``b`` (POT's default ``[]``) is uniform, 1/n exactly.
Negative costs are accepted (the program is unchanged by adding a constant to M), and so are zero masses
(POT accepts them; a zero row carries no mass).

**Totals** follow the one rule for float marginals (:func:`constructions.sinkhorn.problem.float_rule`): sum(a) =
sum(b) must hold exactly; where ``a`` or ``b`` holds binary floats and the exact totals differ by a relative
1e-12 or less (the doubles of ``np.ones(3) / 3`` do not sum to exactly 1), ``b`` is scaled by sum(a)/sum(b),
exactly, so the plan carries POT's total mass sum(a); beyond that, or for exact inputs, different totals are
refused.

**The cost** is kept as one array (:class:`TransportCost`): the doubles themselves for a float array, or
integers over one common denominator, with a float64 approximation ``approx`` whose error is proven a priori
(|approx_ij - M_ij| <= 3u |approx_ij| + 2^-1074, u = 2^-53) and exact entries formed only where asked
(:meth:`TransportCost.entries`), so a 1024 x 1024 float cost never becomes a million Python rationals.

Bad input raises one :class:`TransportInputError` (a ParseError) naming what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from flint import fmpq

from attncert.exact.errors import ParseError
from attncert.exact.matrices import Rows, to_fmpq_mat
from attncert.exact.rationals import parse_rational
from attncert.exact.roundoff import float_of
from attncert.constructions.sinkhorn.problem import figure, float_rule, holds_floats, one_marginal


class TransportInputError(ParseError):
    """A transport problem that cannot be read: one line saying what is wrong."""


@dataclass(frozen=True)
class TransportCost:
    """An exact n x m cost: ``values`` float64 (den None: the doubles' exact binary values) or integers over ``den``
    (int64, or Python integers in an object array), and ``approx``, a float64 array within 3u |approx| + 2^-1074
    of the exact cost entry by entry (module docstring)."""

    values: np.ndarray
    den: int | None
    approx: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape  # type: ignore[return-value]

    def entries(self, rows: Sequence[int], cols: Sequence[int]) -> list[fmpq]:
        """The exact entries M[rows[k], cols[k]]."""
        picked = self.values[np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)].tolist()
        if self.den is None:
            return [fmpq(*x.as_integer_ratio()) for x in picked]
        return [fmpq(int(x), self.den) for x in picked]

    def rows(self) -> Rows:
        """Every entry as a rational (n m Python objects: for small problems and for certificates)."""
        n, m = self.shape
        flat = self.entries(np.repeat(np.arange(n), m), np.tile(np.arange(m), n))
        return [flat[i * m : (i + 1) * m] for i in range(n)]


@dataclass(frozen=True)
class TransportProblem:
    """A checked problem: masses a >= 0 and b >= 0 with sum(a) = sum(b) > 0 exactly, and the n x m cost."""

    a: list[fmpq]
    b: list[fmpq]
    cost: TransportCost

    @property
    def n(self) -> int:
        return len(self.a)

    @property
    def m(self) -> int:
        return len(self.b)


def read_cost(M: Any) -> TransportCost:
    """A numpy array or a list of rows of numbers as an exact cost (floats as their binary values)."""
    if isinstance(M, np.ndarray) and M.dtype.kind in "iuf":
        if M.ndim != 2 or not M.size:
            raise TransportInputError(f"M must be a non-empty n x m cost matrix, got an array of shape {M.shape}")
        if M.dtype.kind == "f":
            values = np.asarray(M, dtype=np.float64)  # no copy of a float64 array; float16/32 values are doubles exactly
            if not np.isfinite(values).all():
                raise TransportInputError("M has NaN or infinite entries: every cost must be a finite number")
            return TransportCost(values, None, values)
        if M.dtype.kind == "u" and M.size and int(M.max()) >= 2**63:
            return _integer_cost(np.array(M.tolist(), dtype=object), 1)
        return _integer_cost(M.astype(np.int64), 1)
    rows = M.tolist() if hasattr(M, "tolist") else M
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, (list, tuple)) for r in rows):
        raise TransportInputError("M must be a cost matrix (a list of rows, or a 2-D array), in POT's order emd(a, b, M)")
    if not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise TransportInputError("M must be a non-empty rectangular matrix (every row of the same length)")
    try:
        exact = [[parse_rational(x, dyadic_floats=True) for x in r] for r in rows]
    except ParseError as e:
        raise TransportInputError(f"M: {e}") from None
    num, den = to_fmpq_mat(exact).numer_denom()
    entries = [int(x) for x in num.entries()]
    Z = np.array(entries, dtype=object if max(map(abs, entries)) >= 2**62 else np.int64).reshape(len(rows), len(rows[0]))
    return _integer_cost(Z, int(den))


def _integer_cost(Z: np.ndarray, den: int) -> TransportCost:
    """Integers Z over den, with approx = fl(fl(Z) / den) (int64) or the double nearest each entry (object)."""
    if Z.dtype == object:
        approx = np.array([_nearest(fmpq(int(z), den)) for z in Z.ravel().tolist()], dtype=np.float64).reshape(Z.shape)
    else:
        approx = Z.astype(np.float64) / float(den) if den < 2**53 else np.array(
            [_nearest(fmpq(int(z), den)) for z in Z.ravel().tolist()], dtype=np.float64
        ).reshape(Z.shape)
    return TransportCost(Z, den, approx)


def _nearest(q: fmpq) -> float:
    """The double nearest q, or +-inf beyond the doubles (the filter then leaves the entry to exact arithmetic)."""
    try:
        return float_of(q)
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")


def read_transport(a: Any, b: Any, M: Any, float_masses: bool | None = None) -> TransportProblem:
    """The problem in POT's order (a, b, M), checked: shapes, masses >= 0, equal totals under the float rule.
    ``float_masses``: whether the masses are binary floats (the rule's condition), when they come as rationals
    already (a .npy file of floats read exactly); by default, whether a or b holds floats."""
    cost = read_cost(M)
    n, m = cost.shape
    av = read_masses(a, n, "a")
    bv = float_rule(av, read_masses(b, m, "b"), holds_floats(a, b) if float_masses is None else float_masses)
    sa, sb = sum(av, fmpq(0)), sum(bv, fmpq(0))
    if sa != sb:
        raise TransportInputError(
            f"marginals have different totals: sum(a) = {figure(sa)}, sum(b) = {figure(sb)} "
            "(exact totals must agree; float marginals within a relative 1e-12, and b is then scaled to sum(a))"
        )
    if sa == 0:
        raise TransportInputError("the marginals carry no mass (sum(a) = 0)")
    return TransportProblem(av, bv, cost)


def read_masses(x: Any, size: int, name: str) -> list[fmpq]:
    """A marginal of ``size`` non-negative masses read exactly; None or empty is uniform, 1/size each; one row or one
    column is the vector, POT's batch of histograms (a 2-D b) is refused in one line (:func:`one_marginal`)."""
    x = one_marginal(x, name, TransportInputError)
    if x is None or (isinstance(x, (list, tuple)) and not x):
        return [fmpq(1, size)] * size
    if not isinstance(x, (list, tuple)):
        raise TransportInputError(f"marginal {name} must be a list or 1-D array of numbers")
    try:
        seen: dict[Any, fmpq] = {}  # a marginal often repeats one value (uniform): each distinct value is read once
        v = [seen[t] if t in seen else seen.setdefault(t, parse_rational(t, dyadic_floats=True)) for t in x] if _hashable(x) else [
            parse_rational(t, dyadic_floats=True) for t in x
        ]
    except ParseError as e:
        raise TransportInputError(f"marginal {name}: {e}") from None
    if len(v) != size:
        side = "rows" if name == "a" else "columns"
        raise TransportInputError(f"shapes disagree: M has {size} {side}, but {name} has {len(v)} entries")
    for i, w in enumerate(v):
        if w < 0:
            raise TransportInputError(f"marginal {name} must have masses >= 0, but {name}[{i}] = {figure(w)}")
    return v


def _hashable(x: Sequence[Any]) -> bool:
    """Whether every value is a float, an int or a string (values that compare equal are then the same number)."""
    return all(type(t) in (float, int, str) for t in x)
