"""The ``rasp_program`` claim: a RASP program's exact output on an input, certified and re-checked.

A round trip through the command line; self-consistent forgeries (well-formed, correctly hashed
documents whose claim is false), which verify must answer REJECTED or BAD; and hostile programs
(endless recursion, huge ranges and powers, deep nesting, endless loops, missing files, syntax
errors), given to ``attncert rasp``, ``prove`` or recorded in a certificate for ``verify``, which
must each give one line and exit 2, never a traceback. Expected values are computed here from the
definitions (plain Python fractions), not by attncert.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import Limits
from attncert.proofs.cli import main
from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes

CLAIM = load_claims()["rasp_program"]

LIB = """# the fraction of positions up to here that hold x
def frac_prevs(seq, x) {
    prevs = select(indices, indices, <=);
    return aggregate(prevs, indicator(seq == x));
}
"""
MAIN = """load "lib";
frac_a = frac_prevs(tokens, "a");
"""
WORD = "abcaab"


def frac_prevs(word: str, x: str) -> list[Fraction]:
    """The definition: at position i, the share of positions 0..i that hold x."""
    return [Fraction(word[: i + 1].count(x), i + 1) for i in range(len(word))]


def tagged(q: Fraction) -> dict:
    """A rational as certificates write it: {"q": "p/q"} in lowest terms, "p" when q = 1."""
    return {"q": str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.rasp").write_text(LIB)
    (tmp_path / "main.rasp").write_text(MAIN)
    return tmp_path


@pytest.fixture
def genuine(program: Path) -> dict:
    doc = CLAIM.prove(file="main.rasp", expr="frac_a", input=WORD, expect=None, e_literal=None)
    assert status(doc) == OK
    return doc


# -- the round trip --------------------------------------------------------------------------


def test_prove_and_verify_through_the_cli_never_reading_the_disk_again(program: Path, capsys):
    expect = spelled(frac_prevs(WORD, "a"))
    code = main(["prove", "rasp_program", "--file", "main.rasp", "--expr", "frac_a", "--input", WORD, "--expect", expect, "--out", "c.json"])
    assert code == 0
    doc = json.loads((program / "c.json").read_text())
    assert doc["outputs"]["value"] == [tagged(q) for q in frac_prevs(WORD, "a")]
    assert doc["reference"]["expected"] == doc["outputs"]["value"]
    assert doc["result"]["holds"] is True and doc["result"]["equals_expected"] is True and doc["result"]["relation"] == "exact_equal"
    assert doc["inputs"]["source"] == {"text": MAIN, "sha256": sha(MAIN)}
    assert doc["inputs"]["loaded"] == [{"name": "lib.rasp", "text": LIB, "sha256": sha(LIB)}]
    assert doc["inputs"]["tokens"] == [{"s": c} for c in WORD]
    assert doc["params"] == {"file": "main.rasp", "expr": "frac_a", "input": WORD, "expect": expect}
    assert sha(MAIN) in doc["result"]["statement"] and "equals the expected value" in doc["result"]["statement"]
    # The files on disk change and move away: verify reads only the recorded texts.
    (program / "lib.rasp").write_text("def frac_prevs(seq, x) { return 0; }\n")
    (program / "main.rasp").unlink()
    capsys.readouterr()
    assert main(["verify", "c.json"]) == 0
    assert capsys.readouterr().out.startswith("OK")


def test_an_output_that_differs_from_the_expected_value_is_certified_as_not_holding(program: Path, capsys):
    code = main(["prove", "rasp_program", "--file", "main.rasp", "--expr", "frac_a", "--input", WORD, "--expect", "[1, 1, 1, 1, 1, 1]", "--out", "no.json"])
    assert code == 1
    doc = json.loads((program / "no.json").read_text())
    assert doc["result"]["holds"] is False and doc["result"]["equals_expected"] is False
    assert "does NOT equal" in doc["result"]["statement"]
    capsys.readouterr()
    assert main(["verify", "no.json"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("DOES-NOT-HOLD ") and "genuine; the claim does not hold" in out


def test_without_expect_the_claim_is_the_output_itself(genuine: dict):
    assert genuine["result"]["holds"] is True and "equals_expected" not in genuine["result"]
    assert genuine["reference"] == {}
    assert genuine["construction"]["kind"] == "sequence"
    assert genuine["construction"]["size"]["length"] == len(WORD)


def test_plain_values_and_the_default_example(program: Path):
    doc = CLAIM.prove(file="main.rasp", expr="[0.1 + 0.2, \"x\", True]", input=None, expect="[3/10, \"x\", True]", e_literal=None)
    assert doc["outputs"]["value"] == [tagged(Fraction(3, 10)), {"s": "x"}, {"b": True}]
    assert doc["result"]["holds"] and doc["construction"] == {"kind": "value"} and doc["inputs"]["tokens"] is None
    example = CLAIM.prove(**CLAIM.defaults())
    word = CLAIM.defaults()["input"]
    assert example["outputs"]["value"] == [tagged(Fraction(word.count(c))) for c in word]  # the histogram
    assert status(example) == OK


def test_the_cost_model_counts_the_input_and_refuses_a_long_one():
    assert CLAIM.estimate({"input": "[1, 2, 3]"}).positions == 3
    assert CLAIM.estimate({"input": "hello"}).positions == 5
    from attncert.proofs.core.cost import refuse_over_limits

    with pytest.raises(LimitExceeded, match="--max-positions"):
        refuse_over_limits(CLAIM, {"input": "a" * 40_000}, Limits())


# -- forgeries: well-formed, hashed, consistent where they can be, and false ---------------------


def restated(doc: dict) -> dict:
    """The statement rewritten for the document's current source, as a forger would."""
    old = doc["result"]["statement"]
    start = old.index("sha256 ") + len("sha256 ")
    doc["result"]["statement"] = old[:start] + doc["inputs"]["source"]["sha256"] + old[start + 64 :]
    return doc


