r"""Dyadic boxes of [0, 1]^d and exact bounds of g = max_i (y_i - L ||x - x_i||_inf) on them.

**Boxes.** Bisection always splits the first of the widest sides, so a box is
(D, (a_1, ..., a_d)): after D splits side k has level l_k = floor(D/d) + [k <
D mod d] and is [a_k / 2^l_k, (a_k + 1) / 2^l_k]; its children split side
D mod d. A list of such boxes is recorded in certificates as [D, a_1, ..., a_d].

**Bounds of g.** For a box B let dmin_i(B) and dmax_i(B) be the least and the
largest max-norm distance from x_i to a point of B: per side the distance from
x_{i,k} to [lo_k, hi_k] (0 inside) and to the farther end, then the max over k.
Then, exactly,

    sup_B g  = max_i (y_i - L dmin_i(B))     (sup of a max is the max of the sups),
    inf_B g >= max_i (y_i - L dmax_i(B))     (g >= each piece, whose inf on B is that).

Everything is an integer after scaling: with boxes at common level E (units
2^-E), grid points j/m, y_i = Y_i / 2^b and L = p/q, the value y_i - L dist is
(Y_i q m 2^E - p 2^b dist') / (q m 2^(E+b)), dist' the distance in units of
1/(m 2^E). The numerators are int64 when their bound (checked before computing)
is below 2^62, Python integers otherwise; never floats. Points are boxes of
width 0 (dmin = dmax), which gives g exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from flint import fmpq

INT64_LIMIT = 1 << 62
#: Entries per vectorised block (boxes x grid points x d).
BLOCK = 1 << 20


@dataclass(frozen=True, order=True)
class Box:
    depth: int
    corner: tuple[int, ...]

    def levels(self) -> list[int]:
        d = len(self.corner)
        q, r = divmod(self.depth, d)
        return [q + (1 if k < r else 0) for k in range(d)]

    def children(self) -> tuple["Box", "Box"]:
        k = self.depth % len(self.corner)
        lo = list(self.corner)
        lo[k] *= 2
        hi = list(lo)
        hi[k] += 1
        return Box(self.depth + 1, tuple(lo)), Box(self.depth + 1, tuple(hi))

    def sides(self) -> list[tuple[fmpq, fmpq]]:
        return [(fmpq(a, 2**l), fmpq(a + 1, 2**l)) for a, l in zip(self.corner, self.levels())]

    def centre(self) -> list[fmpq]:
        return [(lo + hi) / 2 for lo, hi in self.sides()]

    def to_json(self) -> list[int]:
        return [self.depth, *self.corner]


UNIT = lambda d: Box(0, (0,) * d)  # noqa: E731


@dataclass(frozen=True)
class Pieces:
    """The data of g: grid points j (x = j/m), numerators Y (y = Y / 2^bits), slope L = p/q."""

    J: np.ndarray  # (G, d) int64
    m: int
    Y: tuple[int, ...]
    bits: int
    slope: fmpq

    def bounds(self, lo: np.ndarray, hi: np.ndarray, E: int) -> tuple[list[fmpq], list[fmpq]]:
        """(sup_B g, a lower bound of inf_B g) for boxes with integer ends lo, hi (shape (B, d), units 2^-E)."""
        p, q, b = int(self.slope.p), int(self.slope.q), self.bits
        Q = q * self.m * 2 ** (E + b)
        ymax = max(abs(y) for y in self.Y)
        safe = ymax * q * self.m * 2**E + p * 2**b * self.m * 2**E < INT64_LIMIT
        dtype = np.int64 if safe else object
        Ys = np.array([y * q * self.m * 2**E for y in self.Y], dtype=dtype)
        xs = self.J.astype(dtype) * (2**E)  # grid points in units 1/(m 2^E)
        sups, infs = [], []
        rows = max(1, BLOCK // (len(self.Y) * self.J.shape[1]))
        for s in range(0, len(lo), rows):
            L_, H_ = lo[s : s + rows].astype(dtype) * self.m, hi[s : s + rows].astype(dtype) * self.m
            x = xs[None, :, :]
            l, h = L_[:, None, :], H_[:, None, :]
            zero = np.zeros((), dtype=dtype)
            dmin = np.maximum(np.maximum(l - x, x - h), zero).max(axis=2)
            dmax = np.maximum(x - l, h - x).max(axis=2)
            sups += [fmpq(int(v), Q) for v in (Ys[None, :] - p * 2**b * dmin).max(axis=1)]
            infs += [fmpq(int(v), Q) for v in (Ys[None, :] - p * 2**b * dmax).max(axis=1)]
        return sups, infs

    def on_boxes(self, boxes: Sequence[Box]) -> tuple[list[fmpq], list[fmpq]]:
        E = max(max(bx.levels()) for bx in boxes)
        lo = np.array([[a << (E - l) for a, l in zip(bx.corner, bx.levels())] for bx in boxes], dtype=object)
        hi = np.array([[(a + 1) << (E - l) for a, l in zip(bx.corner, bx.levels())] for bx in boxes], dtype=object)
        return self.bounds(_ints(lo), _ints(hi), E)

    def at_points(self, points: Sequence[Sequence[fmpq]]) -> list[tuple[fmpq, fmpq]]:
        """g exactly at dyadic points (as intervals [g, g], the form :func:`.branch_bound.search` takes)."""
        E = max(int(c.q).bit_length() - 1 for x in points for c in x)
        X = _ints(np.array([[int(c * 2**E) for c in x] for x in points], dtype=object))
        return [(v, v) for v in self.bounds(X, X, E)[0]]


def _ints(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int64) if a.size == 0 or max(abs(int(v)) for v in a.flat) < INT64_LIMIT else a
