"""Proof scripts of the simulator results: certificates hold and say what was checked."""

import json

from attncert.exact.certificate import read_certificate
from attncert.proofs.cli import main
from attncert.proofs.simulator.hierarchy import prove as prove_hierarchy


def test_universal_with_inputs_file(tmp_path):
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"X": [["0.5", "-1"], [2, "1/3"]], "A": [[1, 0], [0, "0.25"]], "V": [[1], [-1]]}))
    out = tmp_path / "u.json"
    assert main(["prove", "universal", "--n", "2", "--d", "2", "--dv", "1", "--inputs", str(f), "--out", str(out)]) == 0
    doc = read_certificate(out)
    assert doc["inputs"]["X"] == [[{"num": [["0", "1/2"]], "den": [["0", "1"]]}, {"num": [["0", "-1"]], "den": [["0", "1"]]}],
                                  [{"num": [["0", "2"]], "den": [["0", "1"]]}, {"num": [["0", "1/3"]], "den": [["0", "1"]]}]]
    assert doc["result"]["holds"] and doc["construction"]["size"]["layers"] == 7


def test_multihead_and_encoder_certificates(tmp_path):
    for claim, layers in [("multihead", 9), ("encoder_layer", 13)]:
        out = tmp_path / f"{claim}.json"
        assert main(["prove", claim, "--seed", "3", "--out", str(out)]) == 0
        doc = read_certificate(out)
        assert doc["result"]["holds"] and doc["construction"]["size"]["layers"] == layers


def test_hierarchy_covers_every_smaller_size():
    doc = prove_hierarchy(N=4, D=2, Dv=2, seed=1)
    assert doc["result"]["holds"] and doc["result"]["cases_checked"] == 4 * 2 * 2
    sizes = {(c["n"], c["d"], c["dv"]) for c in doc["inputs"]["cases"]}
    assert sizes == {(n, d, dv) for n in range(1, 5) for d in (1, 2) for dv in (1, 2)}
