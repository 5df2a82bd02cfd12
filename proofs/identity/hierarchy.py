"""Theorem (size hierarchy, for all inputs): U(N, D, D_v), built once, computes T for every smaller
layer: for every n <= N, d <= D, d_v <= D_v and every real X (n x d), A (d x d), V (d x d_v), U on
the zero-padded, row-tagged input (:func:`constructions.simulator.pad_for`) has softmax(X A X^T) X V
as the top-left n x d_v block of its output.

One symbolic proof per size (docs/identity.md), all on U's one graph; the certificate records each
size's exponential basis and divisors. This replaces the instance claim's one random layer per size.
"""

from __future__ import annotations

from typing import Any

from attncert.constructions import rasp
from attncert.constructions.rasp.static import static_selections
from attncert.constructions.simulator import pad_for, universal
from attncert.proofs.core import cost, progress
from attncert.proofs.checkers import references
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.identity.hierarchy import check_hierarchy_identity
from attncert.proofs.identity.prove import SymbolicTask, prove_symbolic, witness_sections
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import Claim, register

NAME = "hierarchy_identity"
STATEMENT = (
    "for all n <= N, d <= D, d_v <= D_v and all real X (n x d), A (d x d), V (d x d_v): U(N, D, D_v), built once, "
    "on the zero-padded, row-tagged input has softmax(X A X^T) X V as the top-left n x d_v block of its output; "
    "decided exactly as an identity of functions of the entries"
)


def task(N: int, D: int, Dv: int, n: int, d: int, dv: int, g: Any, length: int) -> SymbolicTask:
    """The symbolic proof of one size (n, d, d_v) inside U(N, D, D_v)."""
    return SymbolicTask(
        f"hierarchy ({n}, {d}, {dv}) in U({N}, {D}, {Dv})",
        g,
        length,
        {"X": (n, d), "A": (d, d), "V": (d, dv)},
        lambda m, field: pad_for((N, D, Dv), m["X"], m["A"], m["V"], field),
        lambda m, field: references.attention_over(m["X"], m["A"], m["V"], field),
        [i * Dv + v for i in range(n) for v in range(dv)],
        dv,
        [],
    )


def prove(N: int = 4, D: int = 3, Dv: int = 2) -> dict[str, Any]:
    U = universal(N, D, Dv)
    g = U.graph()
    sizes = [(n, d, dv) for n in range(1, N + 1) for d in range(1, D + 1) for dv in range(1, Dv + 1)]
    variables, outputs, failures = [], [], []
    hypotheses = uninterpreted = 0
    with progress.bar(len(sizes), "cases", desc="hierarchy, for all inputs") as bar:
        for n, d, dv in sizes:
            proof = prove_symbolic(task(N, D, Dv, n, d, dv, g, U.layout.length))
            sections = witness_sections(proof)
            variables.append({"n": n, "d": d, "dv": dv, "variables": proof.variables})
            outputs.append({"n": n, "d": d, "dv": dv, **sections["outputs"]})
            if not sections["result"]["holds"]:
                failures.append({"n": n, "d": d, "dv": dv, "mismatches": sections["result"]["mismatches"]})
            hypotheses += sections["result"]["hypotheses"]
            uninterpreted += sections["result"]["uninterpreted"]
            bar.update()
    return certificate(
        claim=NAME,
        params={"N": N, "D": D, "Dv": Dv},
        inputs={"cases": variables},
        construction={
            "graph": rasp.graph_to_json(g),
            "size": rasp.size(g).to_json(length=U.layout.length),
            "layout": U.layout.to_json(),
            "static_selections": static_selections(g),
        },
        outputs={"cases": outputs},
        reference={"function": "softmax(X A X^T) X V, the top-left n x d_v block"},
        result={
            "relation": "identity",
            "holds": not failures,
            "statement": STATEMENT,
            "cases_checked": len(sizes),
            "failures": failures[:10],
            "hypotheses": hypotheses,
            "uninterpreted": uninterpreted,
        },
    )


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        # prove-all's defaults: the 24 sizes of U(4, 3, 2) (U(8, 4, 4)'s 128 sizes are bench_identity's case)
        (size_param("N", 4, "rows of the big U"), size_param("D", 3, "width of the big U"), size_param("Dv", 2, "value width of the big U")),
        check=check_hierarchy_identity,
        cost=cost.hierarchy_identity,
        build=lambda N=4, D=3, Dv=2: universal(N, D, Dv),
    )
)
