"""Theorem (universal simulator): one RASP program U(n, d, d_v) computes
T(X) = softmax(X A X^T)(X V) exactly from the token sequence vec(X) ++ vec(A) ++ vec(V).

A certificate checks it on one input. It records U's graph and size, the inputs, U's output (positions
0 .. n d_v - 1, and the rest, which must be 0), and the reference T(X) computed
directly from X, A, V (FLINT products, EE softmax). Equality is decided in EE.
"""

from __future__ import annotations

from attncert.constructions.simulator import universal
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "universal",
    "on the recorded inputs X, A, V, U(n, d, d_v) maps vec(X) ++ vec(A) ++ vec(V) to vec(softmax(X A X^T) X V) (then zeros), exactly in EE",
    universal,
    references.BY_CLAIM["universal"],
    (size_param("n", 4, "rows of X (tokens)"), size_param("d", 3, "columns of X"), size_param("dv", 2, "columns of V")),
    domain="EE",
    input_domain="QQ",
    cost=cost.universal,
)
register(CLAIM.claim())
