"""Candidate counterexamples built from where the induction's bound fails (``--method compositional``).

The induction (:mod:`proofs.checkers.tracr.every_input`) remembers, per step, query position and value,
the configuration where its bound is largest (``Induction.weak``): rows, each a position (or none) and the
values of the SOps a step reads, for the query (with the value the step computes), then its weakest
selected key and its strongest unselected key (the SOps its score reads). Where the bound fails, the
largest of these say where the model may go wrong (:func:`weakest`, one per step and query position): a SelectorWidth's width w (an input where some position has width w), the sort
head's rank 10 against a rank-11 key scoring nearly as high, an MLP block on a value near its ramps.

:func:`candidates` builds inputs of one length L that *present* such a configuration: positions i, j, k
with j != k (i may be one of them: a query is one of its own keys) where attncert's exact evaluation of
the program gives the rows' values, at the rows' positions where they read one. The search is a seeded
local search on the tokens: from random inputs, mutate one position and keep the mutant when it presents
no higher :func:`cost` (how far its SOps' values are from the rows'); each input presenting them all, and the
mutants of it that still do, is a candidate.
The constant sequences are candidates too, and random inputs fill what the configurations leave of the
budget. Candidates are then run through the ball forward pass against the exact RASP output
(:func:`proofs.tracr.compositional.confirm`): a counterexample found there is real, and finding none
proves nothing. The search is deterministic (a seed per length): the rebuild builds the same inputs.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any, Callable, Sequence

from attncert.proofs.checkers.tracr.every_input import _tag

Row = tuple[int | None, dict[str, Any]]
Trace = Callable[[Sequence[Any]], tuple[Any, dict[str, Any] | None]]

#: Configurations searched for at one length, the weakest first.
CONFIGURATIONS = 8
#: Exact evaluations the search spends on one configuration, at most, and without progress.
EVALUATIONS = 800
PATIENCE = 160
#: Inputs evolved side by side.
POOL = 8


def weakest(weak: dict[tuple[str, Any, Any], tuple[Any, list[Row]]], output: str, count: int = CONFIGURATIONS) -> list[list[Row]]:
    """One configuration per step and query position (and per value of the output), those of the steps computing
    the output first (a wrong output is what a counterexample shows), then the largest radius first (ties in the order of their spelling):
    the rows the values of the largest radius there share (make_sort's query at position 11 fails alike for
    every value it may take, so which value it takes is left free), ``count`` of them."""
    groups: dict[tuple[str, Any, Any], tuple[Any, list[list[Row]]]] = {}
    for (step, p, v), (r, rows) in sorted(weak.items(), key=lambda kv: repr(kv[0])):
        at = (step, p, v if output in rows[0][1] else None)  # the output's every value apart: which one it is decides
        best = groups.get(at)
        if best is None or r > best[0]:
            groups[at] = (r, [rows])
        elif r == best[0]:
            best[1].append(rows)
    ranked = sorted(groups.items(), key=lambda kv: (output not in kv[1][1][0][0][1], -kv[1][0], repr(kv[0])))
    out: list[list[Row]] = []
    for _, (_, alike) in ranked:
        rows = _shared(alike)
        if rows not in out:
            out.append(rows)
        if len(out) == count:
            break
    return out


def _shared(alike: list[list[Row]]) -> list[Row]:
    """The rows of the first configuration, each keeping the values that every configuration of the same shape
    gives it."""
    first = alike[0]
    same = [rows for rows in alike if len(rows) == len(first) and all(p == q for (p, _), (q, _) in zip(rows, first))]
    return [(p, {o: v for o, v in vals.items() if all(rows[i][1].get(o) == v for rows in same)}) for i, (p, vals) in enumerate(first)]


def cost(trace: dict[str, Any], length: int, rows: list[Row]) -> Fraction:
    """How far the input is from presenting the rows: per row, the least over the positions it may take (its own,
    or any) of the distances of the SOps it names from their values (|a - b| / (1 + |a - b|) for numbers, 1 for
    other values that differ); plus 1 when its key rows (after the first) can only be presented at one same
    position. 0 exactly when the input presents every row."""
    where, total = [], Fraction(0)
    for p, vals in rows:
        at = range(1, length + 1) if p is None else [p] if p <= length else []
        best, spots = None, []
        for t in at:
            d = sum((_distance(trace[o][t - 1], v) if o in trace else Fraction(1) for o, v in vals.items()), Fraction(0))
            if best is None or d < best:
                best = d
            if d == 0:
                spots.append(t)
        total += len(vals) if best is None else best
        where.append(spots)
    keys = where[1:]
    if len(keys) == 2 and keys[0] and keys[1] and keys[0] == keys[1] and len(keys[0]) == 1:
        total += 1
    return total


def _distance(actual: Any, wanted: Any) -> Fraction:
    got = _tag(actual)
    if got == wanted:
        return Fraction(0)
    if got[0] == wanted[0] == "q":
        d = abs(Fraction(got[1], got[2]) - Fraction(wanted[1], wanted[2]))
        return d / (1 + d)
    return Fraction(1)


def candidates(trace: Trace, tokens: Sequence[Any], length: int, configurations: list[list[Row]], budget: int, seed: int) -> list[tuple[Any, ...]]:
    """At most ``budget`` distinct inputs of the length: the constant ones, those presenting each configuration
    (an equal share of the budget each, weakest first), then random ones."""
    rng = random.Random(seed)
    out: dict[tuple[Any, ...], None] = {tuple([t] * length): None for t in tokens}
    share = max(1, (budget - len(out)) // max(1, len(configurations)))
    for rows in configurations:
        for x in _search(trace, tokens, length, rows, share, rng):
            if len(out) >= budget:
                break
            out.setdefault(x)
    tries = 0
    while len(out) < budget and tries < 4 * budget:
        out.setdefault(tuple(rng.choice(tokens) for _ in range(length)))
        tries += 1
    return list(out)[:budget]


def _search(trace: Trace, tokens: Sequence[Any], length: int, rows: list[Row], want: int, rng: random.Random) -> list[tuple[Any, ...]]:
    """Up to ``want`` inputs presenting every row (module docstring): a pool of random inputs, each step mutating
    one position of each and keeping the mutant when its :func:`cost` is no higher; within EVALUATIONS exact
    evaluations, and PATIENCE without a lower cost or a new input found."""
    worst = Fraction(sum(len(v) for _, v in rows) + 1)

    def score(x: tuple[Any, ...]) -> Fraction:
        _, tr = trace(x)
        return worst if tr is None else cost(tr, length, rows)

    pool = [tuple(rng.choice(tokens) for _ in range(length)) for _ in range(POOL)]
    scores = [score(x) for x in pool]
    found: dict[tuple[Any, ...], None] = {x: None for x, s in zip(pool, scores) if s == 0}
    spent, idle, best = len(pool), 0, min(scores)
    while len(found) < want and spent < EVALUATIONS and idle < PATIENCE:
        for i, x in enumerate(pool):
            at = rng.randrange(length)
            y = x[:at] + (rng.choice(tokens),) + x[at + 1 :]
            s = score(y)
            spent, idle = spent + 1, idle + 1
            if s <= scores[i]:
                pool[i], scores[i] = y, s
                if s < best or s == 0 and y not in found:
                    idle = 0
                best = min(best, s)
                if s == 0:
                    found.setdefault(y)
    return list(found)[:want]
