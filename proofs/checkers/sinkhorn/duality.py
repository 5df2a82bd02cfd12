r"""LP duality for W1 between couplings on a product support, decided in QQ.

Couplings pi, pi2 (n x m, rational) live on the cells (x_i, y_j); the ground
metric is d((x, y), (x', y')) = ||x - x'||_1 + ||y - y'||_1. By
Kantorovich-Rubinstein (Villani, *Optimal Transport: Old and New*, 2009,
Remark 6.5) W1(pi, pi2) is the transport cost from s+ = (pi - pi2)_+ to
s- = (pi - pi2)_-. Weak LP duality: for a flow f >= 0 moving s+ exactly onto
s- and potentials with phi_s - psi_t <= d(s, t) on every supply x demand pair,

    sum_st f_st d(s, t)  >=  sum_s phi_s s+_s - sum_t psi_t s-_t,

so equality of the two sides proves the flow optimal and its cost = W1.
Hypotheses checked: pi, pi2 >= 0 of one shape with equal total mass, on a
support of n x m cells; flow indices are cells; f >= 0.
"""

from __future__ import annotations

from typing import Any, Sequence

from flint import fmpq

from attncert.exact import ParseError
from attncert.exact.matrices import Rows
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError
from attncert.proofs.checkers.reading import rational


def l1(p: Sequence[fmpq], q: Sequence[fmpq]) -> fmpq:
    return sum((abs(u - v) for u, v in zip(p, q)), fmpq(0))


def ground_metric(xs: Rows, ys: Rows) -> list[tuple[list[fmpq], list[fmpq]]]:
    """The cells (x_i, y_j) in row-major order; d is l1 on each factor, added."""
    return [(x, y) for x in xs for y in ys]


def distance(c: tuple[list[fmpq], list[fmpq]], e: tuple[list[fmpq], list[fmpq]]) -> fmpq:
    return l1(c[0], e[0]) + l1(c[1], e[1])


def w1_value(cert: Any, pi: Rows, pi2: Rows, xs: Rows, ys: Rows) -> fmpq:
    """W1(pi, pi2), proven optimal by the recorded flow and potentials; HypothesisError if they do not prove it."""
    n, m = len(xs), len(ys)
    for name, P in (("pi", pi), ("pi2", pi2)):
        if len(P) != n or any(len(r) != m for r in P):
            raise HypothesisError(f"{name} is not a coupling on the {n}x{m} support")
        if any(x < 0 for r in P for x in r):
            raise HypothesisError(f"{name} has a negative entry: not a measure")
    if sum((x for r in pi for x in r), fmpq(0)) != sum((x for r in pi2 for x in r), fmpq(0)):
        raise HypothesisError("W1 compares couplings of equal total mass; these differ")
    if not isinstance(cert, dict) or not isinstance(cert.get("flow"), list):
        raise ParseError("a W1 certificate must be an object with a flow list")
    cells = ground_metric(xs, ys)
    diff = [u - v for ru, rv in zip(pi, pi2) for u, v in zip(ru, rv)]
    moved_out = [fmpq(0)] * len(diff)
    moved_in = [fmpq(0)] * len(diff)
    cost = fmpq(0)
    for edge in cert["flow"]:
        if not isinstance(edge, list) or len(edge) != 3 or not all(isinstance(k, int) and not isinstance(k, bool) for k in edge[:2]):
            raise ParseError("a flow edge must be [cell, cell, mass]")
        s, t, f = edge[0], edge[1], rational(edge[2])
        if not (0 <= s < len(diff) and 0 <= t < len(diff)):
            raise HypothesisError(f"a flow edge names a cell outside the support: {s} -> {t}")
        if f < 0:
            raise HypothesisError("a flow edge carries negative mass")
        moved_out[s] += f
        moved_in[t] += f
        cost += f * distance(cells[s], cells[t])
    if any(moved_out[k] != max(diff[k], fmpq(0)) or moved_in[k] != max(-diff[k], fmpq(0)) for k in range(len(diff))):
        raise HypothesisError("the flow does not move (pi - pi2)_+ exactly onto (pi - pi2)_-")
    if not isinstance(cert.get("phi"), dict) or not isinstance(cert.get("psi"), dict):
        raise ParseError("a W1 certificate must give the potentials phi and psi as objects")
    try:
        phi = {int(k): rational(v) for k, v in cert["phi"].items()}
        psi = {int(k): rational(v) for k, v in cert["psi"].items()}
    except ValueError:
        raise ParseError("potentials must be keyed by cell numbers") from None
    supply = {k for k, x in enumerate(diff) if x > 0}
    demand = {k for k, x in enumerate(diff) if x < 0}
    if set(phi) != supply or set(psi) != demand:
        raise HypothesisError("the potentials are not given exactly on the supply and demand cells")
    if any(phi[s] - psi[t] > distance(cells[s], cells[t]) for s in supply for t in demand):
        raise HypothesisError("the dual potentials are infeasible: phi_s - psi_t > d(s, t) for some pair")
    dual = sum((phi[s] * diff[s] for s in supply), fmpq(0)) - sum((psi[t] * -diff[t] for t in demand), fmpq(0))
    if cost != dual:
        raise HypothesisError(f"duality gap: flow cost {cost} != dual value {dual}")
    if rational(cert.get("value")) != cost:
        raise HypothesisError(f"the recorded W1 value is not the proven optimum {cost}")
    return cost


def diameter(xs: Rows, ys: Rows) -> fmpq:
    """max d over the product support: the l1 diameters of the two point sets, added."""
    return max(l1(p, q) for p in xs for q in xs) + max(l1(p, q) for p in ys for q in ys)
