"""The independent check of a ``hierarchy_identity`` certificate (docs/identity.md, "The size hierarchy").

The claim: U(N, D, D_v), built once, maps the padded input of every smaller layer to T. For every
n <= N, d <= D, d_v <= D_v and all real X (n x d), A (d x d), V (d x d_v), the recorded graph on the
tokens

    (X_ij, 1) for the rows i < n of X padded with zeros to N x D, (0, 0) for its padded rows i >= n,
    (A_ij, 1) for A padded to D x D, (V_ij, 1) for V padded to D x D_v, then (0, 0) up to the length

(each token a pair (value, tag); entries outside the smaller matrices are 0) has
softmax(X A X^T) X V as the top-left n x d_v block of its output: position i D_v + c holds entry
(i, c). This module restates that encoding and checks every size exactly once, in the order
n, d, d_v, each as one case of :func:`proofs.checkers.identity.check.decide` on the one recorded graph
(whose static-selection proof it re-derives), against the attention reference of
:mod:`proofs.checkers.identity.references`. ``cases_checked``, ``failures`` (per failing size, its
first mismatches), ``hypotheses``, ``uninterpreted`` (summed over the sizes) and ``holds`` must be
the check's.
"""

from __future__ import annotations

from typing import Any, Callable

from flint import fmpq

from attncert.exact.errors import ParseError
from attncert.proofs.checkers.identity.check import (
    SHOWN_MISMATCHES,
    Case,
    Rows,
    read_layout,
    json_list,
    read_sizes,
    decide,
    graph_runner,
    guarded,
    read_static_graph,
    result_problems,
    work_budget,
)
from attncert.proofs.checkers.identity.field import IdentityFailure
from attncert.proofs.checkers.identity.references import CLAIMS
from attncert.proofs.checkers.reading import obj

NAME = "hierarchy_identity"


def padded_tokens(N: int, D: int, Dv: int, n: int, length: int) -> Callable[[dict[str, Rows]], list[Any]]:
    """The row-tagged, zero-padded encoding of X (n x d), A, V inside U(N, D, D_v) (module docstring)."""
    zero, one = fmpq(0), fmpq(1)

    def pad(m: Rows, rows: int, cols: int) -> Rows:
        return [[m[i][j] if i < len(m) and j < len(m[0]) else zero for j in range(cols)] for i in range(rows)]

    def encode(values: dict[str, Rows]) -> list[Any]:
        seq = [(x, one if i < n else zero) for i, row in enumerate(pad(values["X"], N, D)) for x in row]
        seq += [(x, one) for row in pad(values["A"], D, D) for x in row]
        seq += [(x, one) for row in pad(values["V"], D, Dv) for x in row]
        if len(seq) > length:
            raise IdentityFailure("the padded input does not fit in the recorded layout's length")
        return seq + [(zero, zero)] * (length - len(seq))

    return encode


@guarded
def check_hierarchy_identity(doc: dict[str, Any]) -> list[str]:
    """Problems found in a hierarchy_identity certificate (empty: it holds as recorded)."""
    sizes = read_sizes(obj(doc, "params"), ("N", "D", "Dv"))
    N, D, Dv = sizes["N"], sizes["D"], sizes["Dv"]
    universal = CLAIMS["universal"]
    construction = obj(doc, "construction")
    _, _, length = read_layout(obj(construction, "layout"), universal.inputs(n=N, d=D, dv=Dv), universal.output(n=N, d=D, dv=Dv))
    graph = read_static_graph(construction)
    wanted = [(n, d, dv) for n in range(1, N + 1) for d in range(1, D + 1) for dv in range(1, Dv + 1)]
    inputs, outputs = json_list(obj(doc, "inputs"), "cases"), json_list(obj(doc, "outputs"), "cases")
    recorded = [tuple(c.get(k) for k in ("n", "d", "dv")) if isinstance(c, dict) else None for c in inputs]
    if recorded != wanted or [tuple(c.get(k) for k in ("n", "d", "dv")) if isinstance(c, dict) else None for c in outputs] != wanted:
        raise IdentityFailure(f"the cases are not every (n, d, d_v) <= ({N}, {D}, {Dv}) once, in order ({len(wanted)} sizes)")
    runner = graph_runner(graph, None)
    problems: list[str] = []
    failures: list[dict[str, Any]] = []
    hypotheses = uninterpreted = 0
    for (n, d, dv), variables, out in zip(wanted, inputs, outputs):
        case = Case(
            [("X", n, d), ("A", d, d), ("V", d, dv)],
            length,
            padded_tokens(N, D, Dv, n, length),
            runner,
            universal,
            {"n": n, "d": d, "dv": dv},
            [i * Dv + c for i in range(n) for c in range(dv)],
            dv,
            [],
            work_budget("universal", {"n": n, "d": d, "dv": dv}, length),
        )
        if variables.get("variables") != case.variables():
            raise IdentityFailure(f"case ({n}, {d}, {dv}): its variables are not the entries of X, A, V, row-major")
        try:
            verdict = decide(case, out)
        except (IdentityFailure, ParseError) as e:
            raise type(e)(f"case ({n}, {d}, {dv}): {e}") from None
        problems += [f"case ({n}, {d}, {dv}): {p}" for p in verdict.problems]
        if verdict.mismatches or not verdict.rest_is_zero:
            failures.append({"n": n, "d": d, "dv": dv, "mismatches": verdict.mismatches[:SHOWN_MISMATCHES]})
        hypotheses += verdict.hypotheses
        uninterpreted += verdict.uninterpreted
    expected = {
        "relation": "identity",
        "holds": not failures,
        "cases_checked": len(wanted),
        "failures": failures[:SHOWN_MISMATCHES],
        "hypotheses": hypotheses,
        "uninterpreted": uninterpreted,
    }
    return problems + result_problems(obj(doc, "result"), expected)
