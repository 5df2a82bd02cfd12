"""prove compiled --model FILE: the certificate is about the weights of the file attncert compile wrote.

It records them and their file's sha256; verify re-checks them with its own forward pass and never reads the
file. A file whose weights compute something else makes prove exit 1 (or is refused); self-consistent
forgeries of such certificates REJECTED; a malformed file, or the float npz export, is one line and exit 2.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys

import pytest

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import read_certificate, seal
from attncert.proofs.compiled import construction as compiled
from attncert.proofs.checkers.compiled.construction import check_compiled
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import BAD, DOES_NOT_HOLD, OK, REJECTED, verify_bytes

CLAIM = load_claims()["compiled"]


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def compile_to(tmp_path, of: str, sizes: str, name: str = "m.json", fmt: str = "json"):
    path = tmp_path / name
    assert main(["compile", of, "--sizes", sizes, "--format", fmt, "--out", str(path)]) == 0
    return path


def write_model(path, model: dict) -> None:
    path.write_bytes(canonical_json(model) + b"\n")  # as attncert compile writes it


def prove_file(path, of: str, sizes: str, seed: int = 0) -> dict:
    return CLAIM.prove(of=of, sizes=sizes, seed=seed, model=str(path))


def first_ov(model: dict) -> list:
    return next(h for layer in model["layers"] for h in layer["heads"])["ov"][0]


def test_the_certificate_records_the_files_weights_and_its_sha256(tmp_path, capsys):
    path = compile_to(tmp_path, "universal", "n=2,d=2,dv=1")
    data = path.read_bytes()
    out = tmp_path / "c.json"
    assert main(["prove", "compiled", "--sizes", "n=2,d=2,dv=1", "--model", str(path), "--out", str(out)]) == 0
    doc = read_certificate(out)
    assert doc["params"] == {"of": "universal", "sizes": "d=2,dv=1,n=2", "seed": 0, "model": "file"}
    assert doc["construction"]["model"] == json.loads(data)
    assert doc["construction"]["model_sha256"] == hashlib.sha256(data).hexdigest()  # sha256sum of the file
    assert doc["result"]["holds"] and doc["result"]["sops_differing"] == []
    path.unlink()  # verify checks the recorded weights, never the file
    assert main(["verify", str(out)]) == 0, capsys.readouterr().out


def test_a_compiled_certificate_records_the_sha256_of_its_model_too():
    doc = CLAIM.prove(of="relu", sizes="n=2", seed=0)
    assert "model" not in doc["params"]
    assert doc["construction"]["model_sha256"] == hashlib.sha256(canonical_json(doc["construction"]["model"]) + b"\n").hexdigest()


def test_weights_altered_to_compute_something_else_make_prove_and_verify_say_it_does_not_hold(tmp_path, capsys):
    path = compile_to(tmp_path, "transpose", "r=2,c=3")
    model = json.loads(path.read_text())
    first_ov(model)[2] = "2"  # one W_OV weight doubled: the model now moves twice the value
    write_model(path, model)
    out = tmp_path / "c.json"
    assert main(["prove", "compiled", "--of", "transpose", "--sizes", "r=2,c=3", "--model", str(path), "--out", str(out)]) == 1
    doc = read_certificate(out)
    assert not doc["result"]["holds"] and not doc["result"]["equals_reference"]
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    assert capsys.readouterr().out.startswith("DOES-NOT-HOLD ")  # genuine: that file's weights do not compute transpose


@pytest.fixture
def altered(tmp_path):
    """A genuine certificate (holds: false) of a transpose model file with one W_OV weight doubled."""
    path = compile_to(tmp_path, "transpose", "r=2,c=3")
    model = json.loads(path.read_text())
    first_ov(model)[2] = "2"
    write_model(path, model)
    doc = prove_file(path, "transpose", "r=2,c=3")
    assert not doc["result"]["holds"] and status(doc) == DOES_NOT_HOLD  # genuine: the check and the rebuild agree
    return doc


def test_forgery_a_false_claim_recorded_as_holding(altered):
    forged = copy.deepcopy(altered)
    forged["result"].update(holds=True, equals_reference=True, equals_rasp=True, sops_differing=[])
    assert "the compiled weights do not map the inputs to the reference" in check_compiled(forged)
    assert status(forged) == REJECTED


def test_forgery_the_reference_replaced_by_what_the_altered_weights_compute(altered):
    # Everything the altered weights compute, recorded as the reference and the RASP output, holds set: only the
    # claim (the reference is the transpose of the input) is false.
    forged = copy.deepcopy(altered)
    forged["reference"]["output"] = forged["reference"]["rasp_output"] = forged["outputs"]["output"]
    forged["result"].update(holds=True, equals_reference=True, equals_rasp=True, sops_differing=[])
    problems = check_compiled(forged)
    assert "the recorded reference differs from the reference recomputed from the inputs" in problems
    assert status(forged) == REJECTED


def test_forgery_a_sha256_of_another_file(tmp_path):
    path = compile_to(tmp_path, "relu", "n=3")
    doc = prove_file(path, "relu", "n=3")
    assert status(doc) == OK
    forged = copy.deepcopy(doc)
    forged["construction"]["model_sha256"] = hashlib.sha256(b"another file\n").hexdigest()
    assert "the recorded model_sha256 is not the sha256 of the recorded model's JSON" in check_compiled(forged)
    assert status(forged) == REJECTED


def test_forgery_weights_that_give_the_output_but_not_every_sop(tmp_path):
    # The file says one SOp is ready a layer before the weights compute it: the output is still right (the
    # independent forward pass is satisfied), but the record describes a residual the compiler does not give the
    # construction. prove refuses the file; a certificate forged to record it is refused by the rebuild.
    path = compile_to(tmp_path, "transpose", "r=2,c=3")
    doc = prove_file(path, "transpose", "r=2,c=3")
    model = json.loads(path.read_text())
    label, node = next((k, v) for k, v in model["nodes"].items() if v["slot"] >= 1)
    node["slot"] -= 1
    write_model(path, model)
    with pytest.raises(ParseError, match="its nodes differ from what the compiler gives the construction"):
        prove_file(path, "transpose", "r=2,c=3")
    forged = copy.deepcopy(doc)
    forged["construction"]["model"] = model
    forged["construction"]["model_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    assert check_compiled(forged) == []  # the output alone cannot show it...
    assert status(forged) == BAD  # ...the rebuild derives the residual layout from the construction


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m["basis"].__setitem__(slice(3, 5), m["basis"][4:2:-1]),  # two column labels swapped
        lambda m: m["nodes"][next(iter(m["nodes"]))].update(unknown=0),  # a member the reader does not know
        lambda m: m["output_values"].pop("output"),  # a member left out, which the reader took as absent
        lambda m: m["layers"][1]["heads"][0].update(aggregate="indices"),  # a head said to compute another SOp
    ],
    ids=["basis-swapped", "node-unknown-member", "output-values-dropped", "head-of-another-sop"],
)
def test_forgery_a_model_record_that_describes_another_residual_is_refused(tmp_path, change):
    """Issue 30's structural walk: a certificate of a model file verified OK with two basis labels swapped, an
    unknown member in a SOp's record, the output's values left out, or a head said to aggregate another SOp, since
    the rebuild wrote the recorded description back. The description is derived from the construction's compile;
    only the weights are the file's."""
    path = compile_to(tmp_path, "transpose", "r=2,c=3")
    doc = prove_file(path, "transpose", "r=2,c=3")
    forged = copy.deepcopy(doc)
    change(forged["construction"]["model"])
    forged["construction"]["model_sha256"] = hashlib.sha256(canonical_json(forged["construction"]["model"]) + b"\n").hexdigest()
    assert check_compiled(forged) == []  # the weights still compute transpose...
    assert status(forged) == BAD  # ...but the record is not the compiler's description of the construction
    write_model(path, forged["construction"]["model"])
    with pytest.raises(ParseError, match="differ from what the compiler gives the construction"):
        prove_file(path, "transpose", "r=2,c=3")


