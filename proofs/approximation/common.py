"""What both approximation claims prove for one (target, grid): samples, McShane network, certified error.

:func:`prove_instance` builds the McShane extension g of the target's samples
(:mod:`constructions.approximation`), certifies sup |f - g| <= eps by
branch-and-bound, computes the independent sub-grid bound and tests the stated
modulus on grid pairs (both with :mod:`proofs.checkers`, which a verifier runs
again), and :func:`instance_json` writes it all as canonical JSON.

A verifier's rebuild (:mod:`proofs.rebuild`) passes the recorded search result
and sub-grid bound back as a *witness*: the independent check has already
recomputed both (every leaf's bound, the lower bound at its point, the sub-grid),
so the rebuild re-derives every other field from the parameters without
searching again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flint import fmpq

from constructions.approximation.boxes import Box, Pieces
from constructions.approximation.branch_bound import Certified, search, stopped_by
from constructions.approximation.grid import Grid, network_slope, samples
from constructions.approximation.mcshane import McShane, sequence_length
from constructions.approximation.targets import LIBRARY, Target
from exact import QQ, ParseError
from exact.expressions import compile_enclosure, variables
from exact.rationals import parse_rational
from proofs.checkers.mcshane import Interpolant, worst_pair
from proofs.checkers.subgrid import RESOLUTION, SubgridBound, subgrid_bound
from proofs.cost import SECONDS_PER_POSITION, Cost
from proofs.params import positive_int
from proofs.registry import Param

#: Largest dimension (the grid has (m + 1)^d points; the cost model computes that number first).
MAX_D = 16
#: Rough seconds per branch-and-bound box (three cones, d = 2: 0.13 s for 393 boxes), for --estimate.
SECONDS_PER_BOX = 3.5e-4

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


def instance_cost(d: int, m: int, max_leaves: int, rasp_evaluations: int) -> Cost:
    """N positions (exact), the RASP evaluations plus the leaf budget (each leaf a verifier re-checks), rough time."""
    N = sequence_length(bounded("d", d, 1, MAX_D), m)
    return Cost(
        positions=N,
        pairs=N,
        evaluations=rasp_evaluations + max_leaves,
        seconds=SECONDS_PER_POSITION * N * rasp_evaluations + SECONDS_PER_BOX * 2 * max_leaves,
        memory=1024 * N + 200 * max_leaves,
    )


@dataclass(frozen=True)
class Instance:
    target: Target
    mcshane: McShane
    certified: Certified
    independent: SubgridBound
    pair: tuple[int, tuple[int, int] | None]  # (excess, pair) of the stated modulus on grid pairs

    @property
    def lipschitz(self) -> fmpq:
        return self.mcshane.lipschitz()


def prove_instance(t: Target, m: int, bits: int, prec: int, ratio: fmpq, max_leaves: int, witness: dict[str, Any] | None = None) -> Instance:
    grid = Grid(t.d, m)
    Y = tuple(samples(t, grid, bits, prec))
    ms = McShane(grid, Y, bits, network_slope(t, m))
    if witness is None:
        pieces = Pieces(grid.points(), m, Y, bits, ms.slope)
        cert = search(compile_enclosure(t.expr, variables(t.d)), pieces, t.d, ratio, max_leaves, prec)
        sub = subgrid_bound(t.expr, t.d, Interpolant(t.d, m, [ms.y(i) for i in range(grid.size)], ms.slope), ms.lipschitz(), prec)
    else:
        cert, sub = read_witness(witness, t.d)
    return Instance(t, ms, cert, sub, worst_pair(t.d, m, Y, t.constant, t.alpha, bits))


def read_witness(w: dict[str, Any], d: int) -> tuple[Certified, SubgridBound]:
    """The recorded search result and sub-grid bound (already recomputed by the independent check)."""
    c, s = w["certified"], w["independent"]
    leaves = tuple(Box(v[0], tuple(v[1:])) for v in c["leaves"])
    cert = Certified(QQ.from_json(c["eps"]), QQ.from_json(c["lower"]), tuple(QQ.from_json(v) for v in c["worst_point"]), leaves, 0)
    bound = None if s["bound"] is None else QQ.from_json(s["bound"])
    return cert, SubgridBound(s["cells"], bound, QQ.from_json(s["lower"]), s["modulus"], s["reason"])


def target_json(t: Target) -> dict[str, Any]:
    return {"name": t.name, "expression": t.text, "d": t.d, "constant": QQ.to_json(t.constant), "alpha": QQ.to_json(t.alpha)}


def instance_json(inst: Instance, ratio: fmpq) -> dict[str, Any]:
    """grid, samples, slope, network_lipschitz, hypothesis, certified, independent."""
    ms, c, s, t = inst.mcshane, inst.certified, inst.independent, inst.target
    excess, pair = inst.pair
    points = ms.grid.points()
    return {
        "grid": {"d": t.d, "m": ms.grid.m, "h": QQ.to_json(fmpq(1, ms.grid.m)), "points": ms.grid.size},
        "samples": {"bits": ms.bits, "y": [QQ.to_json(ms.y(i)) for i in range(ms.grid.size)]},
        "slope": QQ.to_json(ms.slope),
        "network_lipschitz": QQ.to_json(inst.lipschitz),
        "hypothesis": {
            "statement": f"|f(x) - f(y)| <= {QQ.to_json(t.constant)} ||x - y||_inf^{QQ.to_json(t.alpha)}",
            "pairs_tested": "king neighbours (enough for alpha = 1)" if t.lipschitz else "all pairs",
            "violated_pair": None
            if pair is None
            else {
                "i": pair[0],
                "j": pair[1],
                "x_i": [QQ.to_json(fmpq(int(v), ms.grid.m)) for v in points[pair[0]]],
                "x_j": [QQ.to_json(fmpq(int(v), ms.grid.m)) for v in points[pair[1]]],
                "excess_units": excess,  # |Y_i - Y_j| - 2 - floor(C D^alpha 2^bits), units of 2^-bits (proofs/checkers/mcshane.py)
            },
        },
        "certified": {
            "eps": QQ.to_json(c.eps),
            "lower": QQ.to_json(c.lower),
            "worst_point": [QQ.to_json(v) for v in c.worst_point],
            "stopped": stopped_by(c.eps, c.lower, ratio),
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


def violation_text(inst_json: dict[str, Any]) -> str | None:
    """One line naming the grid pair that refutes the stated modulus, or None."""
    v = inst_json["hypothesis"]["violated_pair"]
    if v is None:
        return None
    return (
        f"the stated {inst_json['hypothesis']['statement']} fails on the grid pair x_{v['i']} = ({', '.join(v['x_i'])}), "
        f"x_{v['j']} = ({', '.join(v['x_j'])}), where |f(x_i) - f(x_j)| >= |y_i - y_j| - 2^(1-bits) is larger"
    )
