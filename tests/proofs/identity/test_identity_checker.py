"""The independent checker of identity certificates (proofs/checkers/identity/check.py, docs/identity.md).

Honest certificates of the six identity claims verify OK, through ``verify_bytes`` and the command
line. Self-consistent forgeries (well-formed, re-sealed with a correct hash) REJECTED, and the check
alone already names what is wrong: a construction with one map changed, proven consistently by the
prover and then claimed to hold; a dependent or too coarse exp basis; a divisor relabelled; a
hypothesis dropped; a value-dependent select. Whether a changed construction is wrong is decided
apart from the checker, by evaluating it in EE at a rational input against proofs.checkers.references.

The checker's arithmetic is tested against mpmath at rational points, and its exact identities
(e^p e^q = e^{p+q}, a softmax row sums to 1) by hand.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import subprocess
import sys

import mpmath
import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.exact import EE, LimitExceeded, ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.limits import Limits, limits
from attncert.proofs.checkers import references
from attncert.proofs.checkers.identity.check import check_identity, sign_certificate
from attncert.proofs.checkers.identity.field import Basis, Field, IdentityFailure, Quotient
from attncert.proofs.checkers.identity.graph import Evaluator, SignOracle, read_graph
from attncert.proofs.core.layout_claims import LAYOUT_CLAIMS
from attncert.proofs.core import registry
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

CLAIMS = load_claims()

HONEST = [
    ("transpose", {"r": 2, "c": 3}),
    ("matmul", {"r": 2, "k": 3, "c": 2}),
    ("softmax", {"r": 2, "c": 3}),
    ("inverse3", {}),
    ("universal", {"n": 3, "d": 2, "dv": 2}),
    ("multihead", {"n": 2, "d": 2, "dv": 1, "h": 2, "do": 2}),
]


def prove(base: str, **sizes) -> dict:
    return CLAIMS[f"{base}_identity"].prove(**sizes)


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def refused(doc: dict, match: str, check=check_identity) -> list[str]:
    """The check alone names the forgery, and verify says REJECTED or BAD."""
    try:
        problems = check(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert status(doc) in (REJECTED, BAD)
    return problems


# -- honest certificates -------------------------------------------------------------------------


@pytest.mark.parametrize("base, sizes", HONEST, ids=[b for b, _ in HONEST])
def test_honest_certificates_verify(base, sizes):
    doc = prove(base, **sizes)
    assert doc["result"]["holds"]
    assert check_identity(doc) == []
    assert status(doc) == OK


def test_the_checker_is_the_registered_check():
    for base, _ in HONEST:
        assert CLAIMS[f"{base}_identity"].check is check_identity


def run_cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, text=True, cwd=cwd)


def test_the_command_line_verifies_an_identity_certificate_and_fails_a_forgery(tmp_path):
    r = run_cli("prove", "universal_identity", "--n", "2", "--d", "2", "--dv", "1", "--out", "u.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_cli("verify", "u.json", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("OK"), r.stdout + r.stderr
    doc = prove("inverse3")
    doc["outputs"]["divisors"] = []
    doc["result"]["hypotheses"] = 0
    (tmp_path / "forged.json").write_bytes(canonical_json(seal(doc)))
    r = run_cli("verify", "forged.json", cwd=tmp_path)
    assert r.returncode == 3 and r.stdout.startswith("REJECTED") and len(r.stdout.splitlines()) == 1, r.stdout


# -- constructions with one map changed, proven consistently, then claimed to hold -----------------


def mutated(base: str, sizes: dict, fn_name: str, change) -> tuple[Construction, object]:
    """The construction of ``base`` with the first map of ``fn_name`` given other parameters, and its graph."""
    cons = LAYOUT_CLAIMS[base].build(**sizes)
    g = cons.graph()
    node = next(v for v in sorted(g.nodes) if (g.nodes[v]["params"].get("fn") or {}).get("name") == fn_name)
    fn = copy.deepcopy(g.nodes[node]["params"]["fn"])
    change(fn["params"])
    g.nodes[node]["params"] = {"fn": fn}

    @dataclasses.dataclass(frozen=True)
    class Changed(Construction):
        def graph(self):
            return g

    return Changed(cons.name, cons.program, cons.layout), g


def wrong_at_a_rational_input(base: str, cons: Construction, g, seed: int = 1) -> bool:
    """Apart from the checker: the changed graph, evaluated in EE at one rational input, differs from the reference."""
    rng = random.Random(seed)
    mats = {m: [[fmpq(rng.randint(-4, 4), rng.randint(1, 3)) for _ in range(c)] for _ in range(r)] for m, r, c in cons.layout.inputs}
    out = cons.layout.decode(rasp.evaluate_graph(g, cons.layout.encode(mats, EE), EE)["output"])
    ref = references.BY_CLAIM[base](mats, EE)
    return any(EE.sign(EE.convert(a) - EE.convert(b)) != 0 for ro, rr in zip(out, ref) for a, b in zip(ro, rr))


def prove_changed(monkeypatch, base: str, sizes: dict, cons: Construction) -> dict:
    """The prover's own certificate of the changed construction (everything recorded consistently):
    ``base``'s registered claim, whose construction the identity claim proves, builds ``cons``."""
    monkeypatch.setitem(registry._CLAIMS, base, dataclasses.replace(registry.registered(base), build=lambda **s: cons))
    doc = prove(base, **sizes)
    assert doc["construction"]["graph"] == rasp.graph_to_json(cons.graph())  # the changed construction was proven
    return doc


