"""For POT users (issue 34): one rule for float marginals in the API and the command line, POT's batched b refused in
one line, --reg as --eps, --plan-out, and attncert.sinkhorn2's loss within its bound of <P*, M> at 60 digits."""

from __future__ import annotations

import json
import subprocess
import sys

import mpmath
import numpy as np
import pytest
from flint import fmpq

import attncert
from attncert.constructions.sinkhorn.problem import SinkhornInputError
from attncert.exact import ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.roundoff import exact
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import BAD, OK, verify_bytes
from attncert.proofs.sinkhorn.common import mp_sinkhorn

CLAIM = load_claim("sinkhorn_convergence")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert.proofs.cli", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pot")
    rng = np.random.default_rng(2)
    M, a, b = rng.random((5, 4)), np.ones(5) / 5, rng.random(4)
    b /= b.sum()
    assert sum(map(exact, a)) != sum(map(exact, b))  # the doubles' exact totals differ, by rounding
    for name, x in (("C", M), ("a", a), ("b", b)):
        np.save(d / f"{name}.npy", x)
    return d, M, a, b


def prove(d, **kw) -> dict:
    return CLAIM.prove(**{**CLAIM.defaults(), "cost": str(d / "C.npy"), "a": str(d / "a.npy"), "b": str(d / "b.npy"), "eps": "1/5", "tol": "1e-9", "ref_iter": 10, "pot_iter": 10, **kw})


def test_float_marginals_follow_one_rule_in_the_api_and_the_command_line(files):
    d, M, a, b = files
    G, bound = attncert.sinkhorn(a, b, M, QQ.from_json("1/5"), tol="1e-9")  # the API scales b to sum(a)
    doc = prove(d)
    assert doc["result"]["holds"] and "b_scaled" in doc["inputs"]
    scaled = [QQ.from_json(x) for x in doc["inputs"]["b_scaled"]]
    assert sum(scaled) == sum(map(exact, a)) and [QQ.from_json(x) for x in doc["inputs"]["b"]] == [exact(x) for x in b]
    assert verify_bytes(canonical_json(seal(doc))).status == OK
    forged = json.loads(json.dumps(doc))
    forged["inputs"]["b_scaled"] = forged["inputs"]["b"]
    assert verify_bytes(canonical_json(seal(forged))).status == BAD  # "b is recorded scaled, but ..." (malformed)
    run = cli("prove", "sinkhorn_convergence", "--cost", str(d / "C.npy"), "--a", str(d / "a.npy"), "--b", str(d / "b.npy"), "--eps", "1/5", "--tol", "1e-9", "--out", str(d / "o.json"))
    assert run.returncode == 0, run.stderr


def test_totals_beyond_the_rule_are_one_line(files, tmp_path):
    d, M, a, b = files
    np.save(tmp_path / "b.npy", b * 1.001)
    run = cli("prove", "sinkhorn_convergence", "--cost", str(d / "C.npy"), "--a", str(d / "a.npy"), "--b", str(tmp_path / "b.npy"), "--eps", "1/5")
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1 and "different totals" in run.stderr
    with pytest.raises(SinkhornInputError, match="different totals"):
        attncert.sinkhorn(a, b * 1.001, M, 0.2, tol="1e-9")


def test_pots_batched_b_is_refused_in_one_line():
    with pytest.raises(SinkhornInputError, match="batch of histograms") as e:
        attncert.sinkhorn(np.ones(3) / 3, np.ones((4, 2)) / 4, np.ones((3, 4)), 0.1)
    assert "\n" not in str(e.value)


def test_reg_is_eps(files):
    d, *_ = files
    by_reg = prove(d, reg="1/5", eps=CLAIM.defaults()["eps"])
    by_eps = prove(d)
    assert by_reg["params"]["eps"] == "1/5" and "reg" not in by_reg["params"]
    assert by_reg["outputs"] == by_eps["outputs"]
    with pytest.raises(ParseError, match="POT's name for --eps"):
        prove(d, reg="1/7")


def test_the_estimate_names_the_cost_files_shape_and_the_reg(files):
    d, *_ = files
    run = cli("prove", "sinkhorn_convergence", "--cost", str(d / "C.npy"), "--reg", "1/7", "--estimate")
    assert run.returncode == 0, run.stderr
    problem = next(line for line in run.stdout.splitlines() if line.strip().startswith("problem"))
    assert "5 x 4 cost (the file C.npy's), eps 1/7" in problem  # the file is 5 x 4 (the fixture), the reg one run
    assert "evaluations or runs          1" in run.stdout
    both = cli("prove", "sinkhorn_convergence", "--eps", "1/5", "--reg", "1/7", "--estimate")
    assert both.returncode == 2 and "POT's name for --eps" in both.stderr


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_plan_out_writes_the_certified_plan(files, tmp_path, suffix):
    d, M, a, b = files
    out = tmp_path / f"G{suffix}"
    doc = prove(d, plan_out=str(out))
    assert "plan_out" not in doc["params"]
    G = np.load(out) if suffix == ".npy" else np.loadtxt(out, delimiter=",")
    G_api, bound = attncert.sinkhorn(a, b, M, QQ.from_json("1/5"), tol="1e-9")
    assert G.shape == (5, 4) and np.abs(G - G_api).max() <= 2 * float(bound)
    with pytest.raises(ParseError, match="one eps"):
        prove(d, eps="1/5,1/6", plan_out=str(out))
    with pytest.raises(ParseError, match=".npy or .csv"):
        prove(d, plan_out=str(tmp_path / "G.txt"))


def test_sinkhorn2_is_within_its_bound_of_the_exact_loss():
    rng = np.random.default_rng(4)
    M, a, b = rng.random((4, 5)), np.ones(4) / 4, np.ones(5) / 5
    loss, bound = attncert.sinkhorn2(a, b, M, 1.0, tol="1e-12")
    b_used = [exact(x) * sum(map(exact, a)) / sum(map(exact, b)) for x in b]  # the one rule: b scaled to sum(a)
    P, _ = mp_sinkhorn([[exact(x) for x in r] for r in M.tolist()], [exact(x) for x in a], b_used, fmpq(1), 60, 5000)
    assert P is not None
    with mpmath.workdps(60):
        true = mpmath.fsum(P[i][j] * mpmath.mpf(M[i, j]) for i in range(4) for j in range(5))
        assert abs(mpmath.mpf(loss) - true) <= mpmath.mpf(bound.numerator) / bound.denominator
    assert 0 < bound < 1e-12


def test_a_slow_path_is_announced_in_one_line_before_it_starts(monkeypatch):
    from attncert.constructions.sinkhorn import pot

    monkeypatch.setattr(pot, "SLOW_SECONDS", 0.0)  # announce even this small run, whose estimate is a fraction of a second
    M = np.random.default_rng(0).random((70, 70))
    a = np.full(70, 1 / 69)
    a[0] = 1e-40  # kappa about 1e20: neither convexity path certifies tol 1e-30 (precise-convexity takes uniform masses)
    with pytest.warns(pot.SlowPathWarning, match=r"no fast path certifies this 70x70 problem at tol 1e-30 .* roughly") as w:
        attncert.sinkhorn(a, a, M, 0.2, tol="1e-30")
    assert "\n" not in str(w[0].message)
