r"""Certified sup-norm error sup_{[0,1]^d} |f - g| <= eps by interval branch-and-bound.

On a box B, with f enclosed in [f_lo, f_hi] (interval arithmetic in arb,
:mod:`exact.expressions`) and G_hi >= sup_B g, G_lo <= inf_B g,

    sup_B |f - g| <= bound(B) = max(f_hi - G_lo, G_hi - f_lo).

For the McShane network G_hi is the exact sup and G_lo the exact lower bound of
:mod:`.boxes`; any network with rigorous box bounds can be searched the same
way (:class:`Bounds`: the benchmark certifies trained GroupSort networks so).
Leaves that partition [0, 1]^d give eps = max over leaves of bound(B), a
rigorous upper bound. Every box evaluated also samples its centre c: |f(c) -
g(c)| is bounded below (g(c) in an interval, exact for McShane; f(c) enclosed)
and the largest such value is a rigorous *lower* bound on the sup, so the
recorded pair (lower, eps) shows the gap.

The search keeps the leaves in a heap by bound and splits the worst ones
(bisection of the first widest side, :class:`.boxes.Box`) until the worst bound
is at most ``ratio`` times the lower bound, or the number of leaves reaches
``max_leaves``; either way the leaves are a partition and eps is proven. A
bound already proven by other means (``known``: the closed-form bound of
docs/approximation.md) stops the search as soon as it is within ``ratio`` of
the lower bound. The search is deterministic (ties broken by creation order).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Protocol, Sequence

from flint import ctx, fmpq

from attncert.constructions.approximation.boxes import UNIT, Box
from attncert.exact.expressions import Interval, interval, point
from attncert.exact.expressions.enclose import Enclosure, endpoints

#: Boxes split per vectorised step.
BATCH = 64


class Bounds(Protocol):
    """Rigorous bounds of a network g: on boxes (upper bounds of sup g, lower bounds of inf g), and
    intervals [lo, hi] containing g at points."""

    def on_boxes(self, boxes: Sequence[Box]) -> tuple[list[fmpq], list[fmpq]]: ...

    def at_points(self, points: Sequence[Sequence[fmpq]]) -> list[tuple[fmpq, fmpq]]: ...


@dataclass(frozen=True)
class Certified:
    eps: fmpq  # proven: sup |f - g| <= eps
    lower: fmpq  # proven: sup |f - g| >= lower (at worst_point)
    worst_point: tuple[fmpq, ...]
    leaves: tuple[Box, ...]  # a partition of [0, 1]^d
    boxes_evaluated: int


def stopped_by(eps: fmpq, lower: fmpq, ratio: fmpq) -> str:
    """Why a search ended: "ratio" when eps <= ratio lower (the search checks this first), else "budget"."""
    return "ratio" if eps <= ratio * lower else "budget"


def box_bound(f: Interval, g_sup: fmpq, g_inf: fmpq) -> fmpq:
    """max(f_hi - inf g, sup g - f_lo): an upper bound of sup_B |f - g| (module docstring)."""
    lo, hi = endpoints(f)
    return max(hi - g_inf, g_sup - lo)


def gap_below(f: Interval, g: tuple[fmpq, fmpq]) -> fmpq:
    """A lower bound of |f(c) - g(c)| for f(c) and g(c) in these intervals: their distance (0 if they meet)."""
    lo, hi = endpoints(f)
    return max(lo - g[1], g[0] - hi, fmpq(0))


def enclose_on(f: Enclosure, box: Box) -> Interval:
    return f([interval(lo, hi) for lo, hi in box.sides()])


def search(f: Enclosure, g: Bounds, d: int, ratio: fmpq, max_leaves: int, prec: int, known: fmpq | None = None) -> Certified:
    """Branch-and-bound until min(eps, known) <= ratio * lower or max_leaves leaves (module docstring)."""
    heap: list[tuple[fmpq, int, Box]] = []
    best = (fmpq(0), tuple(fmpq(1, 2) for _ in range(d)))
    count = 0
    with ctx.workprec(prec):

        def evaluate(boxes: Sequence[Box]) -> None:
            nonlocal count, best
            sups, infs = g.on_boxes(boxes)
            centres = [bx.centre() for bx in boxes]
            g_at = g.at_points(centres)
            for bx, s, i, c, gc in zip(boxes, sups, infs, centres, g_at):
                heapq.heappush(heap, (-box_bound(enclose_on(f, bx), s, i), count, bx))
                count += 1
                low = gap_below(f([point(x) for x in c]), gc)
                if low > best[0]:
                    best = (low, tuple(c))

        def searching() -> bool:
            return -heap[0][0] > ratio * best[0] and (known is None or known > ratio * best[0])

        evaluate([UNIT(d)])
        while searching():
            batch: list[Box] = []
            # Each split box becomes two leaves: stop taking boxes before the leaves would exceed max_leaves.
            while heap and searching() and len(batch) < BATCH and len(heap) + 2 * len(batch) + 1 <= max_leaves:
                batch.append(heapq.heappop(heap)[2])
            if not batch:
                break
            evaluate([child for bx in batch for child in bx.children()])
    return Certified(-heap[0][0], best[0], best[1], tuple(sorted(bx for _, _, bx in heap)), count)
