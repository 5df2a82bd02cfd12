"""The five Sinkhorn claims: they hold, their certificates say what was proven, bad input exits 2."""

import json
import subprocess
import sys

import pytest

from attncert.exact.certificate import read_certificate, write_certificate
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims

SMALL = {
    "sinkhorn_fixed_point": {"n": 2, "m": 3},
    "sinkhorn_limit": {"n": 3, "m": 2, "ts": "1/2,1/10,1/1000"},
    "sinkhorn_convergence": {"n": 4, "eps": "1/5,1/100,1/10000", "ref_iter": 3000, "pot_iter": 2000},
    "sinkhorn_transformer": {"n": 3, "m": 4},
    "sinkhorn_universality": {"pairs": 3, "held_out": 2, "max_n": 3, "widths": "1,2,4"},
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
    ot = pytest.importorskip("ot")
    doc = load_claims()["sinkhorn_convergence"].prove(n=4, seed=0, eps="1/10000", tol="1e-30", prec=128, ref_iter=10, pot_iter=100)
    (ref,) = doc["reference"]["references"]
    assert "did not converge" in ref["mpmath"]  # honest: no comparison claimed
    assert doc["result"]["holds"] and doc["outputs"]["runs"][0]["certified"]  # the certified plan stays an enclosure
    # POT's float outcomes are side notes, labelled agreement, with the version that produced them
    pot = doc["side_notes"]["pot"]
    assert pot["relation"] == "agreement" and pot["version"] == ot.__version__
    (run,) = pot["runs"]
    assert run["eps"] == "1/10000" and run["pot_fails_we_certify"] and "numerical error" in run["outcome"]
    assert "pot" not in ref and "pot" not in doc["reference"]  # nothing of POT in a claim field


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
    r = subprocess.run([sys.executable, "-m", "attncert", "prove", *args, "--out", str(tmp_path / "x.json")], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


MU = {"x": [["0"], ["1/2"]], "a": ["1/3", "2/3"]}
NU = {"x": [["-1"], ["1/4"], ["1"]], "a": ["1/2", "1/4", "1/4"]}


def _texts(tmp_path, mu=MU, nu=NU):
    path = tmp_path / "texts.json"
    path.write_text(json.dumps({"mu": mu, "nu": nu}))
    return str(path)


def _family(tmp_path, fit, held):
    path = tmp_path / "family.json"
    path.write_text(json.dumps({"fit": fit, "held_out": held}))
    return str(path)


@pytest.mark.parametrize(
    "what, args, match",
    [
        ("a text of length 0", lambda t: ["sinkhorn_transformer", "--texts", _texts(t, mu={"x": [], "a": []})], "length 0"),
        ("a weight <= 0", lambda t: ["sinkhorn_transformer", "--texts", _texts(t, mu={"x": [["0"], ["1"]], "a": ["3/2", "-1/2"]})], "positive"),
        ("weights not summing to 1", lambda t: ["sinkhorn_transformer", "--texts", _texts(t, nu={"x": [["0"]], "a": ["0.9"]})], "sum to 1"),
        ("a point outside [-1, 1]", lambda t: ["sinkhorn_transformer", "--texts", _texts(t, mu={"x": [["0"], ["1.5"]], "a": ["1/2", "1/2"]})], "outside the declared domain"),
        ("eps = 0", lambda t: ["sinkhorn_transformer", "--eps", "0"], "eps must be > 0"),
        ("eps < 0, universality", lambda t: ["sinkhorn_universality", "--eps", "-1/2"], "eps must be > 0"),
        ("a family text of length 0", lambda t: ["sinkhorn_universality", "--family", _family(t, [{"mu": MU, "nu": {"x": [], "a": []}}], [])], "length 0"),
        ("a family point outside", lambda t: ["sinkhorn_universality", "--family", _family(t, [{"mu": MU, "nu": {"x": [["2"]], "a": ["1"]}}], [])], "outside"),
        ("a held-out pair that is a fit pair", lambda t: ["sinkhorn_universality", "--family", _family(t, [{"mu": MU, "nu": NU}], [{"mu": MU, "nu": NU}])], "also a fit pair"),
        ("a family over the limit", lambda t: ["sinkhorn_universality", "--pairs", "2000", "--held-out", "100"], "2,100 text pairs needs 27,300 certified Sinkhorn runs"),  # 2,100 x (1 + 3 systems x 4 default widths)
        ("a family file over the limit", lambda t: ["sinkhorn_universality", "--family", _family(t, [{"mu": MU, "nu": NU}] * 1025, [])], "1,025 text pairs"),
    ],
)
def test_bad_texts_and_families_are_one_line_and_exit_2(what, args, match, tmp_path, capsys):
    assert main(["prove", *args(tmp_path), "--out", str(tmp_path / "x.json")]) == 2, what
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and match in err, err


def test_texts_from_a_file_are_certified_and_verify(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["prove", "sinkhorn_transformer", "--n", "2", "--m", "3", "--d", "1", "--texts", _texts(tmp_path), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["params"]["texts"] == "file" and doc["inputs"]["mu"] == MU
    assert main(["verify", str(out)]) == 0, capsys.readouterr().out
