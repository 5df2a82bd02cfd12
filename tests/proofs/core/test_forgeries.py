"""Self-consistent forgeries: well-formed, correctly hashed, internally consistent documents whose
claim is false. Each must give REJECTED or BAD, never OK, and the independent check alone (without the
rebuild) must already refuse the Sinkhorn ones: the rebuild pins fields, the check decides truth.
"""

from __future__ import annotations

import copy

import mpmath
import pytest
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn import sinkhorn
from attncert.constructions.sinkhorn.graph import SinkhornLayer
from attncert.constructions.sinkhorn.inner_cost import ExactCost
from attncert.constructions.sinkhorn.systems import target_plans
from attncert.constructions.sinkhorn.universality import certify_pair, network
from attncert.constructions.sinkhorn.wasserstein import w1_exact
from attncert.exact import EE, Ball, ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.matrices import matrix_from_json, matrix_to_json
from attncert.proofs.core.registry import load_claims
from attncert.proofs.sinkhorn.common import bmat, run_json, w1_json
from attncert.proofs.sinkhorn.texts import family_from
from attncert.proofs.sinkhorn.universality import pair_json
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

CLAIMS = load_claims()


def prove(name: str, **kw) -> dict:
    return CLAIMS[name].prove(**{**CLAIMS[name].defaults(), **kw})


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def refused_by_check(name: str, doc: dict, match: str) -> None:
    """The independent check alone finds the forgery (a problem naming it, or a malformed field)."""
    try:
        problems = CLAIMS[name].check(doc)
    except ParseError as e:
        problems = [str(e)]
    assert any(match in p for p in problems), problems
    assert status(doc) in (REJECTED, BAD)


@pytest.fixture(scope="module")
def convergence():
    return prove("sinkhorn_convergence", n=2, eps="1/5", ref_iter=10, pot_iter=10)


def hilbert_run(C, a, b, eps, prec=128) -> dict:
    r = sinkhorn(C, a, b, eps, Ball(prec), method="hilbert")
    assert r.certified
    return {"eps": QQ.to_json(eps), **run_json(r, prec), "plan": bmat(r.plan, prec)}


def test_the_genuine_documents_verify(convergence):
    assert status(convergence) == OK


def test_the_other_root_of_a_2x2_sinkhorn_system(convergence):
    # a = b = (1/2, 1/2), eps = 1/5: u = (1, t) with v = b / K^T u solves the row equation for two t,
    # one positive (the Sinkhorn scaling) and one negative. The plan of the negative root has the right
    # marginals and a tiny residual, so only the positivity hypothesis of Hilbert's metric rules it out.
    half = fmpq(1, 2)
    doc = copy.deepcopy(convergence)
    C = [[fmpq(0), fmpq(1)], [fmpq(1), fmpq(0)]]
    b = [half, half]
    eps = fmpq(1, 5)
    with mpmath.workdps(60):
        k = mpmath.exp(-5)  # K = [[1, k], [k, 1]]

        def residual(t):
            v = [0.5 / (1 + k * t), 0.5 / (k + t)]
            return (v[0] + k * v[1]) - 0.5

        t_neg = min(mpmath.findroot(residual, x0) for x0 in (1.0, -0.5))
        assert t_neg < 0 and abs(residual(t_neg)) < mpmath.mpf(10) ** -50
        u = [fmpq(1), fmpq(int(t_neg * 10**40), 10**40)]
    with ctx.workprec(256):
        K = [[(-arb(c) / arb(eps)).exp() for c in row] for row in C]
        v = [arb(b[j]) / (K[0][j] * arb(u[0]) + K[1][j] * arb(u[1])) for j in range(2)]
        P = [[arb(u[i]) * K[i][j] * v[j] for j in range(2)] for i in range(2)]
    assert any(x < 0 for row in P for x in row)  # the forged "plan" has a negative entry
    run = doc["outputs"]["runs"][0]
    run.update(method="hilbert", witness={"u": [QQ.to_json(x) for x in u]}, bound="1e-75", certified=True, plan=bmat(P, 128))
    run["details"]["prec"] = 128
    doc["inputs"] = {"C": [[QQ.to_json(x) for x in r] for r in C], "a": [QQ.to_json(half)] * 2, "b": [QQ.to_json(half)] * 2}
    refused_by_check("sinkhorn_convergence", doc, "not positive")


