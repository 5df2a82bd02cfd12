"""A Sinkhorn plan in factored form: diag(r) K diag(c) as balls, computed when first read.

Every plan of the Ball paths has this form: the Hilbert iterate
P^ = diag(u^) K diag(v^) and its widening, which contains P* since
P*_ij in P^_ij [e^-beta, e^beta] subset (u^_i [e^-beta, e^beta]) K_ij v^_j;
the Krawczyk iterate diag(e^x^) K diag(e^y^) and the plan diag(e^X) K diag(e^Y)
over the verified boxes X, Y. Since K_ij, r_i and c_j are balls, the products
r_i K_ij c_j are balls containing every product of points in them.

Holding the n + m factors beside the kernel's balls is what certifying needs;
the n m entries are formed only when the plan is read (two ball products an
entry, as numpy object-array products at the plan's precision), then kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Any

import numpy as np
from flint import arb, ctx

from attncert.constructions.sinkhorn.kernel import ball_array


class ScaledKernel(Sequence):
    """The n x m balls diag(r) K diag(c) at ``prec`` bits, read as a list of rows (each a list of arb)."""

    def __init__(self, r: Sequence[arb], K: np.ndarray, c: Sequence[arb], prec: int) -> None:
        if K.shape != (len(r), len(c)):
            raise ValueError(f"a {K.shape[0]}x{K.shape[1]} kernel scaled by {len(r)} rows and {len(c)} columns")
        self.r, self.K, self.c, self.prec = ball_array(list(r)), K, ball_array(list(c)), prec

    def scaled_rows(self, f: arb) -> ScaledKernel:
        """diag(r f) K diag(c): every entry times the ball f (for instance [e^-beta, e^beta])."""
        with ctx.workprec(self.prec):
            return ScaledKernel(list(self.r * f), self.K, self.c, self.prec)

    @cached_property
    def _rows(self) -> list[list[arb]]:
        with ctx.workprec(self.prec):
            return (self.r[:, None] * self.K * self.c[None, :]).tolist()

    def __len__(self) -> int:
        return len(self.r)

    def __getitem__(self, i: int | slice) -> Any:  # a row, or a list of rows
        return self._rows[i]

    def __iter__(self) -> Iterator[list[arb]]:
        return iter(self._rows)

    def __repr__(self) -> str:
        return f"ScaledKernel({len(self.r)}x{len(self.c)}, {self.prec} bits)"
