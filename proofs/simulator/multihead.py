"""Theorem (multi-head attention): one RASP program computes MHA(X) = [T_1(X), ..., T_h(X)] W_O
exactly, from vec(X) ++ vec(A_1..A_h) ++ vec(V_1..V_h) ++ vec(W_O). Decided in EE."""

from __future__ import annotations

from constructions.simulator import multihead
from exact import EE, QQ
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "multihead(n, d, d_v, h, d_o) maps the encoded heads and input to MHA(X) = [T_1(X),...,T_h(X)] W_O exactly in EE"


def prove(n: int = 3, d: int = 2, dv: int = 2, h: int = 2, do: int = 3, seed: int = 0, inputs: str | None = None) -> dict:
    cons = multihead(n, d, dv, h, do)
    shapes = {name: (r, c) for name, r, c in cons.layout.inputs}
    mats = inputs_for(seed, inputs, shapes, QQ)
    heads = [(mats[f"A{m + 1}"], mats[f"V{m + 1}"]) for m in range(h)]
    ref = references.multihead(mats["X"], heads, mats["WO"])
    ee = {k: [[EE.convert(x) for x in row] for row in m] for k, m in mats.items()}
    params = {"n": n, "d": d, "dv": dv, "h": h, "do": do, "seed": seed}
    return prove_construction(cons, ee, ref, EE, params, STATEMENT)


register(
    Claim(
        "multihead",
        STATEMENT,
        prove,
        (
            size_param("n", 3, "rows of X"),
            size_param("d", 2, "columns of X"),
            size_param("dv", 2, "columns of each V_m"),
            size_param("h", 2, "heads"),
            size_param("do", 3, "columns of W_O"),
            SEED,
            INPUTS,
        ),
    )
)
