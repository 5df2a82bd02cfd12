r"""The Sinkhorn Transformer's cost C_ij = -<Q_i, K_j>, exact where the features are, enclosed on demand.

The Sinkhorn layer needs balls around K = exp(-C/eps) at whatever precision its
certificate needs (Krawczyk's ladder doubles it). Two kinds of cost provide
them (both :class:`~constructions.sinkhorn.problem.CostEnclosure`):

* :class:`ExactCost`: Q and K exact (QQ or EE), so C is exact in EE
  (EE is a field: products and sums of its elements stay in it); the balls
  are enclosures of those exact numbers, at any precision.
* :class:`EnclosedCost`: an encoder left EE (layer norm, or attention on
  non-rational scores); C is then known only through the forward pass in
  arb, which is re-run at each precision asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from flint import arb, ctx

from attncert.constructions.sinkhorn.encoder import to_balls
from attncert.constructions.sinkhorn.problem import SinkhornInputError
from attncert.constructions.sinkhorn.rowforms import minus_inner, row_form
from attncert.exact.matrices import Rows


def inner_cost(Q: Rows, K: Rows, prec: int) -> Rows:
    """C_ij = -sum_c Q_ic K_jc: in EE when Q and K are exact, else in arb at prec bits (exact values enclosed)."""
    if len(Q[0]) != len(K[0]):
        raise SinkhornInputError(f"query features have width {len(Q[0])}, key features {len(K[0])}")
    if not any(isinstance(x, arb) for row in Q + K for x in row):
        rows_k = [row_form(r) for r in K]
        return [[minus_inner(q, k) for k in rows_k] for q in map(row_form, Q)]
    Qb, Kb = to_balls(Q, prec), to_balls(K, prec)
    with ctx.workprec(prec):
        return [[-sum((q * k for q, k in zip(qi, kj)), arb(0)) for kj in Kb] for qi in Qb]


@dataclass
class ExactCost:
    """An exact cost matrix (entries fmpq or EENumber), enclosed entrywise on demand."""

    rows: Rows
    exact: bool = True
    _cache: dict[int, list[list[arb]]] = field(default_factory=dict, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.rows[0])

    def balls(self, prec: int) -> list[list[arb]]:
        if prec not in self._cache:
            self._cache[prec] = to_balls(self.rows, prec)
        return self._cache[prec]


@dataclass
class EnclosedCost:
    """A cost known only through a forward pass in arb: ``forward(prec)`` gives its balls at prec bits."""

    forward: Callable[[int], list[list[arb]]]
    shape_: tuple[int, int]
    exact: bool = False
    _cache: dict[int, list[list[arb]]] = field(default_factory=dict, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self.shape_

    def balls(self, prec: int) -> list[list[arb]]:
        if prec not in self._cache:
            self._cache[prec] = self.forward(prec)
        return self._cache[prec]
