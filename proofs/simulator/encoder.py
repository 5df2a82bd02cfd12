"""Theorem (encoder layer): one RASP program computes Y = X + MHA(X), Z = Y + ReLU(Y W_1 + b_1) W_2 + b_2
exactly in EE (ReLU is exact there: signs are decided exactly), checked on one recorded input. No layer norm: it needs a
square root, which leaves EE."""

from __future__ import annotations

from attncert.constructions.simulator import encoder_layer
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "encoder_layer",
    "on the recorded inputs, encoder_layer(n, d, d_v, h, f) maps its encoded weights and X to Z = Y + ReLU(Y W1 + b1) W2 + b2, Y = X + MHA(X), exactly in EE",
    encoder_layer,
    references.BY_CLAIM["encoder_layer"],
    (
        size_param("n", 3, "rows of X"),
        size_param("d", 2, "model width"),
        size_param("dv", 2, "columns of each V_m"),
        size_param("h", 2, "heads"),
        size_param("f", 3, "feed-forward width"),
    ),
    domain="EE",
    input_domain="QQ",
    cost=cost.encoder_layer,
)
register(CLAIM.claim())
