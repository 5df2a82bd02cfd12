"""The five Sinkhorn claims: they hold, their certificates say what was proven, bad input exits 2."""

import json
import subprocess
import sys

import pytest

from exact.certificate import read_certificate, write_certificate
from proofs.cli import main
from proofs.registry import load_claims

SMALL = {
    "sinkhorn_fixed_point": {"n": 2, "m": 3},
    "sinkhorn_limit": {"n": 3, "m": 2, "ts": "1/2,1/10,1/1000"},
    "sinkhorn_convergence": {"n": 4, "eps": "1/5,1/100,1/10000", "ref_iter": 3000, "pot_iter": 2000},
    "sinkhorn_transformer": {"n": 3, "m": 4},
    "sinkhorn_universality": {"n": 4, "widths": "1,2,4"},
}
RELATIONS = {
    "sinkhorn_fixed_point": "exact_equal",
    "sinkhorn_limit": "exact_equal",
    "sinkhorn_convergence": "enclosure",
    "sinkhorn_transformer": "enclosure",
    "sinkhorn_universality": "bound",
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_claim_holds_and_certificate_round_trips(name, tmp_path):
    claim = load_claims()[name]
    doc = claim.prove(**{**claim.defaults(), **SMALL[name]})
    assert doc["result"]["holds"] is True
    assert doc["result"]["relation"] == RELATIONS[name]
    size = doc["construction"]["size"]
    assert {"iterations", "n", "m"} <= set(size)
    path = write_certificate(tmp_path / f"{name}.json", doc)
    assert read_certificate(path)["claim"] == name


def test_limit_certificate_shows_exact_linear_decay():
    doc = load_claims()["sinkhorn_limit"].prove(n=3, m=3, seed=2, eps="1/10", ts="1/10,1/100")
    base = doc["reference"]["w1_independent_vs_pi"]["value"]
    from flint import fmpq

    values = [fmpq(s["w1"]["value"]) for s in doc["outputs"]["steps"]]
    assert values == [fmpq(base) / 10, fmpq(base) / 100] and values[0] > 0


def test_convergence_records_where_pot_fails():
    pytest.importorskip("ot")
    doc = load_claims()["sinkhorn_convergence"].prove(n=4, seed=0, eps="1/10000", tol="1e-30", prec=128, ref_iter=10, pot_iter=100)
    (ref,) = doc["reference"]["references"]
    assert doc["result"]["holds"] and ref["pot"]["pot_fails_we_certify"]
    assert "did not converge" in ref["mpmath"]  # honest: no comparison claimed


def test_cli_prove_writes_a_certificate(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["prove", "sinkhorn_transformer", "--n", "2", "--m", "3", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["result"]["holds"] is True
    assert "sinkhorn_transformer" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["sinkhorn_fixed_point", "--eps", "0"],
        ["sinkhorn_transformer", "--eps", "-1"],
        ["sinkhorn_convergence", "--eps", "abc"],
        ["sinkhorn_universality", "--widths", "0,2"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, tmp_path):
    r = subprocess.run([sys.executable, "-m", "proofs.cli", "prove", *args, "--out", str(tmp_path / "x.json")], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