def test_a_wrong_output_with_a_consistent_hash(genuine: dict):
    doc = copy.deepcopy(genuine)
    doc["outputs"]["value"][1] = tagged(Fraction(1, 3))
    assert status(doc) == REJECTED


def test_a_source_changed_with_its_sha256_updated(genuine: dict):
    doc = copy.deepcopy(genuine)
    text = MAIN.replace('"a"', '"b"')
    doc["inputs"]["source"] = {"text": text, "sha256": sha(text)}
    assert status(restated(doc)) == REJECTED  # the recorded output is the fraction of a's, not of b's


def spelled(qs: list[Fraction]) -> str:
    return "[" + ", ".join(f"{q.numerator}/{q.denominator}" for q in qs) + "]"


def test_an_expected_value_that_differs_but_holds_true(program: Path):
    right = frac_prevs(WORD, "a")
    doc = CLAIM.prove(file="main.rasp", expr="frac_a", input=WORD, expect=spelled(right), e_literal=None)
    assert doc["result"]["holds"] is True
    wrong = right[:-1] + [right[-1] + 1]
    doc["params"]["expect"] = spelled(wrong)
    doc["reference"]["expected"] = [tagged(q) for q in wrong]
    doc["result"]["statement"] = doc["result"]["statement"].replace(spelled(right), spelled(wrong))
    assert spelled(wrong) in doc["result"]["statement"]
    assert status(doc) == REJECTED


def test_a_loaded_text_swapped_with_its_sha256_recomputed(genuine: dict):
    doc = copy.deepcopy(genuine)
    text = LIB.replace("indices, indices, <=", "indices, indices, <")  # strict: other fractions
    doc["inputs"]["loaded"][0].update(text=text, sha256=sha(text))
    assert status(doc) == REJECTED


def test_a_sha256_that_is_not_its_text(genuine: dict):
    doc = copy.deepcopy(genuine)
    doc["inputs"]["loaded"][0]["sha256"] = sha(LIB + " ")
    problems = CLAIM.verify(doc)
    assert any("not the sha256 of its recorded text" in p for p in problems)
    assert status(doc) == REJECTED


def test_a_loaded_file_left_out_is_not_read_from_the_disk(genuine: dict, program: Path):
    doc = copy.deepcopy(genuine)
    doc["inputs"]["loaded"] = []
    assert (program / "lib.rasp").is_file()  # on disk, yet verify must not read it
    outcome = verify_bytes(canonical_json(seal(doc)))
    assert outcome.status == BAD and "cannot load 'lib'" in outcome.reason


def test_an_unused_file_recorded_as_loaded(genuine: dict):
    doc = copy.deepcopy(genuine)
    doc["inputs"]["loaded"].append({"name": "extra.rasp", "text": "x = 1;\n", "sha256": sha("x = 1;\n")})
    assert status(doc) == REJECTED


def test_an_input_changed_with_its_tokens(genuine: dict):
    doc = copy.deepcopy(genuine)
    doc["params"]["input"] = "bbcaab"
    doc["inputs"]["tokens"] = [{"s": c} for c in "bbcaab"]
    doc["result"]["statement"] = doc["result"]["statement"].replace(repr(WORD), repr("bbcaab"))
    assert status(doc) == REJECTED  # the output is that of abcaab


