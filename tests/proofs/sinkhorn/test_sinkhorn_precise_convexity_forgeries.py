"""sinkhorn_convergence runs certified by the strong-convexity bound on the high-precision evaluation (issue 34, tol
1e-30 at Delta / eps beyond Hilbert's reach): the genuine document verifies, and self-consistent forgeries (well-formed,
re-sealed, false: a witness moved, lists with elements deleted, duplicated or swapped, a sigma the Hessian does not have,
a bound tighter than the theorem gives, another method's name) are refused by the independent check alone, and
``attncert verify`` says REJECTED."""

from __future__ import annotations

import copy

import pytest
from flint import fmpq

from attncert.exact import ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.sinkhorn.claims import check_convergence
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

CLAIM = load_claim("sinkhorn_convergence")


@pytest.fixture(scope="module")
def doc():
    # 4160 entries (past the arb paths' size: plan in factored form), costs in [0, 1] at eps 1/100: Delta about 200
    doc = CLAIM.prove(**{**CLAIM.defaults(), "n": 65, "m": 64, "eps": "1/100", "tol": "1e-30", "ref_iter": 10, "pot_iter": 10})
    run = doc["outputs"]["runs"][0]
    assert run["method"] == "precise-convexity" and run["certified"] and doc["result"]["holds"], run["status"]
    assert QQ.from_json(run["delta"]) > 40  # Hilbert's factor e^{Delta/2} would need 150 bits more
    return doc


def refused(doc: dict, match: str) -> None:
    try:
        problems = check_convergence(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert verify_bytes(canonical_json(seal(doc))).status == REJECTED


def forged(doc: dict, edit) -> dict:
    out = copy.deepcopy(doc)
    edit(out["outputs"]["runs"][0])
    return out


def test_the_genuine_document_verifies(doc):
    assert check_convergence(doc) == []
    assert verify_bytes(canonical_json(seal(doc))).status == OK


def _scale(key: str, factor: fmpq):
    def edit(run):
        w = run["witness"][key]
        w[0] = QQ.to_json(QQ.from_json(w[0]) * factor)

    return edit


def test_a_nudged_witness_with_the_old_bound(doc):
    refused(forged(doc, _scale("u", 1 + fmpq(1, 2**60))), "below what the precise-convexity theorem proves")


def test_a_moved_witness_whose_residual_outgrows_the_gap(doc):
    refused(forged(doc, _scale("u", fmpq(2))), "the convexity bound does not apply")


def test_a_sigma_the_hessian_does_not_have(doc):
    refused(forged(doc, lambda run: run["witness"].update(sigma=QQ.to_json(QQ.from_json(run["witness"]["sigma"]) * 8))), "Cholesky")


def test_a_sigma_that_is_not_a_double(doc):
    refused(forged(doc, lambda run: run["witness"].update(sigma=QQ.to_json(fmpq(1, 3)))), "binary64")


@pytest.mark.parametrize("key", ["u", "x", "y"])
def test_a_list_with_an_element_deleted(doc, key):
    refused(forged(doc, lambda run: run["witness"][key].pop()), "entries")


@pytest.mark.parametrize("key, match", [("u", "does not apply"), ("x", "Cholesky")])
def test_a_list_with_an_element_duplicated_in_place_of_another(doc, key, match):
    def edit(run):
        w = run["witness"][key]
        w[5] = w[0]

    refused(forged(doc, edit), match)


@pytest.mark.parametrize("key, match", [("u", "does not apply"), ("x", "the balanced kernel leaves [0, 2)")])
def test_a_list_with_two_elements_swapped(doc, key, match):
    def edit(run):
        w = run["witness"][key]
        w[0], w[7] = w[7], w[0]

    refused(forged(doc, edit), match)


def test_the_column_scaling_y_is_a_choice_not_part_of_the_claim(doc):
    # Not a forgery: the balanced kernel diag(x) K' diag(y) has the same plan for every positive y (a diagonal
    # scaling), so W' and the products y_j v~_j of omega barely move, and the recorded bound still follows. The claim
    # (P* within the recorded bound of u^'s plan) is unchanged, so verify must still say OK.
    def edit(run):
        w = run["witness"]["y"]
        w[0], w[7] = w[7], w[0]

    assert check_convergence(forged(doc, edit)) == []


def test_a_bound_tighter_than_the_theorem_gives(doc):
    refused(forged(doc, lambda run: run.update(bound=QQ.to_json(QQ.from_json(run["bound"]) / 2))), "below what the precise-convexity theorem proves")


def test_the_witness_under_another_methods_name(doc):
    # the same evaluation bounded by Hilbert's theorem: e^{Delta/2} times larger than the recorded bound
    refused(forged(doc, lambda run: run.update(method="high-precision")), "below what the high-precision theorem proves")
