"""The lemma proof scripts through the command line: certificates, inputs files, bad input."""

import json
import subprocess
import sys

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import read_certificate, seal
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

LEMMAS = ["transpose", "matmul", "softmax", "relu", "maxmin", "inverse3"]
#: Claims whose certificate checks the recorded inputs only (hierarchy: one input for each listed size).
ON_RECORDED_INPUTS = LEMMAS + ["universal", "multihead", "encoder_layer", "encoder_layer_norm", "hierarchy"]


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, text=True, cwd=cwd)


def test_every_lemma_is_registered():
    assert set(LEMMAS) <= set(load_claims())


@pytest.mark.parametrize("claim", LEMMAS)
def test_prove_writes_a_certificate_that_holds(claim, tmp_path, capsys):
    out = tmp_path / f"{claim}.json"
    assert main(["prove", claim, "--seed", "7", "--out", str(out)]) == 0
    doc = read_certificate(out)
    assert doc["claim"] == claim and doc["result"]["holds"] is True
    assert doc["result"]["statement"].startswith("on the recorded input")
    assert doc["result"]["relation"] == "exact_equal" and doc["result"]["domain"] in ("QQ", "EE")
    assert doc["construction"]["size"]["layers"] >= 1 and "graph" in doc["construction"]
    assert doc["outputs"]["output"] == doc["reference"]["output"] or claim in ("softmax", "relu", "maxmin")
    assert claim in capsys.readouterr().out


@pytest.mark.parametrize("claim", ON_RECORDED_INPUTS)
def test_a_statement_checked_on_recorded_inputs_says_so(claim):
    """Until certificates for all inputs exist (issue 22), no such statement reads as a theorem for all inputs."""
    assert load_claims()[claim].statement.startswith("on the recorded input")


def test_a_certificate_restating_its_lemma_for_all_inputs_fails():
    """The statement the lemma certificates carried before: re-sealed, the document is consistent but overclaims."""
    doc = load_claims()["matmul"].prove(r=2, k=2, c=2)
    assert verify_bytes(canonical_json(seal(doc))).status == OK
    doc["result"]["statement"] = "matmul(r, k, c) maps vec(A) ++ vec(B) to vec(AB) (then zeros) exactly"
    assert verify_bytes(canonical_json(seal(doc))).status == REJECTED


def test_paper_layer_counts_hold_for_several_sizes(tmp_path):
    for args, layers in [(["transpose", "--r", "7", "--c", "2"], 2), (["matmul", "--r", "5", "--k", "6", "--c", "1"], 3), (["inverse3"], 5)]:
        out = tmp_path / "c.json"
        assert main(["prove", *args, "--out", str(out)]) == 0
        assert read_certificate(out)["construction"]["size"]["layers"] == layers


def test_inputs_file_with_decimals_is_read_exactly(tmp_path):
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"A": [[0.1, "1/3"]], "B": [["0.2"], [3]]}))
    out = tmp_path / "c.json"
    assert main(["prove", "matmul", "--r", "1", "--k", "2", "--c", "1", "--inputs", str(f), "--out", str(out)]) == 0
    doc = read_certificate(out)
    assert doc["inputs"]["A"] == [["1/10", "1/3"]]  # the JSON number 0.1 is read as the decimal 1/10
    assert doc["outputs"]["output"] == [["51/50"]]  # 1/10 * 1/5 + 1/3 * 3


@pytest.mark.parametrize(
    "args, content, match",
    [
        (["inverse3"], {"M": [[1, 2, 3], [2, 4, 6], [0, 0, 1]]}, "singular"),
        (["matmul", "--r", "1", "--k", "1", "--c", "1"], {"A": [[1]]}, "lack the matrix 'B'"),
        (["transpose", "--r", "1", "--c", "2"], {"M": [[1, "x"]]}, "not a rational"),
        (["transpose", "--r", "1", "--c", "2"], {"M": [[1, 2, 3]]}, "must be 1x2"),
        (["softmax", "--r", "1", "--c", "1"], "[1, 2", "malformed JSON"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(tmp_path, args, content, match):
    f = tmp_path / "in.json"
    f.write_text(content if isinstance(content, str) else json.dumps(content))
    r = run_cli("prove", *args, "--inputs", str(f), "--out", str(tmp_path / "c.json"), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and match in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("args", [["transpose", "--r", "0"], ["relu", "--domain", "Float"], ["matmul", "--k", "two"]])
def test_bad_parameters_exit_2(args, tmp_path):
    r = run_cli("prove", *args, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.slow  # the README's main job, every claim proven and verified: about a minute on 2 cores (bench_prove_all)
def test_prove_all_writes_every_certificate(tmp_path):
    (tmp_path / "certs").mkdir()  # an --out-dir must exist (only the default certificates/ is made)
    r = run_cli("prove-all", "--out-dir", str(tmp_path / "certs"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for claim in LEMMAS:
        assert read_certificate(tmp_path / "certs" / f"{claim}.json")["result"]["holds"]
        assert claim in r.stdout
    # Proven side by side (one process per core), the rows still come in the claims' order, then the verdicts.
    # (a claim whose optional extra is not installed is skipped: tracr_model without tracr)
    # (and the claims the index leaves for prove-all --all are not proven)
    fresh = "import json; from attncert.proofs.core.registry import INDEX, available, load_claims; print(json.dumps([n for n in load_claims() if available(n) and INDEX[n].in_prove_all]))"
    names = json.loads(subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, check=True).stdout)
    rows = [line.split()[0] for line in r.stdout.splitlines() if line.split() and line.split()[0] in names]
    verdicts = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("OK ")]
    assert rows == names and [v.rsplit("/", 1)[1] for v in verdicts] == [f"{n}.json" for n in names]
    assert f"{len(names)} of {len(names)} certificates verified" in r.stdout
