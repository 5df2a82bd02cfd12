r"""Coupling systems: maps (mu, nu) -> a coupling F(mu, nu) with marginals mu and nu.

Three concrete systems, for texts on the line (first coordinate), each
enclosed rigorously:

* ``independent``: F(mu, nu) = mu (x) nu = a b^T (exact; the texts' weights sum to 1);
* ``entropic``: F(mu, nu) = S_eps0(c0; a, b), the entropic plan of c0(x, y) = |x - y|,
  certified to 1e-30 (:func:`constructions.sinkhorn.operator.sinkhorn`);
* ``mixture``: (independent + entropic) / 2.

The entropic plan depends on the texts only through the pointwise cost, so a
cost -<Q(x), K(y)> + f(x) + g(y) close to |x - y| reproduces it; the
mixture's log-density log(1 + P_ij / (a_i b_j)) depends on both texts' scalings,
which is what in-context encoders are for.
"""

from __future__ import annotations

from dataclasses import dataclass
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn.operator import SinkhornResult, sinkhorn
from attncert.constructions.sinkhorn.texts import Text
from attncert.exact.domains.ball import Ball
from attncert.exact.matrices import Rows

NAMES = ("independent", "entropic", "mixture")


@dataclass(frozen=True)
class TargetPlan:
    """An enclosure of F(mu, nu), and the certified Sinkhorn run behind it where there is one."""

    plan: list[list[arb]]
    run: SinkhornResult | None = None


def entropic_cost(mu: Text, nu: Text) -> Rows:
    """c0(x_i, y_j) = |x_i - y_j| on the first coordinate."""
    return [[abs(x[0] - y[0]) for y in nu.points] for x in mu.points]


def entropic_plan(mu: Text, nu: Text, eps0: fmpq, prec: int) -> SinkhornResult:
    """S_eps0(|x - y|; a, b), certified to 1e-30; ArithmeticError if it cannot be."""
    r = sinkhorn(entropic_cost(mu, nu), mu.weights, nu.weights, eps0, Ball(prec))
    if not r.certified:
        raise ArithmeticError(f"target plan not certified: {r.status}")
    return r


def target_plans(mu: Text, nu: Text, eps0: fmpq, prec: int) -> dict[str, TargetPlan]:
    """F(mu, nu) for the three systems, sharing one certified entropic plan."""
    E = entropic_plan(mu, nu, eps0, prec)
    with ctx.workprec(prec):
        ind = [[arb(ai * bj) for bj in nu.weights] for ai in mu.weights]
        mix = [[(u + v) / 2 for u, v in zip(r, s)] for r, s in zip(ind, E.plan)]
    return {"independent": TargetPlan(ind), "entropic": TargetPlan(E.plan, E), "mixture": TargetPlan(mix, E)}

