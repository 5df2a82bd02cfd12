r"""Signs of all n m reduced costs r_ij = M_ij - f_i - g_j, proven: a float64 filter with an a priori bound,
exact rationals where the filter cannot decide.

**The filter.** f~, g~ are the doubles nearest the exact potentials (|f~ - f| <= u |f~|, u = 2^-53, Higham,
*Accuracy and Stability of Numerical Algorithms*, 2nd ed., Thm 2.3), M~ the cost's approximation
(|M~ - M| <= 3u |M~| + 2^-1074, :class:`~constructions.transport.problem.TransportCost`), and

    s = fl(fl(M~ - f~) - g~),

two IEEE subtractions (Higham Thm 2.2: fl(x - y) = (x - y)(1 + d), |d| <= u, and exact when the result is
subnormal). With t = M~ - f~, fl(t) = t (1 + d1) and s = (fl(t) - g~)(1 + d2):

    s - (M~ - f~ - g~) = t d1 + s d2 / (1 + d2),   so   |s - r| <= u |t| + u |s| / (1 - u) + 3u |M~| + u |f~| + u |g~| + 2^-1074,

and, from the same two equations, |t| <= (|s| / (1 - u) + |g~|) / (1 - u) and |M~| <= |t| + |f~|, so every term is
a multiple of S = |s| + |f~| + |g~|: |s - r| <= 10.1u S + 2^-1074. The test is against

    B = 2^-46 S + 2^-1000    (128u per unit of S),

whose float evaluation (two additions and a product by a power of two, each within a factor 1 +- u) is at least
(1 - 3u) of it, far above 10.1u S: s > B proves r > 0 and s < -B proves r < 0. Everything else (|s| <= B, and
every entry where a NaN or an infinity appears, for which both comparisons are false) is decided in QQ from
the exact entry of M and the exact potentials. The a priori model assumes numpy's ``subtract``, ``add``,
``abs`` and ``multiply`` are the IEEE operations entry by entry, as in :mod:`exact.roundoff`; no summation is
involved, so neither the order nor FMA can matter. Two n x m arrays (s and B), no more.

On an optimal basis the undecided entries are the tree's arcs (r = 0 exactly) and the cost's exact ties:
O(n + m) exact comparisons for a generic cost, instead of n m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import fmpq

from attncert.constructions.transport.problem import TransportCost
from attncert.exact.roundoff import float_of

#: B = FILTER (|s| + |f~| + |g~|) + FLOOR (module docstring): 2^-46 = 128 u.
FILTER = 2.0**-46
FLOOR = 2.0**-1000


def nearest(q: fmpq) -> float:
    """The double nearest q; +-inf beyond the doubles (the filter then leaves the entries to QQ)."""
    try:
        return float_of(q)
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")


def exact_reduced(cost: TransportCost, f: list[fmpq], g: list[fmpq], rows: np.ndarray, cols: np.ndarray) -> list[fmpq]:
    """M_ij - f_i - g_j at the entries (rows[k], cols[k]), in QQ."""
    M = cost.entries(rows, cols)
    return [c - f[i] - g[j] for c, i, j in zip(M, np.asarray(rows).tolist(), np.asarray(cols).tolist())]


@dataclass
class ReducedCosts:
    """The float reduced costs s and their bound B for potentials (f, g) (module docstring)."""

    cost: TransportCost
    f: list[fmpq]
    g: list[fmpq]

    def __post_init__(self) -> None:
        ff = np.array([nearest(x) for x in self.f])
        gg = np.array([nearest(x) for x in self.g])
        with np.errstate(all="ignore"):
            s = self.cost.approx - ff[:, None]
            s -= gg[None, :]
            B = np.abs(s)
            B += np.abs(ff)[:, None]
            B += np.abs(gg)[None, :]
            B *= FILTER
            B += FLOOR
        self.s, self.bound = s, B

    def exact(self, rows: np.ndarray, cols: np.ndarray) -> list[fmpq]:
        """The exact reduced costs at the entries (rows[k], cols[k])."""
        return exact_reduced(self.cost, self.f, self.g, rows, cols)

    def negative(self) -> tuple[int, int] | None:
        """An entry with r < 0, proven: the most negative float value among those the filter proves negative,
        else the first (row-major) undecided entry whose exact value is negative; None when r >= 0 everywhere."""
        with np.errstate(invalid="ignore"):
            sure = self.s < -self.bound
            if sure.any():
                masked = np.where(sure, self.s, np.inf)
                k = int(np.argmin(masked))
                return divmod(k, self.s.shape[1])
            open_ = ~(self.s > self.bound)
        rows, cols = np.nonzero(open_)
        for i, j, r in zip(rows.tolist(), cols.tolist(), self.exact(rows, cols)):
            if r < 0:
                return i, j
        return None

    def first_negative(self) -> tuple[int, int] | None:
        """The first entry in row-major order with r < 0 (Bland's rule), proven; None when r >= 0 everywhere."""
        with np.errstate(invalid="ignore"):
            maybe = ~(self.s > self.bound)  # r < 0 is possible only here
        rows, cols = np.nonzero(maybe)
        for i, j, r in zip(rows.tolist(), cols.tolist(), self.exact(rows, cols)):
            if r < 0:
                return i, j
        return None

    def minimum(self, rows_in: np.ndarray, cols_in: np.ndarray) -> tuple[int, int, fmpq] | None:
        """The entry (i, j) with i in ``rows_in`` and j in ``cols_in`` (boolean masks) of least exact r, the first in
        row-major order among ties, and that r; None when the block is empty."""
        if not rows_in.any() or not cols_in.any():
            return None
        ri, ci = np.nonzero(rows_in)[0], np.nonzero(cols_in)[0]
        s, B = self.s[np.ix_(ri, ci)], self.bound[np.ix_(ri, ci)]
        with np.errstate(invalid="ignore"):
            hi = s + B  # r <= hi wherever the filter holds (finite entries)
            cap = np.min(np.where(np.isfinite(hi), hi, np.inf))
            keep = ~(s - B > cap)  # entries whose r may be <= cap: the minimum is among them
        kr, kc = np.nonzero(keep)
        rows, cols = ri[kr], ci[kc]
        values = self.exact(rows, cols)
        best = min(range(len(values)), key=lambda k: (values[k], rows[k], cols[k]))
        return int(rows[best]), int(cols[best]), values[best]