def test_negative_eps_with_a_genuine_witness_of_the_flipped_kernel(convergence):
    # exp(-C/eps) at eps = -1/5 is exp(C/(1/5)): a real Sinkhorn run on -C certifies it. Only eps > 0 is false.
    doc = copy.deepcopy(convergence)
    C = [[QQ.from_json(x) for x in r] for r in doc["inputs"]["C"]]
    a, b = ([QQ.from_json(x) for x in doc["inputs"][k]] for k in "ab")
    run = hilbert_run([[-c for c in r] for r in C], a, b, fmpq(1, 5))
    run["eps"] = "-1/5"
    doc["params"]["eps"] = "-1/5"
    doc["outputs"]["runs"] = [{**doc["outputs"]["runs"][0], **run}]
    refused_by_check("sinkhorn_convergence", doc, "is not > 0")


def test_scaled_marginals(convergence):
    # d_H is scale-invariant, so a Hilbert bound computed against 2a is as small as against a.
    doc = copy.deepcopy(convergence)
    doc["inputs"]["a"] = [QQ.to_json(2 * QQ.from_json(x)) for x in doc["inputs"]["a"]]
    refused_by_check("sinkhorn_convergence", doc, "unbalanced marginals")


def test_non_positive_marginals(convergence):
    doc = copy.deepcopy(convergence)
    a = [QQ.from_json(x) for x in doc["inputs"]["a"]]
    doc["inputs"]["a"] = [QQ.to_json(a[0] + a[1]), "0"]
    refused_by_check("sinkhorn_convergence", doc, "not positive")


def test_a_krawczyk_bound_equal_to_rho():
    doc = prove("sinkhorn_convergence", n=3, eps="1/1000", ref_iter=10, pot_iter=10)
    run = doc["outputs"]["runs"][0]
    assert run["method"] == "krawczyk" and status(doc) == OK
    run["bound"] = run["witness"]["rho"]  # the plan's log error can reach rho_x + rho_y = 2 rho
    refused_by_check("sinkhorn_convergence", doc, "below what the krawczyk theorem proves")


def test_a_weaker_or_other_relation(convergence):
    for relation in ("exact_equal", "agreement", "bound"):
        doc = copy.deepcopy(convergence)
        doc["result"]["relation"] = relation
        refused_by_check("sinkhorn_convergence", doc, "the relation of this claim is 'enclosure'")


def test_an_empty_run_list(convergence):
    doc = copy.deepcopy(convergence)
    doc["outputs"]["runs"] = []
    refused_by_check("sinkhorn_convergence", doc, "non-empty list")


def test_runs_that_do_not_match_the_parameters(convergence):
    doc = copy.deepcopy(convergence)
    doc["params"]["eps"] = "1/5,1/20"  # a second eps was asked for, but only one run is recorded
    refused_by_check("sinkhorn_convergence", doc, "one per eps")


def test_a_limit_whose_pi_has_the_wrong_marginals():
    # Mass moves inside a row of pi (same total, other column sums); pi_t, every W1 certificate and
    # the base W1 are recomputed from the moved pi, so the document is consistent except for pi's marginals.
    doc = prove("sinkhorn_limit", n=2, m=3, ts="1/3,1/30")
    inp = doc["inputs"]
    pi = [[QQ.from_json(x) for x in r] for r in inp["pi"]]
    a, b = ([QQ.from_json(x) for x in inp[k]] for k in "ab")
    xs, ys = ([[QQ.from_json(x) for x in r] for r in inp[k]] for k in ("xs", "ys"))
    i, j = next((i, j) for i, r in enumerate(pi) for j, x in enumerate(r) if x > 0)
    k = (j + 1) % len(pi[0])
    delta = pi[i][j] / 2
    pi[i][j] -= delta
    pi[i][k] += delta
    s = sum(a, fmpq(0))
    indep = [[ai * bj / s for bj in b] for ai in a]
    inp["pi"] = [[QQ.to_json(x) for x in r] for r in pi]
    doc["reference"]["w1_independent_vs_pi"] = base = w1_json(w1_exact(indep, pi, xs, ys))
    for step in doc["outputs"]["steps"]:
        t = QQ.from_json(step["t"])
        pt = [[(1 - t) * x + t * y for x, y in zip(r, q)] for r, q in zip(pi, indep)]
        step["pi_t"] = [[QQ.to_json(x) for x in r] for r in pt]
        step["w1"] = w1_json(w1_exact(pt, pi, xs, ys))
        assert QQ.from_json(step["w1"]["value"]) == t * QQ.from_json(base["value"])
    refused_by_check("sinkhorn_limit", doc, "marginals of pi are not a and b")


