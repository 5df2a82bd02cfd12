r"""Recorded texts, with the hypotheses every Sinkhorn Transformer claim makes of them checked in QQ.

A text is mu = sum_i a_i delta_{x_i}, recorded as {"x": [[...], ...], "a": [...]}.
The claims state their results for texts with n >= 1 points in the declared
domain [-1, 1]^p and weights a_i > 0 with sum a_i = 1; a recorded text outside
that class is not covered by them (HypothesisError), whatever else checks.
"""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.exact import ParseError
from attncert.exact.matrices import Rows
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError
from attncert.proofs.checkers.reading import obj, qmatrix, qvector

DOMAIN = (fmpq(-1), fmpq(1))


def text(parent: Any, key: str) -> tuple[Rows, list[fmpq]]:
    """The text parent[key] as (points, weights); ParseError if malformed, HypothesisError if outside the claims' class."""
    t = obj(parent, key)
    if set(t) != {"x", "a"}:
        raise ParseError(f'text "{key}" must have exactly the fields "x" and "a"')
    xs, a = qmatrix(t["x"]), qvector(t["a"])
    if len(xs) != len(a):
        raise ParseError(f"text {key} has {len(xs)} points and {len(a)} weights")
    if not all(w > 0 for w in a) or sum(a, fmpq(0)) != 1:
        raise HypothesisError(f"text {key}: the weights are not positive with sum 1")
    lo, hi = DOMAIN
    if not all(lo <= c <= hi for p in xs for c in p):
        raise HypothesisError(f"text {key}: a point lies outside the declared domain [{lo}, {hi}]^p")
    return xs, a


def key(t: tuple[Rows, list[fmpq]]) -> tuple:
    """A hashable form of a text (equal iff the same points and weights in the same order)."""
    return tuple(tuple(p) for p in t[0]), tuple(t[1])