def scale_plus_one(params: dict) -> None:
    params["c"] = {"q": str(int(params["c"]["q"]) + 1)}


def coefficient_plus_one(params: dict) -> None:
    params["coeffs"]["list"][-1] = {"q": str(int(params["coeffs"]["list"][-1]["q"]) + 1)}


@pytest.mark.parametrize(
    "base, sizes, fn_name, change",
    [
        ("universal", {"n": 2, "d": 2, "dv": 1}, "mul_scaled", scale_plus_one),
        ("matmul", {"r": 2, "k": 2, "c": 2}, "radix_affine", coefficient_plus_one),
    ],
    ids=["universal-mul_scaled-c", "matmul-radix_affine-coefficient"],
)
def test_a_changed_map_claimed_to_hold_fails(monkeypatch, base, sizes, fn_name, change):
    cons, g = mutated(base, sizes, fn_name, change)
    assert wrong_at_a_rational_input(base, cons, g)
    doc = prove_changed(monkeypatch, base, sizes, cons)
    monkeypatch.undo()
    # as the prover records it, consistent and saying it does not hold: the check agrees, and verify REJECTS
    # it, since the rebuild builds attncert's construction, not the changed one
    assert doc["result"]["holds"] is False and doc["result"]["mismatches"]
    assert check_identity(doc) == []
    assert status(doc) == REJECTED
    # claimed to hold: the check finds the mismatches itself
    doc["result"]["holds"] = True
    doc["result"]["mismatches"] = []
    problems = refused(doc, "result.holds")
    assert any("result.mismatches" in p for p in problems)


# -- forged exp bases, divisors and selections -----------------------------------------------------


@pytest.fixture(scope="module")
def universal() -> dict:
    return prove("universal", n=2, d=2, dv=1)


@pytest.fixture(scope="module")
def inverse3() -> dict:
    return prove("inverse3")


def add_polynomials(p: list, q: list) -> list:
    terms: dict[str, fmpq] = {}
    for mono, c in p + q:
        key = repr(mono)
        terms[key] = terms.get(key, fmpq(0)) + fmpq(c)
    monos = {repr(m): m for m, _ in p + q}
    return sorted([monos[k], str(c)] for k, c in terms.items() if c)


def test_a_repeated_basis_row_fails(universal):
    doc = copy.deepcopy(universal)
    rows = doc["outputs"]["exp_basis"]["rows"]
    rows.append(rows[0])
    refused(doc, "same leading monomial")


def test_a_basis_row_that_is_the_sum_of_two_others_fails(universal):
    doc = copy.deepcopy(universal)
    rows = doc["outputs"]["exp_basis"]["rows"]
    rows.append(add_polynomials(rows[0], rows[1]))  # dependent by construction
    refused(doc, "same leading monomial")


def test_a_basis_too_coarse_for_integer_coordinates_fails(universal):
    doc = copy.deepcopy(universal)
    row = doc["outputs"]["exp_basis"]["rows"][0]
    for term in row:
        term[1] = str(2 * fmpq(term[1]))  # an argument equal to the old row is half the new one
    refused(doc, "non-integer coordinate")