def test_a_limit_with_a_forged_w1_value():
    doc = prove("sinkhorn_limit", n=2, m=3, ts="1/3")
    step = doc["outputs"]["steps"][0]
    step["w1"]["value"] = QQ.to_json(QQ.from_json(step["w1"]["value"]) / 2)
    refused_by_check("sinkhorn_limit", doc, "recorded W1 value")


def test_a_fixed_point_with_a_zero_entry_recomputed_consistently():
    # The 2x2 couplings of a, b are [[x, a0 - x], [b0 - x, a1 - b0 + x]]; the least feasible x puts a zero
    # on the diagonal, so pi keeps its marginals (and its recorded sums) but log pi is undefined.
    doc = prove("sinkhorn_fixed_point", n=2, m=2)
    a, b = ([QQ.from_json(x) for x in doc["inputs"][k]] for k in "ab")
    x = max(fmpq(0), b[0] - a[1])
    pi = [[x, a[0] - x], [b[0] - x, a[1] - b[0] + x]]
    assert min(min(r) for r in pi) == 0 and all(v >= 0 for r in pi for v in r)
    doc["inputs"]["pi"] = doc["outputs"]["plan"] = [[QQ.to_json(v) for v in r] for r in pi]
    refused_by_check("sinkhorn_fixed_point", doc, "not positive")


def test_a_transformer_whose_cost_is_not_its_encoders():
    """The recorded exact cost is moved and its coupling genuinely certified for the moved cost."""
    doc = prove("sinkhorn_transformer", n=3, m=2)
    inp, cons = doc["inputs"], doc["construction"]
    C = matrix_from_json(cons["cost"]["C"], EE)
    C[0][0] = C[0][0] + 1
    a, b = ([QQ.from_json(x) for x in inp[k]["a"]] for k in ("mu", "nu"))
    r = sinkhorn(ExactCost(C), a, b, QQ.from_json(inp["eps"]), Ball(128))
    cons["cost"]["C"] = matrix_to_json(C, EE)
    cons["sinkhorn"] = run_json(r, 128)
    doc["outputs"]["coupling"] = bmat(r.plan, 128)
    doc["outputs"]["bound"] = cons["sinkhorn"]["bound"]
    refused_by_check("sinkhorn_transformer", doc, "recorded exact cost is not")


@pytest.fixture(scope="module")
def universality():
    return prove("sinkhorn_universality", pairs=3, held_out=2, max_n=3, widths="1,3")


def test_universality_with_a_lowered_upper_bound(universality):
    doc = copy.deepcopy(universality)
    doc["outputs"]["table"]["entropic"][0]["pairs"][0]["w1_upper"] = "0"
    refused_by_check("sinkhorn_universality", doc, "not implied by the enclosures")


def test_a_family_maximum_below_a_pairs_bound(universality):
    doc = copy.deepcopy(universality)
    row = doc["outputs"]["table"]["mixture"][1]
    row["fit_max"] = doc["outputs"]["summary"]["mixture"]["fit_max"][1] = min(p["w1_upper"] for p in row["pairs"][:3])
    refused_by_check("sinkhorn_universality", doc, "not the maxima of the pairs' bounds")


def test_a_held_out_trend_the_bounds_do_not_show(universality):
    # The summary's held-out flag is decided from the bounds: flipped (and re-sealed), it is refused.
    doc = copy.deepcopy(universality)
    s = doc["outputs"]["summary"]["entropic"]
    held = [QQ.from_json(v) for v in s["held_out_max"]]
    assert s["held_out_max_nonincreasing"] is all(p >= q for p, q in zip(held, held[1:]))
    s["held_out_max_nonincreasing"] = not s["held_out_max_nonincreasing"]
    refused_by_check("sinkhorn_universality", doc, "the held-out maximum is nonincreasing in the width")


def test_weights_changed_with_enclosures_recomputed_but_the_old_bounds_kept(universality):
    """The entropic network of width 3 is replaced by M = 0 (the independent coupling); every run, coupling,
    representative and W1 certificate is recomputed for the new weights, the recorded bounds are not."""
    doc = copy.deepcopy(universality)
    fam = family_from(doc["inputs"]["family"], "family")
    row = doc["outputs"]["table"]["entropic"][1]
    M = [[fmpq(0)] * 3 for _ in range(3)]
    model = network(3, M, SinkhornLayer(fmpq(1, 2)))
    row["readout_M"], row["model"] = matrix_to_json(M, QQ), model.to_json()
    for entry, (mu, nu) in zip(row["pairs"], fam.fit + fam.held_out):
        fresh = pair_json(certify_pair(model, mu, nu, target_plans(mu, nu, fmpq(1, 2), 128)["entropic"]), 128)
        entry.update({k: v for k, v in fresh.items() if k not in ("w1_lower", "w1_upper")})
    refused_by_check("sinkhorn_universality", doc, "not implied by the enclosures")


