"""The transport_plan claim: proven and verified on random data and on files (POT's own plans judged, issue #229's
among them), the one rule for float masses, and self-consistent forgeries that the independent check alone refuses."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from attncert.exact import ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.transport.plan import check_transport_plan
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

CLAIM = load_claim("transport_plan")

ISSUE_229 = np.array(
    [
        [2.50275352e02, 3.74653218e02, 2.41352736e03, 1.00000000e32, 1.51751540e-03],
        [2.13082030e02, 3.28812836e02, 2.29487946e03, 1.00000000e32, 1.37109800e-01],
        [1.97333083e02, 3.09175848e02, 2.24250550e03, 1.00000000e32, 2.46506283e00],
        [1.00000000e32, 1.00000000e32, 1.00000000e32, 5.26223432e00, 2.50000000e31],
        [3.84690152e01, 8.09465684e01, 3.33064175e02, 2.50000000e31, 0.00000000e00],
    ]
)


def prove(**kw) -> dict:
    return CLAIM.prove(**{**CLAIM.defaults(), **kw})


def verdict(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def files(tmp_path, M, a, b, plan=None) -> dict:
    paths = {}
    for name, value in (("cost", M), ("a", a), ("b", b), ("plan", plan)):
        if value is not None:
            paths[name] = str(tmp_path / f"{name}.npy")
            np.save(paths[name], value)
    return paths


@pytest.fixture(scope="module")
def random_doc():
    doc = prove(n=6, m=5, seed=3)
    assert doc["result"]["holds"] and check_transport_plan(doc) == []
    return doc


@pytest.fixture(scope="module")
def issue_229(tmp_path_factory):
    ot = pytest.importorskip("ot")
    a = np.array([0.125, 0.125, 0.125, 0.125, 0.5])
    P = ot.emd(a, a, ISSUE_229, numItermax=2000000)
    doc = prove(**files(tmp_path_factory.mktemp("issue229"), ISSUE_229, a, a, P))
    return doc, P


def test_random_problems_prove_and_verify(random_doc):
    assert verdict(random_doc) == OK
    W = QQ.from_json(random_doc["result"]["optimal_cost"])
    assert W == QQ.from_json(random_doc["outputs"]["optimum"]["cost"]) > 0


def test_pot_issue_229_plan_is_judged_not_optimal_with_its_exact_gap(issue_229):
    doc, P = issue_229
    judged = doc["outputs"]["judged"]
    cost_P = sum(Fraction(p) * Fraction(c) for p, c in zip(P.ravel().tolist(), ISSUE_229.ravel().tolist()))
    assert Fraction(str(QQ.from_json(judged["cost"]))) == cost_P
    W = Fraction(str(QQ.from_json(doc["result"]["optimal_cost"])))
    assert Fraction(str(QQ.from_json(judged["gap"]))) == cost_P - W
    if cost_P > W:  # POT's plan in the versions that have the bug
        assert doc["result"]["plan_optimal"] is False and judged["optimal"] is False
    assert doc["result"]["holds"] is True
    assert verdict(doc) == OK


def test_float_masses_follow_the_one_rule_and_pot_plans_are_judged(tmp_path):
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(5)
    n, m = 7, 6
    M = ot.dist(rng.random((n, 2)), rng.random((m, 2)))
    a = np.ones(n) / n  # 1/7 is no double: a's exact total is not b's
    b = rng.random(m)
    b /= b.sum()
    P = ot.emd(a, b, M)
    doc = prove(**files(tmp_path, M, a, b, P))
    assert "b_scaled" in doc["inputs"] and doc["result"]["holds"]
    assert verdict(doc) == OK
    a_, b_ = [QQ.from_json(x) for x in doc["inputs"]["a"]], [QQ.from_json(x) for x in doc["inputs"]["b_scaled"]]
    assert sum(a_) == sum(b_)


def test_plan_needs_the_files_and_bad_files_are_one_line(tmp_path):
    with pytest.raises(ParseError, match="--plan goes with"):
        prove(plan="p.npy")
    paths = files(tmp_path, np.ones((2, 2)), np.array([1, 2]), np.array([1, 1]))
    with pytest.raises(ParseError, match="different totals"):
        prove(**paths)
    paths = files(tmp_path, np.ones((2, 2)), np.array([1, 1]), np.array([1, 1]), np.ones((3, 2)))
    with pytest.raises(ParseError, match="shapes disagree"):
        prove(**paths)


def test_the_command_line(tmp_path):
    paths = files(tmp_path, np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0.5, 0.5]), np.array([0.5, 0.5]), np.array([[0.0, 0.5], [0.5, 0.0]]))
    out = tmp_path / "t.json"
    args = [sys.executable, "-m", "attncert.proofs.cli", "prove", "transport_plan", *(x for k, v in paths.items() for x in (f"--{k}", v)), "--out", str(out)]
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "NOT optimal" in run.stdout and "gap 1" in run.stdout
    assert json.loads(out.read_text())["outputs"]["judged"]["gap"] == "1"
    assert subprocess.run([sys.executable, "-m", "attncert.proofs.cli", "verify", str(out)], capture_output=True).returncode == 0
    bad = subprocess.run(args[:5] + ["--cost", paths["cost"]], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "go together" in bad.stderr


# -- self-consistent forgeries: sealed, well-formed, false; the check alone refuses each --------------------------


def refused(doc: dict, match: str, statuses=(REJECTED,)) -> None:
    try:
        problems = check_transport_plan(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert verdict(doc) in statuses


def test_a_feasible_plan_that_is_not_optimal_recorded_as_the_optimum(random_doc):
    doc = copy.deepcopy(random_doc)
    a = [QQ.from_json(x) for x in doc["inputs"]["a"]]
    b = [QQ.from_json(x) for x in doc["inputs"]["b"]]
    C = [[QQ.from_json(x) for x in row] for row in doc["inputs"]["C"]]
    plan, ra, rb, i, j = [], list(a), list(b), 0, 0  # the north-west corner plan, feasible
    while i < len(a) and j < len(b):
        t = min(ra[i], rb[j])
        plan.append([i, j, QQ.to_json(t)])
        ra[i] -= t
        rb[j] -= t
        i, j = (i + 1, j) if ra[i] == 0 else (i, j + 1)
    cost = sum(QQ.from_json(x) * C[i][j] for i, j, x in plan)
    opt = doc["outputs"]["optimum"]
    opt["plan"], opt["cost"] = plan, QQ.to_json(cost)
    doc["result"]["optimal_cost"] = opt["cost"]
    refused(doc, "are not one number")


def test_potentials_moved_to_claim_a_higher_optimum(random_doc):
    doc = copy.deepcopy(random_doc)
    opt = doc["outputs"]["optimum"]
    opt["f"] = [QQ.to_json(QQ.from_json(x) + 1) for x in opt["f"]]  # dual value + sum(a)
    a = [QQ.from_json(x) for x in doc["inputs"]["a"]]
    W = QQ.from_json(opt["cost"]) + sum(a)
    opt["cost"] = doc["result"]["optimal_cost"] = doc["reference"]["dual_value"] = QQ.to_json(W)
    refused(doc, "is negative at")


def test_a_lowered_cost(random_doc):
    doc = copy.deepcopy(random_doc)
    W = QQ.from_json(doc["outputs"]["optimum"]["cost"]) / 2
    doc["outputs"]["optimum"]["cost"] = doc["result"]["optimal_cost"] = QQ.to_json(W)
    refused(doc, "are not one number")


@pytest.mark.parametrize("edit", ["delete", "duplicate", "swap"])
def test_optimal_plan_entries_deleted_duplicated_or_swapped(random_doc, edit):
    doc = copy.deepcopy(random_doc)
    plan = doc["outputs"]["optimum"]["plan"]
    k = max(range(len(plan)), key=lambda k: QQ.from_json(plan[k][2]))
    if edit == "delete":
        del plan[k]
        refused(doc, "marginals are not a and b")
    elif edit == "duplicate":
        plan.insert(k, list(plan[k]))
        refused(doc, "distinct", (BAD,))
    else:
        plan[0], plan[1] = plan[1], plan[0]
        refused(doc, "row-major", (BAD,))


def test_the_verdict_on_pot_issue_229_flipped(issue_229):
    doc, _ = issue_229
    if doc["outputs"]["judged"]["optimal"]:
        pytest.skip("this POT's plan is optimal: nothing to flip")
    forged = copy.deepcopy(doc)
    forged["outputs"]["judged"]["optimal"] = True
    forged["result"]["plan_optimal"] = True
    refused(forged, "the verdict's optimal")
    forged = copy.deepcopy(doc)
    judged = forged["outputs"]["judged"]
    judged["gap"], judged["cost"], judged["optimal"] = "0", forged["result"]["optimal_cost"], True
    forged["result"]["plan_optimal"] = True
    refused(forged, "the verdict's cost")


def test_the_judged_plan_moved_with_its_verdict_kept(issue_229):
    doc, _ = issue_229
    forged = copy.deepcopy(doc)
    entry = forged["inputs"]["plan"][0]
    entry[2] = QQ.to_json(QQ.from_json(entry[2]) / 2)
    refused(forged, "the verdict's")


def test_a_scaled_b_that_is_not_b_scaled(tmp_path):
    rng = np.random.default_rng(2)
    a = np.ones(3) / 3
    b = rng.random(3)
    b /= b.sum()
    doc = prove(**files(tmp_path, rng.random((3, 3)), a, b))
    assert "b_scaled" in doc["inputs"]
    forged = copy.deepcopy(doc)
    forged["inputs"]["b_scaled"] = forged["inputs"]["b"][::-1]
    refused(forged, "b sum(a) / sum(b)", (BAD,))


def test_holds_flipped(random_doc):
    doc = copy.deepcopy(random_doc)
    doc["result"]["holds"] = False
    refused(doc, "holds=False")


def test_plan_out_writes_the_optimal_plan(tmp_path):
    out = tmp_path / "G.npy"
    doc = prove(n=5, m=4, seed=2, plan_out=str(out))
    assert "plan_out" not in doc["params"]
    G = np.load(out)
    for i, j, x in doc["outputs"]["optimum"]["plan"]:
        assert G[i, j] == float(Fraction(str(QQ.from_json(x))))
    assert np.count_nonzero(G) <= len(doc["outputs"]["optimum"]["plan"])
    with pytest.raises(ParseError, match=".npy or .csv"):
        prove(plan_out=str(tmp_path / "G.txt"))
