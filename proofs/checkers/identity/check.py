"""The independent check of an identity certificate (docs/identity.md, "What the checker does").

A certificate of ``CLAIM_identity`` states that the recorded RASP graph maps every real input
of the given sizes to its reference (and the rest of the sequence to 0), wherever the recorded
hypothesis divisors are nonzero. From the certificate alone, importing neither the
constructions nor the prover's symbolic field, this module

1. reads the sizes, the reference's rational parameters (the layer norm's delta, a hypothesis
   checked > 0 before it is used), the layout (its shapes restated from the sizes) and the
   variable names (``M_i_j`` for entry (i, j) of input M, matrix by matrix, row-major);
2. re-derives the static-selection proof from the recorded graph
   (:func:`proofs.checkers.identity.graph.static_selections`) and requires it equal to the
   recorded one;
3. checks the exp basis: rows non-constant with distinct leading monomials (so Q-linearly
   independent modulo constants, the hypothesis of Ax's theorem), D a positive integer;
4. reads the recorded regions, if any (:mod:`proofs.checkers.identity.regions`): groups that
   partition the variables, complete sign trees, every empty option's Motzkin certificate; and
   requires every output entry's data flow (its own, :func:`influences`, with the variables its
   reference reads) to lie in one group;
5. evaluates the graph on the variables, and the reference
   (:mod:`proofs.checkers.identity.references`), in its own field
   (:mod:`proofs.checkers.identity.field`), each evaluation within a work budget derived from the
   claim's sizes alone (:func:`work_budget`), once, or pass by pass along the recorded trees, each
   pass comparing the entries of the groups that reach a new leaf on that leaf's equalities
   (:func:`decide`): every exp argument c + p' met must have c D an integer and integer
   coordinates over H, the set of (p', coordinates) met must be exactly the recorded one, and D
   the lcm of the denominators of the constants c met; ReLU of a value that is not affine in
   the inputs, and x^(-1/2) of a value of the inputs (``norm_scale``), is an uninterpreted R_k,
   counted; each power's argument must equal, as a function, one the reference shows positive
   (its σ² + δ), else the graph may take the power where it is undefined;
6. requires every divisor met to have a sign certificate (:func:`sign_certificate`) or to be a
   unit times a recorded hypothesis, every recorded hypothesis to be met, and every recorded
   ``sign`` to be what the test says;
7. decides each output entry minus its reference, and every other position, exactly zero or
   not, and requires ``holds``, ``mismatches``, ``entries_compared``, ``rest_is_zero``,
   ``hypotheses`` and ``uninterpreted`` to be the recorded ones.

The same :func:`decide` checks each size of ``hierarchy_identity``
(:mod:`proofs.checkers.identity.hierarchy`) and the compiled forward pass of
``compiled_identity`` (:mod:`proofs.checkers.identity.compiled`).

``attncert verify`` then proves again from the recorded sizes and compares the whole document
(:mod:`proofs.core.rebuild`).
"""

from __future__ import annotations

import functools
import gc
from dataclasses import dataclass, field
from typing import Any, Callable

from flint import fmpq

from attncert.exact.canonical import json_equal
from attncert.exact.errors import LimitExceeded, ParseError
from attncert.exact.limits import current as current_limits
from attncert.exact.rationals import parse_rational, rational_from_json
from attncert.proofs.checkers.identity.field import Basis, ExpPoly, Field, IdentityFailure, Monomial, Number, Poly, fingerprint
from attncert.proofs.checkers.identity.graph import OPS, Evaluator, Graph, SignOracle, influences, is_static_selection_proof, read_graph
from attncert.proofs.checkers.identity.references import CLAIMS, Reference
from attncert.proofs.checkers.identity.regions import RegionOracle, read_regions
from attncert.proofs.checkers.reading import flag, obj
from attncert.proofs.core.cost import identity_terms

SUFFIX = "_identity"
#: How many mismatching entries a certificate lists.
SHOWN_MISMATCHES = 10

