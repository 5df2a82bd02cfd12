"""The independent check of an identity certificate (docs/identity.md, "What the checker does").

A certificate of ``CLAIM_identity`` states that the recorded RASP graph maps every real input
of the given sizes to its reference (and the rest of the sequence to 0), wherever the recorded
hypothesis divisors are nonzero. From the certificate alone, importing neither the
constructions nor the prover's symbolic field, this module

1. reads the sizes, the layout (its shapes restated from the sizes) and the variable names
   (``M_i_j`` for entry (i, j) of input M, matrix by matrix, row-major);
2. re-derives the static-selection proof from the recorded graph
   (:func:`proofs.checkers.identity_graph.static_selections`) and requires it equal to the
   recorded one;
3. checks the exp basis: rows non-constant with distinct leading monomials (so Q-linearly
   independent modulo constants, the hypothesis of Ax's theorem), D a positive integer;
4. evaluates the graph on the variables, and the reference
   (:mod:`proofs.checkers.identity_references`), in its own field
   (:mod:`proofs.checkers.identity_field`): every exp argument c + p' met must have c D an
   integer and integer coordinates over H, the set of (p', coordinates) met must be exactly
   the recorded one, and D the lcm of the denominators of the constants c met;
5. requires every divisor met to have a sign certificate (:func:`sign_certificate`) or to be a
   unit times a recorded hypothesis, every recorded hypothesis to be met, and every recorded
   ``sign`` to be what the test says;
6. decides each output entry minus its reference, and every other position, exactly zero or
   not, and requires ``holds``, ``mismatches``, ``entries_compared``, ``rest_is_zero`` and
   ``hypotheses`` to be the recorded ones (and ``uninterpreted`` 0: no value is left
   uninterpreted here; a ReLU or MaxMin branch on a value that depends on the inputs, and the
   region splitting that decides them, are refused until this check learns them).

``attncert verify`` then proves again from the recorded sizes and compares the whole document
(:mod:`proofs.rebuild`).
"""

from __future__ import annotations

import gc
from typing import Any

from flint import fmpq

from exact.canonical import json_equal
from exact.errors import ParseError
from exact.limits import current as current_limits
from exact.rationals import rational_from_json
from proofs.checkers.identity_field import Basis, ExpPoly, Field, IdentityFailure, Monomial, Vector
from proofs.checkers.identity_graph import OPS, Evaluator, SignOracle, read_graph, static_selections
from proofs.checkers.identity_references import CLAIMS
from proofs.checkers.reading import flag, obj

SUFFIX = "_identity"
#: How many mismatching entries a certificate lists.
SHOWN_MISMATCHES = 10


def check_identity(doc: dict[str, Any]) -> list[str]:
    """Problems found in an identity certificate (empty: the recorded identity holds as recorded)."""
    collecting = gc.isenabled()
    gc.disable()  # the evaluation makes no reference cycles; the collector would only rescan its values
    try:
        return _check(doc)
    except IdentityFailure as e:
        return [str(e)]
    finally:
        if collecting:
            gc.enable()


