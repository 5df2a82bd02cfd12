"""Issue 30, round three (S1-S6a): compiled programs as attncert's evaluator defines them.

Booleans in a numerical column, ordered comparisons between values of two kinds, the values the
compiler calls a program's functions with, and the size of a compositional proof. Every expected value
is derived from the definitions (attncert's evaluator, constructions/rasp/evaluate.py: booleans are tokens
to a categorical Aggregate and 0/1 to a numerical one; an ordered Comparison orders values of one kind;
numeric tokens are exact rationals), never read from the code under test. The forgeries are ordinary
prove runs whose documents are then edited consistently and re-sealed: their claims are false, and
verify must not say OK."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

from attncert.exact import ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.compiled import program as P
from attncert.proofs.core.verify import OK, verify_bytes

pytest.importorskip("tracr")
HERE = "tests.proofs.compiled.test_compositional_kinds"


def status(doc: dict) -> str:
    doc = copy.deepcopy(doc)
    doc.pop("sha256", None)
    return verify_bytes(canonical_json(seal(doc))).status


def prove(name: str, method: str = "compositional", vocab: str = "a,b", n: int = 3) -> dict:
    return P.prove(vocab, n, "every", False, 100_000, 10, program=f"{HERE}:{name}", method=method)


def node(doc: dict, label: str) -> dict:
    return next(n for n in doc["construction"]["program"]["program"]["nodes"] if n["label"] == label)


# -- programs (module level: --program imports them) ------------------------------------------------------------


def mean_of_numbers_str():
    """b is 1 at token a, 0 at b (numbers); the categorical Aggregate selects the keys holding the query's own
    token, which all hold one number, so RASP gives that number; str of it."""
    from tracr.rasp import rasp

    b = rasp.numerical(rasp.Map(lambda x: 1 if x == "a" else 0, rasp.tokens))
    agg = rasp.categorical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), b, default=0))
    return rasp.categorical(rasp.Map(lambda v: str(v), agg))


def bool_vs_number_lt():
    from tracr.rasp import rasp

    m = rasp.categorical(rasp.Map(lambda x: True if x == "a" else 2, rasp.tokens))
    return rasp.categorical(rasp.SelectorWidth(rasp.Select(m, m, rasp.Comparison.LT)))


def string_vs_number_geq():
    from tracr.rasp import rasp

    one = rasp.categorical(rasp.Map(lambda x: 1, rasp.tokens))
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, one, rasp.Comparison.GEQ)))


def copy_by_token():
    from tracr.rasp import rasp

    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.tokens, default=None))


# -- S1: a categorical Aggregate of booleans held as a number ---------------------------------------------------


def test_forgery_booleans_recorded_under_a_categorical_mean_is_refused():
    """An honest certificate for b in {0, 1} (numbers), re-recorded with b in {False, True} and str's table
    extended to what str gives on them. By RASP's definition the recorded program gives 'True' at ['a'] (the
    categorical Aggregate selects the boolean True; str(True) = 'True'), while the model's output, unchanged,
    decodes '1': the claim "every input" is false. Before issue 30 the proof read b's booleans as 0/1 and
    said OK; the rebuild recompiled the same weights."""
    from attncert.constructions.rasp.evaluate import evaluate
    from attncert.constructions.tracr.program import program_from_json, to_rasp

    honest = prove("mean_of_numbers_str")
    assert honest["result"]["holds"] and honest["result"]["may_be_undefined"] == [] and status(honest) == OK
    forged = copy.deepcopy(honest)
    program = forged["construction"]["program"]["program"]
    (b,) = [n for n in program["nodes"] if n["op"] == "map" and n["encoding"] == "numerical"]
    assert sorted(b["table"], key=str) == [[[{"s": "a"}], {"q": "1"}], [[{"s": "b"}], {"q": "0"}]]
    b["table"] = [[[{"s": "a"}], {"b": True}], [[{"s": "b"}], {"b": False}]]
    out = node(forged, program["output"])
    # entries in the order a recorded program keeps them (constructions/tracr/program.py, program_to_json)
    out["table"] = sorted(out["table"] + [[[{"b": True}], {"s": "True"}], [[{"b": False}], {"s": "False"}]], key=repr)
    # the recorded program, evaluated by its definition (the tables looked up), gives 'True' at ['a']
    recorded = program_from_json(forged["construction"]["program"]["program"])
    assert evaluate(to_rasp(recorded), ["a"]) == ["True"]
    assert {"s": "True"} not in forged["construction"]["model"]["output_values"]["output"]
    assert status(forged) != OK


def test_a_boolean_categorical_aggregate_is_refused_by_the_compiler_in_one_line():
    from tracr.rasp import rasp

    from attncert.constructions import rasp as arasp
    from attncert.constructions.compiler import compile_graph
    from attncert.constructions.tracr.program import from_tracr, to_rasp

    b = rasp.numerical(rasp.Map(lambda x: x == "a", rasp.tokens))
    agg = rasp.categorical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), b, default=0))
    with pytest.raises(ParseError, match="may hold booleans"):
        compile_graph(arasp.to_graph(to_rasp(from_tracr(agg))), 3, "categorical", ["a", "b"])
    # numerical, the same Aggregate is RASP's mean of 0 and 1, which the head computes: it compiles and is checked
    num = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), b, default=0))
    assert compile_graph(arasp.to_graph(to_rasp(from_tracr(num))), 3, "categorical", ["a", "b"]).checked is not None


# -- S2 and S5: ordered comparisons between kinds ---------------------------------------------------------------


def test_the_evaluator_refuses_an_ordered_comparison_of_two_kinds_whatever_the_order():
    """The definition: values are ordered within one kind. Before, whether True < 2 raised depended on which
    of two equal values (True, 1) a set kept: with 1 first the input was evaluated as if True were 1."""
    from attncert.constructions import rasp
    from attncert.constructions.rasp.evaluate import EvaluationError, evaluate

    m = rasp.Map(lambda x: {"a": True, "b": 2, "c": 1}[x], rasp.tokens)
    width = rasp.SelectorWidth(rasp.Select(m, m, rasp.Comparison.LT))
    for xs in (["a", "b"], ["b", "a"], ["c", "a", "b"], ["a", "c"]):
        with pytest.raises(EvaluationError, match="boolean and number"):
            evaluate(width, xs)
    assert evaluate(width, ["b", "c", "b"]) == [1, 0, 1]  # one kind: 1 < 2, so each 2 counts the one key holding 1
    # EQ and NEQ compare as Python does: True == 1, so at ['a', 'c'] each query selects both keys
    assert evaluate(rasp.SelectorWidth(rasp.Select(m, m, rasp.Comparison.EQ)), ["a", "c"]) == [2, 2]


def test_forgery_an_ordered_comparison_of_two_kinds_claimed_for_every_input_is_refused():
    """The honest certificate records where RASP's evaluation raises (['a', 'b'] orders True against 2); the
    same document claiming "every input" (may_be_undefined emptied: what the prover wrote before) is false."""
    honest = prove("bool_vs_number_lt")
    undefined = honest["result"]["may_be_undefined"]
    assert any("boolean against number" in u for u in undefined) and status(honest) == OK
    forged = copy.deepcopy(honest)
    forged["result"]["may_be_undefined"] = []
    assert status(forged) != OK


def test_an_ordered_comparison_defined_on_no_input_is_one_line_and_exit_2():
    with pytest.raises(ParseError, match="no input is in the program's domain"):
        prove("string_vs_number_geq", "exhaustive", n=2)
    argv = ["prove", "compiled", "--program", f"{HERE}:string_vs_number_geq", "--vocab", "a,b", "--max-seq-len", "2",
            "--lengths", "every", "--method", "compositional", "--out", "-"]
    run = subprocess.run([sys.executable, "-m", "attncert", *argv], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr


# -- S4: the values functions are called with ------------------------------------------------------------------


def test_a_static_boolean_is_passed_to_functions_as_a_boolean():
    """s = (index == 0) is static and boolean; str(s) + token at position 0 of ['a', 'b'] is 'Truea' by the
    definition (a map receives the boolean). The compiler tabulated the map on 0 and 1 (giving '1a'), so its
    own check refused the model; now the table is the evaluator's, and the model equals the evaluation."""
    from attncert.constructions import rasp
    from attncert.constructions.compiler import compile_graph
    from attncert.constructions.rasp.evaluate import evaluate

    s = rasp.Map(lambda i: i == 0, rasp.indices)
    out = rasp.categorical(rasp.SequenceMap(lambda b, x: str(b) + x, s, rasp.tokens))
    assert evaluate(out, ["a", "b"]) == ["Truea", "Falseb"]
    model = compile_graph(rasp.to_graph(out), 2, "categorical", ["a", "b"])
    assert model.checked.exhaustive and "Truea" in model.output_values["output"]


