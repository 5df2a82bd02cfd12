"""Theorem (universal simulator): one RASP program U(n, d, d_v) computes
T(X) = softmax(X A X^T)(X V) exactly from the token sequence vec(X) ++ vec(A) ++ vec(V).

The certificate records U's graph and size, the inputs, U's output (positions
0 .. n d_v - 1, and the rest, which must be 0), and the reference T(X) computed
directly from X, A, V (FLINT products, EE softmax). Equality is decided in EE.
"""

from __future__ import annotations

from constructions.simulator import universal
from exact import EE, QQ
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "U(n, d, d_v) maps vec(X) ++ vec(A) ++ vec(V) to vec(softmax(X A X^T) X V) (then zeros), exactly in EE"


def prove(n: int = 4, d: int = 3, dv: int = 2, seed: int = 0, inputs: str | None = None) -> dict:
    mats = inputs_for(seed, inputs, {"X": (n, d), "A": (d, d), "V": (d, dv)}, QQ)
    ref = references.attention(mats["X"], mats["A"], mats["V"])
    ee_mats = {k: [[EE.convert(x) for x in row] for row in m] for k, m in mats.items()}
    return prove_construction(universal(n, d, dv), ee_mats, ref, EE, {"n": n, "d": d, "dv": dv, "seed": seed}, STATEMENT)


register(
    Claim(
        "universal",
        STATEMENT,
        prove,
        (size_param("n", 4, "rows of X (tokens)"), size_param("d", 3, "columns of X"), size_param("dv", 2, "columns of V"), SEED, INPUTS),
    )
)
