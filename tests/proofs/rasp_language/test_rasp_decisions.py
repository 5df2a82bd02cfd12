"""``rasp_program`` on values that left the exact fields: what prove certifies, and forgeries of what
the old interpreter certified, which verify must refuse.

Before the three-valued decision, ``r = 2 ^ (1/2); r * r == 2`` was certified as exactly False (arb's
== answers False on overlapping balls) and ``min(r*r, 2 + 10^-20)`` as exactly 2 + 10^-20. Such
documents can no longer come out of ``prove``, so they are forged as the old prover wrote them: an
honest certificate of an exact expression with the same output, its expression and statement
rewritten, and the hash sealed again. Truths are worked out by hand (sqrt 2 squared is 2).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.errors import ParseError, UndecidedError
from attncert.exact.limits import Limits
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

CLAIM = load_claims()["rasp_program"]
ROOTS = "r = 2 ^ (1/2);\n"


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "roots.rasp").write_text(ROOTS)
    return tmp_path


def prove(expr: str, expect: str | None = None) -> dict:
    return CLAIM.prove(file="roots.rasp", expr=expr, input=None, expect=expect, e_literal=None)


def outcome(doc: dict, lim: Limits | None = None):
    return verify_bytes(canonical_json(seal(doc)), lim=lim)


def as_old_prover(doc: dict, old_expr: str, new_expr: str) -> dict:
    """An honest exact certificate of old_expr, restated for new_expr with the same output."""
    forged = copy.deepcopy(doc)
    forged["params"]["expr"] = new_expr
    forged["result"]["statement"] = forged["result"]["statement"].replace(repr(old_expr), repr(new_expr))
    assert repr(new_expr) in forged["result"]["statement"]
    return forged


# -- what prove certifies ----------------------------------------------------------------------


def test_a_comparison_decided_from_balls_is_certified_as_an_enclosure(roots: Path):
    doc = prove("r * r < 3", expect="True")
    result = doc["result"]
    assert doc["outputs"]["value"] == {"b": True} and result["holds"] is True and result["equals_expected"] is True
    assert result["relation"] == "enclosure" and result["precision"] == 128 and result["decided_from_enclosures"] is True
    assert "decided from rigorous 128-bit balls, not exactly" in result["statement"]
    assert outcome(doc).status == OK
    exact = prove("1 < 3")
    assert exact["result"]["relation"] == "exact_equal" and "precision" not in exact["result"]


def test_a_gap_below_128_bits_is_certified_at_256(roots: Path):
    doc = prove("min(r*r, 2 + 10^-50) < 2 + 10^-50")
    assert doc["outputs"]["value"] == {"b": True} and doc["result"]["precision"] == 256
    assert outcome(doc).status == OK


def test_an_expected_value_must_be_exact(roots: Path):
    with pytest.raises(ParseError, match="--expect must be exact"):
        prove("r * r < 3", expect="2 ^ (1/2) < 3")
    with pytest.raises(ParseError, match="the output is an enclosure"):
        prove("r * r", expect="2")


def test_an_undecidable_equality_is_refused_not_certified(roots: Path):
    with pytest.raises(UndecidedError, match=r"--eval:1:1: r \* r == 2: .* is not decided"):
        prove("r * r == 2")


# -- forgeries of what the old interpreter certified ----------------------------------------------


def test_the_old_certificate_that_r_squared_is_not_2(roots: Path):
    honest = prove("1 == 2")
    assert honest["outputs"]["value"] == {"b": False} and honest["result"]["relation"] == "exact_equal"
    assert outcome(honest).status == OK
    forged = as_old_prover(honest, "1 == 2", "r * r == 2")
    verdict = outcome(forged)
    assert verdict.status == REJECTED and "does not establish its output" in verdict.reason and "r * r == 2" in verdict.reason


def test_the_old_certificate_of_a_minimum_picked_on_an_undecided_comparison(roots: Path):
    honest = prove("2 + 10^-20")
    assert honest["outputs"]["value"] == {"q": "200000000000000000001/100000000000000000000"}  # 2 + 10^-20
    forged = as_old_prover(honest, "2 + 10^-20", "min(r*r, 2 + 10^-20)")
    assert outcome(forged).status == REJECTED  # the minimum is r*r, a ball around 2, decided from enclosures


def test_a_decided_comparison_relabelled_exact(roots: Path):
    doc = prove("r * r < 3")
    forged = copy.deepcopy(doc)
    result = forged["result"]
    del result["precision"], result["decided_from_enclosures"]
    result["relation"] = "exact_equal"
    result["statement"] = result["statement"].split(" is the recorded output")[0] + " is exactly the recorded output"
    assert outcome(forged).status == REJECTED


def test_a_decided_comparison_with_the_other_answer(roots: Path):
    forged = copy.deepcopy(prove("r * r < 3"))
    forged["outputs"]["value"] = {"b": False}
    assert outcome(forged).status == REJECTED


def test_the_recorded_precision_is_checked(roots: Path):
    doc = prove("r * r < 3")
    lower = copy.deepcopy(doc)
    lower["result"]["precision"] = 256
    assert outcome(lower).status == REJECTED
    above = copy.deepcopy(doc)
    above["result"]["precision"] = 1 << 20
    verdict = outcome(above)
    assert verdict.status == BAD and "--max-precision" in verdict.reason
    # a certificate whose comparisons need 256 bits, verified with 128 at most: over the limit, not false
    needs_more = prove("min(r*r, 2 + 10^-50) < 2 + 10^-50")
    verdict = outcome(needs_more, Limits(max_precision=128))
    assert verdict.status == BAD and "--max-precision" in verdict.reason


# -- the command line: one line, exit codes ------------------------------------------------------


def cli(args: list[str], cwd: Path) -> tuple[int, list[str]]:
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "attncert", *args], cwd=cwd, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert time.monotonic() - t0 < 120
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out[-2000:]
    return done.returncode, out.strip().splitlines()


def test_the_command_line_refuses_certifies_and_verifies(roots: Path):
    code, lines = cli(["prove", "rasp_program", "--file", "roots.rasp", "--expr", "r*r == 2", "--out", "eq.json"], roots)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("attncert: error: --eval:1:1: r*r == 2: ") and "--max-precision" in lines[0]
    assert not (roots / "eq.json").exists()
    code, lines = cli(["prove", "rasp_program", "--file", "roots.rasp", "--expr", "r*r < 3", "--out", "lt.json"], roots)
    assert code == 0
    doc = json.loads((roots / "lt.json").read_text())
    assert doc["outputs"]["value"] == {"b": True} and doc["result"]["relation"] == "enclosure"
    forged = as_old_prover(prove("1 == 2"), "1 == 2", "r * r == 2")
    (roots / "forged.json").write_bytes(canonical_json(seal(forged)) + b"\n")
    code, lines = cli(["verify", "lt.json", "forged.json"], roots)
    assert code == 3 and len(lines) == 3 and lines[2].startswith("2 certificates: ")  # the forgery is REJECTED, exit 3
    assert lines[0].startswith("OK") and "enclosure" in lines[0]
    assert lines[1].startswith("REJECTED") and "does not establish its output" in lines[1]
    code, lines = cli(["rasp", "roots.rasp", "--eval", "min(r*r, 2 + 10^-20)"], roots)
    assert code == 0 and len(lines) == 3 and lines[0].startswith("# enclosure") and lines[1].startswith("# decided from enclosures")
    assert lines[2].startswith("[2.00000000000000000") and "+/-" in lines[2]  # r*r, a ball around 2: not 2 + 10^-20