def test_an_e_literal_slipped_into_the_parameters(genuine: dict):
    doc = copy.deepcopy(genuine)
    doc["params"]["e_literal"] = "2.718"
    assert status(doc) == REJECTED


def test_a_recorded_program_that_does_not_hold_a_value(genuine: dict):
    doc = copy.deepcopy(genuine)
    doc["params"]["expr"] = "frac_prevs"  # a function: nothing to certify
    outcome = verify_bytes(canonical_json(seal(doc)))
    assert outcome.status == BAD and "a function" in outcome.reason


# -- hostile programs: one line, exit 2, no traceback, whatever the command ----------------------

HOSTILE = {
    "endless recursion": ("def f(x) { return f(x) + 1; }\ny = f(1);\n", "--max-recursion"),
    "mutual recursion": ("def f(x) { return g(x); }\ndef g(x) { return f(x); }\ny = f(1);\n", "--max-recursion"),
    "huge range": ("r = range(1000000000);\n", "--max-entries"),
    "huge power": ("p = 2 ^ (10 ^ 9);\n", "--max-digits"),
    "repeated squaring": ("x = 3;\nfor i in range(64) { x = x * x; }\n", "--max-digits"),
    "deep nesting": ("y = " + "-" * 3000 + "1;\n", "--max-recursion"),
    "deep sum": ("y = " + "1 + " * 3000 + "1;\n", "--max-recursion"),
    "endless loop": ("x = range(1000);\nfor i in x { for j in x { y = i + j; } }\n", "--max-steps"),
    "shared list doubling": ("x = [1];\nfor i in range(100) { x = [x, x]; }\n", "--max-steps"),
    "string doubling": ('s = "ab";\nfor i in range(64) { s = s + s; }\n', "--max-entries"),
    "missing load": ('load "nowhere";\n', "cannot load 'nowhere'"),
    "syntax error": ("x = (1 + ;\n", "unexpected"),
}


def cli(args: list[str], cwd: Path) -> tuple[int, str]:
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "attncert", *args], cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert time.monotonic() - t0 < 30
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out[-2000:]
    lines = out.strip().splitlines()
    assert len(lines) == 1, out[-2000:]
    return done.returncode, lines[0]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_programs_through_rasp_prove_and_verify(name: str, genuine: dict, program: Path):
    text, says = HOSTILE[name]
    (program / "hostile.rasp").write_text(text)
    for args in (["rasp", "hostile.rasp", "--eval", "1"], ["prove", "rasp_program", "--file", "hostile.rasp", "--expr", "1", "--out", "h.json"]):
        code, line = cli(args, program)
        assert code == 2 and line.startswith("attncert: error: ") and says in line, (args, line)
    assert not (program / "h.json").exists()
    # The same program recorded in a certificate (its sha256 recomputed): verify refuses it as BAD.
    doc = copy.deepcopy(genuine)
    doc["inputs"]["source"] = {"text": text, "sha256": sha(text)}
    (program / "hostile.json").write_bytes(canonical_json(seal(restated(doc))) + b"\n")
    code, line = cli(["verify", "hostile.json"], program)
    assert code == 2 and line.startswith("BAD") and says in line, line


def test_a_missing_file_oversized_source_and_hostile_input(program: Path):
    code, line = cli(["prove", "rasp_program", "--file", "nowhere.rasp", "--expr", "1"], program)
    assert code == 2 and "cannot read nowhere.rasp" in line
    code, line = cli(["rasp", "main.rasp", "--eval", "frac_a", "--input", "[" * 100_000], program)
    assert code == 2 and "nested too deeply" in line
    code, line = cli(["rasp", "main.rasp", "--eval", "frac_a", "--input", "ab", "--max-source", "40"], program)
    assert code == 2 and "--max-source" in line
    code, line = cli(["prove", "rasp_program", "--file", "main.rasp", "--expr", "frac_a", "--input", "a" * 40_000], program)
    assert code == 2 and "--max-positions" in line


def test_raising_the_nesting_limit_past_pythons_stack_is_still_one_line(program: Path):
    (program / "deep.rasp").write_text("def f(x) { return f(x) + 1; }\ny = f(1);\n")
    code, line = cli(["rasp", "deep.rasp", "--eval", "1", "--max-recursion", "100000"], program)
    assert code == 2 and "Python's stack" in line and "--max-recursion" in line


def test_the_limits_are_the_verifiers_own(genuine: dict, program: Path):
    (program / "c.json").write_bytes(canonical_json(seal(genuine)) + b"\n")
    code, line = cli(["verify", "c.json", "--max-steps", "20"], program)
    assert code == 2 and line.startswith("BAD") and "--max-steps" in line
    assert cli(["verify", "c.json"], program)[0] == 0