def test_a_dropped_exp_argument_fails(universal):
    doc = copy.deepcopy(universal)
    doc["outputs"]["exp_basis"]["arguments"].pop()
    refused(doc, "exp_basis.arguments")


def test_a_forged_constant_denominator_fails(universal):
    doc = copy.deepcopy(universal)
    doc["outputs"]["exp_basis"]["constant_denominator"] = 2  # no exp argument of U has a constant part
    refused(doc, "constant denominator")


def test_the_determinant_relabelled_positive_fails(inverse3):
    # det M is -1 at M = diag(-1, 1, 1) and 1 at M = I: it has no sign
    doc = copy.deepcopy(inverse3)
    (divisor,) = doc["outputs"]["divisors"]
    assert divisor["sign"] == "hypothesis"
    divisor["sign"] = "positive"
    doc["result"]["hypotheses"] = 0
    refused(doc, "recorded positive")


def test_a_dropped_hypothesis_fails(inverse3):
    # without det M != 0 the statement is false: M = 0 has no inverse
    doc = copy.deepcopy(inverse3)
    doc["outputs"]["divisors"] = []
    doc["result"]["hypotheses"] = 0
    refused(doc, "not a recorded hypothesis")


def test_a_hypothesis_the_statement_does_not_make_fails(universal):
    # X_0_0 != 0, recorded as a hypothesis of U, which divides by no such value and assumes nothing
    doc = copy.deepcopy(universal)
    doc["outputs"]["divisors"].append({"divisor": [[[], "0", [[[[0, 1]], "1"]]]], "sign": "hypothesis"})
    doc["result"]["hypotheses"] = 1
    problems = refused(doc, "never divided by")
    assert any("not the statement's" in p for p in problems)


def test_a_positive_softmax_divisor_relabelled_a_hypothesis_fails():
    doc = prove("softmax", r=1, c=2)
    doc["outputs"]["divisors"][0]["sign"] = "hypothesis"
    doc["result"]["hypotheses"] = 1
    refused(doc, "the sign test finds positive")


def test_a_value_dependent_select_fails():
    # Aggregate(Select(tokens, tokens, ==), tokens) maps (a, b) to (a, b) for every input (a = b selects
    # both, whose mean is a), so it computes transpose(1, 2); but its pattern depends on the input
    sel = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    cons = Construction("transpose", rasp.numerical(rasp.Aggregate(sel, rasp.tokens, default=0)), Layout((("M", 1, 2),), (2, 1), 2))
    graph = rasp.graph_to_json(cons.graph())
    select = next(n["id"] for n in graph["nodes"] if n["op"] == "select")
    tokens = [n["id"] for n in graph["nodes"] if n["op"] == "tokens"]
    doc = prove("transpose", r=1, c=2)
    doc["construction"]["graph"] = graph
    doc["construction"]["static_selections"] = [{"select": select, "predicate": "EQ", "keys": tokens, "queries": tokens}]
    refused(doc, "value-dependent")


def test_a_function_without_a_rule_fails():
    doc = prove("transpose", r=2, c=2)
    for node in doc["construction"]["graph"]["nodes"]:
        if node["params"].get("fn"):
            node["params"]["fn"] = {"name": "abs", "params": {}}
    (problem,) = refused(doc, "has no rule")
    assert "\n" not in problem


def test_a_product_over_the_term_limit_is_bad():
    # in U(3, 2, 2) the weight E_ik times (X V)_kv, of 2 terms, is over a limit of 1 term
    doc = prove("universal", n=3, d=2, dv=2)
    with limits(Limits(max_symbolic_terms=1)), pytest.raises(LimitExceeded, match="a product in the evaluation"):
        check_identity(doc)
    out = verify_bytes(canonical_json(seal(doc)), lim=Limits(max_symbolic_terms=1))
    assert out.status == BAD and "--max-symbolic-terms" in out.reason


def test_an_empty_list_of_regions_is_malformed():
    doc = prove("transpose", r=1, c=1)
    doc["outputs"]["regions"] = []
    refused(doc, "non-empty list of groups")


# -- the graph reader and evaluator ----------------------------------------------------------------


def small_graph(**change) -> dict:
    nodes = [
        {"id": 0, "op": "tokens", "label": "tokens", "name": "tokens", "params": {}, "encoding": "numerical"},
        {"id": 1, "op": "map", "label": "r", "name": "r", "params": {"fn": {"name": "relu", "params": {}}}, "encoding": "numerical"},
    ]
    graph = {"format": "attncert-rasp/1", "outputs": {"output": 1}, "nodes": nodes, "edges": [{"source": 0, "target": 1, "arg": 0}]}
    graph.update(change)
    return graph


