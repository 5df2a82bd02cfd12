r"""The exact simplex on spanning trees: from any basis to an optimal one, every pivot decided in QQ.

Given a tree T (:mod:`constructions.transport.tree`) with exact flows x and potentials (f, g):

* x >= 0 and r >= 0: T is optimal (LP duality), done;
* x >= 0, some r_kl < 0: a **primal** pivot (the network simplex; Dantzig 1963, ch. 17; Ahuja, Magnanti &
  Orlin 1993, §11.5). The arc (k, l) enters; it closes one cycle with the tree path from column l to row k,
  whose arcs alternately lose and gain theta (the first, at column l, loses); theta is the least flow among the
  losing arcs, and one of them leaves. The cost falls by theta |r_kl| >= 0;
* r >= 0, some x_ij < 0: a **dual** pivot (the dual simplex on the same bases). The arc (i, j) leaves; the tree
  splits into the part R holding row i and the rest. Since x_ij is the net supply of R, R lacks mass, which can
  only come through an arc from a row outside R to a column in R: of those, the one of least reduced cost
  delta >= 0 enters, and shifting the potentials outside R by (+delta on rows, -delta on columns) keeps every
  r >= 0 and zeroes the entering arc's. The dual objective a.f + b.g rises by delta |x_ij| >= 0;
* neither: the tree is abandoned for the feasible matrix-minimum basis in the order of the current reduced
  costs (:func:`~constructions.transport.start.least_cost`), and primal pivots go on from there.

Entering arcs are chosen by Dantzig's rule (the most negative reduced cost the filter of
:mod:`constructions.transport.reduced` proves negative) and leaving arcs by the most negative flow; after
n + m pivots in a row that do not change the objective, both switch to Bland's rule (the first arc in row-major
order; ties broken the same way), which cannot cycle (Bland, Math. Oper. Res. 2 (1977); for the dual simplex
the same rule on the dual). So the loop ends, at an optimal basis, for every problem. Flows and potentials are
recomputed exactly after each pivot (O(n + m)), the reduced costs in float64 with the filter (O(n m) numpy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
from flint import fmpq

from attncert.constructions.transport.problem import TransportProblem
from attncert.constructions.transport.reduced import ReducedCosts
from attncert.constructions.transport.start import least_cost
from attncert.constructions.transport.tree import Tree, flows, path, potentials, side


@dataclass
class Pivots:
    """How the optimum was reached: pivots of each kind, and whether the start was abandoned for a feasible one."""

    primal: int = 0
    dual: int = 0
    restarted: bool = False
    bland: bool = False
    log: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Basis:
    """A tree with its exact flows x (per arc) and potentials f, g."""

    tree: Tree
    x: list[fmpq]
    f: list[fmpq]
    g: list[fmpq]


def basis(problem: TransportProblem, t: Tree) -> Basis:
    f, g = potentials(t, problem.cost)
    return Basis(t, flows(t, problem.a, problem.b), f, g)


def optimise(problem: TransportProblem, start: Tree) -> tuple[Basis, Pivots]:
    """An optimal basis reached by exact pivots from ``start`` (module docstring)."""
    stats = Pivots()
    b = basis(problem, start)
    stale, objective = 0, None
    for b, value in _walk(problem, b, stats):
        stale = stale + 1 if value == objective else 0
        objective = value
        if stale > problem.n + problem.m:
            stats.bland = True
    return b, stats


def _walk(problem: TransportProblem, b: Basis, stats: Pivots) -> Iterator[tuple[Basis, fmpq]]:
    """Pivot until optimal; yields each new basis with its objective (primal cost, or dual value for dual pivots)."""
    while True:
        R = ReducedCosts(problem.cost, b.f, b.g)
        entering = R.first_negative() if stats.bland else R.negative()
        infeasible = [k for k, v in enumerate(b.x) if v < 0]
        if entering is None and not infeasible:
            return
        if entering is not None and infeasible:
            order = np.argsort(R.s, axis=None, kind="stable")
            b = basis(problem, least_cost(problem.a, problem.b, order))
            stats.restarted = True
            stats.log.append("primal and dual infeasible: restarted from the matrix-minimum basis in reduced-cost order")
            yield b, _cost(problem, b)
            continue
        if entering is not None:
            b = _primal(problem, b, *entering)
            stats.primal += 1
            yield b, _cost(problem, b)
        else:
            t = b.tree
            leave = min(infeasible, key=lambda k: (t.rows[k], t.cols[k]) if stats.bland else (b.x[k], t.rows[k], t.cols[k]))
            b = _dual(problem, b, R, leave)
            stats.dual += 1
            yield b, sum((x * y for x, y in zip(problem.a, b.f)), fmpq(0)) + sum((x * y for x, y in zip(problem.b, b.g)), fmpq(0))


def _cost(problem: TransportProblem, b: Basis) -> fmpq:
    M = problem.cost.entries(b.tree.rows, b.tree.cols)
    return sum((x * c for x, c in zip(b.x, M)), fmpq(0))


def _primal(problem: TransportProblem, b: Basis, k: int, l: int) -> Basis:
    """Arc (k, l), of negative reduced cost, enters; the losing arc of least flow (first in row-major order) leaves."""
    t = b.tree
    cycle = path(t, t.n + l, k)  # from column l to row k; the arcs at even positions lose theta
    losing = cycle[0::2]
    leave = min(losing, key=lambda a: (b.x[a], t.rows[a], t.cols[a]))
    return basis(problem, t.replace(leave, k, l))


def _dual(problem: TransportProblem, b: Basis, R: ReducedCosts, leave: int) -> Basis:
    """Arc ``leave`` (negative flow) leaves; the arc of least reduced cost from a row outside its row's part to a
    column inside it enters (module docstring)."""
    t = b.tree
    rows_in, cols_in = side(t, leave)
    outside = np.ones(t.n, dtype=bool)
    outside[list(rows_in)] = False
    inside = np.zeros(t.m, dtype=bool)
    inside[list(cols_in)] = True
    best = R.minimum(outside, inside)
    if best is None:  # pragma: no cover - the part holding row i has a column (arc leave's column is outside it)
        raise AssertionError("no arc can enter: the problem would be infeasible, but every balanced problem is feasible")
    i, j, _ = best
    return basis(problem, t.replace(leave, i, j))
