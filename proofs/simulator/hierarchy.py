"""Size hierarchy: U(N, D, D_v), built once, simulates smaller attention layers exactly.

What is checked (and stated): for every n <= N, d <= D and d_v <= D_v, a random rational layer (A: d x d, V: d x d_v)
and input X (n x d) are padded with zeros to N x D, D x D, D x D_v, the padded rows of
X are tagged 0 (:func:`constructions.simulator.pad_for`), and the top-left n x d_v
block of U(N, D, D_v)'s output is compared exactly in EE with T(X) computed directly
from the small X, A, V.
"""

from __future__ import annotations

import random

from attncert.constructions import rasp
from attncert.constructions.rasp import batch
from attncert.constructions.simulator import pad_for, read_output, universal
from attncert.exact import EE, QQ, ParseError
from attncert.exact.matrices import matrix_from_json, matrix_to_json
from attncert.proofs.core import cost, progress
from attncert.proofs.checkers import references
from attncert.proofs.core.certify import certificate, differing_fields
from attncert.proofs.core.inputs import SEED, random_matrix, size_param
from attncert.proofs.core.registry import Claim, register

#: Cases per batched evaluation (one step of the progress bar).
BATCH = 16

STATEMENT = (
    "on the recorded inputs, one random rational layer (A, V) and input X for each of the N D D_v sizes n <= N, d <= D, "
    "d_v <= D_v: U(N, D, D_v), built once, on the zero-padded, row-tagged input equals softmax(X A X^T) X V exactly"
)


def prove(N: int = 8, D: int = 4, Dv: int = 4, seed: int = 0) -> dict:
    rng = random.Random(seed)
    inputs = [
        tuple(random_matrix(rng, r, c, QQ) for r, c in ((n, d), (d, d), (d, dv)))
        for n in range(1, N + 1)
        for d in range(1, D + 1)
        for dv in range(1, Dv + 1)
    ]
    return _certify(N, D, Dv, seed, inputs)


def _certify(N: int, D: int, Dv: int, seed: int, inputs: list[tuple]) -> dict:
    """Run U(N, D, D_v) on every (X, A, V) padded, and compare with T(X) computed directly."""
    U = universal(N, D, Dv)
    g = U.graph()
    cases, outputs, refs, failures = [], [], [], []
    with progress.bar(len(inputs), "cases", desc="hierarchy") as bar:
        # All cases have U's one sequence length: they are evaluated in batches (constructions.rasp.batch).
        for at in range(0, len(inputs), BATCH):
            part = inputs[at : at + BATCH]
            results = batch.evaluate_batch(g, [pad_for((N, D, Dv), X, A, V, EE) for X, A, V in part], EE)
            for (X, A, V), result in zip(part, results):
                _case(X, A, V, read_output(result["output"], len(X), len(V[0]), Dv), cases, outputs, refs, failures)
            bar.update(len(part))
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


def _case(X: list, A: list, V: list, got: list, cases: list, outputs: list, refs: list, failures: list) -> None:
    """Record one case: its inputs, U's output, and T(X) computed directly."""
    n, d, dv = len(X), len(A), len(V[0])
    want = references.attention(X, A, V)
    if got != want:
        failures.append({"n": n, "d": d, "dv": dv})
    cases.append({"n": n, "d": d, "dv": dv, "X": matrix_to_json(X, QQ), "A": matrix_to_json(A, QQ), "V": matrix_to_json(V, QQ)})
    outputs.append(matrix_to_json(got, EE))
    refs.append(matrix_to_json(want, EE))


def verify(doc: dict) -> list[str]:
    """Reference from the recorded small X, A, V alone; U re-run from the recorded graph; then every
    field must be what proving on the recorded inputs writes."""
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    N, D, Dv, seed = (params.get(k) for k in ("N", "D", "Dv", "seed"))
    # Their size was checked against the limits in force by the cost model (proofs/core/cost.py) before this.
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (N, D, Dv)) or not isinstance(seed, int):
        raise ParseError("hierarchy parameters N, D, Dv must be positive integers, and seed an integer")
    g = rasp.graph_from_json(doc["construction"]["graph"])
    cases, outs, refs = doc["inputs"]["cases"], doc["outputs"]["cases"], doc["reference"]["cases"]
    if not (isinstance(cases, list) and isinstance(outs, list) and isinstance(refs, list) and len(cases) == len(outs) == len(refs)):
        raise ParseError("hierarchy cases, outputs and references must be lists of one length")
    problems, inputs = [], []
    with progress.bar(len(cases), "cases", desc="hierarchy (recorded graph)") as bar:
        for case, out_rec, ref_rec in zip(cases, outs, refs):
            X, A, V = (matrix_from_json(case[k], QQ) for k in ("X", "A", "V"))
            n, d, dv = len(X), len(A), len(V[0])
            if (len(X[0]), len(A[0]), len(V)) != (d, d, d) or not (n <= N and d <= D and dv <= Dv):
                raise ParseError(f"hierarchy case {n},{d},{dv} has inputs of the wrong shape")
            inputs.append((X, A, V))
            if matrix_from_json(ref_rec, EE) != references.attention(X, A, V):
                problems.append(f"case {n},{d},{dv}: the recorded reference differs from the recomputed one")
            got = read_output(rasp.evaluate_graph(g, pad_for((N, D, Dv), X, A, V, EE), EE)["output"], n, dv, Dv)
            if matrix_from_json(out_rec, EE) != got:
                problems.append(f"case {n},{d},{dv}: re-running the recorded graph does not give the recorded output")
            bar.update()
    if {(len(X), len(A), len(V[0])) for X, A, V in inputs} != {
        (n, d, dv) for n in range(1, N + 1) for d in range(1, D + 1) for dv in range(1, Dv + 1)
    } or len(inputs) != N * D * Dv:
        problems.append("the cases do not cover every n <= N, d <= D, d_v <= D_v exactly once")
    return problems or differing_fields(doc, prove(N, D, Dv, seed))  # the inputs are the seed's


register(
    Claim(
        "hierarchy",
        STATEMENT,
        prove,
        (size_param("N", 8, "rows of the big U"), size_param("D", 4, "width of the big U"), size_param("Dv", 4, "value width of the big U"), SEED),
        verify=verify,
        cost=cost.hierarchy,
        build=lambda N=8, D=4, Dv=4: universal(N, D, Dv),
    )
)
