"""Certified universal approximation: McShane MaxMin networks, trained GroupSort networks, branch-and-bound cost."""

from __future__ import annotations

import time

import numpy as np
import sympy
from flint import fmpq

from bench.groupsort import NetBounds, train
from bench.timing import fmt_seconds
from attncert.constructions.approximation.boxes import Pieces
from attncert.constructions.approximation.branch_bound import search
from attncert.constructions.approximation.grid import Grid, network_slope, samples
from attncert.constructions.approximation.targets import target
from attncert.exact import QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.expressions import compile_enclosure, variables
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import verify_bytes

RATIO = fmpq(5, 4)


def _f(x: str) -> float:
    return float(QQ.from_json(x))


def targets() -> dict:
    """The issue's targets, through the claim itself: prove, then verify the sealed certificate."""
    claim = load_claims()["lipschitz_approx"]
    rows = []
    for d, h, goal in [(2, "1/16", "<= 10 s, eps within 2x of lower"), (3, "1/8", "<= 60 s")]:
        t0 = time.perf_counter()
        doc = seal(claim.prove(**{**claim.defaults(), "d": d, "h": h}))
        t1 = time.perf_counter()
        outcome = verify_bytes(canonical_json(doc))
        t2 = time.perf_counter()
        r = doc["result"]
        eps, low = _f(r["eps"]), _f(r["lower"])
        rows.append([f"three_cones, d = {d}, h = {h}", goal, r["width"], r["depth"], f"{eps:.4f}", f"{low:.4f}", f"{eps / low:.3f}",
                     f"{_f(r['independent_bound']):.4f}", len(doc["outputs"]["certified"]["leaves"]), fmt_seconds(t1 - t0), fmt_seconds(t2 - t1), outcome.status])  # fmt: skip
    return {
        "title": "Targets (issue 13): lipschitz_approx, three cones, ratio 5/4, prove and verify",
        "header": ["instance", "target", "width N", "depth", "eps (certified)", "lower (certified)", "eps / lower", "sub-grid bound", "leaves", "prove", "verify", "verify says"],
        "rows": rows,
        "note": "eps is the proven upper bound of sup |f - g| (the better of the branch-and-bound and the checked closed form), lower a proven lower bound at the worst sampled point; "
        "the sub-grid bound is the verifier's second method (cells of side h/2, moduli of f and g), looser by design. "
        "Verify re-checks every leaf, the samples, the grid pairs and the sub-grid, and rebuilds the rest without searching.",
    }


def versus_training(steps: int = 1500) -> dict:
    """McShane networks against float GroupSort networks of the same width, both certified by the same search."""
    rows = []
    for d, m in [(1, 4), (1, 8), (1, 16), (2, 2), (2, 4)]:
        t = target("three_cones", d)
        grid = Grid(d, m)
        Y = tuple(samples(t, grid, 24, 64))
        slope = network_slope(t, m)
        f = compile_enclosure(t.expr, variables(d))
        t0 = time.perf_counter()
        mc = search(f, Pieces(grid.points(), m, Y, 24, slope), d, RATIO, 50_000, 64)
        t_mc = time.perf_counter() - t0
        width = 2 * d * grid.size  # the McShane network's affine pieces: its first layer's width
        numeric = sympy.lambdify(variables(d), t.expr, "numpy")
        t0 = time.perf_counter()
        net = train(lambda X: np.asarray(numeric(*X.T), dtype=float) * np.ones(len(X)), d, width, steps).rounded()
        t_train = time.perf_counter() - t0
        t0 = time.perf_counter()
        gs = search(f, NetBounds(net), d, fmpq(2), 3_000, 64)
        t_gs = time.perf_counter() - t0
        rows.append([f"d = {d}, h = 1/{m}", width, 2 * width, f"{float(mc.eps):.4f}", f"{float(mc.lower):.4f}", fmt_seconds(t_mc),
                     net.parameters, f"{float(gs.eps):.4f}", f"{float(gs.lower):.4f}", f"{float(gs.eps / gs.lower):.2f}", len(gs.leaves), fmt_seconds(t_train), fmt_seconds(t_gs)])  # fmt: skip
    return {
        "title": f"Certified sup error per parameter: McShane network against a trained GroupSort network of the same width (three cones, {steps} Adam steps)",
        "header": ["grid", "width W", "McShane parameters", "McShane eps", "McShane lower", "McShane search",
                   "GroupSort parameters", "GroupSort eps", "GroupSort lower", "eps / lower", "leaves", "training", "certifying"],  # fmt: skip
        "rows": rows,
        "note": "McShane: one piece y_i -+ L (x_k - x_ik) per grid point, coordinate and sign, 2 numbers each, built from samples, no training. "
        "GroupSort: d -> W -> MaxMin -> W -> MaxMin -> 1, trained in float64 (numpy, MSE at uniform samples), then rounded to multiples of 2^-20 "
        "and certified by the same branch-and-bound with arb interval bound propagation (stops at eps <= 2 lower or 3,000 leaves). "
        "Both eps are proven upper bounds, both lower bounds proven lower bounds, of the networks as stated.",
    }


def dimension() -> dict:
    """The search's cost as the dimension grows (three cones, m = 4, ratio 5/4)."""
    rows = []
    for d in (1, 2, 3, 4):
        t = target("three_cones", d)
        m = 4
        grid = Grid(d, m)
        pieces = Pieces(grid.points(), m, tuple(samples(t, grid, 24, 64)), 24, network_slope(t, m))
        t0 = time.perf_counter()
        res = search(compile_enclosure(t.expr, variables(d)), pieces, d, RATIO, 200_000, 64)
        dt = time.perf_counter() - t0
        rows.append([d, grid.size, len(res.leaves), res.boxes_evaluated, f"{float(res.eps):.4f}", f"{float(res.eps / res.lower):.3f}", fmt_seconds(dt), fmt_seconds(dt / res.boxes_evaluated)])
    return {
        "title": "Branch-and-bound cost against dimension (three cones, h = 1/4, ratio 5/4)",
        "header": ["d", "grid points", "leaves", "boxes evaluated", "eps", "eps / lower", "time", "per box"],
        "rows": rows,
        "note": "Per box: an interval enclosure of f in arb and exact integer bounds of g over every grid point (numpy, vectorised over 64 boxes).",
    }


def run() -> list[dict]:
    return [targets(), versus_training(), dimension()]
