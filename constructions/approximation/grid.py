r"""The sample grid, the rounded samples y_i, and the slope of the McShane extension.

Grid: x_i = j_i / m for j_i in {0, ..., m}^d, G = (m + 1)^d points, numbered
row-major (x1 slowest), step h = 1/m.

Samples: y_i = Y_i / 2^b, the midpoint of a rigorous interval enclosure of
f(x_i) rounded to b fractional bits, so |y_i - f(x_i)| <= 2^-b (checked: the
enclosure's width must be at most 2^-b).

Network slope: the McShane extension of a Lipschitz target uses L itself; for a
Hölder target it uses L_h = H h^(alpha - 1) = H m^(1 - alpha) (exact when that
is rational, otherwise rounded up to a multiple of 2^-16), with which
|f - g| <= H h^alpha (2^-alpha + 1/2) + 2^-b (docs/approximation.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import ctx, fmpq
from sympy import integer_nthroot

from attncert.constructions.approximation.targets import Target
from attncert.exact.errors import AttncertError
from attncert.exact.expressions import compile_enclosure, point, variables
from attncert.exact.expressions.enclose import display, endpoints

#: Fractional bits of the Hölder slope when m^(1 - alpha) is irrational.
SLOPE_BITS = 16


@dataclass(frozen=True)
class Grid:
    d: int
    m: int

    @property
    def size(self) -> int:
        return (self.m + 1) ** self.d

    def points(self) -> np.ndarray:
        """The integer coordinates j (x = j / m), shape (G, d), row-major."""
        axes = np.arange(self.m + 1, dtype=np.int64)
        return np.stack(np.meshgrid(*([axes] * self.d), indexing="ij"), axis=-1).reshape(-1, self.d)


def samples(t: Target, grid: Grid, bits: int, prec: int) -> list[int]:
    """Y_i with y_i = Y_i / 2^bits and |y_i - f(x_i)| <= 2^-bits, from enclosures at ``prec`` bits."""
    f = compile_enclosure(t.expr, variables(t.d))
    scale = fmpq(2) ** bits
    out = []
    with ctx.workprec(prec):
        for j in grid.points():
            lo, hi = endpoints(f([point(fmpq(int(v), grid.m)) for v in j]))
            if (hi - lo) * scale > 1:
                raise AttncertError(f"f(x) at the grid point {list(map(int, j))}/{grid.m} is enclosed only to a width of {display(hi - lo, 3)}: raise --prec")
            mid = (lo + hi) / 2 * scale
            out.append(int((mid + fmpq(1, 2)).floor()))
    return out


def network_slope(t: Target, m: int) -> fmpq:
    """L for a Lipschitz target; H m^(1 - alpha), rounded up to a multiple of 2^-16 when irrational, for a Hölder one."""
    if t.lipschitz:
        return t.constant
    p, q = int(t.alpha.p), int(t.alpha.q)
    root, exact = integer_nthroot(m ** (q - p), q)
    if exact:
        return t.constant * int(root)
    k, exact = integer_nthroot(m ** (q - p) * 2 ** (SLOPE_BITS * q), q)
    return t.constant * fmpq(int(k) + (0 if exact else 1), 2**SLOPE_BITS)
