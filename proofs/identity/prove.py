"""Proving a construction equal to its reference for all inputs of its sizes (docs/identity.md).

The construction's graph is evaluated over the symbolic field Sym (:mod:`exact.domains.symbolic`)
with one variable per input entry, and so is the reference, with the field's own arithmetic
(:data:`proofs.references.OVER_ANY_FIELD`). Every select reads positions only
(:func:`constructions.rasp.static.static_selections`, which refuses the others), so the one
evaluation covers every input: each output entry is the function of the inputs that the
construction computes. The identity holds iff each output entry minus its reference is the
zero function and every other position is zero, which Sym decides exactly (Ax's theorem and
Lindemann–Weierstrass), wherever the recorded divisors are nonzero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from constructions import rasp
from constructions.layout import Construction, Layout
from constructions.rasp.static import static_selections
from exact.domains.symbolic import Sym, SymbolicField
from exact.errors import AttncertError
from exact.matrices import Rows
from exact.symbolic.basis import RefineBasis
from proofs.identity.witness import Witness

#: Evaluations from ever finer exponential bases before giving up (each refinement strictly refines a
#: lattice of bounded rank, which the constructions never need more than once).
MAX_REFINEMENTS = 8


class NoSymbolicRule(AttncertError):
    """The construction uses an operation the symbolic field has no rule for."""


def variable_names(layout: Layout) -> dict[str, list[list[str]]]:
    """One variable per input entry: entry (i, j) of matrix M is ``M_i_j``."""
    names = {m: [[f"{m}_{i}_{j}" for j in range(c)] for i in range(r)] for m, r, c in layout.inputs}
    flat = [v for rows in names.values() for row in rows for v in row]
    if len(set(flat)) != len(flat):
        raise ValueError("the layout's matrix names make two variables with one name")
    return names


@dataclass
class SymbolicRun:
    """A construction and its reference, evaluated over one symbolic field."""

    field: SymbolicField
    variables: list[str]
    output: Rows
    rest: list[Any]
    reference: Rows

    def mismatches(self) -> list[dict[str, int]]:
        return [
            {"row": i, "col": j}
            for i, (ro, rr) in enumerate(zip(self.output, self.reference))
            for j, (a, b) in enumerate(zip(ro, rr))
            if not self.field.eq(a, b)
        ]

    def rest_is_zero(self) -> bool:
        return all(self.field.eq(v, 0) for v in self.rest)


def run_symbolic(cons: Construction, reference: Callable[[Mapping[str, Rows], Any], Rows]) -> SymbolicRun:
    """Evaluate ``cons`` and ``reference`` over Sym, from ever finer exponential bases until one holds
    every exponential met (:class:`exact.symbolic.basis.RefineBasis`)."""
    g = cons.graph()
    static_selections(g)  # refuses a value-dependent select before anything is evaluated
    names = variable_names(cons.layout)
    flat = [v for rows in names.values() for row in rows for v in row]
    basis: list = []
    for _ in range(MAX_REFINEMENTS):
        field = Sym(flat, basis)
        mats = {m: [[field.variable(v) for v in row] for row in rows] for m, rows in names.items()}
        try:
            seq = cons.run(mats, field, g)
            ref = reference(mats, field)
        except AttncertError as e:
            cause = _root(e)
            if isinstance(cause, RefineBasis):
                basis = cause.basis
                continue
            raise NoSymbolicRule(f"{cons.name}: no symbolic proof: {e}") from None
        return SymbolicRun(field, flat, cons.layout.decode(seq), cons.layout.rest(seq), ref)
    raise NoSymbolicRule(f"{cons.name}: the exponential basis was refined {MAX_REFINEMENTS} times without settling")


def _root(e: BaseException) -> BaseException:
    """The innermost cause of an error the evaluator wrapped with the node it happened at."""
    while e.__cause__ is not None:
        e = e.__cause__
    return e


def identity_sections(cons: Construction, run: SymbolicRun) -> dict[str, Any]:
    """The certificate's construction, inputs, outputs and result-detail of one symbolic run."""
    g = cons.graph()
    witness = Witness(run.field.ring)
    mismatches = run.mismatches()
    rest_ok = run.rest_is_zero()
    divisors = witness.divisors_json()
    return {
        "inputs": {"variables": run.variables},
        "construction": {
            "graph": rasp.graph_to_json(g),
            "size": rasp.size(g).to_json(length=cons.layout.length),
            "layout": cons.layout.to_json(),
            "static_selections": static_selections(g),
        },
        "outputs": {"exp_basis": witness.exp_basis_json(), "divisors": divisors},
        "result": {
            "relation": "identity",
            "holds": not mismatches and rest_ok,
            "entries_compared": sum(len(r) for r in run.output),
            "mismatches": mismatches[:10],
            "rest_is_zero": rest_ok,
            "hypotheses": sum(d["sign"] == "hypothesis" for d in divisors),
        },
    }
