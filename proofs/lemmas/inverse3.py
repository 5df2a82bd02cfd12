"""Lemma (3x3 inverse): one RASP program maps vec(M) to vec(M^{-1}) for every invertible 3x3 M.

A certificate checks it exactly in QQ, on one recorded input, against FLINT's inverse. A singular input is refused with
a clear error: its determinant is exactly 0.
"""

from __future__ import annotations

from attncert.constructions.linalg import inverse3
from attncert.exact.matrices import to_fmpq_mat
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "inverse3",
    "on the recorded input M (invertible), inverse3() maps vec(M) to vec(M^-1) exactly (adjugate / determinant)",
    inverse3,
    references.BY_CLAIM["inverse3"],  # raises SingularMatrix on a singular input
    (),
    accept=lambda mats: to_fmpq_mat(mats["M"]).det() != 0,
    cost=cost.inverse3,
)
register(CLAIM.claim())
