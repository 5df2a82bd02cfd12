"""What an identity check may cost (issue 30, the fresh audit): its work budget, its static-selection proof
read entry by entry, and the size of the certificate, estimated before the work.

The audit's files: the square of the mean of every token at every position (each product within the
limit on terms, their number not: minutes), and 16,000 selects over a chain of 16,000 maps (each
select's ancestry recomputed and kept: 80 s, 2.4 GB); `prove universal --for-all --n 32 --d 32 --dv 8`
worked 217 s and then refused its 85 MB document. The slow tests of
tests/proofs/core/test_fresh_attack_issue30.py run the full-size files in a capped process; here the
same mechanisms are checked at small sizes, and the budget and the estimate against genuine
certificates.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from attncert.exact import LimitExceeded
from attncert.exact.certificate import certificate_bytes
from attncert.exact.limits import Limits, limits
from attncert.proofs.checkers.identity import check as identity_check
from attncert.proofs.checkers.identity import graph as identity_graph
from attncert.proofs.checkers.identity.check import check_identity, work_budget
from attncert.proofs.checkers.identity.field import Field, IdentityFailure
from attncert.proofs.checkers.identity.graph import is_static_selection_proof, read_graph, static_selections
from attncert.proofs.core.cost import MODEL_BASE, estimate
from attncert.proofs.core.registry import load_claim
from tests.proofs.identity.test_identity_checker import prove


def squares_of_the_mean(doc: dict) -> dict:
    """The certificate with its graph replaced: the mean of every token (a TRUE select), squared at every position."""
    doc = copy.deepcopy(doc)
    doc["construction"]["graph"] = {"format": "attncert-rasp/1", "outputs": {"output": 3}, "nodes": [
        {"encoding": "numerical", "id": 0, "label": "tokens", "name": "tokens", "op": "tokens", "params": {}},
        {"id": 1, "label": "all", "name": "select", "op": "select", "params": {"predicate": "TRUE"}},
        {"encoding": "numerical", "id": 2, "label": "mean", "name": "mean", "op": "aggregate", "params": {"default": {"q": "0"}}},
        {"encoding": "numerical", "id": 3, "label": "sq", "name": "sq", "op": "sequence_map", "params": {"fn": {"name": "mul", "params": {}}}},
    ], "edges": [{"arg": 0, "source": 0, "target": 1}, {"arg": 1, "source": 0, "target": 1}, {"arg": 0, "source": 1, "target": 2},
                 {"arg": 1, "source": 0, "target": 2}, {"arg": 0, "source": 2, "target": 3}, {"arg": 1, "source": 2, "target": 3}]}  # fmt: skip
    doc["construction"]["static_selections"] = static_selections(read_graph(doc["construction"]["graph"]))
    return doc


def test_a_graph_that_squares_the_mean_at_every_position_is_refused_within_its_budget():
    # transpose(20, 20): 400 variables; the square of their mean has 80,200 terms, and each of the 400 positions
    # compares it with its reference: 32 million units of work, where the budget at these sizes is 1.48 million
    doc = squares_of_the_mean(prove("transpose", r=20, c=20))
    with pytest.raises(LimitExceeded, match="units of work"):
        check_identity(doc)
    # the same graph at 4 x 4 (16 variables, 136 terms) is within the budget: the check finishes and finds it false
    small = check_identity(squares_of_the_mean(prove("transpose", r=4, c=4)))
    assert any("mismatches" in p for p in small), small


@pytest.mark.parametrize(
    "claim, sizes",
    [
        ("transpose", {"r": 8, "c": 8}),
        ("softmax", {"r": 4, "c": 8}),
        ("universal", {"n": 8, "d": 4, "dv": 2}),
        ("universal", {"n": 16, "d": 2, "dv": 1}),
        ("multihead", {"n": 3, "d": 2, "dv": 2, "h": 2, "do": 2}),
        ("encoder_layer", {"n": 2, "d": 2, "dv": 2, "h": 1, "f": 16}),
        ("encoder_layer_norm", {"n": 1, "d": 8, "dv": 1, "h": 1, "f": 1, "delta": "1/100"}),
        ("encoder_layer_norm", {"n": 3, "d": 2, "dv": 2, "h": 2, "f": 3, "delta": "1/100"}),
        ("relu", {"n": 16}),
    ],
)
def test_a_genuine_check_stays_well_within_its_budget(monkeypatch, claim, sizes):
    # the budget must never refuse what prove writes: the work of the genuine check (a count, not a time) is at
    # most a quarter of its budget (the module docstring of check.py has the margins measured at larger sizes)
    fields: list[Field] = []

    def recorded(*args, **kwargs):
        fields.append(Field(*args, **kwargs))
        return fields[-1]

    doc = prove(claim, **sizes)
    monkeypatch.setattr(identity_check, "Field", recorded)
    assert check_identity(doc) == []
    (F,) = fields
    base = {k: v for k, v in sizes.items() if k != "delta"}
    assert 0 < F.work <= F.budget / 4 and F.budget >= work_budget(claim, base, doc["construction"]["layout"]["length"])


def test_every_region_pass_has_its_own_budget(monkeypatch):
    # relu with regions evaluates the graph once per leaf of the recorded trees: the budget grows by one
    # evaluation's per pass, so a genuine tree is never cut short, and the passes are bounded by --max-evaluations
    fields: list[Field] = []
    monkeypatch.setattr(identity_check, "Field", lambda *a, **k: fields.append(Field(*a, **k)) or fields[-1])
    doc = prove("relu", n=4)
    assert check_identity(doc) == []
    per_pass = work_budget("relu", {"n": 4}, doc["construction"]["layout"]["length"])
    assert fields[0].budget % per_pass == 0 and fields[0].budget > per_pass


# -- the static-selection proof, entry by entry ------------------------------------------------------------


def selects_over_a_chain(K: int, S: int) -> dict:
    nodes = [{"encoding": "numerical", "id": 0, "label": "i", "name": "indices", "op": "indices", "params": {}}]
    edges = []
    for i in range(1, K + 1):
        nodes.append({"encoding": "numerical", "id": i, "label": "m", "name": "m", "op": "map", "params": {}})
        edges.append({"arg": 0, "source": i - 1, "target": i})
    for j in range(K + 1, K + 1 + S):
        nodes.append({"id": j, "label": "s", "name": "select", "op": "select", "params": {"predicate": "EQ"}})
        edges += [{"arg": 0, "source": K, "target": j}, {"arg": 1, "source": K, "target": j}]
    return {"format": "attncert-rasp/1", "outputs": {"output": K}, "nodes": nodes, "edges": edges}


def test_the_static_selection_proof_is_compared_as_it_is_derived(monkeypatch):
    # 3,000 selects over a chain of 3,000 maps: the whole proof holds 18 million node ids; a document that records
    # fewer entries is refused before any ancestry is formed, one whose first entry differs after that entry's two
    formed = []
    ancestry = identity_graph.ancestry
    monkeypatch.setattr(identity_graph, "ancestry", lambda g, v: formed.append(v) or ancestry(g, v))
    graph = read_graph(selects_over_a_chain(3000, 3000))
    assert not is_static_selection_proof(graph, []) and not is_static_selection_proof(graph, None)
    assert formed == []
    first = {"select": 3001, "predicate": "EQ", "keys": list(range(3001)), "queries": list(range(3001))}
    assert not is_static_selection_proof(graph, [first])
    assert formed == []
    assert not is_static_selection_proof(graph, [{**first, "keys": [0]}] + [first] * 2999)
    assert formed == [3000, 3000]  # the first entry's keys and queries, and no other
    small = read_graph(selects_over_a_chain(5, 4))
    proof = static_selections(small)
    assert is_static_selection_proof(small, proof)
    assert [e["keys"] for e in proof] == [[0, 1, 2, 3, 4, 5]] * 4 and len(proof) == 4


def test_structural_changes_of_the_static_selection_proof_are_refused():
    doc = prove("universal", n=2, d=2, dv=1)
    proof = doc["construction"]["static_selections"]
    assert len(proof) >= 2
    changes = {
        "an entry deleted": proof[1:],
        "an entry duplicated": proof[:1] + proof,
        "two entries swapped": [proof[1], proof[0]] + proof[2:],
        "an unknown key": [{**proof[0], "note": 1}] + proof[1:],
        "an ancestry with a node deleted": [{**proof[0], "keys": proof[0]["keys"][1:]}] + proof[1:] if "keys" in proof[0] else proof[1:],
    }
    for name, changed in changes.items():
        forged = copy.deepcopy(doc)
        forged["construction"]["static_selections"] = changed
        with pytest.raises(IdentityFailure, match="static-selection proof"):
            check_identity.__wrapped__(forged)
        assert check_identity(forged), name


# -- the certificate's size, before the work -------------------------------------------------------------------

SIZES = [
    ("transpose_identity", {"r": 16, "c": 16}),
    ("softmax_identity", {"r": 8, "c": 16}),
    ("relu_identity", {"n": 64}),
    ("maxmin_identity", {"n": 9}),
    ("universal_identity", {"n": 8, "d": 4, "dv": 2}),
    ("universal_identity", {"n": 2, "d": 16, "dv": 1}),
    ("multihead_identity", {"n": 3, "d": 2, "dv": 2, "h": 2, "do": 2}),
    ("encoder_layer_identity", {"n": 3, "d": 2, "dv": 2, "h": 2, "f": 3}),
    ("hierarchy_identity", {"N": 3, "D": 2, "Dv": 2}),
    ("compiled_identity", {"of": "universal", "sizes": "d=2,dv=2,n=3"}),
    ("compiled_identity", {"of": "relu", "sizes": "n=5"}),
]


@pytest.mark.parametrize("claim, params", SIZES, ids=[f"{c}-{'-'.join(map(str, p.values()))}" for c, p in SIZES])
def test_the_estimate_is_an_upper_bound_on_the_identity_certificate(claim, params):
    c = load_claim(claim)
    cost = estimate(c, params, Limits())
    with limits(Limits()):
        written = len(certificate_bytes(c.prove(**{**c.defaults(), **params})))
    assert written <= cost.document, f"{claim} {params}: wrote {written:,} bytes, estimated {cost.document:,}"
    # past the fixed part (envelope, statement, graph; a compiled model's base) within 3 times
    assert cost.document <= 3 * written + 40_000 + (MODEL_BASE if claim == "compiled_identity" else 0), (written, cost.document)


def test_prove_refuses_up_front_a_for_all_certificate_over_max_bytes(tmp_path: Path):
    # the run itself worked 217 s (9.1 GB) before its document was formed: now the cost model's line, before the work
    out = tmp_path / "u.json"
    done = subprocess.run([sys.executable, "-m", "attncert", "prove", "universal", "--for-all", "--n", "32", "--d", "32", "--dv", "8", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    said = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(said) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "needs a certificate of about" in said[0] and "--max-bytes" in said[0] and not out.exists()


# -- the field's other loops ----------------------------------------------------------------------------------


def test_uninterpreted_values_are_compared_only_with_those_of_equal_value_at_the_point(monkeypatch):
    # 300 ReLUs of distinct non-affine values: no exact comparison between them (their values at the point differ),
    # where every new one used to be compared with each before it; a repeated argument finds its R_k with one
    from flint import fmpq

    from attncert.proofs.checkers.identity.field import Basis

    F = Field(["x_0_0", "x_0_1"], Basis([]), 1)
    compared = []
    equal = Field.equal
    monkeypatch.setattr(Field, "equal", lambda self, a, b: compared.append(1) or equal(self, a, b))
    product = F.mul(F.variable(0), F.variable(1))
    symbols = [F.uninterpreted("relu", F.add(product, fmpq(c))) for c in range(300)]
    assert len(F.uninterpreted_values) == 300 and compared == []
    again = F.uninterpreted("relu", F.add(F.mul(F.variable(1), F.variable(0)), fmpq(7)))
    assert len(compared) == 1 and again.parts == symbols[7].parts


def test_solving_an_exp_argument_through_a_chain_of_rows_is_charged():
    # rows x^(i+1) + x^i (i >= 1) and x: the argument x^N reads all N rows, one after the other
    from flint import fmpq

    from attncert.proofs.checkers.identity.field import Basis

    N = 2000
    rows = [{((0, 1),): fmpq(1)}] + [{((0, i + 1),): fmpq(1), ((0, i),): fmpq(1)} for i in range(1, N)]
    F = Field(["x_0_0"], Basis(rows), 1, budget=10 * N)
    x_to_the_n = F.make([({(): {((0, N),): fmpq(1)}}, None)])
    F.exp(x_to_the_n)
    assert F.work > 2 * N  # every step charged the terms it read
    G = Field(["x_0_0"], Basis(rows), 1, budget=N)
    with pytest.raises(LimitExceeded, match="units of work"):
        G.exp(G.make([({(): {((0, N),): fmpq(1)}}, None)]))
