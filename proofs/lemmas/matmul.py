"""Lemma (product): one RASP program P(r, k, c) maps vec(A) ++ vec(B) to vec(AB), followed by zeros.

Checked exactly in QQ against FLINT's fmpq_mat product.
"""

from __future__ import annotations

from constructions.linalg import matmul
from exact import QQ
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "matmul(r, k, c) maps vec(A) ++ vec(B) to vec(AB) (then zeros) exactly"


def prove(r: int = 4, k: int = 3, c: int = 5, seed: int = 0, inputs: str | None = None) -> dict:
    mats = inputs_for(seed, inputs, {"A": (r, k), "B": (k, c)}, QQ)
    ref = references.matmul(mats["A"], mats["B"], QQ)
    return prove_construction(matmul(r, k, c), mats, ref, QQ, {"r": r, "k": k, "c": c, "seed": seed}, STATEMENT)


register(
    Claim(
        "matmul",
        STATEMENT,
        prove,
        (size_param("r", 4, "rows of A"), size_param("k", 3, "columns of A = rows of B"), size_param("c", 5, "columns of B"), SEED, INPUTS),
    )
)