def test_a_held_out_pair_secretly_in_the_fit_set(universality):
    doc = copy.deepcopy(universality)
    fam, out = doc["inputs"]["family"], doc["outputs"]
    fam["held_out"][0] = copy.deepcopy(fam["fit"][0])
    out["targets"][3] = copy.deepcopy(out["targets"][0])
    for system in out["table"].values():
        for row in system:
            row["pairs"][3] = copy.deepcopy(row["pairs"][0])
            held = [QQ.from_json(p["w1_upper"]) for p in row["pairs"][3:]]
            row["held_out_max"] = QQ.to_json(max(held))
    for name, rows in out["table"].items():
        out["summary"][name]["held_out_max"] = [r["held_out_max"] for r in rows]
    refused_by_check("sinkhorn_universality", doc, "also a fit pair")


def test_a_text_whose_weights_do_not_sum_to_one(universality):
    doc = copy.deepcopy(universality)
    a = doc["inputs"]["family"]["fit"][1]["nu"]["a"]
    a[0] = QQ.to_json(QQ.from_json(a[0]) * 2)
    refused_by_check("sinkhorn_universality", doc, "not positive with sum 1")


def test_side_notes_never_decide(convergence):
    # POT's float outcomes are information (side_notes): relabelled, from another POT, or removed (and the
    # document re-sealed), they leave a true certificate OK; beside a false claim they rescue nothing.
    relabelled = {"pot": {"relation": "enclosure", "version": "0.1", "method": "anything", "runs": [{"pot_fails_we_certify": True}]}}
    for notes in (relabelled, None):
        doc = copy.deepcopy(convergence)
        doc.pop("side_notes", None)
        if notes is not None:
            doc["side_notes"] = notes
        assert status(doc) == OK
        doc["inputs"]["a"] = [QQ.to_json(2 * QQ.from_json(x)) for x in doc["inputs"]["a"]]  # the scaled-marginals forgery
        refused_by_check("sinkhorn_convergence", doc, "unbalanced marginals")


def test_duplicate_keys_and_smuggled_floats_are_malformed(convergence):
    data = canonical_json(seal(convergence))
    dup = data.replace(b'{"claim":', b'{"claim":"sinkhorn_convergence","claim":', 1)
    assert verify_bytes(dup).status == BAD and "duplicate key" in verify_bytes(dup).reason
    smuggled = data.replace(b'"prec":128', b'"prec":128.0', 1)
    assert verify_bytes(smuggled).status == BAD
    spaced = data.replace(b'","', b'", "', 1)  # same document, not the canonical bytes
    assert verify_bytes(spaced).status == BAD and "canonical" in verify_bytes(spaced).reason


def test_a_record_that_the_claim_does_not_hold_is_not_ok(convergence):
    doc = copy.deepcopy(convergence)
    doc["result"]["holds"] = False
    assert status(doc) == REJECTED


# -- layout claims ---------------------------------------------------------------------------


def test_inputs_changed_with_outputs_of_a_wrong_program():
    doc = prove("transpose", r=2, c=3)
    M = [[fmpq(i + 2 * j, 3) for j in range(3)] for i in range(2)]
    doc["inputs"]["M"] = matrix_to_json(M, QQ)
    wrong = [[M[j][i] + (1 if (i, j) == (0, 0) else 0) for j in range(2)] for i in range(3)]  # not M^T
    doc["outputs"]["output"] = doc["reference"]["output"] = matrix_to_json(wrong, QQ)
    assert status(doc) == REJECTED


def test_a_graph_swapped_for_a_smaller_one_with_its_sizes():
    doc = prove("matmul", r=2, k=2, c=2)
    small = prove("matmul", r=1, k=1, c=1)
    doc["construction"]["graph"] = small["construction"]["graph"]
    doc["construction"]["size"] = small["construction"]["size"]
    assert status(doc) == REJECTED


def test_a_seed_changed_together_with_consistent_inputs_and_outputs():
    doc = prove("relu", n=4, seed=3)
    other = prove("relu", n=4, seed=4)
    doc["inputs"], doc["outputs"], doc["reference"] = other["inputs"], other["outputs"], other["reference"]
    assert status(doc) == REJECTED  # the inputs are not the ones seed 3 gives
