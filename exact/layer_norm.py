r"""Row layer norm as a rigorous enclosure: LN(x)_j = gamma_j (x_j - mu) / sqrt(sigma^2 + delta) + beta_j.

For a row x of length d, mu = (1/d) sum_j x_j and sigma^2 = (1/d) sum_j (x_j - mu)^2
(the biased variance, as in Ba, Kiros and Hinton, "Layer Normalization", 2016, and
PyTorch's ``LayerNorm``), with a rational delta > 0 that keeps the square root away
from 0. The square root leaves EE (sqrt(2) is algebraic, not in Q(e^Q)), so the
result is arb balls at ``prec`` bits that contain the exact values: an
*enclosure*, never an exact result. The inputs may be exact (fmpq, EENumber) or
balls already; exact inputs are enclosed first. One home for every layer norm in
attncert: the Sinkhorn Transformer's encoders and the reference of the
``encoder_layer_norm`` claim.
"""

from __future__ import annotations

from typing import Any, Sequence

from flint import arb, ctx, fmpq

from attncert.exact.domains.ball import Ball
from attncert.exact.errors import ParseError


def layer_norm_rows(rows: Sequence[Sequence[Any]], gamma: Sequence[fmpq], beta: Sequence[fmpq], delta: fmpq, prec: int) -> list[list[arb]]:
    """LN applied to every row, in arb at ``prec`` bits (balls containing the exact values)."""
    if not delta > 0:
        raise ParseError(f"layer norm needs delta > 0, got {delta}")
    ball = Ball(prec)
    out = []
    with ctx.workprec(prec):
        for row in rows:
            x = [ball.convert(v) for v in row]
            mean = sum(x, arb(0)) / len(x)
            centred = [v - mean for v in x]
            scale = (sum((c * c for c in centred), arb(0)) / len(x) + arb(delta)).rsqrt()
            out.append([g * c * scale + b for g, c, b in zip(gamma, centred, beta)])
    return out
