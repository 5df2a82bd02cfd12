"""Universal simulator U(n, 8, 8): build, exact evaluation against the direct exact T(X), Float against numpy."""

from __future__ import annotations

import random
import time
import tracemalloc

import numpy as np
from flint import fmpq

from bench.timing import best_of, fmt_seconds
from constructions.simulator import universal
from exact import EE, Float
from proofs import references


def _matrix(rng: random.Random, r: int, c: int) -> list[list[fmpq]]:
    return [[fmpq(rng.randint(-9, 9), rng.randint(1, 9)) for _ in range(c)] for _ in range(r)]


def _peak_mib(fn) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def exact(ns=(4, 16, 32, 64), d: int = 8, dv: int = 8) -> dict:
    rng = random.Random(0)
    rows = []
    for n in ns:
        X, A, V = _matrix(rng, n, d), _matrix(rng, d, d), _matrix(rng, d, dv)
        t0 = time.perf_counter()
        U = universal(n, d, dv)
        g = U.graph()
        t_build = time.perf_counter() - t0
        mats = {"X": X, "A": A, "V": V}
        repeat = 3 if n <= 32 else 1
        t_eval = best_of(lambda: U.layout.decode(U.run(mats, EE, g)), repeat=repeat)
        t_ref = best_of(lambda: references.attention(X, A, V), repeat=repeat)
        assert U.layout.decode(U.run(mats, EE, g)) == references.attention(X, A, V)
        mem = _peak_mib(lambda: U.run(mats, EE, g))
        rows.append([str(n), str(U.layout.length), fmt_seconds(t_build), fmt_seconds(t_eval), fmt_seconds(t_ref), f"{t_eval / t_ref:.1f}×", f"{mem:.0f} MiB"])
    return {
        "title": f"U(n, {d}, {dv}) in EE: exact evaluation against the direct exact T(X) (FLINT products, EE softmax)",
        "header": ["n", "sequence length", "build graph", "evaluate U exactly", "direct exact T(X)", "U / direct", "peak memory of U"],
        "rows": rows,
        "note": "Target (issue 5): U(64, 8, 8) exactly within 10× of the direct exact computation. "
        "Peak memory is Python allocations during one evaluation (tracemalloc), selections included.",
    }


def floats(ns=(4, 16, 64), d: int = 8, dv: int = 8) -> dict:
    rng = np.random.default_rng(0)
    rows = []
    for n in ns:
        X, A, V = rng.normal(size=(n, d)), rng.normal(size=(d, d)) / d, rng.normal(size=(d, dv))
        U = universal(n, d, dv)
        g = U.graph()
        mats = {"X": X.tolist(), "A": A.tolist(), "V": V.tolist()}

        def direct():
            S = X @ A @ X.T
            P = np.exp(S - S.max(axis=1, keepdims=True))
            return (P / P.sum(axis=1, keepdims=True)) @ (X @ V)

        t_u = best_of(lambda: U.run(mats, Float, g), repeat=3)
        t_np = best_of(direct, repeat=20)
        err = np.abs(np.array(U.layout.decode(U.run(mats, Float, g))) - direct()).max()
        rows.append([str(n), fmt_seconds(t_u), fmt_seconds(t_np), f"{t_u / t_np:.0f}×", f"{err:.1e}"])
    return {
        "title": f"U(n, {d}, {d}) in Float against numpy's attention (agreement, not exactness)",
        "header": ["n", "U in Float", "numpy", "U / numpy", "max abs difference"],
        "rows": rows,
    }


def run() -> list[dict]:
    return [exact(), floats()]
