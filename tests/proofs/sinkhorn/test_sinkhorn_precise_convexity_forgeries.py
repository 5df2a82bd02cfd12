"""sinkhorn_convergence runs certified by the strong-convexity bound on the high-precision evaluation (issue 34, tol
1e-30 at Delta / eps beyond Hilbert's reach): the genuine document verifies, and self-consistent forgeries (well-formed,
re-sealed, false: a witness moved, lists with elements deleted, duplicated or swapped, a sigma the Hessian does not have,
a bound tighter than the theorem gives, another method's name) are refused by the independent check alone, and
``attncert verify`` says REJECTED."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from flint import fmpq

from attncert.exact import ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.sinkhorn.claims import check_convergence
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

CLAIM = load_claim("sinkhorn_convergence")


@pytest.fixture(scope="module", params=["integers", "floats"])
def doc(request, tmp_path_factory):
    # 4160 entries (past the arb paths' size: plan in factored form); integers: the random cost k/1000 at eps 1/100,
    # Delta about 200; floats: squared distances of uniform points as float64 (ot.dist's), eps 1/50, Delta about 150
    params = {**CLAIM.defaults(), "n": 65, "m": 64, "eps": "1/100", "tol": "1e-30", "ref_iter": 10, "pot_iter": 10}
    if request.param == "floats":
        d = tmp_path_factory.mktemp("floats")
        rng = np.random.default_rng(5)
        x, y = rng.random((65, 2)), rng.random((64, 2))
        np.save(d / "C.npy", ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))
        np.save(d / "a.npy", np.full(65, 1 / 65))
        np.save(d / "b.npy", np.full(64, 1 / 64))
        params.update(n=None, m=None, eps="1/50", cost=str(d / "C.npy"), a=str(d / "a.npy"), b=str(d / "b.npy"))
    doc = CLAIM.prove(**params)
    run = doc["outputs"]["runs"][0]
    assert run["method"] == "precise-convexity" and run["certified"] and doc["result"]["holds"], run["status"]
    assert run["details"]["kernel"] == request.param
    assert QQ.from_json(run["delta"]) > 40  # Hilbert's factor e^{Delta/2} would need 100 bits more
    return doc


def refused(doc: dict, match: str | tuple[str, ...]) -> None:
    """The independent check names one of the ``match`` reasons, and verify says REJECTED."""
    try:
        problems = check_convergence(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(m in p for p in problems for m in ((match,) if isinstance(match, str) else match)), problems
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


#: What a changed x breaks: the Hessian's gap, or the balanced kernel's range.
X_BROKEN = ("Cholesky", "the balanced kernel leaves [0, 2)")


@pytest.mark.parametrize("key, match", [("u", "does not apply"), ("x", X_BROKEN)])
def test_a_list_with_an_element_duplicated_in_place_of_another(doc, key, match):
    def edit(run):
        w = run["witness"][key]
        w[5] = w[0]

    refused(forged(doc, edit), match)


@pytest.mark.parametrize("key, match", [("u", "does not apply"), ("x", X_BROKEN)])
def test_a_list_with_two_elements_swapped(doc, key, match):
    def edit(run):  # the largest and the smallest entry (two close ones may leave a claim that still holds)
        w = run["witness"][key]
        i, j = max(range(len(w)), key=lambda k: QQ.from_json(w[k])), min(range(len(w)), key=lambda k: QQ.from_json(w[k]))
        w[i], w[j] = w[j], w[i]

    refused(forged(doc, edit), match)


def test_the_column_scaling_y_is_a_choice_not_part_of_the_claim(doc):
    # Not a forgery: the balanced kernel diag(x) K' diag(y) has the same plan for every positive y (a diagonal
    # scaling), so W' and the products y_j v~_j of omega barely move, and the recorded bound still follows. The claim
    # (P* within the recorded bound of u^'s plan) is unchanged, so verify must still say OK.
    def edit(run):  # two entries next to each other in size (far apart ones may leave the balanced kernel's [0, 2))
        w = run["witness"]["y"]
        order = sorted(range(len(w)), key=lambda k: QQ.from_json(w[k]))
        i, j = order[len(w) // 2], order[len(w) // 2 + 1]
        w[i], w[j] = w[j], w[i]

    assert check_convergence(forged(doc, edit)) == []


def test_a_bound_tighter_than_the_theorem_gives(doc):
    # 2^-200 of the recorded bound: the checker's own bound (64 bits more precise, so possibly well below the recorded
    # one, which halving alone need not undercut) is at least its evaluation's precision floor, far above this
    refused(forged(doc, lambda run: run.update(bound=QQ.to_json(QQ.from_json(run["bound"]) / 2**200))), "below what the precise-convexity theorem proves")


def test_the_witness_under_another_methods_name(doc):
    # the same evaluation bounded by Hilbert's theorem: e^{Delta/2} times larger than the recorded bound (and the
    # high-precision method takes integer costs only)
    refused(forged(doc, lambda run: run.update(method="high-precision")), ("below what the high-precision theorem proves", "do not fit int64"))


def test_a_recipe_that_does_not_fit_the_cost(doc):
    other = "integers" if doc["outputs"]["runs"][0]["details"]["kernel"] == "floats" else "cooked"
    refused(forged(doc, lambda run: run["details"].update(kernel=other)), "numerators" if other == "integers" else "recipe")


def test_the_estimate_names_the_path_and_does_not_refuse_a_run_precise_convexity_takes():
    # before precise-convexity the model priced 1024 x 1024 at eps 1/100 as Krawczyk (balls): 32 GiB, refused
    cost = CLAIM.cost(**{**CLAIM.defaults(), "n": 1024, "eps": "1/100"})
    assert cost.problem.endswith("path: precise-convexity") and cost.memory < 2**30 and cost.precision == 128
    beyond = CLAIM.cost(**{**CLAIM.defaults(), "n": 1024, "eps": "1/2000"})  # the kernel below e^-700: arb
    assert beyond.problem.endswith("path: arb (Krawczyk)") and beyond.memory > 2**34
    loose = CLAIM.cost(**{**CLAIM.defaults(), "n": 1024, "eps": "1/100", "tol": "1e-9"})
    assert loose.problem.endswith("path: float-verified or convexity")


def test_a_recorded_precision_that_would_take_the_kernel_past_its_limit_is_refused(doc):
    # the check works at the recorded precision plus 64 bits: 2,000 would put the kernel's fixed point past 1,024 bits
    refused(forged(doc, lambda run: run["details"].update(prec=2000)), "over 1024")