def test_the_reader_refuses_malformed_graphs():
    assert read_graph(small_graph()).order == (0, 1)
    bad = [
        small_graph(format="attncert-rasp/0"),
        small_graph(edges=[]),  # a map without its argument
        small_graph(edges=[{"source": 0, "target": 1, "arg": 1}]),
        small_graph(edges=[{"source": 1, "target": 1, "arg": 0}]),  # a cycle
        small_graph(outputs={"output": 7}),
    ]
    for g in bad:
        with pytest.raises(ParseError):
            read_graph(g)


def test_the_sign_oracle_answers_for_constants_and_refuses_input_dependent_signs():
    field = Field(["x_0_0", "x_0_1"], Basis([]), 1)
    ev = Evaluator(read_graph(small_graph()), field, SignOracle())
    assert ev.run([fmpq(-2), fmpq(3, 4)]) == [0, fmpq(3, 4)]
    x, y = field.variable(0), field.variable(1)
    with pytest.raises(IdentityFailure, match="records no regions"):  # relu(x): an affine form, without regions
        ev.run([x, y])
    with pytest.raises(IdentityFailure, match="degree > 1"):
        SignOracle().sign(field.mul(x, y))
    # relu(x y) is not affine: the uninterpreted R_0, the same for y x, another for x y + 1
    r = ev.run([field.mul(x, y), field.mul(y, x)])
    assert len(field.uninterpreted_values) == 1 and field.equal(r[0], r[1])
    assert not field.equal(SignOracle().relu(field, field.add(field.mul(x, y), fmpq(1))), r[0])
    assert len(field.uninterpreted_values) == 2


# -- the arithmetic --------------------------------------------------------------------------------

VARIABLES = ["x", "y", "z"]


def demo_field() -> Field:
    """K with E_1 = e^{x y}, E_2 = e^{z}, T = e^{1/2}."""
    return Field(VARIABLES, Basis([{((0, 1), (1, 1)): fmpq(1)}, {((2, 1),): fmpq(1)}]), 2)


def value_at(field: Field, v, point: list) -> mpmath.mpf:
    """A number of the field at a point, term by term (E_i = e^{H_i(point)}, T = e^{1/D})."""
    if type(v) is fmpq:
        return mpmath.mpf(v.p) / v.q
    units = [mpmath.e ** (point[0] * point[1]), mpmath.e ** point[2], mpmath.e ** (mpmath.mpf(1) / field.denominator)]  # E_1, E_2, T

    def at(e):
        total = mpmath.mpf(0)
        for key, p in e.items():
            term = sum(mpmath.mpf(int(c.p)) / int(c.q) * mpmath.fprod(point[v] ** k for v, k in m) for m, c in p.items())
            total += term * mpmath.fprod(units[i] ** a for i, a in key)
        return total

    return sum(at(n) / (at(d) if d is not None else 1) for n, d in v.parts)


rationals = st.fractions(min_value=-3, max_value=3, max_denominator=7)