Rows = list[list[Any]]
#: What a case evaluates on a field and an oracle: the run (tokens -> output sequence) and, where the
#: data flow is known, the variables each output position depends on (given the sequence length).
Runner = Callable[[Field, SignOracle], tuple[Callable[[list[Any]], list[Any]], "Callable[[int], list[frozenset[int]]] | None"]]


def guarded(check: Callable[[dict[str, Any]], list[str]]) -> Callable[[dict[str, Any]], list[str]]:
    """A check that reports an IdentityFailure as its one problem, with the garbage collector off
    (the evaluation makes no reference cycles; the collector would only rescan its values)."""

    @functools.wraps(check)
    def run(doc: dict[str, Any]) -> list[str]:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return check(doc)
        except IdentityFailure as e:
            return [str(e)]
        finally:
            if collecting:
                gc.enable()

    return run


@dataclass(frozen=True)
class Case:
    """One symbolic proof to check: input matrices (their entries the variables), how they become
    tokens, what evaluates the tokens, and which output positions equal which reference entries."""

    inputs: list[tuple[str, int, int]]
    length: int
    #: The input matrices (of field values) -> the token sequence.
    encode: Callable[[dict[str, Rows]], list[Any]]
    runner: Runner
    reference: Reference
    sizes: dict[str, int]
    #: The output position of each reference entry (row-major), and the reference's columns.
    compared: list[int]
    columns: int
    #: The output positions that must be 0.
    zeros: list[int]
    #: The work one evaluation of the case may do (:func:`work_budget`).
    work: int
    #: The reference's rational parameters (the layer norm's delta), checked > 0.
    rationals: dict[str, fmpq] = field(default_factory=dict)

    def variables(self) -> list[str]:
        return variable_names(self.inputs)


def variable_names(inputs: list[tuple[str, int, int]]) -> list[str]:
    """Entry (i, j) of matrix M is ``M_i_j``, matrix by matrix, row-major."""
    return [f"{m}_{i}_{j}" for m, r, c in inputs for i in range(r) for j in range(c)]


@dataclass
class Verdict:
    """What the check finds for one case."""

    problems: list[str]
    mismatches: list[dict[str, int]] = field(default_factory=list)
    rest_is_zero: bool = True
    hypotheses: int = 0
    uninterpreted: int = 0


def graph_runner(graph: Graph, positions: dict[int, int] | None) -> Runner:
    """The recorded graph's evaluator; ``positions`` maps a token position to the variable it holds
    (None: the data flow is not used, every output depends on all variables)."""

    static_cache: dict[tuple[int, int], Any] = {}  # one graph: its position-only values, over every field

    def runner(field_: Field, oracle: SignOracle) -> tuple[Callable[[list[Any]], list[Any]], Callable[[int], list[frozenset[int]]] | None]:
        evaluator = Evaluator(graph, field_, oracle, static_cache)
        if positions is None:
            return evaluator.run, None

        def data_flow(length: int) -> list[frozenset[int]]:
            return [frozenset(positions[p] for p in s if p in positions) for s in influences(evaluator, length)]

        return evaluator.run, data_flow

    return runner


#: The work one evaluation may do (:meth:`Field.charge`'s units: terms read or formed, positions evaluated by a
#: node, selection pairs): WORK_PER_TERM per term of the cost model's estimate of the proof at the claim's sizes
#: (:func:`proofs.core.cost.identity_terms`, which verify holds to --max-symbolic-terms before anything runs),
#: WORK_PER_POSITION per position of the layout, and WORK_FLOOR. Measured on genuine certificates of every claim
#: (transpose to 64 x 64, U to (32, 2, 1), (2, 32, 1) and (16, 16, 8), multi-head, encoder layers to
#: (16, 4, 4, 2, 16), the layer norm to (3, 4, 3, 2, 3) and (1, 12, 1, 1, 1), the hierarchy to (8, 3, 2), compiled
#: weights): at most 11 units a term (where the terms dominate: U(16, 16, 8) 6, encoder_layer(16, 4, 4, 2, 16) 8,
#: the layer norm's d squares a row 11) and 150 a position (the largest graph, the layer norm's, has 130 nodes,
#: and U(32, 2, 1) does 148 a position), so an honest check stays at least 5 times below the budget. A forged
#: graph (the square of a mean of every token, at every position) is refused once it has done that much.
WORK_PER_TERM, WORK_PER_POSITION, WORK_FLOOR = 64, 1024, 1 << 20