def _check(doc: dict[str, Any]) -> list[str]:
    claim = doc.get("claim")
    base = claim[: -len(SUFFIX)] if isinstance(claim, str) and claim.endswith(SUFFIX) else None
    if base not in CLAIMS:
        raise IdentityFailure(f"the identity checker has no reference for claim {str(claim)[:40]!r} (relu, maxmin and the encoder layer branch on signs of the inputs: this check does not yet learn region splitting or uninterpreted ReLU)")
    spec = CLAIMS[base]
    sizes = _sizes(obj(doc, "params"), spec.sizes)
    construction = obj(doc, "construction")
    layout = obj(construction, "layout")
    inputs, output, length = _layout(layout, spec.inputs(**sizes), spec.output(**sizes))
    variables = [f"{m}_{i}_{j}" for m, r, c in inputs for i in range(r) for j in range(c)]
    if not json_equal(obj(doc, "inputs").get("variables"), variables):
        return ["inputs.variables are not the entries M_i_j of the layout's matrices, matrix by matrix, row-major"]

    graph = read_graph(construction.get("graph"))
    out = graph.outputs.get("output")
    if out is None or OPS[graph.nodes[out].op][1]:
        raise ParseError('the recorded graph needs an output "output" that is a sequence, not a selector')
    if not json_equal(construction.get("static_selections"), static_selections(graph)):
        return ["construction.static_selections is not the static-selection proof of the recorded graph"]

    outputs = obj(doc, "outputs")
    if "regions" in outputs:
        return ["outputs.regions: the identity checker does not check region splitting yet"]
    exp_basis = obj(outputs, "exp_basis")
    m = len(variables)
    reader = Reader(m)
    basis = Basis([reader.polynomial(p, f"exp_basis row {i}") for i, p in enumerate(_list(exp_basis, "rows"))])
    denominator = exp_basis.get("constant_denominator")
    if not isinstance(denominator, int) or isinstance(denominator, bool) or denominator < 1:
        raise ParseError("outputs.exp_basis.constant_denominator must be a positive integer")
    field = Field(variables, basis, denominator)
    recorded_arguments = _arguments(_list(exp_basis, "arguments"), reader, len(basis))
    recorded_divisors = _divisors(_list(outputs, "divisors"), reader, field)

    evaluator = Evaluator(graph, field, SignOracle())
    entries = [field.variable(k) for k in range(m)]
    seq = evaluator.run(entries + [fmpq(0)] * (length - m))
    if not isinstance(seq, list) or len(seq) != length:
        return ["the recorded graph's output is not a sequence of the layout's length"]
    values, k = {}, 0
    for name, r, c in inputs:
        values[name] = [entries[k + i * c : k + (i + 1) * c] for i in range(r)]
        k += r * c
    ref = spec.compute(values, field, **sizes)
    assumed = [field.normalised(field.combined(h)[0]) for h in spec.hypotheses(values, field)]

    problems: list[str] = []
    if sorted(field.arguments) != sorted(recorded_arguments):
        problems.append(
            f"outputs.exp_basis.arguments are not the exp arguments the evaluation meets with their coordinates "
            f"({len(field.arguments)} met, {len(recorded_arguments)} recorded)"
        )
    if field.constant_denominator() != denominator:
        problems.append(f"the constant denominator is {field.constant_denominator()}, the certificate records {denominator}")
    problems += _divisor_problems(field, recorded_divisors, assumed)

    r, c = output
    mismatches = [
        {"row": i, "col": j}
        for i in range(r)
        for j in range(c)
        if not _equal_numbers(field, seq[i * c + j], ref[i][j])
    ]
    rest_is_zero = all(_is_zero(field, v) for v in seq[r * c :])
    result = obj(doc, "result")
    expected = {
        "relation": "identity",
        "holds": not mismatches and rest_is_zero,
        "entries_compared": r * c,
        "mismatches": mismatches[:SHOWN_MISMATCHES],
        "rest_is_zero": rest_is_zero,
        "hypotheses": len(assumed),
    }
    if "uninterpreted" in result:  # this check uses no uninterpreted function: its "holds" is an identity either way
        expected["uninterpreted"] = 0
    flag(result, "holds")
    for key, value in expected.items():
        if not json_equal(result.get(key), value):
            problems.append(f"result.{key} is {str(result.get(key))[:60]}, the check finds {str(value)[:60]}")
    return problems


# -- reading -------------------------------------------------------------------------------------


