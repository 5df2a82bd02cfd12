r"""The Sinkhorn Transformer: cost -<Q(x_i), K(y_j)> from two encoders, then certified Sinkhorn.

Texts are empirical measures mu = sum_i a_i delta_{x_i} and nu = sum_j b_j
delta_{y_j} with support points in Q^d. Encoders map a text's support points
(one row per point) to feature rows; the cost is C_ij = -<Q(x_i), K(y_j)> and
the coupling is S_eps(C; a, b) (docs/design.md, "Sinkhorn"). An encoder is any
callable from rows of rationals to rows of rationals, so this project's exact
transformer layers can be plugged in when they exist; :class:`LinearEncoder`
(a rational matrix, optionally after a fixed feature map) is what exists now.
The cost is exact (QQ); the coupling is then certified by
:func:`constructions.sinkhorn.operator.sinkhorn` in Ball.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from flint import fmpq

from constructions.sinkhorn.operator import SinkhornResult, sinkhorn
from constructions.sinkhorn.problem import SinkhornInputError
from exact.domains.ball import Ball
from exact.domains.base import Domain
from exact.domains.qq import QQ
from exact.matrices import Rows, convert_rows, from_fmpq_mat, matrix_to_json, to_fmpq_mat


class Encoder(Protocol):
    """Maps the support points of a text (one row each) to feature rows, exactly."""

    def __call__(self, points: Rows) -> Rows: ...


@dataclass(frozen=True)
class LinearEncoder:
    """points -> features(points) @ W, with W a rational matrix and features a fixed exact map (default: identity)."""

    weight: Rows
    features: Callable[[Rows], Rows] | None = None
    name: str = "linear"

    def __call__(self, points: Rows) -> Rows:
        X = self.features(points) if self.features else points
        if len(X[0]) != len(self.weight):
            raise SinkhornInputError(f"encoder input has {len(X[0])} features but its weight has {len(self.weight)} rows")
        return from_fmpq_mat(to_fmpq_mat(X) * to_fmpq_mat(self.weight))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.name, "weight": matrix_to_json(self.weight, QQ)}


def transformer_cost(query: Encoder, key: Encoder, xs: Rows, ys: Rows) -> Rows:
    """C_ij = -<Q(x_i), K(y_j)>, exactly."""
    Q, K = query(xs), key(ys)
    if len(Q[0]) != len(K[0]):
        raise SinkhornInputError(f"query features have width {len(Q[0])}, key features {len(K[0])}")
    return from_fmpq_mat(-(to_fmpq_mat(Q) * to_fmpq_mat(K).transpose()))


@dataclass(frozen=True)
class SinkhornTransformer:
    """A Sinkhorn attention block: encoders Q, K and temperature eps."""

    query: Encoder
    key: Encoder
    eps: fmpq

    def cost(self, xs: Sequence[Sequence[object]], ys: Sequence[Sequence[object]]) -> Rows:
        return transformer_cost(self.query, self.key, convert_rows(xs, QQ), convert_rows(ys, QQ))

    def __call__(
        self,
        xs: Sequence[Sequence[object]],
        a: Sequence[object],
        ys: Sequence[Sequence[object]],
        b: Sequence[object],
        domain: Domain = Ball(128),
        **options: Any,
    ) -> SinkhornResult:
        """The coupling of the texts (xs, a) and (ys, b); options go to :func:`sinkhorn` (tol, method, ...)."""
        return sinkhorn(self.cost(xs, ys), a, b, self.eps, domain, **options)

