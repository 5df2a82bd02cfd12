"""Theorem (size hierarchy): U(N, D, D_v), built once, simulates every smaller attention layer exactly.

For every n <= N, d <= D and d_v <= D_v, a random rational layer (A: d x d, V: d x d_v)
and input X (n x d) are padded with zeros to N x D, D x D, D x D_v, the padded rows of
X are tagged 0 (:func:`constructions.simulator.pad_for`), and the top-left n x d_v
block of U(N, D, D_v)'s output is compared exactly in EE with T(X) computed directly
from the small X, A, V.
"""

from __future__ import annotations

import random

from constructions import rasp
from constructions.simulator import pad_for, read_output, universal
from exact import EE, QQ
from exact.matrices import matrix_to_json
from proofs import references
from proofs.certify import certificate
from proofs.lemmas.common import SEED, random_matrix, size_param
from proofs.registry import Claim, register

STATEMENT = "U(N, D, D_v) on zero-padded, row-tagged input equals softmax(X A X^T) X V exactly for every n <= N, d <= D, d_v <= D_v"


def prove(N: int = 8, D: int = 4, Dv: int = 4, seed: int = 0) -> dict:
    U = universal(N, D, Dv)
    g = U.graph()
    rng = random.Random(seed)
    cases, outputs, refs, failures = [], [], [], []
    for n in range(1, N + 1):
        for d in range(1, D + 1):
            for dv in range(1, Dv + 1):
                X, A, V = (random_matrix(rng, r, c, QQ) for r, c in ((n, d), (d, d), (d, dv)))
                seq = rasp.evaluate_graph(g, pad_for((N, D, Dv), X, A, V, EE), EE)["output"]
                got = read_output(seq, n, dv, Dv)
                want = references.attention(X, A, V)
                if got != want:
                    failures.append({"n": n, "d": d, "dv": dv})
                cases.append({"n": n, "d": d, "dv": dv, "X": matrix_to_json(X, QQ), "A": matrix_to_json(A, QQ), "V": matrix_to_json(V, QQ)})
                outputs.append(matrix_to_json(got, EE))
                refs.append(matrix_to_json(want, EE))
    return certificate(
        claim="hierarchy",
        params={"N": N, "D": D, "Dv": Dv, "seed": seed},
        inputs={"cases": cases},
        construction={"graph": rasp.graph_to_json(g), "size": rasp.size(g).to_json(length=U.layout.length), "layout": U.layout.to_json()},
        outputs={"cases": outputs},
        reference={"cases": refs},
        result={
            "relation": "exact_equal",
            "holds": not failures,
            "domain": "EE",
            "statement": STATEMENT,
            "cases_checked": len(cases),
            "failures": failures[:10],
        },
    )


register(
    Claim(
        "hierarchy",
        STATEMENT,
        prove,
        (size_param("N", 8, "rows of the big U"), size_param("D", 4, "width of the big U"), size_param("Dv", 4, "value width of the big U"), SEED),
    )
)