def _sizes(params: dict[str, Any], names: tuple[str, ...]) -> dict[str, int]:
    if set(params) != set(names):
        raise ParseError(f"the parameters of this claim are {list(names)}, the certificate records {sorted(params)}")
    for k in names:
        v = params[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ParseError(f"parameter {k} must be a positive integer")
    return {k: params[k] for k in names}


def _layout(layout: dict[str, Any], shapes: list[tuple[str, int, int]], output: tuple[int, int]) -> tuple[list[tuple[str, int, int]], tuple[int, int], int]:
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


def _list(parent: dict[str, Any], key: str) -> list[Any]:
    v = parent.get(key)
    if not isinstance(v, list):
        raise ParseError(f'certificate field "{key}" must be a list')
    return v


def _pairs(obj_: Any, bound: int, what: str, positive: bool) -> tuple[tuple[int, int], ...]:
    """[[i, e], ...] with 0 <= i < bound strictly increasing and e a nonzero (positive) integer."""
    if not isinstance(obj_, list):
        raise ParseError(f"{what} must be a list of [index, exponent] pairs")
    out = []
    for p in obj_:
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in p)):
            raise ParseError(f"{what} must be a list of [index, exponent] pairs")
        i, e = p
        if not 0 <= i < bound or e == 0 or (positive and e < 0) or (out and i <= out[-1][0]):
            raise ParseError(f"{what} has a bad pair [{i}, {e}]: indices increasing below {bound}, exponents nonzero{' and positive' if positive else ''}")
        out.append((i, e))
    return tuple(out)


class Reader:
    """Recorded polynomials over m variables, each distinct monomial and coefficient validated once.

    A polynomial is a list of terms [monomial, coefficient] in increasing monomial order, the
    coefficients nonzero canonical rational strings; a monomial a list of [variable index,
    exponent] pairs with increasing indices below m and positive exponents.
    """

    def __init__(self, m: int):
        self.m = m
        self._monomials: dict[str, Monomial] = {}  # by repr, which tells true from 1 and 1 from "1"
        self._rationals: dict[str, fmpq] = {}

    def monomial(self, obj_: Any, what: str) -> Monomial:
        key = repr(obj_)
        mono = self._monomials.get(key)
        if mono is None:
            mono = self._monomials[key] = _pairs(obj_, self.m, f"a monomial of {what}", positive=True)
        return mono

    def rational(self, obj_: Any) -> fmpq:
        if not isinstance(obj_, str):
            return rational_from_json(obj_)  # refuses it in one line
        q = self._rationals.get(obj_)
        if q is None:
            q = self._rationals[obj_] = rational_from_json(obj_)
        return q

    def polynomial(self, obj_: Any, what: str) -> Vector:
        if not isinstance(obj_, list):
            raise ParseError(f"{what} must be a list of terms")
        out: Vector = {}
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
            if any(x % 2 for x in mono):
                return None
            free = free or not any(mono)
            signs.add(c > 0)
    if not free or len(signs) != 1:
        return None
    return "positive" if signs.pop() else "negative"


def _divisor_problems(field: Field, recorded: list[tuple[ExpPoly, str]], assumed: list[ExpPoly]) -> list[str]:
    """Every divisor met is sign-certified or a recorded hypothesis; the recorded hypotheses are
    met and are exactly what the statement assumes (``assumed``); the recorded signs are the test's."""
    problems = []
    for i, (e, sign) in enumerate(recorded):
        found = sign_certificate(e) or "hypothesis"
        if found != sign:
            problems.append(f"divisor {i} is recorded {sign}, the sign test finds {found}")
        if any(e == o for o, _ in recorded[:i]):
            problems.append(f"divisor {i} is recorded twice (up to a unit)")
    hypotheses = [e for e, sign in recorded if sign == "hypothesis"]
    for e in field.divisors:
        if sign_certificate(e) is None and not any(e == h for h in hypotheses):
            problems.append("a divisor met in the evaluation has no sign certificate and is not a recorded hypothesis")
    for i, h in enumerate(hypotheses):
        if not any(h == e for e in field.divisors):
            problems.append(f"the recorded hypothesis divisor {i} is never divided by")
    if len(hypotheses) != len(assumed) or not all(any(h == a for a in assumed) for h in hypotheses):
        problems.append(f"the recorded hypotheses are not the statement's ({len(assumed)} nonzero divisor(s) assumed)")
    return problems


# -- deciding ------------------------------------------------------------------------------------


def _equal_numbers(field: Field, a: Any, b: Any) -> bool:
    """Exact equality of an output entry and its reference; a non-number is never equal."""
    if type(a) is bool or a is None or isinstance(a, (str, tuple)):
        return False
    return field.equal(a, b)


def _is_zero(field: Field, v: Any) -> bool:
    if type(v) is bool or v is None or isinstance(v, (str, tuple)):
        return False
    return field.is_zero(v)
