"""Lemma (row softmax): one RASP program maps vec(S) to vec(softmax_rows(S)) for rational scores S.

Exact in EE: e^q for rational q is an element of EE, and equality there is
decided by Lindemann–Weierstrass, not by precision.
"""

from __future__ import annotations

from constructions.activations import softmax_rows
from exact import EE, QQ
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "softmax_rows(r, c) maps rational scores vec(S) to vec(softmax(S)) row-wise, exactly in EE"


def prove(r: int = 3, c: int = 4, seed: int = 0, inputs: str | None = None) -> dict:
    scores = inputs_for(seed, inputs, {"S": (r, c)}, QQ)  # scores are rational: exp stays in EE
    mats = {"S": [[EE.convert(x) for x in row] for row in scores["S"]]}
    ref = references.softmax(mats["S"], EE)
    return prove_construction(softmax_rows(r, c), mats, ref, EE, {"r": r, "c": c, "seed": seed}, STATEMENT)


register(Claim("softmax", STATEMENT, prove, (size_param("r", 3, "rows of S"), size_param("c", 4, "columns of S"), SEED, INPUTS)))