@settings(max_examples=40, deadline=None)
@given(st.lists(rationals, min_size=3, max_size=3))
def test_the_field_agrees_with_mpmath_at_rational_points(point):
    F = demo_field()
    x, y, z = (F.variable(k) for k in range(3))
    half = fmpq(1, 2)
    # (e^{x y + 1/2} + x) / (1 + e^z) * y - e^{-z} + (x - y) / (x^2 + 1)
    num = F.add(F.exp(F.add(F.mul(x, y), half)), x)
    f = F.add(F.mul(F.div(num, F.add(fmpq(1), F.exp(z))), y), F.neg(F.exp(F.neg(z))))
    f = F.add(f, F.div(F.add(x, F.neg(y)), F.add(F.mul(x, x), fmpq(1))))
    with mpmath.workdps(40):
        px, py, pz = (mpmath.mpf(q.numerator) / q.denominator for q in point)
        want = (mpmath.e ** (px * py + mpmath.mpf(1) / 2) + px) / (1 + mpmath.e**pz) * py - mpmath.e ** (-pz) + (px - py) / (px**2 + 1)
        got = value_at(F, f, [px, py, pz])
        assert abs(got - want) <= mpmath.mpf(10) ** -30 * (1 + abs(want))
    assert isinstance(f, Quotient) and F.arguments and len(F.divisors) == 2


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), rationals), min_size=1, max_size=4), st.lists(rationals, min_size=3, max_size=3))
def test_a_square_is_the_plain_product_of_the_value_by_itself(pieces, point):
    # the fast path (each product of two distinct terms once, doubled) against mul of two distinct objects
    F = demo_field()
    x, y, z = (F.variable(k) for k in range(3))
    atoms = [
        F.add(x, F.exp(F.mul(x, y))),  # two keys
        F.div(y, F.add(fmpq(1), F.exp(z))),  # a part over a denominator
        F.div(F.exp(z), F.add(F.mul(x, x), fmpq(1))),  # over another
        F.exp(F.add(z, fmpq(1, 2))),
        F.add(F.mul(x, y), z),
        fmpq(3, 7),
    ]
    v = F.total(F.mul(fmpq(c.numerator, c.denominator), atoms[k]) for k, c in pieces)
    if type(v) is fmpq:
        assert F.mul(v, v) == v * v
        return
    fast, plain = F.mul(v, v), F.mul(v, Quotient(v.parts, F))
    assert F.equal(fast, plain)
    with mpmath.workdps(40):
        p = [mpmath.mpf(q.numerator) / q.denominator for q in point]
        want = value_at(F, v, p) ** 2
        assert abs(value_at(F, fast, p) - want) <= mpmath.mpf(10) ** -30 * (1 + abs(want))


def test_exact_identities_of_the_field():
    F = demo_field()
    x, y, z = (F.variable(k) for k in range(3))
    xy = F.mul(x, y)
    # e^{xy} e^{z} = e^{xy + z}, e^{z} e^{-z} = 1, e^{1/2}^2 = e^1
    assert F.equal(F.mul(F.exp(xy), F.exp(z)), F.exp(F.add(xy, z)))
    assert F.mul(F.exp(z), F.exp(F.neg(z))) == 1
    assert F.equal(F.mul(F.exp(fmpq(1, 2)), F.exp(fmpq(1, 2))), F.exp(fmpq(1)))
    # a softmax row sums to exactly 1; a sum of positive weights minus one weight is not zero
    exps = [F.exp(s) for s in (xy, z, F.add(xy, F.neg(z)))]
    total = F.total(exps)
    assert F.equal(F.total(F.div(e, total) for e in exps), fmpq(1))  # no gcd: n / n, equal to 1 by cross-multiplication
    assert not F.is_zero(F.add(total, F.neg(exps[0])))
    # (x + y)^2 - x^2 - 2 x y - y^2 = 0, also over a common softmax denominator
    sq = F.mul(F.add(x, y), F.add(x, y))
    assert F.is_zero(F.total([sq, F.neg(F.mul(x, x)), F.mul(fmpq(-2), xy), F.neg(F.mul(y, y))]))
    w = F.div(fmpq(1), total)
    assert F.is_zero(F.add(F.mul(sq, w), F.neg(F.total([F.mul(F.mul(x, x), w), F.mul(F.mul(fmpq(2), xy), w), F.mul(F.mul(y, y), w)]))))


def test_exp_arguments_outside_the_basis_or_off_the_lattice_are_refused():
    F = demo_field()
    x, y, z = (F.variable(k) for k in range(3))
    with pytest.raises(IdentityFailure, match="outside the span"):
        F.exp(x)
    with pytest.raises(IdentityFailure, match="non-integer coordinate"):
        F.exp(F.mul(fmpq(1, 2), z))
    with pytest.raises(IdentityFailure, match="multiple of 1/D"):
        F.exp(F.add(z, fmpq(1, 3)))
    with pytest.raises(IdentityFailure, match="not a polynomial"):
        F.exp(F.exp(z))
    with pytest.raises(IdentityFailure, match="division by zero"):
        F.div(x, fmpq(0))


