r"""A float GroupSort network trained in numpy, then fixed as dyadic rationals and bounded rigorously.

Architecture (Anil, Lucas, Grosse 2019, GroupSort with groups of 2 = MaxMin):
x in R^d -> W1 x + b1 (W units) -> MaxMin -> W2 . + b2 (W units) -> MaxMin -> w3 . + b3.
Trained by Adam on the mean squared error at fresh uniform samples of [0, 1]^d,
a fixed number of steps from a fixed seed (so a run is reproducible), float64.

Certification: the weights are rounded to multiples of 2^-20 (exact dyadic
rationals, so the network certified is exactly the one stated) and bounded on
boxes by interval bound propagation in arb (:class:`NetBounds`): each layer is
an arb matrix product (midpoint-radius balls, rigorous), MaxMin takes the
endpoint-wise max and min of each pair. These are the rigorous box bounds that
:func:`constructions.approximation.branch_bound.search` needs, so the same
branch-and-bound certifies the trained network's sup error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from flint import arb, arb_mat, fmpq

from attncert.constructions.approximation.boxes import Box

WEIGHT_BITS = 20


def maxmin(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MaxMin on pairs of columns (2j, 2j+1): (max, min); and whether the first of each pair is the max."""
    a, b = Z[:, 0::2], Z[:, 1::2]
    first = a >= b
    out = np.empty_like(Z)
    out[:, 0::2], out[:, 1::2] = np.where(first, a, b), np.where(first, b, a)
    return out, first


def _maxmin_back(G: np.ndarray, first: np.ndarray) -> np.ndarray:
    ga, gb = G[:, 0::2], G[:, 1::2]
    out = np.empty_like(G)
    out[:, 0::2], out[:, 1::2] = np.where(first, ga, gb), np.where(first, gb, ga)
    return out


@dataclass
class Net:
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    w3: np.ndarray
    b3: np.ndarray

    @property
    def parameters(self) -> int:
        return sum(p.size for p in (self.W1, self.b1, self.W2, self.b2, self.w3, self.b3))

    def rounded(self) -> "Net":
        s = 2.0**WEIGHT_BITS
        return Net(*(np.round(p * s) / s for p in (self.W1, self.b1, self.W2, self.b2, self.w3, self.b3)))


def train(f: Callable[[np.ndarray], np.ndarray], d: int, width: int, steps: int, seed: int = 0) -> Net:
    """Adam on the mean squared error at 512 fresh uniform samples per step (float64)."""
    rng = np.random.default_rng(seed)
    net = Net(
        rng.normal(0, 1 / np.sqrt(d), (width, d)), np.zeros(width),
        rng.normal(0, 1 / np.sqrt(width), (width, width)), np.zeros(width),
        rng.normal(0, 1 / np.sqrt(width), width), np.zeros(()),
    )  # fmt: skip
    params = [net.W1, net.b1, net.W2, net.b2, net.w3, net.b3]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        X = rng.random((512, d))
        y = f(X)
        Z1 = X @ net.W1.T + net.b1
        A1, f1 = maxmin(Z1)
        Z2 = A1 @ net.W2.T + net.b2
        A2, f2 = maxmin(Z2)
        r = (A2 @ net.w3 + net.b3 - y) * (2 / len(y))
        gA2 = np.outer(r, net.w3)
        gZ2 = _maxmin_back(gA2, f2)
        gZ1 = _maxmin_back(gZ2 @ net.W2, f1)
        grads = [gZ1.T @ X, gZ1.sum(0), gZ2.T @ A1, gZ2.sum(0), A2.T @ r, r.sum()]
        lr = 1e-2 * (0.1 ** (t / steps))
        for p, g, mi, vi in zip(params, grads, m, v):
            mi *= 0.9
            mi += 0.1 * g
            vi *= 0.999
            vi += 0.001 * g * g
            p -= lr * (mi / (1 - 0.9**t)) / (np.sqrt(vi / (1 - 0.999**t)) + 1e-8)
    return net


def _exact(a: np.ndarray) -> arb_mat:
    """A float64 matrix of dyadic entries as an exact arb matrix."""
    rows = a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(-1, 1)
    return arb_mat([[arb(fmpq(int(round(x * 2**WEIGHT_BITS)), 2**WEIGHT_BITS)) for x in row] for row in rows])


class NetBounds:
    """Rigorous bounds of a rounded :class:`Net` on boxes and at points (interval bound propagation in arb)."""

    def __init__(self, net: Net):
        self.W1, self.b1, self.W2, self.b2 = _exact(net.W1), _exact(net.b1), _exact(net.W2), _exact(net.b2)
        self.w3, self.b3 = _exact(net.w3.reshape(1, -1)), _exact(np.array([[float(net.b3)]]))

    def _propagate(self, X: arb_mat) -> list[arb]:
        """Balls containing the output for every column of X (each column a ball vector of inputs)."""
        ones = arb_mat([[1] * X.ncols()])
        Z = self.W1 * X + self.b1 * ones
        Z = _maxmin_balls(Z)
        Z = self.W2 * Z + self.b2 * ones
        Z = _maxmin_balls(Z)
        out = self.w3 * Z + self.b3 * ones
        return [out[0, j] for j in range(out.ncols())]

    def on_boxes(self, boxes: Sequence[Box]) -> tuple[list[fmpq], list[fmpq]]:
        cols = [[_ball(lo, hi) for lo, hi in bx.sides()] for bx in boxes]
        out = self._propagate(arb_mat([[c[k] for c in cols] for k in range(len(cols[0]))]))
        return [b.upper().fmpq() for b in out], [b.lower().fmpq() for b in out]

    def at_points(self, points: Sequence[Sequence[fmpq]]) -> list[tuple[fmpq, fmpq]]:
        out = self._propagate(arb_mat([[arb(p[k]) for p in points] for k in range(len(points[0]))]))
        return [(b.lower().fmpq(), b.upper().fmpq()) for b in out]


def _ball(lo: fmpq, hi: fmpq) -> arb:
    return arb(lo).union(arb(hi))


def _maxmin_balls(Z: arb_mat) -> arb_mat:
    """MaxMin of rows (2j, 2j+1) of a ball matrix: [max(lo), max(hi)] and [min(lo), min(hi)] per column."""
    rows = [[Z[i, j] for j in range(Z.ncols())] for i in range(Z.nrows())]
    out = []
    for a, b in zip(rows[0::2], rows[1::2]):
        out.append([_span(max(x.lower(), y.lower()), max(x.upper(), y.upper())) for x, y in zip(a, b)])
        out.append([_span(min(x.lower(), y.lower()), min(x.upper(), y.upper())) for x, y in zip(a, b)])
    return arb_mat(out)


def _span(lo: arb, hi: arb) -> arb:
    return lo if lo == hi else lo.union(hi)
