"""The every-size claims end to end, from the command line (issue 32): ``attncert prove CLAIM --for-all --every
SIZES`` writes a certificate that ``attncert verify`` says OK to; each forgery below, the real certificate edited
consistently and resealed (:func:`attncert.exact.certificate.seal`), is refused by ``verify`` (exit code not 0)
and already by the independent checker alone, before the rebuild compares the document (so that the rebuild
is not the only thing that stands between a forger and an OK).

tests/proofs/every_size/test_every_size_checker.py calls the checker on single-point forgeries of the lemmas;
these are the forgeries of the issue's list made through the command line, on the claims the checker there does
not see (the tagged simulator and the size hierarchy), and the structural ones (a list element duplicated,
two swapped)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.every_size import check_every_size
from attncert.proofs.cli import main
from tests.proofs.every_size.test_every_size_checker import reencode, refused, steps

_PROVEN: dict[tuple[str, ...], dict[str, Any]] = {}


def prove(tmp: Path, *argv: str) -> dict[str, Any]:
    """``attncert prove ARGV --out FILE`` (exit 0), the certificate it wrote; each command runs once per process."""
    if argv not in _PROVEN:
        out = tmp / "proven.json"
        assert main(["prove", *argv, "--out", str(out)]) == 0
        _PROVEN[argv] = json.loads(out.read_text())
    return copy.deepcopy(_PROVEN[argv])


def verify(tmp: Path, doc: dict[str, Any], capsys: pytest.CaptureFixture) -> tuple[int, str]:
    """``attncert verify`` of the document, resealed as a forger would: (exit code, its line)."""
    path = tmp / "forged.json"
    path.write_bytes(canonical_json(seal(doc)))
    capsys.readouterr()
    code = main(["verify", str(path)])
    return code, capsys.readouterr().out


def forged(tmp: Path, doc: dict[str, Any], capsys: pytest.CaptureFixture, *words: str) -> None:
    """The forgery is refused by verify, and by the independent check alone with a problem naming each word."""
    code, line = verify(tmp, doc, capsys)
    assert code != 0 and not line.startswith("OK"), line
    refused(check_every_size(seal(doc)), *words)


TRANSPOSE = ("transpose", "--for-all", "--every", "r,c")
TAGGED = ("universal_tagged_every_size", "--every", "n,d,dv")
HIERARCHY = ("hierarchy_every_size", "--every", "N,D,Dv,n,d,dv")


#: Fixed sizes (each case once found refused by the checker, or unproven): constant sums written out, a constant
#: radix dividing coefficients, tags over fixed rows, a group whose keys all lie below its bound (N <= B), the
#: monomials of an SMT-LIB term ordered by their powers too, proportional quotients over one key (n = 1, h = 2).
FIXED = {
    "universal-d2-dv3": ("universal", "--for-all", "--every", "n", "--d", "2", "--dv", "3"),
    "universal_tagged-n3": ("universal_tagged_every_size", "--every", "d,dv", "--n", "3"),
    "universal_tagged-n1-d1": ("universal_tagged_every_size", "--every", "dv", "--n", "1", "--d", "1"),
    "encoder_layer-n1-h2": ("encoder_layer_every_size", "--every", "d", "--n", "1", "--dv", "2", "--h", "2", "--f", "1"),
}


#: The heavier of them run in the slow run.
HEAVY = {"universal_tagged-n3", "encoder_layer-n1-h2"}


@pytest.mark.parametrize(
    "argv",
    [pytest.param(TRANSPOSE, id="transpose"), pytest.param(TAGGED, id="universal_tagged")]
    + [pytest.param(argv, id=name, marks=[pytest.mark.slow] if name in HEAVY else []) for name, argv in FIXED.items()],
)
def test_prove_then_verify_says_ok(tmp_path, capsys, argv):
    doc = prove(tmp_path, *argv)
    assert doc["result"]["holds"] is True and doc["result"]["relation"] == "identity"
    code, line = verify(tmp_path, doc, capsys)
    assert code == 0 and line.startswith("OK") and f"{doc['claim']} " in line, line


def test_the_statement_names_the_quantified_and_the_fixed_sizes(tmp_path):
    doc = prove(tmp_path, "universal", "--for-all", "--every", "n", "--d", "2", "--dv", "3")
    assert doc["params"] == {"every": "n", "d": 2, "dv": 3}
    assert doc["result"]["statement"].startswith("for every n >= 1, d = 2, dv = 3 and all real X")
    assert doc["result"]["hypotheses"] == ["n >= 1"]


# -- the forgeries of the list -------------------------------------------------------------------


def test_a_changed_template_parameter(tmp_path, capsys):
    doc = prove(tmp_path, *TRANSPOSE)
    node = next(n for n in doc["construction"]["template"]["nodes"] if n["label"] == "transpose_source")
    node["params"]["fn"]["params"]["const"] = {"size": "1"}  # every source one position later
    forged(tmp_path, doc, capsys, "region 0")


def test_a_dropped_fact_with_its_citations_moved(tmp_path, capsys):
    doc = prove(tmp_path, *TAGGED)
    facts = doc["outputs"]["facts"]
    del facts[0]  # the case's "the output block fits" fact; every citation renumbered as if it had never been
    doc["result"]["facts"] -= 1
    for c in doc["outputs"]["cases"]:
        c["fits"] = [max(k - 1, 0) for k in c["fits"]]
        c["rest_empty"] = None if c["rest_empty"] is None else max(c["rest_empty"] - 1, 0)
    for s in steps(doc):
        s["facts"] = [max(k - 1, 0) for k in s["facts"]]
    forged(tmp_path, doc, capsys, "case 0 (the output block fits)")


def test_an_altered_fact(tmp_path, capsys):
    doc = prove(tmp_path, *TAGGED)
    k, fact = next((k, f) for k, f in enumerate(doc["outputs"]["facts"]) if f["goal"] == "0 <= i")
    fact["goal"] = "1 <= i"  # proven by nothing: i = 0 is a row
    reencode(fact)
    for s in steps(doc):
        if k in s["facts"]:
            s["decision"] = s["decision"].replace("0 <= i", "1 <= i")
    forged(tmp_path, doc, capsys, "no recorded")  # the template needs 0 <= i: no step states it now


def test_changed_normal_forms(tmp_path, capsys):
    doc = prove(tmp_path, *TAGGED)
    region = next(r for r in doc["outputs"]["regions"] if r["kind"] == "output")
    # the tags of column 0 read in column 1 instead, in the value and the reference alike: equal to each other,
    # not to what the template computes (and no longer a denominator the tags' hypothesis shows positive)
    text = json.dumps([region["value"], region["reference"]]).replace('"tag(X)", "z0_0", "0"', '"tag(X)", "z0_0", "1"')
    assert '"1"]' in text
    region["value"], region["reference"] = json.loads(text)
    forged(tmp_path, doc, capsys, "recorded value is not the checker's")


def test_the_tags_hypothesis_removed(tmp_path, capsys):
    doc = prove(tmp_path, *TAGGED)
    doc["result"]["hypotheses"] = [h for h in doc["result"]["hypotheses"] if not h.startswith("tag(")]
    # with every tag 0 the attention over the data rows divides by 0: the claim without it is false
    forged(tmp_path, doc, capsys, "result.hypotheses")


@pytest.mark.slow
def test_the_hierarchys_hypothesis_n_at_most_N_removed_everywhere(tmp_path, capsys):
    """n <= N taken out of the theorem, of every region and context, and of every fact, whose script is written
    again: a self-consistent certificate of a false statement (a row i >= N of X is read past X's block). The
    checker derives the theorem's hypotheses and each region's assumptions from the claim itself, so it refuses
    both before it asks cvc5 anything (it asks only about facts a step it takes cites)."""
    doc = prove(tmp_path, *HIERARCHY)
    assert verify(tmp_path, doc, capsys)[0] == 0
    doc["result"]["hypotheses"].remove("n <= N")
    for r in doc["outputs"]["regions"]:
        r["assumed"] = [a for a in r["assumed"] if a != "n <= N"]
    for s in steps(doc):
        s["context"] = s["context"].replace(" and n <= N", "")
    for f in doc["outputs"]["facts"]:
        if "n <= N" in f["hypotheses"]:
            f["hypotheses"].remove("n <= N")
            reencode(f)
    forged(tmp_path, doc, capsys, "result.hypotheses", "not what its path gives")


@pytest.mark.slow
def test_a_hierarchy_row_read_as_padding(tmp_path, capsys):
    """A row of the zero-padded X decided as padding (i >= n: its token (0, 0)) in place of a data row."""
    doc = prove(tmp_path, *HIERARCHY)
    k, step = next((k, s) for k, s in enumerate(steps(doc)) if s["kind"] == "rows of X" and " < n" in s["decision"])
    lhs, rhs = step["decision"].split(" < ")
    step["decision"] = f"{rhs} <= {lhs}"
    fact = doc["outputs"]["facts"][step["facts"][0]]
    fact["goal"] = step["decision"]
    reencode(fact)
    forged(tmp_path, doc, capsys, "cvc5 answers sat")


# -- structure: a list element duplicated, two swapped ---------------------------------------------------


def test_a_duplicated_fact(tmp_path, capsys):
    doc = prove(tmp_path, *TRANSPOSE)
    doc["outputs"]["facts"].insert(1, copy.deepcopy(doc["outputs"]["facts"][1]))
    doc["result"]["facts"] += 1  # the count made right: the copy is still cited by no step
    forged(tmp_path, doc, capsys, "cited by no step")


def test_a_duplicated_region(tmp_path, capsys):
    doc = prove(tmp_path, *TAGGED)
    doc["outputs"]["regions"].insert(0, copy.deepcopy(doc["outputs"]["regions"][0]))
    doc["result"]["regions"] += 1
    forged(tmp_path, doc, capsys, "the same path")


def test_two_cases_swapped(tmp_path, capsys):
    doc = prove(tmp_path, *TAGGED)
    cases = doc["outputs"]["cases"]
    cases[0], cases[1] = cases[1], cases[0]  # the regions still name the cases by their old places
    forged(tmp_path, doc, capsys, "region")


def test_two_steps_swapped_in_a_fact_citation(tmp_path, capsys):
    doc = prove(tmp_path, *TAGGED)
    step = next(s for s in steps(doc) if s["kind"] == "token of X")
    step["facts"][0], step["facts"][1] = step["facts"][1], step["facts"][0]  # each fact cited for the other's relation
    forged(tmp_path, doc, capsys, "proves")


def test_two_hypotheses_of_a_fact_swapped(tmp_path, capsys):
    """The order of a fact's hypotheses is part of its recorded script: swapped, the script is not its fact's."""
    doc = prove(tmp_path, *TRANSPOSE)
    fact = next(f for f in doc["outputs"]["facts"] if len(f["hypotheses"]) >= 2)
    fact["hypotheses"][0], fact["hypotheses"][1] = fact["hypotheses"][1], fact["hypotheses"][0]
    forged(tmp_path, doc, capsys, "recorded script")


# -- prove-all ---------------------------------------------------------------------------------------------


def test_prove_all_proves_and_verifies_the_every_size_theorems_of_the_main_job(monkeypatch, capsys, tmp_path):
    from attncert.proofs.cli import prove_all

    monkeypatch.setattr(prove_all, "claim_names", lambda: ["transpose_every_size", "hierarchy_every_size"])
    assert main(["prove-all", "--out-dir", str(tmp_path), "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "hierarchy_every_size: left out, prove-all --all proves them too" in out
    assert any(x.startswith("OK") and f"{tmp_path / 'transpose_every_size.json'} " in x for x in out.splitlines())
    assert "1 of 1 certificates verified" in out
    assert not (tmp_path / "hierarchy_every_size.json").exists()


@pytest.mark.slow
def test_prove_all_with_all_proves_the_heavier_ones_too(monkeypatch, capsys, tmp_path):
    from attncert.proofs.cli import prove_all

    monkeypatch.setattr(prove_all, "claim_names", lambda: ["relu_every_size", "multihead_every_size"])
    assert main(["prove-all", "--out-dir", str(tmp_path), "--jobs", "1", "--all"]) == 0
    out = capsys.readouterr().out
    assert "left out" not in out and "2 of 2 certificates verified" in out
    assert json.loads((tmp_path / "multihead_every_size.json").read_text())["result"]["holds"] is True


# -- honesty: false only with a confirmed counterexample ---------------------------------------------------


def _mutated(monkeypatch, edit) -> None:
    """transpose_every_size proving a mutant of transpose's template (test_every_size_prover's) instead."""
    from attncert.constructions import linalg
    from attncert.proofs.core.registry import load_claim
    from attncert.proofs.every_size.prove import Spec
    from tests.proofs.every_size.test_every_size_prover import mutant

    claim = load_claim("transpose_every_size").prove.__self__
    spec = claim.spec
    monkeypatch.setattr(claim, "spec", Spec(spec.name, spec.symbols, mutant(linalg.transpose, spec.symbols, edit), spec.reference))


def test_a_template_wrong_past_c_50_is_called_false_with_its_counterexample(monkeypatch, capsys, tmp_path):
    from tests.proofs.every_size.test_every_size_prover import node

    _mutated(monkeypatch, lambda t: node(t, "transpose_source")["params"]["fn"]["params"]["coeffs"]["list"].__setitem__(1, {"size": "c + floor(c, 50)"}))
    assert main(["prove", "transpose", "--for-all", "--every", "r,c", "--out", str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the claim is FALSE: at c = " in err and "run exactly" in err
    c = int(err.split("at c = ")[1].split(",")[0])
    assert c >= 50 and not (tmp_path / "t.json").exists()


def test_a_proof_that_fails_without_a_counterexample_is_unproven_not_false(capsys, tmp_path):
    """matmul with k = 300 fixed: the construction's sums over 300 fixed offsets are more than the normal form writes
    out, so no form is compared; the runs at small sizes find no difference: the claim is unproven, never false."""
    assert main(["prove", "matmul", "--for-all", "--every", "r", "--k", "300", "--c", "20", "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "more than the 256 written out (no counterexample found: unproven, not false)" in err and "FALSE" not in err
    assert not (tmp_path / "m.json").exists()


def test_an_unknown_from_z3_is_no_proof(monkeypatch, capsys, tmp_path):
    """Every fact answered unknown (as on a timeout): nothing is proven, and nothing is called false."""
    from attncert.proofs.every_size import facts

    monkeypatch.setattr(facts, "_z3_answer", lambda script: "unknown")
    assert main(["prove", "transpose", "--for-all", "--every", "r,c", "--out", str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err
    assert "is not proven" in err and "(no counterexample found: unproven, not false)" in err
    assert not (tmp_path / "t.json").exists()


def test_an_unknown_from_cvc5_is_a_refusal(monkeypatch, tmp_path, capsys):
    """The checker's solver answering unknown (its time out) to every fact: verify refuses the true certificate."""
    from attncert.proofs.checkers.every_size import smtlib

    doc = prove(tmp_path, *TRANSPOSE)
    monkeypatch.setattr(smtlib, "cvc5_answer", lambda text, ms=smtlib.TIMEOUT_MS: "unknown")
    forged(tmp_path, doc, capsys, "cvc5 answers unknown (not proven in its time: a refusal)")


def test_fixed_sizes_against_the_hierarchys_hypotheses_are_refused(capsys, tmp_path):
    """d = 5 > D = 4 fixed would make the statement vacuous (its hypothesis d <= D false): refused in one line."""
    argv = ["prove", "hierarchy_every_size", "--every", "N,n", "--D", "4", "--Dv", "4", "--d", "5", "--dv", "2", "--out", str(tmp_path / "h.json")]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == "attncert: error: hierarchy needs d <= D, and d = 5 > D = 4"
