r"""Exact optimal transport with an optimality certificate, and the verdict on a given plan.

:func:`optimal_transport` returns an :class:`OptimalTransport`: an optimal basis (n + m - 1 arcs), its exact
flows x >= 0 (the optimal plan, zero off the arcs) and potentials (f, g) with every reduced cost
M_ij - f_i - g_j >= 0. By LP duality, for every plan P of (a, b),

    <P, M> = sum_ij (M_ij - f_i - g_j) P_ij + a.f + b.g >= a.f + b.g = <x, M>,

so x is optimal and W = <x, M> = a.f + b.g is the optimal cost, exactly. Checking this needs no solver:
x >= 0 with marginals a, b, the n m signs of the reduced costs, and the equation on the tree (O(n m)).

**Route.** The starting basis comes from a float plan: POT's ``ot.emd`` (with its duals) when POT is
installed and no start is given, or the caller's; without POT, the matrix-minimum basis in the order of the
cost (:mod:`constructions.transport.start`). The exact simplex (:mod:`constructions.transport.simplex`) then
proves it optimal (0 pivots, the usual case: POT's basis is optimal) or pivots exactly until it is.

:func:`judge_plan` says, for a plan G read exactly, whether it is a plan of (a, b) (G >= 0 and its exact
marginals), its exact cost <G, M>, its gap <G, M> - W to the optimum, and whether it is optimal (a plan of
(a, b) with gap 0). It also says whether every positive entry of G has reduced cost 0 for the certified
(f, g): if so, G is optimal among the plans with G's own marginals (the same duality argument), which is
what a float plan whose marginals are a and b only up to rounding can be.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq

from attncert.constructions.transport.problem import TransportProblem
from attncert.constructions.transport.reduced import exact_reduced
from attncert.constructions.transport.simplex import Basis, Pivots, optimise
from attncert.constructions.transport.start import from_plan, least_cost
from attncert.constructions.transport.tree import Tree
from attncert.constructions.pot import import_pot, pot_emd
from attncert.exact.roundoff import float_of


@dataclass(frozen=True)
class OptimalTransport:
    """An optimal plan of (a, b, M) with the certificate that proves it (module docstring)."""

    problem: TransportProblem
    basis: Basis
    cost: fmpq  # W = <x, M> = a.f + b.g, exactly
    start: str  # where the starting basis came from
    pivots: Pivots

    @property
    def arcs(self) -> list[tuple[int, int, fmpq]]:
        """The optimal plan's basis arcs (i, j, x_ij), x_ij >= 0 (zero on degenerate arcs)."""
        t = self.basis.tree
        return list(zip(t.rows, t.cols, self.basis.x))

    def plan(self) -> np.ndarray:
        """The optimal plan as float64 (n x m): each entry the double nearest the exact one."""
        G = np.zeros((self.problem.n, self.problem.m))
        t = self.basis.tree
        G[list(t.rows), list(t.cols)] = [float_of(x) for x in self.basis.x]
        return G

    def exact_plan(self) -> list[list[Fraction]]:
        """The optimal plan as rows of Fractions (n m objects: for small problems)."""
        P = [[Fraction(0)] * self.problem.m for _ in range(self.problem.n)]
        for i, j, x in self.arcs:
            P[i][j] = Fraction(int(x.p), int(x.q))
        return P

    @property
    def f(self) -> list[fmpq]:
        return self.basis.f

    @property
    def g(self) -> list[fmpq]:
        return self.basis.g


def optimal_transport(
    problem: TransportProblem, start: Tree | None = None, G: np.ndarray | None = None, u: Any = None, v: Any = None
) -> OptimalTransport:
    """The optimum, from the tree ``start``, or the float plan G (with duals u, v if known), or POT, or scratch."""
    route = "the given basis"
    if start is None:
        if G is None and importlib.util.find_spec("ot") is not None:
            G, u, v = _pot_plan(problem)
            route = "POT's ot.emd basis"
        if G is not None:
            start = from_plan(problem, np.asarray(G, dtype=float), *_duals(u, v, problem))
            route = route if route != "the given basis" else "the given plan's basis"
            del G  # n m doubles: not kept through the pivots
        else:
            start = least_cost(problem.a, problem.b, np.argsort(problem.cost.approx, axis=None, kind="stable"))
            route = "the matrix-minimum basis in cost order"
    b, stats = optimise(problem, start)
    return OptimalTransport(problem, b, _dual_value(problem, b), route, stats)


def _dual_value(problem: TransportProblem, b: Basis) -> fmpq:
    return sum((x * y for x, y in zip(problem.a, b.f)), fmpq(0)) + sum((x * y for x, y in zip(problem.b, b.g)), fmpq(0))


def _duals(u: Any, v: Any, problem: TransportProblem) -> tuple[np.ndarray | None, np.ndarray | None]:
    if u is None or v is None:
        return None, None
    try:
        u, v = np.asarray(u, dtype=float).ravel(), np.asarray(v, dtype=float).ravel()
    except (TypeError, ValueError):  # not numbers (a user's log): the duals only guide the start, so they are left out
        return None, None
    return (u, v) if (len(u), len(v)) == (problem.n, problem.m) and np.isfinite(u).all() and np.isfinite(v).all() else (None, None)


def _pot_plan(problem: TransportProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """POT's float plan and duals on the doubles nearest the problem (its warnings silenced: the simplex decides)."""
    import warnings

    ot = import_pot()
    a = np.array([float_of(x) for x in problem.a])
    b = np.array([float_of(x) for x in problem.b])
    b *= a.sum() / b.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        G, log = pot_emd(ot, a, b, problem.cost.approx, log=True, numItermax=10**7)
    return G, log["u"], log["v"]


@dataclass(frozen=True)
class PlanVerdict:
    """What is exactly true of a given plan G (module docstring)."""

    optimum: OptimalTransport
    nonnegative: bool
    row_error: fmpq  # max_i |(G 1)_i - a_i|
    col_error: fmpq  # max_j |(G^T 1)_j - b_j|
    cost: fmpq  # <G, M>
    complementary: bool  # every G_ij > 0 has reduced cost 0 for the certified (f, g)

    @property
    def feasible(self) -> bool:
        """G is a plan of (a, b): G >= 0 with marginals exactly a and b."""
        return self.nonnegative and self.row_error == 0 and self.col_error == 0

    @property
    def gap(self) -> fmpq:
        """<G, M> - W: >= 0 for a feasible G, and 0 exactly when G is optimal."""
        return self.cost - self.optimum.cost

    @property
    def optimal(self) -> bool:
        return self.feasible and self.gap == 0


def judge_plan(problem: TransportProblem, rows: np.ndarray, cols: np.ndarray, values: list[fmpq], optimum: OptimalTransport) -> PlanVerdict:
    """The verdict on the plan with nonzero entries values[k] at (rows[k], cols[k]) (every other entry 0)."""
    rs, cs = [fmpq(0)] * problem.n, [fmpq(0)] * problem.m
    for i, j, x in zip(rows.tolist(), cols.tolist(), values):
        rs[i] += x
        cs[j] += x
    M = problem.cost.entries(rows, cols)
    r = exact_reduced(problem.cost, optimum.f, optimum.g, rows, cols)
    return PlanVerdict(
        optimum,
        all(x >= 0 for x in values),
        max((abs(x - y) for x, y in zip(rs, problem.a)), default=fmpq(0)),
        max((abs(x - y) for x, y in zip(cs, problem.b)), default=fmpq(0)),
        sum((x * c for x, c in zip(values, M)), fmpq(0)),
        all(z == 0 for z, x in zip(r, values) if x > 0),
    )
