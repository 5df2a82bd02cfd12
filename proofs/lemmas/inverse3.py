"""Lemma (3x3 inverse): one RASP program maps vec(M) to vec(M^{-1}) for every invertible 3x3 M.

Checked exactly in QQ against FLINT's inverse. A singular input is refused with
a clear error: its determinant is exactly 0.
"""

from __future__ import annotations

from constructions.linalg import inverse3
from exact import QQ
from exact.matrices import to_fmpq_mat
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, inputs_for, prove_construction
from proofs.registry import Claim, register

STATEMENT = "inverse3() maps vec(M) to vec(M^-1) exactly for invertible 3x3 M (adjugate / determinant)"


def prove(seed: int = 0, inputs: str | None = None) -> dict:
    mats = inputs_for(seed, inputs, {"M": (3, 3)}, QQ, accept=lambda m: to_fmpq_mat(m["M"]).det() != 0)
    ref = references.inverse(mats["M"])  # raises SingularMatrix for a singular file input
    return prove_construction(inverse3(), mats, ref, QQ, {"seed": seed}, STATEMENT)


register(Claim("inverse3", STATEMENT, prove, (SEED, INPUTS)))
