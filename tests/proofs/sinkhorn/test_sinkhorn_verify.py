"""Sinkhorn certificates re-check independently (attncert verify), and tampering is caught."""

import copy

import pytest
from flint import fmpq

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal, write_certificate
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims
from attncert.proofs.checkers.sinkhorn.duality import w1_value
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, projective_diameter, sinkhorn_problem
from attncert.proofs.core.verify import verify_bytes, verify_document

SMALL = {
    "sinkhorn_fixed_point": {"n": 3, "m": 2},
    "sinkhorn_limit": {"n": 2, "m": 3, "ts": "1/3,1/30"},
    "sinkhorn_convergence": {"n": 4, "eps": "1/5,1/1000", "ref_iter": 10, "pot_iter": 10},
    "sinkhorn_transformer": {"n": 3, "m": 2},
    "sinkhorn_universality": {"pairs": 2, "held_out": 1, "max_n": 3, "widths": "1,3"},
}


@pytest.fixture(scope="module")
def docs():
    claims = load_claims()
    return {name: claims[name].prove(**{**claims[name].defaults(), **kw}) for name, kw in SMALL.items()}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_certificate_verifies_through_the_cli(name, docs, tmp_path, capsys):
    path = write_certificate(tmp_path / f"{name}.json", docs[name])
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out


def _tampered(doc, edit):
    bad = copy.deepcopy(doc)
    edit(bad)
    return verify_document(bad)[0]


def test_tampered_fixed_point_and_limit_fail(docs):
    def plan(d):
        d["inputs"]["pi"][0][0] = "1/2"

    assert _tampered(docs["sinkhorn_fixed_point"], plan) == "REJECTED"

    def w1(d):
        step = d["outputs"]["steps"][0]["w1"]
        step["value"] = str(fmpq(step["value"]) * 2)

    assert _tampered(docs["sinkhorn_limit"], w1) == "REJECTED"


def test_tampered_enclosures_fail(docs):
    def shrink(d):
        ball = d["outputs"]["runs"][0]["plan"][1][1]
        ball["rad"] = "0"

    def move_box(d):
        w = d["outputs"]["runs"][1]["witness"]
        w["rho"] = str(fmpq(w["rho"]) / 10**6)

    def cost(d):  # one coefficient of the exact (EE) cost moved: a well-formed, different EE number
        num = d["construction"]["cost"]["C"][0][0]["num"]
        num[0][1] = str(fmpq(num[0][1]) + 1)

    assert docs["sinkhorn_convergence"]["outputs"]["runs"][1]["method"] == "krawczyk"
    assert _tampered(docs["sinkhorn_convergence"], shrink) == "REJECTED"
    assert _tampered(docs["sinkhorn_convergence"], move_box) == "REJECTED"
    assert _tampered(docs["sinkhorn_transformer"], cost) == "REJECTED"


def test_a_model_graph_with_a_cycle_is_malformed_not_a_hang(docs):
    def cycle(d):  # the query attention's argument becomes its own MLP
        edges = d["construction"]["model"]["edges"]
        next(e for e in edges if e["target"] == 3)["source"] = 4

    bad = copy.deepcopy(docs["sinkhorn_transformer"])
    cycle(bad)
    assert verify_bytes(canonical_json(seal(bad))).status == "BAD"


def test_verifier_diameter_is_the_brute_force_maximum():
    C = [[fmpq(0), fmpq(3)], [fmpq(1), fmpq(-2)], [fmpq(5, 2), fmpq(1)]]
    brute = max(C[j][k] + C[i][l] - C[i][k] - C[j][l] for i in range(3) for j in range(3) for k in range(2) for l in range(2))
    p = sinkhorn_problem(C, [fmpq(1, 3)] * 3, [fmpq(1, 2)] * 2, fmpq(1, 4))
    assert projective_diameter(p) == brute * 4


def test_verifier_w1_rejects_an_infeasible_dual():
    pi = [[fmpq(1, 2), fmpq(0)], [fmpq(0), fmpq(1, 2)]]
    pi2 = [[fmpq(0), fmpq(1, 2)], [fmpq(1, 2), fmpq(0)]]
    xs, ys = [[fmpq(0)], [fmpq(1)]], [[fmpq(0)], [fmpq(1)]]
    # cells 0..3 = (0,0), (0,1), (1,0), (1,1); move 1/2 from cell 0 to 1 and from 3 to 2: cost 1/2 + 1/2
    good = {"value": "1", "flow": [[0, 1, "1/2"], [3, 2, "1/2"]], "phi": {"0": "0", "3": "0"}, "psi": {"1": "-1", "2": "-1"}}
    assert w1_value(good, pi, pi2, xs, ys) == 1
    with pytest.raises(HypothesisError, match="infeasible"):
        w1_value({**good, "psi": {"1": "-3", "2": "-1"}}, pi, pi2, xs, ys)
    with pytest.raises(HypothesisError, match="recorded W1 value"):
        w1_value({**good, "value": "1/2"}, pi, pi2, xs, ys)
    with pytest.raises(HypothesisError, match="equal total mass"):
        w1_value(good, pi, [[x * 2 for x in r] for r in pi2], xs, ys)
