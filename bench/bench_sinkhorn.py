"""Sinkhorn: certified plans (Ball) against POT float64, exact W1 against ot.emd2, EE practicality."""

from __future__ import annotations

import time
import warnings

import numpy as np
import ot
from flint import fmpq

from bench.timing import best_of, best_of_each, fmt_seconds
from attncert.constructions.sinkhorn import sinkhorn
from attncert.constructions.sinkhorn.hilbert import projective_diameter
from attncert.constructions.sinkhorn.problem import random_cost, random_marginal, random_plan, read_problem, uniform_marginal
from attncert.constructions.sinkhorn.wasserstein import check, ground_distance, product_support, w1_exact
from attncert.exact import EE, Ball, Float


def _floats(C, a, b):
    return np.array([[float(c) for c in r] for r in C]), np.array([float(x) for x in a]), np.array([float(x) for x in b])


def _pot(a, b, C, eps, **kw):
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        P, log = ot.sinkhorn(a, b, C, eps, log=True, **kw)
    return P, log, caught


def certified_vs_pot(n: int = 64, eps: fmpq = fmpq(1, 5)) -> dict:
    C, a = random_cost(n, n, 0), uniform_marginal(n)
    delta = projective_diameter(read_problem(C, a, a, eps))
    assert delta <= 10
    Cf, af, bf = _floats(C, a, a)
    r = sinkhorn(C, a, a, eps, Ball(128), tol="1e-30")
    assert r.certified
    t_ours, t_read, t_pot = best_of_each(
        [
            lambda: sinkhorn(C, a, a, eps, Ball(128), tol="1e-30"),
            lambda: sinkhorn(C, a, a, eps, Ball(128), tol="1e-30").plan[0],  # P*'s n m balls formed
            lambda: ot.sinkhorn(af, bf, Cf, float(eps)),
        ]
    )
    t_float = best_of(lambda: sinkhorn(C, a, a, eps, Float), repeat=5)
    _, log, _ = _pot(af, bf, Cf, float(eps))
    _, log15, _ = _pot(af, bf, Cf, float(eps), stopThr=1e-15, numItermax=100_000)
    t_pot15 = best_of(lambda: _pot(af, bf, Cf, float(eps), stopThr=1e-15, numItermax=100_000), repeat=20)
    rows = [
        [
            f"{n}×{n}",
            f"{float(delta):.2f}",
            f"{fmt_seconds(t_ours)} ({r.iterations} arb it, {r.details['newton_corrections']} Newton-corrected, + {r.details['float_warm_start']} float warm-up)",
            r.bound.str(3, radius=False),
            f"{fmt_seconds(t_pot)} ({log['niter']} it, err {log['err'][-1]:.1e})",
            f"{t_ours / t_pot:.0f}×",
            f"{fmt_seconds(t_read)} ({t_read / t_pot:.0f}×)",
            f"{fmt_seconds(t_pot15)} ({log15['niter']} it)",
            fmt_seconds(t_float),
        ]
    ]
    return {
        "title": f"Certified Sinkhorn to a bound of 1e-30 vs POT float64 (random cost k/1000, uniform marginals, eps = {eps})",
        "header": ["size", "Δ(K)", "certified Ball (ours)", "certified bound", "POT ot.sinkhorn (default stopThr 1e-9)", "ours / POT", "ours, P* read (4096 balls)", "POT to stopThr 1e-15", "our Float log-domain"],
        "rows": rows,
        "note": "Target (issue 15): a certified 1e-30 plan on 64×64 with Δ(K) ≤ 10 within 20× of POT's float64 time (issue 7: 50×). "
        "Ours, ours with P* read and POT take turns in blocks of 10 runs, 10 times; the best run of each. "
        "The bound is a rigorous upper bound on max |log P − log P*| (Hilbert metric, arb) for the exact point u^ of the last iteration; "
        "the iterations after the first take a Newton step for the row sums, solved in float64 (only the start of the next "
        "iteration, the bound does not depend on it). The certified run holds the plan enclosure as diag(u^ [e^-b, e^b]) K diag(v^) "
        "(a ScaledKernel, formed when read); the next column adds reading it, its 4096 balls formed. POT's err is its own float residual.",
    }


def small_eps(n: int = 64, eps_list=(fmpq(1, 100), fmpq(1, 1000))) -> dict:
    C, a = random_cost(n, n, 0), uniform_marginal(n)
    Cf, af, bf = _floats(C, a, a)
    rows = []
    for eps in eps_list:
        t0 = time.perf_counter()
        r = sinkhorn(C, a, a, eps, Ball(128))
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        P, log, caught = _pot(af, bf, Cf, float(eps), numItermax=100_000)
        t_pot = time.perf_counter() - t0
        err = log["err"][-1] if log["err"] else float("nan")
        pot_state = "converged" if err < 1e-9 else f"NOT converged after {log['niter']} it (err {err:.1e})"
        rows.append(
            [
                f"{n}×{n}",
                str(eps),
                f"{float(r.delta):.0f}",
                f"{r.method}: {'certified' if r.certified else 'NOT certified'}, bound {r.bound.str(3, radius=False) if r.bound is not None else '-'}, {r.details['prec']} bits",
                fmt_seconds(t_ours),
                pot_state,
                fmt_seconds(t_pot),
            ]
        )
    return {
        "title": "Small eps: Krawczyk certificates where float Sinkhorn crawls (same random cost, uniform marginals)",
        "header": ["size", "eps", "Δ(K)", "ours (Ball)", "ours time", "POT ot.sinkhorn, numItermax 100k", "POT time"],
        "rows": rows,
        "note": "One run each (not best-of). The Hilbert bound is useless here (λ = tanh(Δ/4) is 1 to hundreds of digits).",
    }