def test_the_basis_solver_and_its_independence_test():
    rows = [{((0, 1), (1, 1)): fmpq(1), ((0, 1),): fmpq(1)}, {((2, 1),): fmpq(3), ((0, 1),): fmpq(-1)}, {((0, 2),): fmpq(1, 2), ((1, 1),): fmpq(1)}]
    basis = Basis(rows)
    rng = random.Random(5)
    for _ in range(20):
        a = [rng.randint(-5, 5) for _ in rows]
        v: dict = {}
        for ai, row in zip(a, rows):
            for m, c in row.items():
                v[m] = v.get(m, 0) + ai * c
        v = {m: c for m, c in v.items() if c}
        assert basis.coordinates(v) == {i: fmpq(ai) for i, ai in enumerate(a) if ai}
    with pytest.raises(IdentityFailure, match="same leading monomial"):
        Basis([{((0, 1),): fmpq(1), ((1, 1),): fmpq(1)}, {((1, 1),): fmpq(2)}])
    with pytest.raises(IdentityFailure, match="constant term"):
        Basis([{(): fmpq(1), ((1, 1),): fmpq(1)}])
    with pytest.raises(IdentityFailure, match="outside the span"):
        basis.coordinates({((0, 1),): fmpq(1)})


def test_the_sign_certificate_by_hand():
    one, e1 = (), ((0, 1),)  # the keys of 1 and E_1

    def poly(*terms):  # (coefficient, exponent of x, exponent of y)
        return {tuple((v, e) for v, e in enumerate(exps) if e): fmpq(c) for c, *exps in terms}

    assert sign_certificate({one: poly((1, 0, 0), (1, 2, 4))}) == "positive"
    assert sign_certificate({one: poly((1, 0, 0), (1, 2, 0)), e1: poly((3, 0, 2))}) == "positive"  # E_1 > 0
    assert sign_certificate({one: poly((-2, 0, 0), (-1, 0, 2)), ((0, -1), (1, 3)): poly((-1, 0, 0))}) == "negative"  # E_1^-1 T^3
    assert sign_certificate({one: poly((1, 0, 0), (-1, 2, 0))}) is None  # mixed signs
    assert sign_certificate({one: poly((1, 2, 0), (1, 0, 2))}) is None  # zero at x = y = 0
    assert sign_certificate({one: poly((1, 0, 0), (1, 1, 0))}) is None  # odd exponent
    assert sign_certificate({e1: poly((1, 2, 0)), one: poly((1, 2, 2))}) is None  # no term free of the variables


def test_position_only_values_are_shared_between_fields_only_when_plain():
    # tokens * e^{i/2}: e^{i/2} is computed from positions alone, but it is a value of the field (T^i),
    # so each field forms it again and records the constants' denominator 2; i/2 itself is shared
    nodes = [
        {"id": 0, "op": "tokens", "label": "tokens", "name": "tokens", "params": {}, "encoding": "numerical"},
        {"id": 1, "op": "indices", "label": "indices", "name": "indices", "params": {}, "encoding": "numerical"},
        {"id": 2, "op": "map", "label": "half", "name": "half", "params": {"fn": {"name": "mul_const", "params": {"c": {"q": "1/2"}}}}, "encoding": "numerical"},
        {"id": 3, "op": "map", "label": "e", "name": "e", "params": {"fn": {"name": "exp", "params": {}}}, "encoding": "numerical"},
        {"id": 4, "op": "sequence_map", "label": "out", "name": "out", "params": {"fn": {"name": "mul", "params": {}}}, "encoding": "numerical"},
    ]
    edges = [{"source": 1, "target": 2, "arg": 0}, {"source": 2, "target": 3, "arg": 0}, {"source": 0, "target": 4, "arg": 0}, {"source": 3, "target": 4, "arg": 1}]
    graph = read_graph({"format": "attncert-rasp/1", "outputs": {"output": 4}, "nodes": nodes, "edges": edges})
    cache: dict = {}
    outputs = []
    for _ in range(2):
        field = Field(["x_0_0", "x_0_1"], Basis([]), 2)
        outputs.append((field, Evaluator(graph, field, SignOracle(), cache).run([field.variable(0), field.variable(1)])))
        assert field.constant_denominator() == 2
    assert set(cache) == {(1, 2), (2, 2)}  # indices and i/2
    # the same values as without the cache: x_0 e^0 = x_0 and x_1 e^{1/2}
    (f1, shared), (f2, _) = outputs
    plain = Evaluator(graph, f1, SignOracle()).run([f1.variable(0), f1.variable(1)])
    assert all(f1.equal(a, b) for a, b in zip(shared, plain))
    assert f1.equal(shared[0], f1.variable(0)) and f1.equal(shared[1], f1.mul(f1.variable(1), f1.exp(fmpq(1, 2))))
