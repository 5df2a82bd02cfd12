"""The compiled claim, its independent check, forgeries of it, and attncert compile."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from attncert.constructions.compiler.model import model_from_json
from attncert.exact import EE, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal, write_certificate
from attncert.exact.matrices import matrix_to_json
from attncert.proofs.checkers.compiled.construction import check_compiled
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import NOT_PROVEN, OK, REJECTED, verify_bytes

CLAIM = load_claims()["compiled"]


def prove(of, sizes="", seed=0):
    return CLAIM.prove(of=of, sizes=sizes, seed=seed)


@pytest.mark.parametrize("of, sizes", [("universal", "n=3,d=2,dv=2"), ("matmul", "r=2,k=2,c=3"), ("softmax", ""), ("inverse3", ""), ("maxmin", "n=5"), ("encoder_layer", "n=2,d=2,dv=1,h=2,f=2")])
def test_compiled_certificates_hold_and_verify(of, sizes, tmp_path, capsys):
    doc = prove(of, sizes)
    r = doc["result"]
    assert r["holds"] and r["equals_reference"] and r["equals_rasp"] and r["rest_is_zero"] and r["sops_differing"] == []
    assert r["sops_checked"] == len(doc["construction"]["model"]["nodes"]) > 0
    path = write_certificate(tmp_path / "c.json", doc)
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out


def _status(doc):
    return verify_bytes(canonical_json(seal(doc))).status


def test_weights_changed_with_outputs_recomputed_by_the_changed_model_fail():
    # A self-consistent forgery: one W_OV weight doubled, and the recorded output is what the changed
    # weights really compute; only the claim (= the reference) is false.
    doc = prove("transpose", "r=2,c=3")
    model = doc["construction"]["model"]
    head = next(h for layer in model["layers"] for h in layer["heads"])
    head["ov"][0][2] = "2"
    m = model_from_json(model)
    xs = [QQ.from_json(x) for row in doc["inputs"]["M"] for x in row]
    out = m.forward(xs, QQ)[0]["output"]
    doc["outputs"]["output"] = matrix_to_json([out[i * 2 : (i + 1) * 2] for i in range(3)], QQ)
    problems = check_compiled(doc)
    assert "the compiled weights do not map the inputs to the reference" in problems
    assert _status(doc) == REJECTED


def test_a_model_for_other_inputs_and_a_matching_reference_fail_the_seed():
    doc, other = prove("relu", "n=3", seed=1), prove("relu", "n=3", seed=2)
    for k in ("inputs", "outputs", "reference"):
        doc[k] = other[k]
    assert check_compiled(doc) == []  # true of the inputs it records...
    assert _status(doc) == REJECTED  # ...but they are not the inputs of the recorded seed


def test_a_recorded_result_that_says_more_fails():
    doc = prove("relu", "n=2")
    doc["result"]["relation"] = "bound"
    assert _status(doc) == REJECTED
    doc = prove("relu", "n=2")
    assert _status(doc) == OK


def test_attncert_compile_writes_exact_json_and_float_npz(tmp_path, capsys):
    assert main(["compile", "universal", "--sizes", "n=2,d=2,dv=1", "--out", str(tmp_path / "u.json")]) == 0
    m = model_from_json(json.loads((tmp_path / "u.json").read_text()))
    assert m.width() == 62 and m.length == 10
    assert main(["compile", "universal", "--sizes", "n=2,d=2,dv=1", "--format", "npz", "--out", str(tmp_path / "u.npz")]) == 0
    z = np.load(tmp_path / "u.npz")
    assert z["embedding"].shape == (11, 62) and int(z["layers"]) == 7
    out = subprocess.run([sys.executable, "-m", "attncert", "compile", "relu", "--out", "-"], capture_output=True, check=True)
    assert json.loads(out.stdout)["format"] == "attncert-model/1" and b"written to standard output" in out.stderr
    assert b"checked: equal to the RASP evaluation, 2 SOps compared at every position (QQ), on 3 inputs" in out.stderr


@pytest.mark.parametrize("args", [["compile", "nosuch"], ["compile", "universal", "--sizes", "q=1"], ["compile", "universal", "--sizes", "n=1000"]])
def test_attncert_compile_refuses_bad_input_with_exit_2(args, capsys):
    assert main(args) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_an_exp_after_attention_stays_exact_in_ee():
    doc = prove("softmax", "r=2,c=2")
    out = doc["outputs"]["output"]
    assert doc["result"]["domain"] == "EE" and doc["result"]["holds"]
    assert any(EE.from_json(v).rational_value() is None for row in out for v in row)  # e^q / sum: not rational


SOFT = load_claims()["compiled_softmax"]


@pytest.fixture(scope="module")
def soft_doc():
    return SOFT.prove(of="universal", sizes="n=2,d=2,dv=1", betas="10,100,1000", tol="1e-20", prec=256)


def test_softmax_bounds_fall_with_beta_and_verify(soft_doc, tmp_path, capsys):
    bounds = [QQ.from_json(r["bound"]) for r in soft_doc["outputs"]["softmax"]]
    assert bounds[2] < bounds[1] < bounds[0] and bounds[2] < QQ.convert("1e-20")
    assert soft_doc["result"]["relation"] == "bound" and soft_doc["result"]["least_beta_within_tol"] == "1000"
    assert soft_doc["reference"]["tracr_coldness"] == 100
    path = write_certificate(tmp_path / "s.json", soft_doc)
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out


def test_no_beta_within_tol_is_a_genuine_certificate_that_is_not_proven(soft_doc):
    """Betas 10 and 100 leave B(beta) above 1e-20: prove records holds = false, the check finds the same and no
    problem; B(beta) is an upper bound, so a bound above tol does not show the distance above it: verify says
    NOT-PROVEN (exit 4), not DOES-NOT-HOLD. The same document claiming to hold is REJECTED, as is the genuine
    certificate above claiming not to."""
    from attncert.proofs.checkers.compiled.construction import check_compiled_softmax

    doc = SOFT.prove(of="universal", sizes="n=2,d=2,dv=1", betas="10,100", tol="1e-20", prec=256)
    assert doc["result"]["holds"] is False and doc["result"]["least_beta_within_tol"] is None
    found = check_compiled_softmax(doc)
    assert found == [] and found.undecided == ["no listed beta has B(beta) <= 1/100000000000000000000 at this precision"]
    assert _status(doc) == NOT_PROVEN
    claimed = json.loads(json.dumps(doc))
    claimed["result"]["holds"] = True
    assert check_compiled_softmax(claimed) == ["no listed beta has B(beta) <= 1/100000000000000000000 at this precision"] and _status(claimed) == REJECTED
    denied = json.loads(json.dumps(soft_doc))
    denied["result"]["holds"] = False
    assert "the recorded result says holds=False, the check says True" in check_compiled_softmax(denied) and _status(denied) == REJECTED


def test_softmax_bound_is_a_real_bound_on_the_distance(soft_doc):
    # independently of the claim's code: the softmax output at beta = 10 is visibly not the AHAT output,
    # and the recorded bound covers the difference seen in the balls' midpoints
    from attncert.exact import Ball

    row = soft_doc["outputs"]["softmax"][0]
    ahat = [EE.from_json(v) for v in soft_doc["outputs"]["ahat"]]
    soft = [Ball(256).from_json(v) for v in row["output"]]
    gap = max(abs(float(s.mid()) - float(EE.enclose(a, 128).mid())) for s, a in zip(soft, ahat))
    assert gap > 0 and gap <= float(QQ.from_json(row["bound"])) * (1 + 1e-9)


def test_a_lowered_softmax_bound_or_a_wrong_least_beta_fails(soft_doc):
    doc = json.loads(json.dumps(soft_doc))
    doc["outputs"]["softmax"][1]["bound"] = "1/10000000000000000000000000"
    doc["result"]["least_beta_within_tol"] = "100"
    assert _status(doc) == REJECTED
    doc = json.loads(json.dumps(soft_doc))
    doc["result"]["relation"] = "exact_equal"
    assert _status(doc) == REJECTED


def test_a_forged_model_too_large_to_run_is_refused_before_it_runs():
    doc = prove("relu", "n=2")
    model = doc["construction"]["model"]
    model["basis"] = model["basis"] + [f"x{i}" for i in range(5000)]
    doc["construction"]["layout"]["length"] = model["length"] = 30_000
    out = verify_bytes(canonical_json(seal(doc)))
    assert out.status == "BAD" and "over the limit of" in out.reason and "(raise it with --max-" in out.reason


@pytest.mark.parametrize("of, sizes, seeds", [("match2", "M=3,n=4", range(4)), ("match2", "M=2,n=3", range(2)), ("parity", "n=4,k=2", range(3)), ("parity", "n=5,k=3", range(2))])
def test_language_readouts_compiled_with_u_verify(of, sizes, seeds, tmp_path, capsys):
    for seed in seeds:
        doc = prove(of, sizes, seed)
        assert doc["result"]["holds"] and doc["result"]["sops_differing"] == []
        path = write_certificate(tmp_path / f"{of}{seed}.json", doc)
        assert main(["verify", str(path)]) == 0, capsys.readouterr().out


def test_a_match2_readout_by_hand():
    # the word 1 1 0 1 over residues mod 3: 1 needs a 2 (absent), 0 pairs with itself
    doc = next(d for d in (prove("match2", "M=3,n=4", s) for s in range(50)) if d["inputs"]["word"] == [1, 1, 0, 1])
    assert [EE.from_json(v) == 1 for v in doc["outputs"]["output"][0]] == [False, False, True, False]


def test_a_word_that_its_matrices_do_not_encode_fails():
    doc = prove("parity", "n=4,k=2", 1)
    doc["inputs"]["word"] = [1 - b for b in doc["inputs"]["word"]]  # X still encodes the old word
    assert "the recorded X, A, V are not the encoding of the recorded word for this language" in check_compiled(doc)
    assert _status(doc) == REJECTED


@pytest.fixture
def relu_compiled_as_identity(monkeypatch):
    """A miscompiling stage: the relu map's MLP block replaced by the identity's."""
    import attncert.constructions.compiler.assemble as assemble

    real = assemble.map_block
    monkeypatch.setattr(assemble, "map_block", lambda name, *a: real("identity" if name == "relu" else name, *a))


def test_a_miscompiled_construction_is_refused_by_attncert_compile_and_fails_prove_compiled(relu_compiled_as_identity, tmp_path, capsys):
    assert main(["compile", "relu", "--sizes", "n=4", "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("attncert: error: cannot compile node 'relu': the compiled model disagrees with the RASP evaluation: on input [")
    assert not (tmp_path / "r.json").exists()
    # prove compiled runs the same comparison on its seed's input (seed 0 draws a negative entry)
    doc = prove("relu", "n=4")
    assert doc["result"]["sops_differing"] == ["relu"] and not doc["result"]["holds"]


def test_softmax_bounds_on_the_output_block(soft_doc):
    rows = soft_doc["outputs"]["softmax"]
    # the block is a sub-maximum of the same distances, so its bound can be no larger
    assert all(QQ.from_json(r["bound_output_block"]) <= QQ.from_json(r["bound"]) for r in rows)
    assert soft_doc["result"]["least_beta_within_tol_output_block"] is not None
    assert soft_doc["reference"]["bound_output_block_at_tracr_coldness"] == rows[1]["bound_output_block"]


def _forge_block_bounds(doc, bounds):
    """Output-block bounds replaced, and the least beta within tol made consistent with them, re-sealed by _status."""
    doc = json.loads(json.dumps(doc))
    tol = QQ.from_json(doc["params"]["tol"])
    for row, b in zip(doc["outputs"]["softmax"], bounds):
        row["bound_output_block"] = b
    within = [QQ.from_json(r["beta"]) for r in doc["outputs"]["softmax"] if QQ.from_json(r["bound_output_block"]) <= tol]
    doc["result"]["least_beta_within_tol_output_block"] = QQ.to_json(min(within)) if within else None
    return doc


def test_output_block_bounds_below_the_distance_fail(soft_doc):
    from attncert.proofs.checkers.compiled.construction import check_compiled_softmax

    # beta = 10: the softmax model is visibly off on the block, so a bound of 0 there is false
    doc = _forge_block_bounds(soft_doc, ["0"] + [r["bound_output_block"] for r in soft_doc["outputs"]["softmax"][1:]])
    assert doc["result"]["least_beta_within_tol_output_block"] == "10"
    assert "beta 10: the recorded bound output block is below the recomputed distance" in check_compiled_softmax(doc)
    assert _status(doc) == REJECTED
    # the bounds of another input (seed 1), where they are smaller, recorded for this one
    other = SOFT.prove(of="universal", sizes="n=2,d=2,dv=1", seed=1, betas="10,100,1000", tol="1e-20", prec=256)
    mine, theirs = ([QQ.from_json(r["bound_output_block"]) for r in d["outputs"]["softmax"]] for d in (soft_doc, other))
    smaller = [QQ.to_json(min(a, b)) for a, b in zip(mine, theirs)]
    assert smaller != [QQ.to_json(a) for a in mine]  # seed 1 has a smaller bound somewhere
    assert _status(_forge_block_bounds(soft_doc, smaller)) == REJECTED


def test_a_wrong_least_beta_on_the_output_block_fails(soft_doc):
    from attncert.proofs.checkers.compiled.construction import check_compiled_softmax

    doc = json.loads(json.dumps(soft_doc))
    doc["result"]["least_beta_within_tol_output_block"] = "10"
    assert "the least beta within tol (bound output block) is not the recorded one" in check_compiled_softmax(doc)
    assert _status(doc) == REJECTED
