"""Wall-clock timing for benchmarks: best of a few runs (noise only ever adds time)."""

from __future__ import annotations

import time
from typing import Any, Callable


def best_of(fn: Callable[[], Any], repeat: int = 3, budget: float = 20.0) -> float:
    """The fastest of up to ``repeat`` runs, stopping early once ``budget`` seconds are spent."""
    best = float("inf")
    spent = 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = min(best, dt)
        spent += dt
        if spent > budget:
            break
    return best


def fmt_seconds(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"
