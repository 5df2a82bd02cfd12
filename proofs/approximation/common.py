"""What both approximation claims prove for one (target, grid): samples, McShane network, certified error.

:func:`prove_instance` builds the McShane extension g of the target's samples
(:mod:`constructions.approximation`), computes the closed-form bound (its
hypotheses checked from the expression), certifies sup |f - g| <= eps by
branch-and-bound (eps the better of the two), computes the independent sub-grid
bound and decides the stated modulus on grid pairs (these three with
:mod:`proofs.checkers`, which a verifier runs again), and :func:`instance_json`
writes it all as canonical JSON.

A verifier's rebuild (:mod:`proofs.core.rebuild`) passes the recorded search result,
sub-grid bound and grid-pair decision back as a *witness*: the independent
check has already recomputed them (every leaf's bound, the lower bound at its
point, the sub-grid, every tested pair), so the rebuild re-derives every other
field from the parameters without searching again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flint import fmpq

from attncert.constructions.approximation.boxes import Box, Pieces
from attncert.constructions.approximation.branch_bound import Certified, search, stopped_by
from attncert.constructions.approximation.grid import Grid, network_slope, samples
from attncert.constructions.approximation.mcshane import McShane, sequence_length
from attncert.constructions.approximation.targets import LIBRARY, Target
from attncert.exact import QQ, ParseError
from attncert.exact.expressions import compile_enclosure, variables
from attncert.exact.rationals import parse_rational
from attncert.proofs.checkers.approximation.closed_form import ClosedForm, closed_form
from attncert.proofs.checkers.approximation.mcshane import Interpolant
from attncert.proofs.checkers.approximation.modulus import decide, decision_json
from attncert.proofs.checkers.approximation.subgrid import RESOLUTION, SubgridBound, subgrid_bound
from attncert.proofs.core.cost import CAP, SECONDS_PER_POSITION, Cost, target_magnitude
from attncert.proofs.core.params import positive_int
from attncert.proofs.core.registry import Param

#: Largest dimension (the grid has (m + 1)^d points; the cost model computes that number first).
MAX_D = 16
#: Largest working precision of the enclosures, in bits (the grid pairs' ladder goes to 16 times it).
MAX_PREC = 4096
#: Rough seconds per branch-and-bound box (three cones, d = 2: 0.13 s for 393 boxes), for --estimate.
SECONDS_PER_BOX = 3.5e-4
#: Rough seconds per grid pair of the stated modulus (x1^(1/2) on 4097 points: 8.4 million pairs in about 2 s).
SECONDS_PER_GRID_PAIR = 3e-7

TARGET = Param("target", str, "three_cones", f"library target: {', '.join(LIBRARY)}")
EXPR = Param("expr", str, "", "a user target instead: an expression in x1..xd (numbers, + - * / **, sqrt exp log sin cos atan Abs Max Min, pi, E); needs --L")
L_PARAM = Param("L", str, "", "stated Lipschitz constant in the max-norm (alpha = 1) or Hölder constant H (alpha < 1); default: the library's")
ALPHA = Param("alpha", str, "", "stated Hölder exponent in (0, 1] (1: Lipschitz); default: the library's")
RATIO = Param("ratio", str, "5/4", "the search stops when the certified bound is within this factor (> 1) of the sampled lower bound")
MAX_LEAVES = Param("max_leaves", positive_int, 100_000, "budget of the branch-and-bound, in leaves")
BITS = Param("bits", positive_int, 24, "fractional bits of the samples y_i (|y_i - f(x_i)| <= 2^-bits)")
PREC = Param("prec", positive_int, 64, "arb working precision of the enclosures, in bits")


def grid_steps(h: str) -> tuple[fmpq, int]:
    """(h, m = ceil(1/h)) for a grid step h in (0, 1]; the grid's step is 1/m <= h."""
    v = parse_rational(h)
    if not 0 < v <= 1:
        raise ParseError(f"h must be in (0, 1], got {v}")
    return v, int((1 / v).ceil())


def stop_ratio(s: str) -> fmpq:
    v = parse_rational(s)
    if not v > 1:
        raise ParseError(f"ratio must be > 1, got {v}")
    return v


def bounded(name: str, v: int, lo: int, hi: int) -> int:
    if not lo <= v <= hi:
        raise ParseError(f"{name} must be in [{lo}, {hi}], got {v}")
    return v


def instance_cost(claim: str, t: Target, m: int, max_leaves: int, rasp_evaluations: int) -> Cost:
    """N positions (exact), the RASP evaluations plus the leaf budget (each leaf a verifier re-checks), rough
    time, and the target's magnitude on the cube (refused up front when too large: proofs/core/cost.py)."""
    N = sequence_length(bounded("d", t.d, 1, MAX_D), m)
    G = (m + 1) ** t.d
    grid_pairs = G * (3**t.d - 1) // 2 if t.lipschitz else G * (G - 1) // 2  # king neighbours, or all pairs
    return Cost(
        positions=N,
        pairs=N,
        evaluations=rasp_evaluations + max_leaves,
        # Counts capped before they meet a float: h = 1e-400 gives a grid of 10^400 points, refused by N, not an overflow.
        seconds=SECONDS_PER_POSITION * min(N, CAP) * rasp_evaluations + SECONDS_PER_BOX * 2 * min(max_leaves, CAP) + SECONDS_PER_GRID_PAIR * min(grid_pairs, CAP),
        memory=1024 * N + 200 * max_leaves,
        magnitude=target_magnitude(claim, t.text, t.expr, variables(t.d)),
    )