def small_eps_newton(n: int = 8, eps: fmpq = fmpq(1, 10000), seeds=(0, 1, 2, 3, 4)) -> dict:
    """Krawczyk at eps = 1/10000 after float eps-continuation: every Newton step counted."""
    rows = []
    for seed in seeds:
        C = random_cost(n, n, seed)
        a, b = random_marginal(n, seed + 1), random_marginal(n, seed + 2)
        t0 = time.perf_counter()
        r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-30")
        dt = time.perf_counter() - t0
        d = r.details
        rows.append(
            [
                f"{n}×{n}, seed {seed}" + (" (sinkhorn_convergence)" if seed == 0 else ""),
                f"{float(r.delta):.0f}",
                str(d["continuation_stages"]),
                str(d["float_sinkhorn_iterations"]),
                str(d["float_newton_steps"]),
                str(d["arb_newton_steps"]),
                f"**{r.iterations}**",
                str(d["prec"]),
                r.bound.str(3, radius=False) if r.certified else "NOT certified",
                fmt_seconds(dt),
            ]
        )
    return {
        "title": f"Small eps in few Newton steps: Krawczyk at eps = {eps} after float eps-continuation (random cost k/1000, random marginals)",
        "header": ["problem", "Δ(K)", "eps stages", "float Sinkhorn it", "float Newton steps", "arb Newton steps", "all Newton steps", "bits", "certified bound", "time"],
        "rows": rows,
        "note": "Target (issue 15): ≤ 30 Newton steps at eps = 1/10000 (before: seed 0 took 3 arb + 48 float Newton steps after 5000 float "
        "Sinkhorn iterations; seeds 1 and 2 were not certified within 1000 steps at any precision up to 16384 bits). "
        "Counts every Newton step, float (all continuation stages) and arb (all precision rungs). One run each.",
    }


def exact_w1(n: int = 10) -> dict:
    a, b = random_marginal(n, 1), random_marginal(n, 2)
    p, q = random_plan(a, b, 3), random_plan(a, b, 4, swaps=5)
    rng = np.random.default_rng(0)
    xs = [[fmpq(int(k), 100)] for k in rng.integers(0, 100, n)]
    ys = [[fmpq(int(k), 100)] for k in rng.integers(0, 100, n)]
    cells = product_support(xs, ys)
    M = np.array([[float(ground_distance(u, v)) for v in cells] for u in cells])
    pf, qf = (np.array([float(x) for r in P for x in r]) for P in (p, q))
    c = w1_exact(p, q, xs, ys)
    ok = check(c, p, q, xs, ys)
    t_exact = best_of(lambda: w1_exact(p, q, xs, ys), repeat=3)
    t_check = best_of(lambda: check(c, p, q, xs, ys), repeat=3)
    t_pot = best_of(lambda: ot.emd2(pf, qf, M), repeat=20)
    diff = abs(ot.emd2(pf, qf, M) - float(c.value))
    return {
        "title": f"Exact W1 between two {n}×{n} couplings (product support of {n * n} cells, ground metric |x−x'| + |y−y'|)",
        "header": ["exact W1 (networkx, QQ)", "exact dual check", "POT ot.emd2 (float64)", "exact / POT", "|POT − exact|", "certificate checks"],
        "rows": [[fmt_seconds(t_exact), fmt_seconds(t_check), fmt_seconds(t_pot), f"{t_exact / t_pot:.0f}×", f"{diff:.1e}", "yes" if ok else "NO"]],
        "note": f"Exact value: {c.value} ≈ {float(c.value):.12g}.",
    }


def ee_practicality() -> dict:
    rows = []
    for n, den, iters in [(2, 4, 1), (2, 4, 2), (2, 4, 3), (2, 1000, 2), (3, 4, 1), (3, 4, 2), (4, 4, 1), (5, 4, 1)]:
        C = random_cost(n, n, 1, den)
        a, b = random_marginal(n, 1), random_marginal(n, 2)
        t0 = time.perf_counter()
        r = sinkhorn(C, a, b, fmpq(1, 2), EE, max_iter=iters)
        dt = time.perf_counter() - t0
        terms = max(len(x.num) + len(x.den) for row in r.iterate for x in row)
        rows.append([f"{n}×{n}", f"k/{den}", str(iters), fmt_seconds(dt), str(terms), r.bound.str(3, radius=False)])
    return {
        "title": "EE (exact) Sinkhorn iterates: how far they stay practical (eps = 1/2, random marginals)",
        "header": ["size", "cost entries", "iterations", "time", "max terms per entry (num + den)", "certified distance to the limit"],
        "rows": rows,
        "note": "Denominators multiply at every half-step, so terms grow roughly like (terms)^n per iteration; costs on a coarse grid (k/4) share exponents and grow slower.",
    }


def run() -> list[dict]:
    return [certified_vs_pot(), small_eps_newton(), small_eps(), exact_w1(), ee_practicality()]
