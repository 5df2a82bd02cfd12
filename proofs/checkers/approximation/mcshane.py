r"""The checker's own McShane interpolant g(x) = max_i (y_i - L ||x - x_i||_inf) on the grid {0..m}^d / m.

Independent of :mod:`constructions.approximation` (which it never imports): it
uses the tensor structure of the grid. On a box with sides [lo_k, hi_k] the
max-norm distances split into one-dimensional ones,

    dist_min(x_i, B) = max_k dmin_k(j_{i,k}),  dmin_k(j) = max(0, lo_k - j/m, j/m - hi_k),
    dist_max(x_i, B) = max_k dmax_k(j_{i,k}),  dmax_k(j) = max(j/m - lo_k, hi_k - j/m),

so each is a max over k of d vectors of length m + 1 broadcast to the
(m + 1)^d grid (row-major, x1 slowest). Then sup_B g = max_i (y_i - L dist_min)
and inf_B g >= max_i (y_i - L dist_max), exactly; a point is a box of width 0.
Integers throughout (common denominators), int64 only below 2^62, never floats.

Also here: the piece tables a McShane RASP program must carry
(:func:`piece_tables`). The stated modulus on grid pairs is decided in
:mod:`.modulus`.
"""

from __future__ import annotations

from math import lcm
from typing import Sequence

import numpy as np
from flint import fmpq

INT64_LIMIT = 1 << 62


def _array(values: list[int], bound: int) -> np.ndarray:
    return np.array(values, dtype=np.int64 if bound < INT64_LIMIT else object)


class Interpolant:
    """g(x) = max_i (y_i - L ||x - x_i||_inf), y given on the grid in row-major order."""

    def __init__(self, d: int, m: int, y: Sequence[fmpq], L: fmpq):
        if len(y) != (m + 1) ** d:
            raise ValueError(f"{len(y)} samples for a grid of {(m + 1) ** d} points")
        self.d, self.m, self.L = d, m, L
        self.den = lcm(*(int(v.q) for v in y))
        self.num = [int(v * self.den) for v in y]
        self.shape = (m + 1,) * d
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def bounds(self, sides: Sequence[tuple[fmpq, fmpq]]) -> tuple[fmpq, fmpq]:
        """(sup_B g, a lower bound of inf_B g) on the box with these sides."""
        s = lcm(self.m, *(int(lo.q) for lo, _ in sides), *(int(hi.q) for _, hi in sides))
        p = int(self.L.p)
        num, grid = self._scaled(s)
        # value = y - L dist = (num q s - p den (dist s)) / (den q s), with dist s an integer.
        dmin = dmax = None
        for k, (lo, hi) in enumerate(sides):
            a, b = int(lo * s), int(hi * s)
            view = [1] * self.d
            view[k] = self.m + 1
            near = np.maximum(np.maximum(a - grid, grid - b), 0).reshape(view)
            far = np.maximum(grid - a, b - grid).reshape(view)
            dmin = near if dmin is None else np.maximum(dmin, near)
            dmax = far if dmax is None else np.maximum(dmax, far)
        den = self.den * int(self.L.q) * s
        top = (num - p * self.den * dmin).max()
        bottom = (num - p * self.den * dmax).max()
        return fmpq(int(top), den), fmpq(int(bottom), den)

    def _scaled(self, s: int) -> tuple[np.ndarray, np.ndarray]:
        """num q s on the grid tensor and the grid coordinates j s / m, int64 when every value stays below 2^62."""
        if s not in self._cache:
            q, p = int(self.L.q), int(self.L.p)
            big = max(map(abs, self.num), default=0) * q * s + p * self.den * s
            self._cache[s] = (_array([v * q * s for v in self.num], big).reshape(self.shape), _array([j * (s // self.m) for j in range(self.m + 1)], big))
        return self._cache[s]

    def value(self, x: Sequence[fmpq]) -> fmpq:
        """g(x), exactly."""
        return self.bounds([(c, c) for c in x])[0]


def piece_tables(d: int, m: int, y: Sequence[fmpq], L: fmpq, length: int) -> tuple[list[int], list[fmpq], list[fmpq]]:
    """source, slope, intercept at positions 0..length-1 of a McShane program with P = 2^ceil(log2 2d)
    pieces per grid point: piece (i, k, s) at t = i P + 2k + s is y_i - s' L (x_k - x_{i,k}), s' = 1 - 2s;
    pieces k >= d are the constant y_i; groups past the grid repeat group 0."""
    P = 1 << (2 * d - 1).bit_length()
    G = (m + 1) ** d
    source, slope, intercept = [], [], []
    for t in range(length):
        i, r = divmod(t, P)
        i = i if i < G else 0
        k, s = divmod(r, 2)
        sign = 1 - 2 * s
        source.append(k)
        if k < d:
            coord = (i // (m + 1) ** (d - 1 - k)) % (m + 1)
            slope.append(-sign * L)
            intercept.append(y[i] + sign * L * fmpq(coord, m))
        else:
            slope.append(fmpq(0))
            intercept.append(y[i])
    return source, slope, intercept
