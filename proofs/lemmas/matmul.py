"""Lemma (product): one RASP program P(r, k, c) maps vec(A) ++ vec(B) to vec(AB), followed by zeros.

A certificate checks it exactly in QQ, on one recorded input, against FLINT's fmpq_mat product.
"""

from __future__ import annotations

from attncert.constructions.linalg import matmul
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "matmul",
    "on the recorded inputs A, B, matmul(r, k, c) maps vec(A) ++ vec(B) to vec(AB) (then zeros) exactly",
    matmul,
    references.BY_CLAIM["matmul"],
    (size_param("r", 4, "rows of A"), size_param("k", 3, "columns of A = rows of B"), size_param("c", 5, "columns of B")),
    cost=cost.matmul,
)
register(CLAIM.claim())
