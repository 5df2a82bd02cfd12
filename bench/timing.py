"""Wall-clock timing for benchmarks: best of a few runs (noise only ever adds time)."""

from __future__ import annotations

import resource
import time
from typing import Any, Callable


def peak_rss() -> int:
    """This process's peak resident memory, in bytes.

    Linux's VmHWM (/proc/self/status), which starts afresh at exec. Not ru_maxrss: Linux carries
    the parent's peak over across exec into it, so a child of a large benchmark process reported
    the parent's 993 MiB for every case. Elsewhere ru_maxrss (KiB on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


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


def best_of_each(fns: list[Callable[[], Any]], rounds: int = 10, block: int = 10) -> list[float]:
    """The fastest run of each function, the functions taking turns in blocks of ``block`` runs, ``rounds`` times.

    For a ratio of two short timings on a machine whose speed drifts over seconds: taking turns
    lets each see the same spells of slowness, and a block keeps each one's caches warm after its
    first run (timing one after the other let the ratio of the same two functions vary by 1.5x here).
    """
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            best[k] = min(best[k], best_of(fn, repeat=block))
    return best


def fmt_seconds(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"
