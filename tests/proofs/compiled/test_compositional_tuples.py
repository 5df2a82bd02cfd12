"""Tuples holding None, and None as an output, in the compiled_program checks (round-4 audit, holes 1, 2, 5).

The compositional proof decides every Select on pairs of recorded values; here each decision is compared
with attncert's RASP evaluation (constructions/rasp/evaluate.py) of a two-token program holding the pair,
never with the code under test: where the evaluation raises, the proof must call the pair undefined, and
elsewhere the widths must agree. Inside a tuple None is a value of its own kind (it used to read as the
1-tuple ("n",)), True equals 1, and an ordered comparison at elements of two kinds raises.

The exhaustive check decodes all-zero output columns as None, as the compiler's check writes it; a
certificate whose recorded RASP output is relabelled at a None position, or to None, is refused."""

from __future__ import annotations

import copy

import pytest

from attncert.constructions.rasp.values import encode_value
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.programs import Program, value
from attncert.proofs.compiled import program as P
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

pytest.importorskip("tracr")

#: Values a map may give: None and 1-tuples holding "n" (the old collision), booleans against numbers at the top
#: level and inside tuples, tuples differing first at elements of two kinds, prefixes, nested tuples.
VALUES = [None, True, 1, 2, "n", (None,), (("n",),), ("n",), (1, "x"), (1, None), (True,), (1,), (), ((None,),), ((1,),)]
PREDICATES = ["EQ", "NEQ", "LT", "LEQ", "GT", "GEQ"]


def _pair_program(k, q, pred: str):
    from tracr.rasp import rasp

    m = rasp.categorical(rasp.Map(lambda t: k if t == "a" else q, rasp.tokens))
    return rasp.numerical(rasp.SelectorWidth(rasp.Select(m, m, getattr(rasp.Comparison, pred))))


def _recorded(k, q, pred: str) -> Program:
    """The program as the proof reads it: the map tabulated on the two tokens, the Select with its predicate."""
    table = [[[{"s": "a"}], encode_value(k)], [[{"s": "b"}], encode_value(q)]]
    return Program({"nodes": [
        {"label": "t", "op": "tokens", "args": []},
        {"label": "m", "op": "map", "args": ["t"], "table": table},
        {"label": "s", "op": "select", "args": ["m", "m"], "predicate": pred},
        {"label": "w", "op": "selector_width", "args": ["s"]},
    ], "output": "w"})


@pytest.mark.parametrize("pred", PREDICATES)
def test_each_select_decision_is_the_evaluators(pred):
    from attncert.constructions.rasp.evaluate import EvaluationError, evaluate
    from attncert.constructions.tracr.program import from_tracr, to_rasp

    checked = undefined = 0
    for i, k in enumerate(VALUES):
        for q in VALUES[i + 1:]:
            try:
                want = evaluate(to_rasp(from_tracr(_pair_program(k, q, pred))), ["a", "b"])
            except EvaluationError:
                want = None
            prog = _recorded(k, q, pred)
            K, Q = value(encode_value(k)), value(encode_value(q))
            got = {(x, y): prog.selects("s", x, y) for x in (K, Q) for y in (K, Q)}
            if want is None:
                assert got[K, Q] is None and got[Q, K] is None, (k, q, pred, got)
                undefined += 1
            else:
                # the width at a position: the keys (both positions) its query selects
                assert [got[K, K] + got[Q, K], got[K, Q] + got[Q, Q]] == list(want), (k, q, pred)
                checked += 1
    assert checked and (undefined if pred not in ("EQ", "NEQ") else True)


def test_none_inside_a_tuple_is_not_a_tuple():
    none, n = value({"t": [None]}), value({"t": [{"t": [{"s": "n"}]}]})
    prog = _recorded((None,), (("n",),), "EQ")
    assert prog.selects("s", none, n) is False and prog.selects("s", none, none) is True
    assert _recorded((None,), (("n",),), "LT").selects("s", none, n) is None


def _shift_by_one():
    from tracr.rasp import rasp

    prev = rasp.Map(lambda i: i - 1, rasp.indices)
    return rasp.categorical(rasp.Aggregate(rasp.Select(rasp.indices, prev, rasp.Comparison.EQ), rasp.tokens))


def _status(doc: dict) -> str:
    doc = copy.deepcopy(doc)
    doc.pop("sha256", None)
    return verify_bytes(canonical_json(seal(doc))).status


@pytest.fixture(scope="module")
def shifted() -> dict:
    return P.prove("a,b", 2, "fixed", False, 100_000, 10, program=f"{__name__}:_shift_by_one", method="exhaustive")


def test_none_outputs_decode_from_all_zero_columns(shifted):
    ref = shifted["reference"]["rasp"]
    # RASP's shift by one: None at the first position of every input, the previous token after it
    assert [[ref["values"][i] for i in row] for row in ref["outputs"][0]] == [[None, {"s": x}] for x in "aabb"]
    assert shifted["result"]["holds"] and _status(shifted) == OK


@pytest.mark.parametrize("where", [0, 1], ids=["none_relabelled_a_value", "a_value_relabelled_none"])
def test_a_recorded_output_relabelled_at_or_to_none_is_refused(shifted, where):
    doc = copy.deepcopy(shifted)
    values = doc["reference"]["rasp"]["values"]
    row = doc["reference"]["rasp"]["outputs"][0][0]  # input a a: [None, a]
    if where == 0:
        row[0] = values.index({"s": "b"})  # the model's all-zero columns do not decode to b
    else:
        row[1] = values.index(None)  # its column for a holds 1: not None
    assert _status(doc) == REJECTED
