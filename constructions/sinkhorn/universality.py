r"""Sinkhorn Transformers of growing width approximating continuous coupling systems.

A coupling system F maps two texts (mu, nu) to a coupling F(mu, nu) with
marginals mu and nu. The approximation theorem for Sinkhorn Transformers says
that such networks approximate every continuous coupling system in W1. We
demonstrate it on three concrete systems, for texts on the line with support
points in [-1, 1]:

* ``independent``: F(mu, nu) = mu (x) nu;
* ``entropic``: F(mu, nu) = S_eps0(c0; mu, nu), the entropic plan of the
  cost c0(x, y) = |x - y| (not of the form -<Q(x), K(y)> for finite width);
* ``mixture``: (F_independent + F_entropic) / 2.

The network of width w: Q(x) = phi_w(x) M and K(y) = phi_w(y), with
phi_w(x) = (T_0(x), ..., T_{w-1}(x)) the Chebyshev polynomials (exact on
rational x) and M a rational w x w matrix, then Sinkhorn at temperature eps.
Its cost is C = -Phi_X M Phi_Y^T. By the fixed-point theorem
(:mod:`constructions.sinkhorn.fixed_point`) the target F is reached exactly by
any cost equal to -eps log F up to terms f(x) + g(y), so M is fitted (in
floating point, by least squares) to the doubly centred matrix eps log F and
then fixed as a rational matrix; only the fit uses floats. Everything after
it is certified: the network's coupling is a Ball enclosure, and W1 between
it and the target is enclosed by :func:`constructions.sinkhorn.wasserstein.w1_enclosure`.

What this shows, and what it does not: for the given texts, the certified W1
error falls as the width grows (for n support points, width n interpolates).
The encoders here act pointwise and are fitted per pair of texts; uniformity
over a compact family of texts needs in-context encoders (exact transformer
layers), which the encoder interface accepts once they exist.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from flint import arb, ctx, fmpq

from constructions.sinkhorn.operator import SinkhornResult, sinkhorn
from constructions.sinkhorn.transformer import LinearEncoder, SinkhornTransformer
from constructions.sinkhorn.wasserstein import W1Enclosure, w1_enclosure
from exact.domains.ball import Ball
from exact.matrices import Rows

#: Fitted weights are rounded to multiples of 2^-FIT_BITS.
FIT_BITS = 24



@dataclass(frozen=True)
class TargetPlan:
    """An enclosure of F(mu, nu), and the certified Sinkhorn run behind it where there is one."""

    plan: list[list[arb]]
    run: SinkhornResult | None = None


Target = Callable[[list[fmpq], Rows, list[fmpq], Rows, int], TargetPlan]


def chebyshev_features(width: int) -> Callable[[Rows], Rows]:
    """x -> (T_0(x), ..., T_{width-1}(x)) on the first coordinate, exactly (T_{k+1} = 2x T_k - T_{k-1})."""

    def phi(points: Rows) -> Rows:
        out = []
        for p in points:
            x, row = p[0], [fmpq(1), p[0]]
            while len(row) < width:
                row.append(2 * x * row[-1] - row[-2])
            out.append(row[:width])
        return out

    return phi


def independent(a: list[fmpq], xs: Rows, b: list[fmpq], ys: Rows, prec: int) -> TargetPlan:
    """mu (x) nu = a b^T / s, exact (as exact balls)."""
    s = sum(a, fmpq(0))
    with ctx.workprec(prec):
        return TargetPlan([[arb(ai * bj / s) for bj in b] for ai in a])


def entropic(eps0: fmpq) -> Target:
    """The entropic plan of c0(x, y) = |x - y| at temperature eps0, certified to 1e-30."""

    def target(a: list[fmpq], xs: Rows, b: list[fmpq], ys: Rows, prec: int) -> TargetPlan:
        r = sinkhorn(entropic_cost(xs, ys), a, b, eps0, Ball(prec))
        if not r.certified:
            raise ArithmeticError(f"target plan not certified: {r.status}")
        return TargetPlan(r.plan, r)

    return target


def mixture(f: Target, g: Target, theta: fmpq = fmpq(1, 2)) -> Target:
    """theta F + (1 - theta) G."""

    def target(a: list[fmpq], xs: Rows, b: list[fmpq], ys: Rows, prec: int) -> TargetPlan:
        F, G = f(a, xs, b, ys, prec), g(a, xs, b, ys, prec)
        with ctx.workprec(prec):
            plan = [[theta * u + (1 - theta) * v for u, v in zip(r, s)] for r, s in zip(F.plan, G.plan)]
        return TargetPlan(plan, F.run or G.run)

    return target


def entropic_cost(xs: Rows, ys: Rows) -> Rows:
    """c0(x_i, y_j) = |x_i - y_j| on the first coordinate."""
    return [[abs(x[0] - y[0]) for y in ys] for x in xs]


def systems(eps0: fmpq) -> dict[str, Target]:
    """The three demonstration systems, by name."""
    ent = entropic(eps0)
    return {"independent": independent, "entropic": ent, "mixture": mixture(independent, ent)}


def fit_weights(F: list[list[arb]], phi_x: Rows, phi_y: Rows, eps: fmpq) -> Rows:
    """Rational M with Phi_X M Phi_Y^T close (least squares) to eps log F, doubly centred."""
    T = float(eps) * np.log(np.array([[float(x.mid()) for x in row] for row in F]))
    T = T - T.mean(1, keepdims=True) - T.mean(0, keepdims=True) + T.mean()
    X = np.array([[float(v) for v in r] for r in phi_x])
    Y = np.array([[float(v) for v in r] for r in phi_y])
    M = np.linalg.pinv(X) @ T @ np.linalg.pinv(Y).T
    scale = 2**FIT_BITS
    return [[fmpq(int(round(v * scale)), scale) for v in row] for row in M]


def network(width: int, F: list[list[arb]], xs: Rows, ys: Rows, eps: fmpq) -> SinkhornTransformer:
    """The width-w Sinkhorn Transformer fitted to the target coupling F."""
    phi = chebyshev_features(width)
    M = fit_weights(F, phi(xs), phi(ys), eps)
    identity = [[fmpq(int(i == j)) for j in range(width)] for i in range(width)]
    return SinkhornTransformer(LinearEncoder(M, phi, "chebyshev-linear"), LinearEncoder(identity, phi, "chebyshev"), eps)


@dataclass(frozen=True)
class WidthRow:
    """One width of the sweep: the certified W1 enclosure and the Sinkhorn run behind it."""

    width: int
    weights: Rows
    run: SinkhornResult
    w1: W1Enclosure

    @property
    def w1_lo(self) -> fmpq:
        return self.w1.lo

    @property
    def w1_hi(self) -> fmpq:
        return self.w1.hi


def sweep(
    target: Target, xs: Rows, a: list[fmpq], ys: Rows, b: list[fmpq], eps: fmpq, widths: Sequence[int], prec: int = 128
) -> tuple[TargetPlan, list[WidthRow]]:
    """The target's enclosure, and certified W1(network_w(mu, nu), F(mu, nu)) for each width w."""
    F = target(a, xs, b, ys, prec)
    rows = []
    for w in widths:
        net = network(w, F.plan, xs, ys, eps)
        r = net(xs, a, ys, b, Ball(prec))
        if not r.certified:
            raise ArithmeticError(f"width {w}: coupling not certified: {r.status}")
        rows.append(WidthRow(w, net.query.weight, r, w1_enclosure(r.plan, F.plan, sum(a, fmpq(0)), xs, ys)))
    return F, rows


def texts(n: int, m: int, seed: int) -> tuple[Rows, list[fmpq], Rows, list[fmpq]]:
    """Two random texts on [-1, 1]: distinct support points k/20 and random positive weights."""
    rng = random.Random(seed)
    xs = [[fmpq(k, 20)] for k in sorted(rng.sample(range(-20, 21), n))]
    ys = [[fmpq(k, 20)] for k in sorted(rng.sample(range(-20, 21), m))]
    wa = [rng.randint(1, 9) for _ in range(n)]
    wb = [rng.randint(1, 9) for _ in range(m)]
    return xs, [fmpq(w, sum(wa)) for w in wa], ys, [fmpq(w, sum(wb)) for w in wb]
