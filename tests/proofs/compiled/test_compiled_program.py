"""compiled_program: a user's RASP program compiled exactly, proven on every input; its verifier and forgeries.

Expected outputs are worked out by hand (the reverse of a word); forgeries are well-formed,
re-sealed documents whose claim is false."""

from __future__ import annotations

import copy
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import read_certificate, seal
from attncert.proofs.compiled import program as P
from attncert.proofs.checkers.compiled.construction import model_sha256
from attncert.proofs.checkers.tracr.model import value
from attncert.proofs.cli import main
from attncert.proofs.core.rebuild import rebuilt_differences
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

ROOT = Path(__file__).resolve().parents[3]
PROG = str(ROOT / "examples" / "prog.rasp")
CLAIM = load_claim("compiled_program")


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


@pytest.fixture(scope="module")
def reverse() -> dict:
    return P.prove("a,b", 3, "fixed", False, 1000, 10, file=PROG, expr="reverse")


def test_every_input_is_the_reverse_and_verifies(reverse):
    res, ref = reverse["result"], reverse["reference"]["rasp"]
    assert res["holds"] and res["relation"] == "exact_equal" and res["domain"] == "QQ" and res["inputs"] == res["correct"] == 8
    values = [value(v) for v in ref["values"]]
    (row,) = ref["outputs"]
    for xs, out in zip(itertools.product("ab", repeat=3), row):
        assert [values[i] for i in out] == list(reversed(xs))
    assert reverse["construction"]["program"]["kind"] == "rasp" and "reverse = aggregate(flip, tokens)" in reverse["construction"]["program"]["source"]
    assert status(reverse) == OK


def with_sha(doc: dict) -> dict:
    doc["construction"]["model_sha256"] = model_sha256(doc["construction"]["model"])
    return doc


def swapped_decoder(doc: dict) -> dict:
    """The model's output columns name each other's symbols: a decoder that reads a as b and b as a."""
    forged = copy.deepcopy(doc)
    m = forged["construction"]["model"]
    label = forged["construction"]["output"]
    vals = m["output_values"][label]
    vals[0], vals[1] = vals[1], vals[0]
    return with_sha(forged)


def test_forgery_a_model_that_computes_something_else_still_claiming_every_input_fails(reverse):
    forged = swapped_decoder(reverse)
    problems = CLAIM.check(forged)
    assert any("forward pass finds" in p for p in problems), problems
    assert status(forged) == REJECTED


def test_forgery_reference_matching_the_altered_model_passes_the_check_and_fails_the_rebuild(reverse):
    forged = swapped_decoder(reverse)
    ref = forged["reference"]["rasp"]
    swap = {"a": "b", "b": "a"}
    ref["values"] = [{"s": swap[v["s"]]} for v in ref["values"]]
    assert CLAIM.check(forged) == []
    assert any("reference" in p or "construction" in p for p in rebuilt_differences(CLAIM, forged))
    assert status(forged) == REJECTED


def test_forgery_claiming_every_length_for_a_fixed_length_model_fails(reverse):
    forged = copy.deepcopy(reverse)
    forged["inputs"]["lengths"] = forged["params"]["lengths"] = "every"
    assert any("lengths" in p for p in CLAIM.check(forged))
    assert status(forged) == REJECTED


def test_forgery_of_a_listed_counterexample_fails(reverse):
    forged = copy.deepcopy(reverse)
    forged["outputs"]["counterexamples"] = [{"input": [{"s": "a"}] * 3, "rasp": [{"s": "a"}] * 3, "position": 1}]
    assert any("counterexamples" in p for p in CLAIM.check(forged))
    assert status(forged) == REJECTED


def test_an_attncert_program_with_a_lambda_is_refused_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "lam.py").write_text(
        "def f():\n    from attncert.constructions import rasp\n    return rasp.categorical(rasp.Map(lambda t: t, rasp.tokens))\n"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParseError, match="unregistered function"):
        P.prove("a,b", 2, "fixed", False, 1000, 10, program="lam:f")


def test_prove_compiled_with_file_proves_compiled_program(tmp_path, capsys):
    out = tmp_path / "c.json"
    code = main(["prove", "compiled", "--file", PROG, "--expr", "reverse", "--vocab", "x,y", "--max-seq-len", "2", "--out", str(out)])
    assert code == 0 and "all 4 inputs" in capsys.readouterr().out
    doc = read_certificate(out)
    assert doc["claim"] == "compiled_program" and doc["result"]["holds"]


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--file", PROG, "--program", "m:f"], "not both"),
        (["--file", PROG, "--expr", "reverse", "--vocab", "a,b,c,d", "--max-seq-len", "9", "--max-inputs", "1000"], "262,144 input sequences, over the limit of 1,000"),
        (["--program", "m:f", "--expr", "x"], "--expr names a SOp of a --file program"),
        (["--lengths", "some"], "--lengths is fixed"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, says, capsys, tmp_path):
    try:
        code = main(["prove", "compiled_program", *argv, "--out", str(tmp_path / "x.json")])
    except SystemExit as e:  # argparse's own refusals exit
        code = e.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and says in err, err


@pytest.mark.slow
def test_a_tracr_program_is_recorded_by_tables_and_verifies(tmp_path, monkeypatch):
    pytest.importorskip("tracr")
    (tmp_path / "tp.py").write_text("def rev():\n    from tracr.compiler import lib\n    from tracr.rasp import rasp\n    return lib.make_reverse(rasp.tokens)\n")
    monkeypatch.chdir(tmp_path)
    doc = P.prove("a,b,c", 3, "fixed", False, 1000, 10, program="tp:rev")
    assert doc["construction"]["program"]["kind"] == "tables" and doc["result"]["holds"] and doc["result"]["inputs"] == 27
    values = [value(v) for v in doc["reference"]["rasp"]["values"]]
    for xs, out in zip(itertools.product("abc", repeat=3), doc["reference"]["rasp"]["outputs"][0]):
        assert [values[i] for i in out] == list(reversed(xs))
    assert status(doc) == OK
    # verify needs neither tracr nor JAX: the tables are the program
    cert = tmp_path / "tables.json"
    cert.write_bytes(canonical_json(seal(doc)))
    blocked = "import sys\nfor m in ('tracr', 'jax', 'haiku'): sys.modules[m] = None\nfrom attncert.proofs.cli import main\nsys.exit(main(['verify', sys.argv[1]]))"
    r = subprocess.run([sys.executable, "-c", blocked, str(cert)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("OK "), r.stdout + r.stderr
