"""sinkhorn_convergence runs certified by the strong-convexity bound (issue 34): proven and verified from files, and
self-consistent forgeries (re-sealed, well-formed, false) that the independent check alone refuses."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from attncert.exact import ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.sinkhorn.claims import check_convergence
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

CLAIM = load_claim("sinkhorn_convergence")


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    d = tmp_path_factory.mktemp("convexity")
    rng = np.random.default_rng(3)
    x, y = rng.random((8, 2)), rng.random((7, 2))
    np.save(d / "C.npy", ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    np.save(d / "a.npy", np.full(8, 1 / 8))
    np.save(d / "b.npy", np.array([1, 1, 1, 1, 2, 1, 1]) / 8)
    doc = CLAIM.prove(**{**CLAIM.defaults(), "cost": str(d / "C.npy"), "a": str(d / "a.npy"), "b": str(d / "b.npy"), "eps": "1/50", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10})
    run = doc["outputs"]["runs"][0]
    assert run["method"] == "convexity" and run["certified"] and doc["result"]["holds"], run["status"]
    return doc


def refused(doc: dict, match: str) -> None:
    try:
        problems = check_convergence(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert verify_bytes(canonical_json(seal(doc))).status == REJECTED


def test_the_genuine_document_verifies(doc):
    assert check_convergence(doc) == []
    assert verify_bytes(canonical_json(seal(doc))).status == OK


def test_a_sigma_the_hessian_does_not_have(doc):
    forged = copy.deepcopy(doc)
    w = forged["outputs"]["runs"][0]["witness"]
    w["sigma"] = QQ.to_json(QQ.from_json(w["sigma"]) * 8)
    refused(forged, "Cholesky")


def test_a_moved_witness_with_the_old_bound(doc):
    forged = copy.deepcopy(doc)
    u = forged["outputs"]["runs"][0]["witness"]["u"]
    u[0] = QQ.to_json(QQ.from_json(u[0]) / 2)  # still a double: its row sum halves, so eta grows past the gap
    refused(forged, "the convexity bound does not apply")


def test_a_bound_below_the_theorem(doc):
    forged = copy.deepcopy(doc)
    run = forged["outputs"]["runs"][0]
    run["bound"] = QQ.to_json(QQ.from_json(run["bound"]) / 4)
    refused(forged, "below what the convexity theorem proves")


def test_relabelled_as_float_verified(doc):
    forged = copy.deepcopy(doc)
    forged["outputs"]["runs"][0]["method"] = "float-verified"  # Hilbert's factor e^{Delta/2} at Delta about 80
    refused(forged, "below what the float-verified theorem proves")
