"""Theorem (multi-head attention): one RASP program computes MHA(X) = [T_1(X), ..., T_h(X)] W_O
exactly, from vec(X) ++ vec(A_1..A_h) ++ vec(V_1..V_h) ++ vec(W_O). Decided in EE, on one recorded input."""

from __future__ import annotations

from attncert.constructions.simulator import multihead
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import register


CLAIM = LayoutClaim(
    "multihead",
    "on the recorded inputs, multihead(n, d, d_v, h, d_o) maps the encoded heads and input to MHA(X) = [T_1(X),...,T_h(X)] W_O exactly in EE",
    multihead,
    references.BY_CLAIM["multihead"],
    (
        size_param("n", 3, "rows of X"),
        size_param("d", 2, "columns of X"),
        size_param("dv", 2, "columns of each V_m"),
        size_param("h", 2, "heads"),
        size_param("do", 3, "columns of W_O"),
    ),
    domain="EE",
    input_domain="QQ",
    cost=cost.multihead,
)
register(CLAIM.claim())
