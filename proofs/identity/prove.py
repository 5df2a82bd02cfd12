"""Proving a construction equal to its reference for all inputs of its sizes (docs/identity.md).

The construction's graph is evaluated over the symbolic field Sym (:mod:`exact.domains.symbolic`)
with one variable per input entry, and so is the reference, with the field's own arithmetic
(:data:`proofs.checkers.references.OVER_ANY_FIELD`). Every select reads positions only
(:func:`constructions.rasp.static.static_selections`, which refuses the others), so the
evaluation covers every input: each output entry is the function of the inputs that the
construction computes. The identity holds iff each output entry minus its reference is the
zero function and every other position is zero, which Sym decides exactly (Ax's theorem and
Lindemann–Weierstrass), wherever the recorded divisors are nonzero.

Piecewise maps (ReLU, MaxMin) ask for signs of affine forms of the inputs; then the evaluation
is repeated region by region (:mod:`exact.symbolic.regions`), with the variables split into
groups that no output mixes (:func:`constructions.rasp.static.influences`), and every entry is
compared on every region of its group (restricted to the region's equalities).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from networkx.utils import UnionFind

from attncert.constructions import rasp
from attncert.constructions.layout import Construction
from attncert.constructions.rasp.static import influences, static_selections
from attncert.exact.domains.symbolic import Sym, SymbolicField
from attncert.exact.errors import AttncertError
from attncert.exact.matrices import Rows
from attncert.exact.symbolic.basis import RefineBasis
from attncert.exact.symbolic.regions import MixedGroups, Regions
from attncert.exact.symbolic.ring import InputDependentSign
from attncert.proofs.identity.witness import Witness

#: Evaluations from ever finer exponential bases, or coarser variable groups, before giving up.
MAX_RESTARTS = 16


class NoSymbolicRule(AttncertError):
    """The construction uses an operation the symbolic field has no rule for."""


@dataclass(frozen=True)
class SymbolicTask:
    """What one symbolic proof evaluates: a graph on tokens encoded from symbolic matrices, and which
    positions of its output must equal which reference entries, and which must be 0.

    The inputs' entries are the variables, matrix by matrix, row-major; ``positions`` gives the
    token position of each (for the data flow of region splitting: without it, all variables form
    one group).
    """

    name: str
    graph: Any
    length: int
    shapes: Mapping[str, tuple[int, int]]
    encode: Callable[[Mapping[str, Rows], Any], list[Any]]
    reference: Callable[[Mapping[str, Rows], Any], Rows]
    #: Output positions compared with the reference's entries (row-major), and the reference's columns.
    compared: list[int]
    columns: int
    #: Output positions that must be 0.
    zeros: list[int]
    positions: list[int] | None = None
    #: How the tokens are evaluated, if not by the graph's evaluator (a compiled model's forward pass).
    run: Callable[[list[Any], Any], list[Any]] | None = None

    @classmethod
    def of_construction(cls, cons: Construction, reference: Callable[[Mapping[str, Rows], Any], Rows]) -> "SymbolicTask":
        (r, c), n = cons.layout.output, cons.layout.length
        return cls(
            cons.name, cons.graph(), n, {m: (a, b) for m, a, b in cons.layout.inputs}, cons.layout.encode, reference,
            list(range(r * c)), c, list(range(r * c, n)), list(range(sum(a * b for _, a, b in cons.layout.inputs))),
        )

    def variables(self) -> dict[str, list[list[str]]]:
        """One variable per input entry: entry (i, j) of matrix M is ``M_i_j``."""
        names = {m: [[f"{m}_{i}_{j}" for j in range(c)] for i in range(r)] for m, (r, c) in self.shapes.items()}
        flat = [v for rows in names.values() for row in rows for v in row]
        if len(set(flat)) != len(flat):
            raise ValueError("the matrix names make two variables with one name")
        return names


@dataclass
class SymbolicProof:
    """The outcome of evaluating a task and its reference over one symbolic field."""

    field: SymbolicField
    variables: list[str]
    entries: int
    mismatches: list[dict[str, int]] = field(default_factory=list)
    rest_is_zero: bool = True
    regions: Regions | None = None


def prove_symbolic(task: SymbolicTask) -> SymbolicProof:
    """Evaluate the task and its reference over Sym and compare them, restarting from a finer
    exponential basis (:class:`RefineBasis`) or with region splitting over coarser groups of
    variables (:class:`MixedGroups`) as the evaluation requires."""
    static_selections(task.graph)  # refuses a value-dependent select before anything is evaluated
    basis: list = []
    groups: list[frozenset[int]] | None = None
    for _ in range(MAX_RESTARTS):
        try:
            return _compare(task, basis, groups)
        except AttncertError as e:
            cause = _root(e)
            if isinstance(cause, RefineBasis):
                basis = cause.basis
            elif isinstance(cause, MixedGroups) and groups is not None:
                merged = frozenset().union(*(groups[k] for k in cause.groups if k >= 0))
                groups = [grp for k, grp in enumerate(groups) if k not in cause.groups] + [merged]
            elif isinstance(cause, InputDependentSign) and groups is None and "region splitting" in str(cause):
                groups = _groups(task) if task.positions is not None else [frozenset(range(_count(task)))]
            else:
                raise NoSymbolicRule(f"{task.name}: no symbolic proof: {e}") from None
    raise NoSymbolicRule(f"{task.name}: the evaluation restarted {MAX_RESTARTS} times without settling")


def _compare(task: SymbolicTask, basis: list, groups: list[frozenset[int]] | None) -> SymbolicProof:
    names = task.variables()
    flat = [v for rows in names.values() for row in rows for v in row]
    field = Sym(flat, basis)
    ring = field.ring
    regions = ring.regions = Regions(groups) if groups is not None else None
    proof = SymbolicProof(field, flat, len(task.compared), regions=regions)
    owner = _entry_groups(task, groups) if groups is not None and task.positions is not None else None
    if groups is not None and owner is None:  # one group of every variable: every position depends on it
        owner = [0] * task.length
    checks = list(enumerate(task.compared)) + [(None, p) for p in task.zeros]
    first = True
    while True:
        mats = {m: [[field.variable(v) for v in row] for row in rows] for m, rows in names.items()}
        tokens = task.encode(mats, field)
        seq = task.run(tokens, field) if task.run is not None else rasp.evaluate_graph(task.graph, tokens, field)["output"]
        ring.defining = True
        ref = [x for row in task.reference(mats, field) for x in row]
        ring.defining = False
        if ring.undefined_powers():
            k = ring.undefined_powers()[0]
            raise NoSymbolicRule(
                f"{task.name}: the construction takes {ring.uninterpreted_values[k][0]} of a value its reference never forms, "
                "so that value's positivity (where the power is defined) is not established"
            )
        reached = regions.end_pass() if regions is not None else {}
        for e, pos in checks:
            k = owner[pos] if owner is not None else None
            if not (first if k is None else k in reached):
                continue
            diff = field.convert(seq[pos] - ref[e] if e is not None else seq[pos])
            equalities = [f for f, s in regions.groups[k].leaves[reached[k]] if s == 0] if k is not None else []
            if not ring.is_zero_on(diff, equalities):  # as a function: a nonzero difference is a refutation
                if e is not None:
                    proof.mismatches.append({"row": e // task.columns, "col": e % task.columns})
                else:
                    proof.rest_is_zero = False
        first = False
        if regions is None or regions.exhausted():
            return proof


def _count(task: SymbolicTask) -> int:
    return sum(r * c for r, c in task.shapes.values())


def _groups(task: SymbolicTask) -> list[frozenset[int]]:
    """Variables linked by some output position's influence (variable k sits at ``positions[k]``)."""
    at = {p: k for k, p in enumerate(task.positions)}
    linked = UnionFind(range(len(task.positions)))
    for s in influences(task.graph, task.length, task.graph.graph["outputs"]["output"]):
        linked.union(*(at[p] for p in s if p in at))
    return [frozenset(v) for v in sorted(linked.to_sets(), key=min)]  # in order of their first variable


