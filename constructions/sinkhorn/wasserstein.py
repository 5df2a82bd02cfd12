r"""Exact W1 between discrete couplings, with a checkable optimality certificate.

Couplings pi, pi' of two texts live on the product support
{(x_i, y_j)} of their support points x_i, y_j in Q^d. The ground metric is
d((x, y), (x', y')) = ||x - x'||_1 + ||y - y'||_1, rational on rational points.

W1(pi, pi') is the optimal transport cost between them. By the
Kantorovich-Rubinstein duality (Villani, *Optimal Transport: Old and New*,
2009, Remark 6.5), W1 depends only on the signed measure pi - pi', so
W1(pi, pi') = OT(s+, s-) with s+ = (pi - pi')_+ and s- = (pi - pi')_-: mass
common to both stays put. OT(s+, s-) is a transportation linear program,
solved as a min-cost flow by networkx's network simplex on integers (masses
and distances scaled by common denominators, so the simplex is exact) and
divided back.

Optimality is then *certified* independently of networkx: potentials phi,
psi are read off the flow's residual graph (shortest paths, Bellman-Ford), and
:func:`check` verifies in QQ that the flow is feasible, that
phi_s - psi_t <= d(s, t) for every pair (dual feasibility) and that
sum phi s+ - sum psi s- equals the flow's cost (no duality gap). Those three
facts prove the value optimal (LP duality), whatever produced them.

:func:`w1_enclosure` extends this to couplings known only as arb
enclosures (with exactly known total mass), through rational representatives
and the bound W1(P, P~) <= (diam / 2) ||P - P~||_1 for equal masses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import networkx as nx
from flint import arb, fmpq

from attncert.constructions.sinkhorn.problem import SinkhornInputError
from attncert.exact.matrices import Rows

Point = Sequence[fmpq]


@dataclass(frozen=True)
class W1Certificate:
    """W1(pi, pi') with its optimal flow and dual potentials, all exact."""

    value: fmpq
    flow: list[tuple[int, int, fmpq]]  # (k, l, mass) on flattened support indices k = i*m + j
    phi: dict[int, fmpq]  # potentials on the supply cells (pi > pi')
    psi: dict[int, fmpq]  # potentials on the demand cells (pi < pi')


def product_support(xs: Sequence[Point], ys: Sequence[Point]) -> list[tuple[Point, Point]]:
    """Cells (x_i, y_j) in row-major order, matching a flattened n x m coupling."""
    return [(x, y) for x in xs for y in ys]


def ground_distance(p: tuple[Point, Point], q: tuple[Point, Point]) -> fmpq:
    """d((x, y), (x', y')) = ||x - x'||_1 + ||y - y'||_1."""
    return sum((abs(u - v) for u, v in zip(p[0], q[0])), fmpq(0)) + sum((abs(u - v) for u, v in zip(p[1], q[1])), fmpq(0))


def _flatten(P: Rows) -> list[fmpq]:
    return [x for row in P for x in row]


def _lcm_den(values: Sequence[fmpq]) -> int:
    return math.lcm(1, *(int(v.q) for v in values))


def w1_exact(pi: Rows, pi2: Rows, xs: Sequence[Point], ys: Sequence[Point]) -> W1Certificate:
    """W1(pi, pi2) exactly, for couplings of equal total mass on the product support of xs, ys."""
    p, q = _flatten(pi), _flatten(pi2)
    if len(p) != len(q) or len(p) != len(xs) * len(ys):
        raise SinkhornInputError(f"couplings of {len(p)} and {len(q)} cells on a support of {len(xs)}x{len(ys)} points")
    if sum(p, fmpq(0)) != sum(q, fmpq(0)):
        raise SinkhornInputError("W1 needs couplings of equal total mass")
    cells = product_support(xs, ys)
    diff = [u - v for u, v in zip(p, q)]
    S = [k for k, d in enumerate(diff) if d > 0]
    T = [k for k, d in enumerate(diff) if d < 0]
    if not S:
        return W1Certificate(fmpq(0), [], {}, {})
    dist = {(s, t): ground_distance(cells[s], cells[t]) for s in S for t in T}
    mden, dden = _lcm_den(diff), _lcm_den(list(dist.values()))
    G = nx.DiGraph()
    for s in S:
        G.add_node(("s", s), demand=-int(diff[s] * mden))
    for t in T:
        G.add_node(("t", t), demand=int(-diff[t] * mden))
    for (s, t), d in dist.items():
        G.add_edge(("s", s), ("t", t), weight=int(d * dden))
    cost, flow_dict = nx.network_simplex(G)
    flow = [
        (node[1], target[1], fmpq(f, mden))
        for node, out in flow_dict.items()
        if node[0] == "s"
        for target, f in out.items()
        if f
    ]
    phi, psi = _potentials(S, T, dist, dden, flow)
    return W1Certificate(fmpq(cost, mden * dden), flow, phi, psi)


def _potentials(
    S: list[int], T: list[int], dist: dict[tuple[int, int], fmpq], dden: int, flow: list[tuple[int, int, fmpq]]
) -> tuple[dict[int, fmpq], dict[int, fmpq]]:
    """Dual potentials from shortest-path distances in the residual graph of an optimal flow.

    Residual arcs: s -> t with cost d(s,t) (uncapacitated), t -> s with cost
    -d(s,t) where flow is positive. An optimal flow has no negative cycle, so
    distances dist from a virtual root exist and phi_s = -dist(s),
    psi_t = -dist(t) satisfy phi_s - psi_t <= d(s,t), with equality on used arcs.
    """
    H = nx.DiGraph()
    root = ("root",)
    for s in S:
        H.add_edge(root, ("s", s), weight=0)
    for t in T:
        H.add_edge(root, ("t", t), weight=0)
    for (s, t), d in dist.items():
        H.add_edge(("s", s), ("t", t), weight=int(d * dden))
    for s, t, _ in flow:
        H.add_edge(("t", t), ("s", s), weight=-int(dist[(s, t)] * dden))
    D = nx.single_source_bellman_ford_path_length(H, root)
    return {s: fmpq(-D[("s", s)], dden) for s in S}, {t: fmpq(-D[("t", t)], dden) for t in T}


def check(cert: W1Certificate, pi: Rows, pi2: Rows, xs: Sequence[Point], ys: Sequence[Point]) -> bool:
    """Verify in QQ that ``cert.value`` is W1(pi, pi2): primal feasibility, dual feasibility, no gap."""
    p, q = _flatten(pi), _flatten(pi2)
    cells = product_support(xs, ys)
    diff = [u - v for u, v in zip(p, q)]
    out: dict[int, fmpq] = {}
    inn: dict[int, fmpq] = {}
    for s, t, f in cert.flow:
        if f < 0 or diff[s] <= 0 or diff[t] >= 0:
            return False
        out[s] = out.get(s, fmpq(0)) + f
        inn[t] = inn.get(t, fmpq(0)) + f
    for k, d in enumerate(diff):
        if (d > 0 and out.get(k) != d) or (d < 0 and inn.get(k) != -d):
            return False
    primal = sum((f * ground_distance(cells[s], cells[t]) for s, t, f in cert.flow), fmpq(0))
    if set(cert.phi) != {k for k, d in enumerate(diff) if d > 0} or set(cert.psi) != {k for k, d in enumerate(diff) if d < 0}:
        return False
    feasible = all(cert.phi[s] - cert.psi[t] <= ground_distance(cells[s], cells[t]) for s in cert.phi for t in cert.psi)
    dual = sum((cert.phi[s] * diff[s] for s in cert.phi), fmpq(0)) + sum((cert.psi[t] * diff[t] for t in cert.psi), fmpq(0))
    return feasible and primal == dual == cert.value


# -- couplings known as enclosures -----------------------------------------------------------


def representative(P: Sequence[Sequence[arb]], mass: fmpq, bits: int = 64) -> tuple[Rows, fmpq]:
    """A rational coupling P~ of total ``mass`` near the enclosure P, and an exact r >= ||P - P~||_1.

    Midpoints are rounded to multiples of 2^-bits and the largest entry takes
    up the difference to the exact total, so P~ has the same mass as any
    coupling in P with that mass. r adds the radii and the roundings.
    """
    scale = fmpq(2) ** bits
    R = [[fmpq(int(math.floor(x.mid().fmpq() * scale)), 1) / scale for x in row] for row in P]
    i, j = max(((i, j) for i in range(len(R)) for j in range(len(R[0]))), key=lambda ij: R[ij[0]][ij[1]])
    R[i][j] += mass - sum(_flatten(R), fmpq(0))
    err = sum((abs(R[i][j] - x.mid().fmpq()) + x.rad().fmpq() for i, row in enumerate(P) for j, x in enumerate(row)), fmpq(0))
    return R, err


def diameter(xs: Sequence[Point], ys: Sequence[Point]) -> fmpq:
    """max d over the product support: the l1 diameters of the two point sets, added."""
    dx = max(sum((abs(u - v) for u, v in zip(p, q)), fmpq(0)) for p in xs for q in xs)
    dy = max(sum((abs(u - v) for u, v in zip(p, q)), fmpq(0)) for p in ys for q in ys)
    return dx + dy


@dataclass(frozen=True)
class W1Enclosure:
    """lo <= W1(P', F') <= hi for all P', F' in two enclosures, with what proves it."""

    lo: fmpq
    hi: fmpq
    certificate: W1Certificate  # W1(P~, F~), exactly
    P_rep: Rows  # rational representative of P, of the exact mass
    F_rep: Rows  # rational representative of F, of the exact mass


def w1_enclosure(
    P: Sequence[Sequence[arb]], F: Sequence[Sequence[arb]], mass: fmpq, xs: Sequence[Point], ys: Sequence[Point]
) -> W1Enclosure:
    """Exact rationals lo <= W1(P', F') <= hi for every P' in P and F' in F of total ``mass``.

    W1(P', F') lies within W1(P~, F~) +- (diam/2)(||P' - P~||_1 + ||F' - F~||_1)
    by the triangle inequality and W1(mu, nu) <= (diam/2) ||mu - nu||_1 for equal
    masses (a 1-Lipschitz f can be shifted into [-diam/2, diam/2]).
    """
    Pr, ep = representative(P, mass)
    Fr, ef = representative(F, mass)
    cert = w1_exact(Pr, Fr, xs, ys)
    slack = diameter(xs, ys) * (ep + ef) / 2
    return W1Enclosure(max(cert.value - slack, fmpq(0)), cert.value + slack, cert, Pr, Fr)
