"""sinkhorn_convergence on your own cost and marginals: --cost FILE --a FILE --b FILE (JSON, CSV, .npy).

The files are read exactly and recorded, verify re-checks from the recorded inputs (the files may be gone),
bad files are one line and exit 2, and self-consistent forgeries of a file certificate REJECTED.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from attncert.exact import QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import read_certificate, seal
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

CLAIM = load_claims()["sinkhorn_convergence"]
FAST = {"eps": "1/5", "ref_iter": 50, "pot_iter": 50}


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def fraction(s: str) -> Fraction:
    return Fraction(s)


@pytest.fixture
def files(tmp_path):
    """A 2 x 3 cost in JSON (a decimal, a fraction, integers), a in CSV (a row), b in CSV (a column)."""
    (tmp_path / "C.json").write_text('[[0, "1/3", 0.5], [1, 0.25, "2e-1"]]')
    (tmp_path / "a.csv").write_text("1/2,1/2\n")
    (tmp_path / "b.csv").write_text("0.25\n0.25\n1/2\n")
    return tmp_path


def prove_files(cost, a, b, **kw) -> dict:
    return CLAIM.prove(**{**CLAIM.defaults(), **FAST, **kw, "cost": str(cost), "a": str(a), "b": str(b)})


def test_a_problem_from_json_and_csv_is_recorded_exactly_and_verifies_without_the_files(files):
    doc = prove_files(files / "C.json", files / "a.csv", files / "b.csv")
    assert doc["result"]["holds"]
    # By hand: 0.5 is 1/2, "2e-1" is 1/5, 0.25 is 1/4; nothing rounded.
    assert [[fraction(x) for x in r] for r in doc["inputs"]["C"]] == [[0, Fraction(1, 3), Fraction(1, 2)], [1, Fraction(1, 4), Fraction(1, 5)]]
    assert doc["inputs"]["a"] == ["1/2", "1/2"] and doc["inputs"]["b"] == ["1/4", "1/4", "1/2"]
    params = doc["params"]
    assert (params["cost"], params["a"], params["b"], params["n"], params["m"]) == ("json", "csv", "csv", 2, 3)
    assert "seed" not in params and set(doc["inputs"]["read_from"]) == {"C", "a", "b"}
    assert doc["construction"]["size"]["n"] == 2 and doc["construction"]["size"]["m"] == 3
    for name in ("C.json", "a.csv", "b.csv"):
        (files / name).unlink()  # verify reads the certificate, never the files
    assert status(doc) == OK


def test_npy_floats_are_their_exact_binary_values_and_the_certificate_says_so(tmp_path):
    C = np.array([[0.0, 0.1, 0.2], [0.3, 0.1, 0.0]])
    np.save(tmp_path / "C.npy", C)
    np.save(tmp_path / "a.npy", np.array([0.5, 0.5]))
    np.save(tmp_path / "b.npy", np.array([0.25, 0.25, 0.5]))
    doc = prove_files(tmp_path / "C.npy", tmp_path / "a.npy", tmp_path / "b.npy")
    # The independent value of each double: Python's Fraction of the float.
    assert [[fraction(x) for x in r] for r in doc["inputs"]["C"]] == [[Fraction(x) for x in r] for r in C.tolist()]
    assert fraction(doc["inputs"]["C"][0][1]) != Fraction(1, 10)
    assert doc["params"]["cost"] == "npy-float" and "exact binary value" in doc["inputs"]["read_from"]["C"]
    assert doc["result"]["holds"] and status(doc) == OK


def test_without_the_options_the_certificate_is_todays():
    doc = CLAIM.prove(**{**CLAIM.defaults(), "n": 3, **FAST})
    assert set(doc["params"]) == {"n", "seed", "eps", "tol", "prec", "ref_iter", "pot_iter"}
    assert set(doc["inputs"]) == {"C", "a", "b"} and len(doc["inputs"]["C"]) == 3 == len(doc["inputs"]["C"][0])


def test_a_random_rectangular_cost_with_m():
    doc = CLAIM.prove(**{**CLAIM.defaults(), "n": 2, "m": 4, **FAST})
    assert doc["params"]["m"] == 4 and len(doc["inputs"]["C"][0]) == 4 == len(doc["inputs"]["b"])
    assert doc["result"]["holds"] and status(doc) == OK


@pytest.mark.parametrize(
    "cost, a, b, extra, match",
    [
        ("C.json", "a0.json", "b.csv", [], "positive masses"),
        ("C.json", "a_neg.json", "b.csv", [], "positive masses"),
        ("C.json", "a_more.json", "b.csv", [], "different totals: sum(a) = 1000000000000001/1000000000000000"),
        ("C.json", "a3.json", "b.csv", [], "shapes disagree: cost is 2x3"),
        ("C_nan.npy", "a.csv", "b.csv", [], "C_nan.npy: entry (0, 1) is nan, not a finite number"),
        ("C_inf.csv", "a.csv", "b.csv", [], "not a finite number"),
        ("C.npz", "a.csv", "b.csv", [], "npz archive"),
        ("C.json", "a.csv", "b.csv", ["--max-entries", "5"], "6 numbers, over the limit of 5 entries"),
        ("C.json", "a.csv", None, [], "--cost, --a and --b go together"),
        ("C.json", "a.csv", "b.csv", ["--seed", "3"], "--seed: only for the random cost"),
        ("C.json", "a.csv", "b.csv", ["--eps", "-1/5"], "eps must be > 0"),
        ("missing.json", "a.csv", "b.csv", [], "cannot read"),
    ],
)
def test_bad_files_are_one_line_and_exit_2(files, capsys, cost, a, b, extra, match):
    (files / "a0.json").write_text('["1", "0"]')
    (files / "a_neg.json").write_text('["3/2", "-1/2"]')
    (files / "a_more.json").write_text('["0.5", "0.500000000000001"]')  # sum a = 1 + 10^-15, decided exactly
    (files / "a3.json").write_text('["1/3", "1/3", "1/3"]')
    np.save(files / "C_nan.npy", np.array([[0.0, np.nan, 1.0], [1.0, 0.0, 1.0]]))
    (files / "C_inf.csv").write_text("0,1,inf\n1,0,1\n")
    np.savez(files / "C.npz", C=np.zeros((2, 3)))
    args = ["prove", "sinkhorn_convergence", "--cost", str(files / cost), "--a", str(files / a)] + (["--b", str(files / b)] if b else [])
    assert main(args + ["--out", str(files / "out.json"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1 and err.startswith("attncert: error: "), err
    assert not (files / "out.json").exists()


def test_the_command_line_proves_a_file_problem(files, capsys):
    out = files / "cert.json"
    common = ["--cost", str(files / "C.json"), "--a", str(files / "a.csv"), "--b", str(files / "b.csv"), "--eps", "1/5", "--ref-iter", "50", "--pot-iter", "50"]
    done = subprocess.run([sys.executable, "-m", "attncert", "prove", "sinkhorn_convergence", *common, "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert read_certificate(out)["params"]["cost"] == "json"
    assert main(["verify", str(out)]) == 0, capsys.readouterr().out


# -- self-consistent forgeries of a file certificate: well formed, re-sealed, the claim false -------------


@pytest.fixture
def genuine(files):
    return prove_files(files / "C.json", files / "a.csv", files / "b.csv")


def test_another_costs_runs_under_these_inputs_fail(files, genuine):
    # A genuine certificate of another cost (C + 1 in one row), its inputs swapped for this one's: each run's
    # witness certifies a plan of the other kernel, so the check of each run fails for the recorded C.
    (files / "C2.json").write_text('[[0, "1/3", 0.5], [2, 1.25, "1.2"]]')
    other = prove_files(files / "C2.json", files / "a.csv", files / "b.csv")
    assert status(other) == OK
    forged = copy.deepcopy(other)
    forged["inputs"] = copy.deepcopy(genuine["inputs"])
    problems = CLAIM.check(forged)
    assert problems, "the check alone must find it"
    assert status(forged) == REJECTED


def test_a_false_npy_reading_fails(files, genuine):
    # The enclosure is genuine; the certificate now says C came from a .npy file of floats, but 1/3 is no double.
    forged = copy.deepcopy(genuine)
    forged["params"]["cost"] = "npy-float"
    forged["inputs"]["read_from"]["C"] = next(v for k, v in _formats().items() if k == "npy-float")
    assert any("not the value of a binary64 float" in p for p in CLAIM.check(forged))
    assert status(forged) == REJECTED


def test_scaled_recorded_marginals_fail(genuine):
    # d_H is scale-invariant: the recorded witness still bounds the plan against 2a, but sum(2a) != sum(b).
    forged = copy.deepcopy(genuine)
    forged["inputs"]["a"] = [QQ.to_json(2 * QQ.from_json(x)) for x in forged["inputs"]["a"]]
    assert any("unbalanced marginals" in p for p in CLAIM.check(forged))
    assert status(forged) == REJECTED


def test_files_with_a_seed_or_part_of_the_files_are_malformed(genuine):
    with_seed = copy.deepcopy(genuine)
    with_seed["params"]["seed"] = 0
    without_b = copy.deepcopy(genuine)
    del without_b["params"]["b"]
    unknown = copy.deepcopy(genuine)
    unknown["params"]["a"] = "xlsx"
    for doc in (with_seed, without_b, unknown):
        assert status(doc) == BAD


def test_a_shape_that_is_not_the_recorded_one_is_malformed(genuine):
    forged = copy.deepcopy(genuine)
    forged["params"]["m"] = 2
    assert status(forged) == BAD


def _formats() -> dict[str, str]:
    from attncert.exact.numberfiles import FORMATS

    return json.loads(json.dumps(FORMATS))


def test_every_leaf_of_a_file_certificate_is_pinned(genuine):
    # As tests/proofs/core/test_every_leaf.py for the random certificate: change one leaf, reseal, and verify must refuse
    # it. Left out: the parameters that may give the very same certificate (prec, ref_iter, pot_iter).
    from tests.proofs.core.test_every_leaf import leaves, with_leaf_changed

    from attncert.proofs.core.certify import CLAIM_FIELDS

    paths = [p for p in leaves({k: genuine[k] for k in CLAIM_FIELDS}) if p[:2] not in {("params", k) for k in ("prec", "ref_iter", "pot_iter")}]
    accepted = []
    for path in paths[:: max(1, len(paths) // 80)]:
        if status(with_leaf_changed(genuine, path)) == OK:
            accepted.append(path)
    assert not accepted, accepted[:3]
