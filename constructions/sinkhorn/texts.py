r"""Texts: finite probability measures mu = sum_i a_i delta_{x_i} on a box, read exactly and validated once.

A text has n >= 1 support points x_i in the declared domain [lo, hi]^p (default
[-1, 1]) and weights a_i > 0 with sum a_i = 1 exactly (decided in QQ). Bad input
raises one :class:`~constructions.sinkhorn.problem.SinkhornInputError` naming
what is wrong: an empty text, a weight <= 0, weights that do not sum to 1, a
point outside the domain, points of different dimensions.

Also here: seeded random texts and families of text pairs (the compact sets
over which a Sinkhorn Transformer's approximation is certified uniformly).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Sequence

from flint import fmpq

from attncert.constructions.sinkhorn.problem import SinkhornInputError, read_vector
from attncert.exact.errors import ParseError
from attncert.exact.matrices import Rows
from attncert.exact.rationals import parse_rational

#: The declared domain of support points, per coordinate.
DOMAIN = (fmpq(-1), fmpq(1))


@dataclass(frozen=True)
class Text:
    """mu = sum_i weights[i] delta_{points[i]}: points in Q^p, weights > 0 summing to 1."""

    points: Rows
    weights: list[fmpq]

    @property
    def n(self) -> int:
        return len(self.weights)

    def key(self) -> tuple:
        """A hashable form: two texts are the same measure written the same way iff their keys are equal."""
        return tuple(tuple(p) for p in self.points), tuple(self.weights)


def read_text(points: Any, weights: Any, name: str = "text", domain: tuple[fmpq, fmpq] = DOMAIN) -> Text:
    """A validated text; SinkhornInputError (one line, naming ``name``) on bad input."""
    if not isinstance(points, Sequence) or isinstance(points, (str, bytes)) or not isinstance(weights, Sequence) or isinstance(weights, (str, bytes)):
        raise SinkhornInputError(f"{name}: points and weights must be lists")
    if len(points) == 0 or len(weights) == 0:
        raise SinkhornInputError(f"{name} has length 0: a text needs at least one support point")
    if len(points) != len(weights):
        raise SinkhornInputError(f"{name} has {len(points)} points but {len(weights)} weights")
    a = read_vector(weights, f"{name} weights")
    for i, w in enumerate(a):
        if w <= 0:
            raise SinkhornInputError(f"{name}: weights must be positive, but weight {i} is {w}")
    if sum(a, fmpq(0)) != 1:
        raise SinkhornInputError(f"{name}: weights must sum to 1 exactly, they sum to {sum(a, fmpq(0))}")
    xs = [_point(p, f"{name} point {i}") for i, p in enumerate(points)]
    if len({len(p) for p in xs}) != 1:
        raise SinkhornInputError(f"{name}: points have different dimensions")
    lo, hi = domain
    for i, p in enumerate(xs):
        if not all(lo <= c <= hi for c in p):
            raise SinkhornInputError(f"{name}: point {i} = ({', '.join(map(str, p))}) lies outside the declared domain [{lo}, {hi}]^{len(p)}")
    return Text(xs, a)


def _point(p: Any, name: str) -> list[fmpq]:
    if isinstance(p, (str, bytes)) or not isinstance(p, Sequence):
        p = [p]  # a number: a point on the line
    if not p:
        raise SinkhornInputError(f"{name} has no coordinates")
    try:
        return [parse_rational(c) for c in p]
    except ParseError as e:
        raise SinkhornInputError(f"{name}: {e}") from None


# -- seeded random texts and families ---------------------------------------------------------


def random_text(rng: random.Random, n: int, grid: int = 20, spread: int = 9) -> Text:
    """n distinct points k/grid in [-1, 1] (sorted) and weights k_i / sum k, k_i uniform in [1, spread]."""
    xs = [[fmpq(k, grid)] for k in sorted(rng.sample(range(-grid, grid + 1), n))]
    w = [rng.randint(1, spread) for _ in range(n)]
    return Text(xs, [fmpq(k, sum(w)) for k in w])


@dataclass(frozen=True)
class Family:
    """Pairs of texts: those a network is fitted on, and held-out pairs it never saw."""

    fit: list[tuple[Text, Text]]
    held_out: list[tuple[Text, Text]]


def random_family(pairs: int, held_out: int, max_n: int, seed: int, min_n: int = 2) -> Family:
    """``pairs + held_out`` pairs of random texts of lengths min_n..max_n; no held-out pair occurs among the fit pairs."""
    rng = random.Random(seed)
    seen: set[tuple] = set()
    out: list[tuple[Text, Text]] = []
    while len(out) < pairs + held_out:
        pair = (random_text(rng, rng.randint(min_n, max_n)), random_text(rng, rng.randint(min_n, max_n)))
        k = (pair[0].key(), pair[1].key())
        if k not in seen:
            seen.add(k)
            out.append(pair)
    return Family(out[:pairs], out[pairs:])