def work_budget(base: str, sizes: dict[str, int], length: int) -> int:
    """The work one evaluation of the claim ``base`` at ``sizes`` on ``length`` positions may do (above). The
    layer norm's variance squares each of a row's d centred entries, where the estimate holds their sum: d times
    its terms."""
    _, terms = identity_terms(base, sizes)
    if base == "encoder_layer_norm":
        terms *= sizes["d"]
    return WORK_PER_TERM * terms + WORK_PER_POSITION * length + WORK_FLOOR


def decide(case: Case, outputs: dict[str, Any]) -> Verdict:
    """Evaluate the case and its reference over the certificate's field (with its regions, if recorded)
    and compare them (module docstring, steps 3 to 7)."""
    variables = case.variables()
    m = len(variables)
    reader = Reader(m)
    exp_basis = obj(outputs, "exp_basis")
    basis = Basis([reader.polynomial(p, f"exp_basis row {i}") for i, p in enumerate(json_list(exp_basis, "rows"))])
    denominator = exp_basis.get("constant_denominator")
    if not isinstance(denominator, int) or isinstance(denominator, bool) or denominator < 1:
        raise ParseError("outputs.exp_basis.constant_denominator must be a positive integer")
    F = Field(variables, basis, denominator, case.work)
    recorded_arguments = _arguments(json_list(exp_basis, "arguments"), reader, len(basis))
    recorded_divisors = _divisors(json_list(outputs, "divisors"), reader, F)
    regions = RegionOracle(*read_regions(outputs["regions"], m, reader.rational)) if "regions" in outputs else None
    oracle = regions or SignOracle()
    run, data_flow = case.runner(F, oracle)
    spec, sizes = case.reference, case.sizes
    reads = spec.reads(**sizes) if spec.reads is not None else None
    # the reference asks signs only where it says which variables each entry reads
    reference_oracle = oracle if reads is not None else SignOracle()

    checks: list[tuple[int | None, int]] = list(enumerate(case.compared)) + [(None, p) for p in case.zeros]
    owner: list[int | None] | None = None
    if regions is not None:
        if data_flow is None:
            if len(regions.groups) != 1:
                raise IdentityFailure("outputs.regions: where the data flow is not read, the variables must form one group")
            owner = [0] * len(checks)
        else:
            flow = data_flow(case.length)
            owner = [regions.group_of(flow[p] | (reads[e] if reads is not None and e is not None else frozenset())) for e, p in checks]

    entries = [F.variable(k) for k in range(m)]
    values, k = {}, 0
    for name, r, c in case.inputs:
        values[name] = [entries[k + i * c : k + (i + 1) * c] for i in range(r)]
        k += r * c
    tokens = case.encode(values)
    verdict = Verdict([])
    assumed: list[ExpPoly] = []
    first, passes = True, 0
    while True:
        passes += 1
        if passes > current_limits().max_evaluations:
            raise LimitExceeded(f"the recorded regions take over {current_limits().max_evaluations:,} evaluations, the limit (raise it with --max-evaluations)")
        if passes > 1:
            F.budget += case.work  # each pass along the recorded trees evaluates the whole case again
        seq = run(tokens)
        if not isinstance(seq, list) or len(seq) != case.length:
            raise IdentityFailure("the evaluated output is not a sequence of the layout's length")
        ref = spec.compute(values, F, reference_oracle, **sizes, **case.rationals)
        if first:
            assumed = [F.normalised(F.combined(h)[0]) for h in spec.hypotheses(values, F)]
        reached = regions.end_pass() if regions is not None else {}
        for j, (e, pos) in enumerate(checks):
            group = owner[j] if owner is not None else None
            if not (first if group is None else group in reached):
                continue
            diff = _difference(F, seq[pos], fmpq(0) if e is None else ref[e // case.columns][e % case.columns])
            equalities = reached[group] if group is not None else []
            if diff is None or not F.is_zero_on(diff, equalities):
                if e is not None:
                    verdict.mismatches.append({"row": e // case.columns, "col": e % case.columns})
                else:
                    verdict.rest_is_zero = False
        first = False
        if regions is None or regions.exhausted():
            break

    if sorted(F.arguments) != sorted(recorded_arguments):
        verdict.problems.append(
            f"outputs.exp_basis.arguments are not the exp arguments the evaluation meets with their coordinates "
            f"({len(F.arguments)} met, {len(recorded_arguments)} recorded)"
        )
    if F.constant_denominator() != denominator:
        verdict.problems.append(f"the constant denominator is {F.constant_denominator()}, the certificate records {denominator}")
    verdict.problems += _divisor_problems(F, recorded_divisors, assumed)
    undefined = [name for k, (name, _) in enumerate(F.uninterpreted_values) if k not in F.in_domain]
    if undefined:
        verdict.problems.append(
            f"the evaluation takes {undefined[0]} of {len(undefined)} value(s) not shown in its domain "
            "(equal to none of the reference's arguments, which are positive): it may be undefined"
        )
    verdict.hypotheses = len(assumed)
    verdict.uninterpreted = len(F.uninterpreted_values)
    return verdict


def result_problems(result: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """The recorded result fields that differ from the check's."""
    flag(result, "holds")
    return [
        f"result.{key} is {str(result.get(key))[:60]}, the check finds {str(value)[:60]}"
        for key, value in expected.items()
        if not json_equal(result.get(key), value)
    ]


def read_static_graph(construction: dict[str, Any]) -> Graph:
    """The recorded graph, with a sequence output ``output``, whose recorded static-selection proof is
    the one this checker derives."""
    graph = read_graph(construction.get("graph"))
    out = graph.outputs.get("output")
    if out is None or OPS[graph.nodes[out].op][1]:
        raise ParseError('the recorded graph needs an output "output" that is a sequence, not a selector')
    if not is_static_selection_proof(graph, construction.get("static_selections")):
        raise IdentityFailure("construction.static_selections is not the static-selection proof of the recorded graph")
    return graph


def layout_encode(inputs: list[tuple[str, int, int]], length: int) -> Callable[[dict[str, Rows]], list[Any]]:
    """The layout's encoding: the matrices' entries, matrix by matrix, row-major, then zeros up to the length."""
    return lambda values: [x for name, _, _ in inputs for row in values[name] for x in row] + [fmpq(0)] * (length - sum(r * c for _, r, c in inputs))


def layout_case(doc: dict[str, Any], base: str, sizes: dict[str, int], runner: Runner, rationals: dict[str, fmpq] | None = None) -> Case:
    """The case of the construction claim ``base`` at ``sizes`` (and its reference's ``rationals``): its
    recorded layout (checked against the shapes restated from the sizes), encoded by the layout rule,
    evaluated by ``runner``, the output block compared with the reference and the rest with 0; the
    recorded variables checked."""
    spec = CLAIMS[base]
    inputs, (r, c), length = read_layout(obj(obj(doc, "construction"), "layout"), spec.inputs(**sizes), spec.output(**sizes))
    zeros = list(range(r * c, length))
    case = Case(inputs, length, layout_encode(inputs, length), runner, spec, sizes, list(range(r * c)), c, zeros, work_budget(base, sizes, length), rationals or {})
    if not json_equal(obj(doc, "inputs").get("variables"), case.variables()):
        raise IdentityFailure("inputs.variables are not the entries M_i_j of the layout's matrices, matrix by matrix, row-major")
    return case


@guarded
def check_identity(doc: dict[str, Any]) -> list[str]:
    """Problems found in the identity certificate of a construction claim (empty: the recorded identity
    holds as recorded)."""
    claim = doc.get("claim")
    base = claim[: -len(SUFFIX)] if isinstance(claim, str) and claim.endswith(SUFFIX) else None
    if base not in CLAIMS:
        raise IdentityFailure(f"the identity checker has no reference for claim {str(claim)[:40]!r}")
    spec = CLAIMS[base]
    params = obj(doc, "params")
    sizes = read_sizes(params, spec.sizes, spec.rationals)
    rationals = read_positive_rationals(params, spec.rationals)  # the hypotheses, before anything uses them
    graph = read_static_graph(obj(doc, "construction"))
    m = sum(r * c for _, r, c in spec.inputs(**sizes))
    case = layout_case(doc, base, sizes, graph_runner(graph, {k: k for k in range(m)}), rationals)  # variable k at token position k
    verdict = decide(case, obj(doc, "outputs"))
    return verdict.problems + result_problems(obj(doc, "result"), expected_result(verdict, len(case.compared)))


def expected_result(verdict: Verdict, entries: int) -> dict[str, Any]:
    """The result fields of one case, as the check finds them."""
    return {
        "relation": "identity",
        "holds": not verdict.mismatches and verdict.rest_is_zero,
        "entries_compared": entries,
        "mismatches": verdict.mismatches[:SHOWN_MISMATCHES],
        "rest_is_zero": verdict.rest_is_zero,
        "hypotheses": verdict.hypotheses,
        "uninterpreted": verdict.uninterpreted,
    }


# -- reading -------------------------------------------------------------------------------------


def read_sizes(params: dict[str, Any], names: tuple[str, ...], rationals: tuple[str, ...] = ()) -> dict[str, int]:
    """The sizes ``names``, positive integers, from parameters that are exactly those and ``rationals``."""
    if set(params) != set(names) | set(rationals):
        raise ParseError(f"the parameters of this claim are {list(names + rationals)}, the certificate records {sorted(params)}")
    for k in names:
        v = params[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ParseError(f"parameter {k} must be a positive integer")
    return {k: params[k] for k in names}


def read_positive_rationals(params: dict[str, Any], names: tuple[str, ...]) -> dict[str, fmpq]:
    """The parameters ``names``, each a rational string > 0: hypotheses of the statement (layer norm's
    (σ² + δ)^(-1/2) is a real number at every input because δ > 0), checked before they are used."""
    out = {}
    for k in names:
        v = params[k]
        if not isinstance(v, str):
            raise ParseError(f"parameter {k} must be a rational string")
        try:
            q = parse_rational(v)
        except ParseError as e:
            raise ParseError(f"parameter {k}: {e}") from None
        if not q > 0:
            raise ParseError(f"parameter {k} must be > 0 (a hypothesis of the statement), the certificate records {q}")
        out[k] = q
    return out


def read_layout(layout: dict[str, Any], shapes: list[tuple[str, int, int]], output: tuple[int, int]) -> tuple[list[tuple[str, int, int]], tuple[int, int], int]:
    """The recorded layout, which must place exactly the claim's matrices and read its output."""
    want = {"inputs": [{"name": n, "rows": r, "cols": c} for n, r, c in shapes], "output": {"rows": output[0], "cols": output[1]}}
    if not json_equal({k: layout.get(k) for k in want}, want):
        return_shapes = ", ".join(f"{n} {r}x{c}" for n, r, c in shapes)
        raise IdentityFailure(f"the recorded layout is not the claim's: inputs {return_shapes}, output {output[0]}x{output[1]}")
    length = layout.get("length")
    used = sum(r * c for _, r, c in shapes)
    if not isinstance(length, int) or isinstance(length, bool) or length < max(used, output[0] * output[1], 1):
        raise ParseError("construction.layout.length must be an integer that holds the inputs and the output")
    if length > current_limits().max_positions:
        raise ParseError(f"construction.layout.length {length:,} is over the limit of {current_limits().max_positions:,} positions")
    return shapes, output, length


def json_list(parent: dict[str, Any], key: str) -> list[Any]:
    v = parent.get(key)
    if not isinstance(v, list):
        raise ParseError(f'certificate field "{key}" must be a list')
    return v


def _pairs(obj_: Any, bound: int, what: str, positive: bool) -> tuple[tuple[int, int], ...]:
    """[[i, e], ...] with 0 <= i < bound strictly increasing and e a nonzero (positive) integer (JSON's
    integers: ``type(x) is int`` refuses true and false)."""
    if type(obj_) is not list:
        raise ParseError(f"{what} must be a list of [index, exponent] pairs")
    out = []
    last = -1
    for p in obj_:
        if type(p) is not list or len(p) != 2 or type(p[0]) is not int or type(p[1]) is not int:
            raise ParseError(f"{what} must be a list of [index, exponent] pairs")
        i, e = p
        if not last < i < bound or e == 0 or (positive and e < 0):
            raise ParseError(f"{what} has a bad pair [{i}, {e}]: indices increasing below {bound}, exponents nonzero{' and positive' if positive else ''}")
        out.append((i, e))
        last = i
    return tuple(out)


class Reader:
    """Recorded polynomials over m variables, each distinct coefficient read once.

    A polynomial is a list of terms [monomial, coefficient] in increasing monomial order, the
    coefficients nonzero canonical rational strings; a monomial a list of [variable index,
    exponent] pairs with increasing indices below m and positive exponents.
    """

    def __init__(self, m: int):
        self.m = m
        self._rationals: dict[str, fmpq] = {}

    def monomial(self, obj_: Any, what: str) -> Monomial:
        """Validated as it is read: most of a certificate's monomials are distinct (61,568 of the 89,344 in
        U(32, 8, 8)'s basis rows), so a cache by spelling costs more than it saves."""
        return _pairs(obj_, self.m, f"a monomial of {what}", positive=True)

    def rational(self, obj_: Any) -> fmpq:
        if not isinstance(obj_, str):
            return rational_from_json(obj_)  # refuses it in one line
        q = self._rationals.get(obj_)
        if q is None:
            q = self._rationals[obj_] = rational_from_json(obj_)
        return q

    def polynomial(self, obj_: Any, what: str) -> Poly:
        if not isinstance(obj_, list):
            raise ParseError(f"{what} must be a list of terms")
        out: Poly = {}
        previous: Monomial | None = None
        for t in obj_:
            if not isinstance(t, list) or len(t) != 2:
                raise ParseError(f"{what} has a malformed term")
            mono = self.monomial(t[0], what)
            c = self.rational(t[1])
            if not c or (previous is not None and mono <= previous):
                raise ParseError(f"{what} must have nonzero coefficients on distinct monomials, in increasing order")
            out[mono] = c
            previous = mono
        return out


def _arguments(objs: list[Any], reader: Reader, r: int) -> list[tuple[tuple[tuple[Monomial, fmpq], ...], tuple[tuple[int, int], ...]]]:
    out = []
    for a in objs:
        if not isinstance(a, list) or len(a) != 2:
            raise ParseError("an exp argument must be [polynomial, coordinates]")
        p = reader.polynomial(a[0], "an exp argument")
        out.append((tuple(sorted(p.items())), _pairs(a[1], r, "an exp argument's coordinates", positive=False)))
    return out


def _divisors(objs: list[Any], reader: Reader, field: Field) -> list[tuple[ExpPoly, str]]:
    """The recorded divisors as exponential polynomials of the field, with their recorded signs."""
    out = []
    for d in objs:
        if not isinstance(d, dict) or set(d) != {"divisor", "sign"} or d["sign"] not in ("positive", "negative", "hypothesis"):
            raise ParseError('a divisor must be {"divisor": ..., "sign": positive, negative or hypothesis}')
        terms = d["divisor"]
        if not isinstance(terms, list) or not terms:
            raise ParseError("a divisor must be a non-empty list of terms")
        parsed = []
        for t in terms:
            if not isinstance(t, list) or len(t) != 3:
                raise ParseError("a divisor's term must be [coordinates, constant, polynomial]")
            if isinstance(t[0], list) and any(isinstance(p, list) and p and isinstance(p[0], int) and p[0] < 0 for p in t[0]):
                raise ParseError(
                    "a recorded divisor involves an uninterpreted value (a coordinate below 0): this check accepts no "
                    "hypothesis that an uninterpreted value is nonzero"
                )
            coords = dict(_pairs(t[0], len(field.basis), "a divisor's coordinates", positive=False))
            poly = reader.polynomial(t[2], "a divisor's polynomial")
            if not poly:
                raise ParseError("a divisor's term has the zero polynomial")
            parsed.append((coords, reader.rational(t[1]), poly))
        e = field.from_terms(parsed)
        if not e:
            raise ParseError("a recorded divisor is zero")
        out.append((field.normalised(e), d["sign"]))
    return out


# -- divisors ------------------------------------------------------------------------------------


def sign_certificate(e: ExpPoly) -> str | None:
    """"positive" or "negative" if e has that sign at every input, by its term pattern; else None.

    The pattern: every coefficient of every polynomial has one sign, every monomial has an even
    exponent in every input variable, and some monomial is free of input variables. Each term
    q x^{2α} E^a T^t then has q's sign or is 0 (E_i = e^{H_i} > 0 and T = e^{1/D} > 0), and a
    term q E^a T^t with no variable has q's sign strictly, so the sum has that sign everywhere.
    """
    signs, free = set(), False
    for p in e.values():
        for mono, c in p.items():
            if any(x % 2 for _, x in mono):
                return None
            free = free or not mono
            signs.add(c > 0)
    if not free or len(signs) != 1:
        return None
    return "positive" if signs.pop() else "negative"


def _divisor_problems(field: Field, recorded: list[tuple[ExpPoly, str]], assumed: list[ExpPoly]) -> list[str]:
    """Every divisor met is sign-certified or a recorded hypothesis; the recorded hypotheses are
    met and are exactly what the statement assumes (``assumed``); the recorded signs are the test's."""
    problems = []
    seen: set[frozenset] = set()  # by fingerprint: a document may record many divisors
    for i, (e, sign) in enumerate(recorded):
        found = sign_certificate(e) or "hypothesis"
        if found != sign:
            problems.append(f"divisor {i} is recorded {sign}, the sign test finds {found}")
        if fingerprint(e) in seen:
            problems.append(f"divisor {i} is recorded twice (up to a unit)")
        seen.add(fingerprint(e))
    hypotheses = [e for e, sign in recorded if sign == "hypothesis"]
    recorded_hypotheses, met = {fingerprint(h) for h in hypotheses}, {fingerprint(e) for e in field.divisors}
    if field.uninterpreted_divisors:
        problems.append(f"the evaluation divides {field.uninterpreted_divisors} time(s) by a value with an uninterpreted function (it may be 0)")
    for e in field.divisors:
        if sign_certificate(e) is None and fingerprint(e) not in recorded_hypotheses:
            problems.append("a divisor met in the evaluation has no sign certificate and is not a recorded hypothesis")
    for i, h in enumerate(hypotheses):
        if fingerprint(h) not in met:
            problems.append(f"the recorded hypothesis divisor {i} is never divided by")
    if len(hypotheses) != len(assumed) or not recorded_hypotheses <= {fingerprint(a) for a in assumed}:
        problems.append(f"the recorded hypotheses are not the statement's ({len(assumed)} nonzero divisor(s) assumed)")
    return problems


# -- deciding ------------------------------------------------------------------------------------


def _difference(F: Field, a: Any, b: Any) -> Number | None:
    """An output entry minus its reference; None for an entry that is not a number (never equal)."""
    if type(a) is bool or a is None or isinstance(a, (str, tuple)):
        return None
    return F.add(a, F.neg(b))
