"""Lemma (transpose): one RASP program T(r, c) maps vec(M) to vec(M^T) for every r x c matrix M.

Checked exactly in QQ on the given or random rational inputs.
"""

from __future__ import annotations

from constructions.linalg import transpose
from exact import QQ
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "transpose(r, c) maps vec(M) to vec(M^T) exactly"


def prove(r: int = 3, c: int = 5, seed: int = 0, inputs: str | None = None) -> dict:
    mats = inputs_for(seed, inputs, {"M": (r, c)}, QQ)
    return prove_construction(transpose(r, c), mats, references.transpose(mats["M"]), QQ, {"r": r, "c": c, "seed": seed}, STATEMENT)


register(Claim("transpose", STATEMENT, prove, (size_param("r", 3, "rows of M"), size_param("c", 5, "columns of M"), SEED, INPUTS)))
