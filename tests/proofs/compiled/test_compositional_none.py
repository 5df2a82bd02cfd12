"""Issue 30, part 2: None in the keys and queries of the compositional proof.

RASP calls a callable predicate on None (a map passes None through without a call; a predicate does
not), and TRUE and FALSE select whatever the values. The proof used to skip every query-key pair
holding None, and the tabulation left None out of the tables, so programs whose compiled model is
wrong on most inputs were "proven for all 14 inputs". Now the compiler refuses a predicate that
selects None (its one-hot scores cannot), the tables hold the predicate on None wherever a key or
query can hold it, the proof checks those pairs and refuses a table without them, and a Comparison
meeting None (where RASP raises) is recorded as a place the program may be undefined.

The expected values come from the definitions of the programs (tests/proofs/tracr/programs.py), never from
the code under test."""

from __future__ import annotations

import copy
import itertools
import subprocess
import sys

import pytest

from attncert.exact import QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.errors import AttncertError
from attncert.proofs.compiled import program as P
from attncert.proofs.checkers.forward import forward
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

pytest.importorskip("tracr")
CLAIM = load_claim("compiled_program")

SELECTING_NONE = ["width_of_none_keys", "width_of_everything", "mean_over_everything"]


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def prove(program: str, method: str, causal: bool = False, n: int = 3) -> dict:
    return P.prove("a,b", n, "every", causal, 100_000, 10, program=f"tests.proofs.tracr.programs:{program}", method=method)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("method", ["compositional", "exhaustive"])
@pytest.mark.parametrize("program", SELECTING_NONE)
def test_a_predicate_that_selects_none_is_refused_by_both_methods(program, method, causal):
    with pytest.raises(AttncertError, match="selects a key holding None"):
        prove(program, method, causal)


def test_the_refusal_is_one_line_and_exit_code_2():
    argv = ["prove", "compiled", "--program", "tests.proofs.tracr.programs:width_of_everything", "--vocab", "a,b",
            "--max-seq-len", "3", "--lengths", "every", "--method", "compositional", "--out", "-"]
    run = subprocess.run([sys.executable, "-m", "attncert.proofs.cli", *argv], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "None" in run.stderr and "Traceback" not in run.stderr


@pytest.fixture(scope="module")
def not_none() -> dict:
    """Select(none_where_a, tokens, k is not None): the predicate is called on None and is false there."""
    return prove("width_of_keys_not_none", "compositional", n=4)


def _select_table(doc: dict) -> dict:
    program = doc["construction"]["program"]["program"]
    (node,) = [n for n in program["nodes"] if n["op"] == "select" and "table" in n and n["args"][1] == "tokens"]
    return node


def test_a_predicate_false_on_none_is_proven_and_its_table_holds_none(not_none):
    res = not_none["result"]
    assert res["holds"] and res["may_be_undefined"] == [] and res["inputs"] == 2 + 4 + 8 + 16
    table = _select_table(not_none)["table"]
    none_pairs = [(args, v) for args, v in table if args[0] is None]
    assert {args[1]["s"] for args, _ in none_pairs} == {"a", "b"} and all(v == {"b": False} for _, v in none_pairs)
    assert status(not_none) == OK
    # the model, run on every input, against the definition: at each position, how many tokens are not "a"
    model = not_none["construction"]["model"]
    col = model["outputs"]["output"][0]
    for n in range(1, 5):
        for xs in itertools.product("ab", repeat=n):
            out = forward(model, [{"s": x} for x in xs], QQ)[col][1:]
            assert out == [sum(x != "a" for x in xs)] * n


def _claiming_it_holds(doc: dict) -> dict:
    forged = copy.deepcopy(doc)
    forged["result"].update(holds=True, problems=[], may_be_undefined=[])
    return forged


def test_forgery_the_tables_of_a_predicate_true_on_none_beside_the_model_that_never_selects_it_fails(not_none):
    """The recorded program made the one of `lambda k, q: True` on the keys that hold None (RASP counts them),
    the model left as compiled for `k is not None` (it never selects them): a false claim, resealed as holding."""
    forged = copy.deepcopy(not_none)
    node = _select_table(forged)
    node["table"] = [[args, {"b": True}] if args[0] is None else [args, v] for args, v in node["table"]]
    forged = _claiming_it_holds(forged)
    assert any("do not separate" in p for p in CLAIM.check(forged)), CLAIM.check(forged)
    assert status(forged) == REJECTED


def test_forgery_the_tables_without_the_none_pairs_fails(not_none):
    """As the old tabulation recorded them: the proof needs the pairs, and a missing entry is refused, never skipped."""
    forged = copy.deepcopy(not_none)
    node = _select_table(forged)
    node["table"] = [[args, v] for args, v in node["table"] if args[0] is not None]
    problems = CLAIM.check(forged)
    assert any("has no entry" in p and "which the proof needs" in p for p in problems), problems
    assert status(forged) == REJECTED


def test_the_exhaustive_route_tabulates_the_predicate_on_none_and_verifies():
    doc = prove("width_of_keys_not_none", "exhaustive")
    assert doc["result"]["holds"] and doc["result"]["inputs"] == 14
    assert any(args[0] is None for args, _ in _select_table(doc)["table"])
    assert status(doc) == OK


def test_a_comparison_on_none_is_recorded_as_where_the_program_may_be_undefined():
    """Select(shifted, tokens, EQ): position 0's key is None on every input, where RASP's evaluation raises."""
    doc = prove("width_comparing_none", "compositional")
    res = doc["result"]
    assert res["holds"] and len(res["may_be_undefined"]) == 1 and "EQ to None" in res["may_be_undefined"][0]
    line = P.summary(doc)
    assert "not shown to be all 14" in line and "for all" not in line
    assert status(doc) == OK
    assert status(_claiming_it_holds(doc)) == REJECTED  # claiming it defined on every input


def test_a_static_selection_of_one_key_is_shown_defined_everywhere():
    """tracr's issue #25 program: Select(indices, indices, q == k + 1) selects one key at most at every position,
    so the categorical mean of tokens is always a token or the default (no mean of two symbols)."""
    doc = prove("shift_none", "compositional", n=4)
    assert doc["result"]["holds"] and doc["result"]["may_be_undefined"] == []