def _entry_groups(task: SymbolicTask, groups: list[frozenset[int]]) -> list[int | None]:
    """For each output position, the group its value depends on (None: it depends on no input)."""
    group_of = {task.positions[v]: k for k, grp in enumerate(groups) for v in grp}
    out = []
    for s in influences(task.graph, task.length, task.graph.graph["outputs"]["output"]):
        owners = {group_of[p] for p in s if p in group_of}
        if len(owners) > 1:
            raise MixedGroups(owners)
        out.append(owners.pop() if owners else None)
    return out


def _root(e: BaseException) -> BaseException:
    """The innermost cause of an error the evaluator wrapped with the node it happened at."""
    while e.__cause__ is not None:
        e = e.__cause__
    return e


def identity_sections(cons: Construction, proof: SymbolicProof) -> dict[str, Any]:
    """The certificate's construction, inputs, outputs and result-detail of one symbolic proof."""
    g = cons.graph()
    return {
        "inputs": {"variables": proof.variables},
        "construction": {
            "graph": rasp.graph_to_json(g),
            "size": rasp.size(g).to_json(length=cons.layout.length),
            "layout": cons.layout.to_json(),
            "static_selections": static_selections(g),
        },
        **witness_sections(proof),
    }


def witness_sections(proof: SymbolicProof) -> dict[str, Any]:
    """The certificate's outputs (exponential basis, divisors, regions) and result detail of one proof."""
    witness = Witness(proof.field.ring)
    divisors = witness.divisors_json()
    outputs: dict[str, Any] = {"exp_basis": witness.exp_basis_json(), "divisors": divisors}
    if proof.regions is not None:
        outputs["regions"] = [
            {"variables": sorted(s.variables), "tree": s.tree_json(witness.affine_to_json)} for s in proof.regions.groups
        ]
    return {
        "outputs": outputs,
        "result": {
            "relation": "identity",
            "holds": not proof.mismatches and proof.rest_is_zero,
            "entries_compared": proof.entries,
            "mismatches": proof.mismatches[:10],
            "rest_is_zero": proof.rest_is_zero,
            "hypotheses": sum(d["sign"] == "hypothesis" for d in divisors),
            "uninterpreted": len(proof.field.ring.uninterpreted_values),
        },
    }
