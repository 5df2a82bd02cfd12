"""Theorem (encoder layer): one RASP program computes Y = X + MHA(X), Z = Y + ReLU(Y W_1 + b_1) W_2 + b_2
exactly in EE (ReLU is exact there: signs are decided exactly). No layer norm: it needs a
square root, which leaves EE."""

from __future__ import annotations

from constructions.simulator import encoder_layer
from exact import EE, QQ
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "encoder_layer(n, d, d_v, h, f) maps its encoded weights and X to Z = Y + ReLU(Y W1 + b1) W2 + b2, Y = X + MHA(X), exactly in EE"


def prove(n: int = 3, d: int = 2, dv: int = 2, h: int = 2, f: int = 3, seed: int = 0, inputs: str | None = None) -> dict:
    cons = encoder_layer(n, d, dv, h, f)
    shapes = {name: (r, c) for name, r, c in cons.layout.inputs}
    mats = inputs_for(seed, inputs, shapes, QQ)
    heads = [(mats[f"A{m + 1}"], mats[f"V{m + 1}"]) for m in range(h)]
    ref = references.encoder_layer(mats["X"], heads, mats["WO"], mats["W1"], mats["b1"], mats["W2"], mats["b2"])
    ee = {k: [[EE.convert(x) for x in row] for row in m] for k, m in mats.items()}
    params = {"n": n, "d": d, "dv": dv, "h": h, "f": f, "seed": seed}
    return prove_construction(cons, ee, ref, EE, params, STATEMENT)


register(
    Claim(
        "encoder_layer",
        STATEMENT,
        prove,
        (
            size_param("n", 3, "rows of X"),
            size_param("d", 2, "model width"),
            size_param("dv", 2, "columns of each V_m"),
            size_param("h", 2, "heads"),
            size_param("f", 3, "feed-forward width"),
            SEED,
            INPUTS,
        ),
    )
)
