"""Self-consistent forgeries of float-verified and high-precision runs (issue 26): well-formed, re-sealed
documents from ordinary prove runs whose stated bound is false, or tighter than the theorem gives. The
independent check alone must refuse each, and ``attncert verify`` must say REJECTED."""

from __future__ import annotations

import copy

import pytest
from flint import fmpq

from attncert.exact import ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.sinkhorn.precise_hilbert import precise_hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem
from attncert.proofs.checkers.reading import qmatrix, qvector
from attncert.proofs.checkers.sinkhorn.claims import check_convergence
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

CLAIMS = load_claims()


def prove(**kw) -> dict:
    claim = CLAIMS["sinkhorn_convergence"]
    return claim.prove(**{**claim.defaults(), "ref_iter": 10, "pot_iter": 10, **kw})


def refused(doc: dict, match: str) -> None:
    try:
        problems = check_convergence(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert verify_bytes(canonical_json(seal(doc))).status == REJECTED


@pytest.fixture(scope="module")
def float_verified():
    doc = prove(n=6, eps="1/5", tol="1e-9")
    assert doc["outputs"]["runs"][0]["method"] == "float-verified" and doc["result"]["holds"]
    return doc


@pytest.fixture(scope="module")
def high_precision():
    doc = prove(n=65, m=64, eps="1/5")  # 4160 entries: past the arb paths' size, plan in factored form
    run = doc["outputs"]["runs"][0]
    assert run["method"] == "high-precision" and run["plan"] is None and doc["result"]["holds"]
    return doc


def test_the_genuine_documents_verify(float_verified, high_precision):
    for doc in (float_verified, high_precision):
        assert check_convergence(doc) == []
        assert verify_bytes(canonical_json(seal(doc))).status == OK


def _moved(doc: dict, factor: fmpq) -> dict:
    """The first entry of the witness scaled, everything else (the bound included) kept."""
    forged = copy.deepcopy(doc)
    u = forged["outputs"]["runs"][0]["witness"]["u"]
    u[0] = QQ.to_json(QQ.from_json(u[0]) * factor)
    return forged


def test_a_perturbed_float_witness_with_the_old_bound(float_verified):
    refused(_moved(float_verified, fmpq(2)), "below what the float-verified theorem proves")  # still a double


def test_a_perturbed_high_precision_witness_with_the_old_bound(high_precision):
    refused(_moved(high_precision, 1 + fmpq(1, 2**60)), "below what the high-precision theorem proves")


def test_a_bound_tighter_than_the_theorem_gives(float_verified, high_precision):
    doc = copy.deepcopy(float_verified)
    run = doc["outputs"]["runs"][0]
    run["bound"] = QQ.to_json(QQ.from_json(run["bound"]) / 2)  # the float evaluation is deterministic: half is below it
    refused(doc, "below what the float-verified theorem proves")
    # the check evaluates at 64 more bits, so its bound is tighter than the prover's: a claim below the check's is false
    doc = copy.deepcopy(high_precision)
    run = doc["outputs"]["runs"][0]
    p = sinkhorn_problem(qmatrix(doc["inputs"]["C"]), qvector(doc["inputs"]["a"]), qvector(doc["inputs"]["b"]), fmpq(1, 5))
    proven = precise_hilbert_enclosure(p, qvector(run["witness"]["u"]), run["details"]["prec"] + 64, plan=False).log_error
    assert proven <= QQ.from_json(run["bound"])
    run["bound"] = QQ.to_json(proven / 2)
    refused(doc, "below what the high-precision theorem proves")


def test_a_float_witness_that_is_not_binary64(float_verified):
    refused(_moved(float_verified, fmpq(1, 3)), "not positive binary64 values")


def test_the_float_recipe_relabelled(float_verified):
    doc = copy.deepcopy(float_verified)
    doc["outputs"]["runs"][0]["details"]["kernel"] = "floats"  # k/1000 is not a double
    refused(doc, "not a binary64 value")


def test_a_large_plan_must_stay_factored_and_a_small_one_recorded(float_verified, high_precision):
    doc = copy.deepcopy(high_precision)
    doc["outputs"]["runs"][0]["plan"] = [[{"mid": "0", "rad": "1"}]]
    refused(doc, "recorded in factored form")
    doc = copy.deepcopy(float_verified)
    doc["outputs"]["runs"][0]["plan"] = None
    refused(doc, "recorded as balls")


@pytest.fixture(scope="module")
def transformer():
    claim = CLAIMS["sinkhorn_transformer"]
    doc = claim.prove(**{**claim.defaults(), "tol": "1e-9"})
    run = doc["construction"]["sinkhorn"]
    assert run["method"] == "float-verified" and run["details"]["kernel"] == "balls" and doc["result"]["holds"]
    assert claim.check(doc) == [] and verify_bytes(canonical_json(seal(doc))).status == OK
    return doc


def _transformer_refused(doc: dict, match: str) -> None:
    problems = CLAIMS["sinkhorn_transformer"].check(doc)
    assert any(match in p for p in problems), problems
    assert verify_bytes(canonical_json(seal(doc))).status == REJECTED


def test_a_transformer_run_whose_recorded_shift_is_moved(transformer):
    doc = copy.deepcopy(transformer)
    alpha = doc["construction"]["sinkhorn"]["witness"]["alpha"]
    alpha[0] = QQ.to_json(QQ.from_json(alpha[0]) + fmpq(1, 8))  # u^ now scales another kernel: P^'s first row moves
    _transformer_refused(doc, "below what the float-verified theorem proves")


def test_a_transformer_bound_below_the_checks_own(transformer):
    doc = copy.deepcopy(transformer)
    run = doc["construction"]["sinkhorn"]
    run["bound"] = QQ.to_json(QQ.from_json(run["bound"]) / 10**6)  # the arb evaluation is tighter, not a million times
    doc["outputs"]["bound"] = run["bound"]
    _transformer_refused(doc, "below what the float-verified theorem proves")
