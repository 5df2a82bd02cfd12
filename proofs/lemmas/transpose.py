"""Lemma (transpose): one RASP program T(r, c) maps vec(M) to vec(M^T) for every r x c matrix M.

A certificate checks it exactly in QQ on one recorded input (given, or random from the seed).
"""

from __future__ import annotations

from attncert.constructions.linalg import transpose
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "transpose",
    "on the recorded input M, transpose(r, c) maps vec(M) to vec(M^T) exactly",
    transpose,
    references.BY_CLAIM["transpose"],
    (size_param("r", 3, "rows of M"), size_param("c", 5, "columns of M")),
    cost=cost.transpose,
)
register(CLAIM.claim())