def test_a_model_file_compiled_as_the_identity_fails(tmp_path, monkeypatch):
    # A miscompiling stage (relu's MLP block replaced by the identity's), written without the compiler's check.
    import attncert.constructions.compiler.assemble as assemble
    from attncert.constructions.compiler.model import model_to_json

    real = assemble.map_block
    with monkeypatch.context() as m:
        m.setattr(assemble, "map_block", lambda name, *a: real("identity" if name == "relu" else name, *a))
        _, wrong = compiled.compile_construction("relu", {"n": 4}, check=False)
    write_model(tmp_path / "r.json", model_to_json(wrong))
    doc = prove_file(tmp_path / "r.json", "relu", "n=4")  # seed 0 draws a negative entry
    assert not doc["result"]["holds"] and doc["result"]["sops_differing"] == ["relu"]


TRANSPOSE = ["--of", "transpose", "--sizes", "r=2,c=3"]


@pytest.mark.parametrize(
    "make, options, match",
    [
        (lambda p: p.write_text("{not json"), TRANSPOSE, "malformed JSON"),
        (lambda p: p.write_text('{"format": "attncert-model/1", "length": 3}'), TRANSPOSE, "malformed model"),
        (lambda p: p.write_text('{"format": "other"}'), TRANSPOSE, "not a model of format attncert-model/1"),
        (lambda p: p.write_text("[1, 2]"), TRANSPOSE, "not a model of format"),
        (lambda p: p.write_bytes(b"PK\x03\x04 zipped"), TRANSPOSE, "npz model holds float64 weights"),
        ("summary", TRANSPOSE, "its 'summary' is not what its weights give"),
        ("as_is", ["--of", "transpose", "--sizes", "r=3,c=3"], "is compiled for sequence length 6, transpose(c=3,r=3) has length 9"),
        ("as_is", ["--of", "relu", "--sizes", "n=6"], "does not compile relu(n=6)"),
        ("as_is", TRANSPOSE + ["--for-all"], "--model does not apply with --for-all"),
    ],
)
def test_a_bad_model_file_is_one_line_and_exit_2(tmp_path, capsys, make, options, match):
    path = compile_to(tmp_path, "transpose", "r=2,c=3")
    capsys.readouterr()
    if make == "summary":
        model = json.loads(path.read_text())
        model["summary"]["width"] += 1
        write_model(path, model)
    elif make != "as_is":
        make(path)
    assert main(["prove", "compiled", *options, "--model", str(path), "--out", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1 and err.startswith("attncert: error: "), err
    assert not (tmp_path / "c.json").exists()


def test_the_npz_export_is_refused_from_the_command_line(tmp_path):
    path = compile_to(tmp_path, "relu", "n=3", "m.npz", "npz")
    done = subprocess.run([sys.executable, "-m", "attncert", "prove", "compiled", "--of", "relu", "--sizes", "n=3", "--model", str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "float64 weights, which are not exact; certify the JSON weights" in done.stderr



def test_every_leaf_of_a_model_file_certificate_is_pinned(tmp_path):
    # As tests/proofs/core/test_every_leaf.py for the compiled certificate: change one leaf, reseal, verify refuses it.
    from tests.proofs.core.test_every_leaf import leaves, with_leaf_changed

    from attncert.proofs.core.certify import CLAIM_FIELDS

    doc = prove_file(compile_to(tmp_path, "matmul", "r=1,k=2,c=1"), "matmul", "r=1,k=2,c=1")
    assert status(doc) == OK
    paths = list(leaves({k: doc[k] for k in CLAIM_FIELDS}))
    accepted = []
    for path in paths[:: max(1, len(paths) // 80)]:
        if status(with_leaf_changed(doc, path)) == OK:
            accepted.append(path)
    assert not accepted, accepted[:3]


def test_a_model_for_every_length_is_certified_at_the_layout_length_and_a_causal_one_refused(tmp_path):
    """The same weights compiled for every length 1..N (a /2 file) compute transpose at N, the only length
    its layout defines; the causal compile is refused in one line, since the layout reads every position."""
    from attncert.constructions.compiler import compile_graph
    from attncert.constructions.compiler.model import model_to_json

    cons, _ = compiled.compile_construction("transpose", {"r": 2, "c": 3}, check=False)
    for causal in (False, True):
        model = model_to_json(compile_graph(cons.graph(), cons.layout.length, "scalar", check=False, lengths="every", causal=causal))
        path = tmp_path / f"m{causal}.json"
        write_model(path, model)
        if causal:
            with pytest.raises(Exception, match="causal model"):
                prove_file(path, "transpose", "r=2,c=3")
            continue
        doc = prove_file(path, "transpose", "r=2,c=3")
        assert doc["construction"]["model"]["mode"] == "every_length" and doc["result"]["holds"]
        assert status(doc) == OK


def test_a_positional_entry_in_a_token_column_is_added_to_the_token(tmp_path, capsys):
    """Issue 30: the embedding is the positional row plus the token's components (docs/compiler.md). Both forward
    passes used to overwrite a token column with the token, dropping a positional entry there, so a file whose
    positional table writes 5 into the token column at position 1 (under the documented embedding: token 1 read
    as x + 5) was proven to compute the transpose. Both now add, and the file is found wrong."""
    from attncert.constructions.compiler.model import model_from_json
    from attncert.exact import QQ
    from attncert.proofs.checkers.forward import forward

    path = compile_to(tmp_path, "transpose", "r=2,c=3")
    model = json.loads(path.read_text())
    (col,) = model["token_columns"]
    assert str(col) not in model["positional"]
    model["positional"][str(col)] = [[1, "5"]]
    model["summary"] = model_from_json(model).summary()  # the file consistent with its weights, as a forger makes it
    write_model(path, model)
    xs = ["1", "2", "3", "4", "5", "6"]
    embedded = forward({**model, "layers": []}, xs, QQ)[col]
    assert embedded == [0, 1 + 5, 2, 3, 4, 5, 6]  # positional + token, by the documented formula
    out = tmp_path / "c.json"
    assert main(["prove", "compiled", "--of", "transpose", "--sizes", "r=2,c=3", "--model", str(path), "--out", str(out)]) == 1
    honest = read_certificate(out)
    assert not honest["result"]["holds"]
    forged = copy.deepcopy(prove_file(compile_to(tmp_path, "transpose", "r=2,c=3", "good.json"), "transpose", "r=2,c=3"))
    forged["construction"]["model"] = model
    forged["construction"]["model_sha256"] = hashlib.sha256(canonical_json(model) + b"\n").hexdigest()
    assert status(forged) == REJECTED