@dataclass(frozen=True)
class Instance:
    target: Target
    mcshane: McShane
    certified: Certified  # the branch-and-bound: its eps is the partition's bound
    closed: ClosedForm
    independent: SubgridBound
    modulus: dict[str, Any]  # the stated modulus decided on grid pairs (proofs.checkers.approximation.modulus.decision_json)

    @property
    def lipschitz(self) -> fmpq:
        return self.mcshane.lipschitz()

    @property
    def eps(self) -> fmpq:
        """The better of the partition's bound and the closed-form bound."""
        return self.certified.eps if self.closed.bound is None else min(self.certified.eps, self.closed.bound)


def mcshane_network(t: Target, m: int, bits: int, prec: int) -> McShane:
    """The McShane network of t's samples (``bits`` fractional bits) on the grid of m steps per side."""
    grid = Grid(t.d, m)
    return McShane(grid, tuple(samples(t, grid, bits, prec)), bits, network_slope(t, m))


def prove_instance(t: Target, m: int, bits: int, prec: int, ratio: fmpq, max_leaves: int, witness: dict[str, Any] | None = None) -> Instance:
    ms = mcshane_network(t, m, bits, prec)
    grid = ms.grid
    closed = closed_form(t.expr, t.d, m, t.constant, t.alpha, ms.slope, bits)
    if witness is None:
        pieces = Pieces(grid.points(), m, ms.Y, bits, ms.slope)
        cert = search(compile_enclosure(t.expr, variables(t.d)), pieces, t.d, ratio, max_leaves, prec, closed.bound)
        sub = subgrid_bound(t.expr, t.d, Interpolant(t.d, m, [ms.y(i) for i in range(grid.size)], ms.slope), ms.lipschitz(), prec)
        modulus = decision_json(decide(t.expr, t.d, m, t.constant, t.alpha, prec), t.constant, t.alpha, t.d, m)
    else:
        cert, sub = read_witness(witness, t.d)
        modulus = witness["hypothesis"]
    return Instance(t, ms, cert, closed, sub, modulus)


def read_witness(w: dict[str, Any], d: int) -> tuple[Certified, SubgridBound]:
    """The recorded search result and sub-grid bound (already recomputed by the independent check)."""
    c, s = w["certified"], w["independent"]
    leaves = tuple(Box(v[0], tuple(v[1:])) for v in c["leaves"])
    cert = Certified(QQ.from_json(c["partition_bound"]), QQ.from_json(c["lower"]), tuple(QQ.from_json(v) for v in c["worst_point"]), leaves, 0)
    bound = None if s["bound"] is None else QQ.from_json(s["bound"])
    return cert, SubgridBound(s["cells"], bound, QQ.from_json(s["lower"]), s["modulus"], s["reason"])


def closed_form_json(c: ClosedForm) -> dict[str, Any]:
    return {"bound": None if c.bound is None else QQ.to_json(c.bound), "modulus": c.modulus, "reason": c.reason}


def target_json(t: Target) -> dict[str, Any]:
    return {"name": t.name, "expression": t.text, "d": t.d, "constant": QQ.to_json(t.constant), "alpha": QQ.to_json(t.alpha)}


def instance_json(inst: Instance, ratio: fmpq) -> dict[str, Any]:
    """grid, samples, slope, network_lipschitz, hypothesis, certified, independent."""
    ms, c, s, t = inst.mcshane, inst.certified, inst.independent, inst.target
    return {
        "grid": {"d": t.d, "m": ms.grid.m, "h": QQ.to_json(fmpq(1, ms.grid.m)), "points": ms.grid.size},
        "samples": {"bits": ms.bits, "y": [QQ.to_json(ms.y(i)) for i in range(ms.grid.size)]},
        "slope": QQ.to_json(ms.slope),
        "network_lipschitz": QQ.to_json(inst.lipschitz),
        "hypothesis": inst.modulus,
        "certified": {
            "eps": QQ.to_json(inst.eps),
            "partition_bound": QQ.to_json(c.eps),
            "closed_form": closed_form_json(inst.closed),
            "lower": QQ.to_json(c.lower),
            "worst_point": [QQ.to_json(v) for v in c.worst_point],
            "stopped": stopped_by(inst.eps, c.lower, ratio),
            "leaves": [bx.to_json() for bx in c.leaves],
        },
        "independent": {
            "method": f"uniform sub-grid of step h/{RESOLUTION} with the network's Lipschitz constant and a modulus of f",
            "cells": s.cells,
            "bound": None if s.bound is None else QQ.to_json(s.bound),
            "lower": QQ.to_json(s.lower),
            "modulus": s.modulus,
            "reason": s.reason,
        },
    }


def modulus_proven(inst_json: dict[str, Any]) -> bool:
    """Whether the stated modulus is proven on every tested grid pair."""
    rec = inst_json["hypothesis"]
    return rec["proven"] == rec["pairs"]