# -- the vocabulary's order -------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["exhaustive", "compositional"])
def test_a_vocabulary_not_in_column_order_is_recorded_in_it(method):
    """The model's one-hot token columns are in repr order; the certificate records its vocabulary, and
    enumerates its inputs, in that order, so verify accepts it (given as b,a it was refused)."""
    doc = prove("copy_by_token", method, vocab="b,a", n=2)
    assert doc["inputs"]["vocab"] == [{"s": "a"}, {"s": "b"}] == doc["construction"]["model"]["vocab"]
    assert doc["result"]["holds"] and status(doc) == OK


# -- S6a: the proof's budget ------------------------------------------------------------------------------------


def test_the_configurations_are_counted_before_they_are_built():
    """copy_by_token over 3 tokens to length 3: its head has 3 x 3 key and 3 x 3 query configurations (position
    and token each), 81 in all; under a pair limit of 80 the proof refuses in one line, before it builds any: a limit
    refusal (LimitExceeded, BAD in verify), not a program outside the proof's class (Unsupported)."""
    from attncert.exact.limits import Limits, limits
    from attncert.exact import LimitExceeded
    from attncert.proofs.checkers.compiled.every_input import result_of

    doc = prove("copy_by_token", vocab="a,b,c", n=3)
    (step,) = doc["outputs"]["proof"]["steps"]
    assert step["query_configurations"] * step["key_configurations"] == 81
    model, tables = doc["construction"]["model"], doc["construction"]["program"]["program"]
    with limits(Limits(max_pairs=80)), pytest.raises(LimitExceeded, match="81 query-key configurations"):
        result_of(model, tables, 3)
    with limits(Limits(max_pairs=81)):
        assert result_of(model, tables, 3)[1]["holds"]
