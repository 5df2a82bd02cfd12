"""tracr_model without tracr: recorded programs, the two forward passes, stored certificates, forgeries, bad input.

The certificates in data/ were written by (tracr installed, in the repository's root)

    attncert prove tracr_model --program tests.proofs.tracr.programs:shift_none --vocab 0,1 --max-seq-len 3 --out tests/proofs/tracr/data/shift_none.json
    attncert prove tracr_model --program tracr.compiler.lib:make_length --vocab a,b --max-seq-len 3 --out tests/proofs/tracr/data/make_length.json

verify never needs tracr, so these tests run without it; the ones that compile with tracr are in
test_tracr_reproductions.py (slow).
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest
from flint import ctx, fmpq

from attncert.constructions import rasp
from attncert.constructions.tracr import certify as C
from attncert.constructions.tracr import forward as F
from attncert.constructions.tracr.model import model_from_json
from attncert.constructions.tracr.program import from_tracr, program_from_json, program_to_json, tabulate, to_rasp
from attncert.exact import ParseError, QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import read_certificate, seal
from attncert.proofs.tracr import model as T
from attncert.proofs.checkers.tracr import model as K
from attncert.proofs.cli import main
from attncert.proofs.core.rebuild import rebuilt_differences
from attncert.proofs.core.registry import available, load_claim
from attncert.proofs.core.verify import DOES_NOT_HOLD, OK, REJECTED, verify_bytes, verify_file

DATA = Path(__file__).parent / "data"
CLAIM = load_claim("tracr_model")


def doc_of(name: str) -> dict:
    return read_certificate(DATA / f"{name}.json")


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


# -- the recorded program ----------------------------------------------------------------------


def toy_program():
    """A program of every tabulated kind, in attncert's RASP (source-compatible with tracr's)."""
    plus = rasp.Map(lambda x: x + 1, rasp.tokens).named("plus")
    pair = rasp.SequenceMap(lambda x, i: x * 10 + i, rasp.tokens, rasp.indices).named("pair")
    odd = rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k != q).named("odd")
    return rasp.numerical(rasp.Aggregate(odd, rasp.numerical(rasp.SequenceMap(lambda a, b: a + b, plus, pair)), default=0)).named("out")


def named(prog, name: str):
    """A node of an attncert program, whose labels are its names followed by an id (tracr's are the names)."""
    (node,) = [n for n in prog.nodes if n.label.rsplit("_", 1)[0] == name]
    return node


def test_a_program_is_recorded_without_code_and_evaluates_as_before():
    inputs = [list(x) for n in (1, 2, 3) for x in itertools.product([1, 2], repeat=n)]
    prog = from_tracr(toy_program())
    outs, traces = C.exact_outputs(prog, inputs)
    tabulate(prog, traces)
    # the map is called on the token values only: {1, 2} -> {2, 3}, by hand
    plus = named(prog, "plus")
    assert {k: v for k, v in plus.table.items()} == {(("q", 1, 1),): 2, (("q", 2, 1),): 3}
    # (key, query) pairs of tokens: all four occur
    assert len(named(prog, "odd").table) == 4
    recorded = program_from_json(json.loads(json.dumps(program_to_json(C.recorded(prog)))))
    assert all(n.fn is None for n in recorded.nodes)
    again, _ = C.exact_outputs(recorded, inputs)
    assert again == outs
    # one value by hand: [1, 2]: plus = [2, 3], pair = [10, 21], sum = [12, 24]; each query selects the other token
    assert rasp.evaluate(to_rasp(recorded), [1, 2], QQ) == [24, 12]


def by_op(p: dict, op: str) -> dict:
    return next(n for n in p["nodes"] if n["op"] == op)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda p: p["nodes"].append({"label": "x", "op": "lambda", "args": []}), "malformed"),
        (lambda p: by_op(p, "aggregate").update(args=[by_op(p, "tokens")["label"]] * 2), "wrong kind"),
        (lambda p: by_op(p, "map")["table"].append(by_op(p, "map")["table"][0]), "two table entries"),
        (lambda p: p.update(output=by_op(p, "select")["label"]), "output"),
    ],
)
def test_a_malformed_recorded_program_is_refused(change, match):
    prog = from_tracr(toy_program())
    tabulate(prog, C.exact_outputs(prog, [[1, 2]])[1])
    obj = program_to_json(C.recorded(prog))
    program_from_json(copy.deepcopy(obj))  # as recorded, it reads
    change(obj)
    with pytest.raises(ParseError, match=match):
        program_from_json(obj)


# -- the two forward passes --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["shift_none", "make_length"])
def test_the_interned_forward_pass_meets_the_checkers_plain_one(name):
    """The fast path (rows interned) and the checker's plain batched pass enclose the same values:
    every output column's balls intersect, at every position of every input."""
    doc = doc_of(name)
    model = model_from_json(doc["construction"]["model"])
    plain = K.Model(doc["construction"]["model"])
    vocab = [K.value(t) for t in doc["inputs"]["vocab"]]
    for n in range(1, doc["inputs"]["max_seq_len"] + 1):
        batch = list(itertools.product(vocab, repeat=n))
        with ctx.workprec(64):
            fast = F.forward(model, batch)[-1]
            slow = K.run(plain, batch)
        for b in range(len(batch)):
            for t in range(n + 1):
                for c in range(model.width):
                    assert fast.row(b, t)[c].overlaps(slow[b][t][c])


# -- stored certificates -----------------------------------------------------------------------


def test_a_correct_model_verifies():
    doc = doc_of("make_length")
    assert doc["result"]["holds"] and doc["result"]["correct"] == 2 + 4 + 8
    # the RASP outputs are the lengths, by hand: every input of length n gives [n] * n
    values = [K.value(v) for v in doc["reference"]["rasp"]["values"]]
    for n, row in enumerate(doc["reference"]["rasp"]["outputs"], start=1):
        assert all([values[i] for i in out] == [n] * n for out in row)
    assert verify_file(DATA / "make_length.json").status == OK


def test_issue_25_is_a_counterexample_certificate():
    """A categorical Aggregate with default None: at position 1 nothing is selected, RASP gives None,
    and tracr's model decodes a token there. The certificate is true: its check and its rebuild find
    nothing wrong; verify says DOES-NOT-HOLD (genuine, exit 1): the claim (every input correct) does not hold."""
    doc = doc_of("shift_none")
    assert not doc["result"]["holds"] and doc["result"]["counterexamples"] == doc["result"]["inputs"] == 2 + 4 + 8
    first = doc["outputs"]["counterexamples"][0]
    assert first["input"] == [{"q": "0"}] and first["rasp"] == [None]
    (p,) = first["positions"]
    assert p["position"] == 1 and p["status"] == "counterexample" and p["decoded"] in ({"q": "0"}, {"q": "1"})
    # the residual stays near the all-zero encoding of None: it is argmax that cannot say None
    assert first["leaves_encoding"] is None
    assert CLAIM.check(doc) == [] and rebuilt_differences(CLAIM, doc) == []
    assert verify_file(DATA / "shift_none.json").status == DOES_NOT_HOLD
    # the same document saying that it holds, resealed, is a forgery: rejected, as is the genuine make_length one
    # saying that it does not
    claimed = {**doc, "result": {**doc["result"], "holds": True}}
    assert status(claimed) == REJECTED
    denied = doc_of("make_length")
    assert status({**denied, "result": {**denied["result"], "holds": False}}) == REJECTED


# -- forgeries: well-formed, re-sealed documents whose claim is false --------------------------


def swapped_output(doc: dict) -> dict:
    """The model with the MLP weights into the output columns of lengths 1 and 2 exchanged: inputs of
    length 1 decode as 2 and of length 2 as 1 (a model that computes something else)."""
    forged = copy.deepcopy(doc)
    m = forged["construction"]["model"]
    cols = {K.value(v): c for v, c in m["output"]["classes"]}
    a, b = cols[1], cols[2]
    for layer in m["layers"]:
        for entry in layer["linear_2"]["w"]:
            entry[1] = {a: b, b: a}.get(entry[1], entry[1])
        layer["linear_2"]["w"].sort()
    return with_sha(forged)


def with_sha(doc: dict) -> dict:
    """The recorded model's sha256 made that of its (altered) record: the forger's consistent step."""
    doc["construction"]["model_sha256"] = K.model_sha256(doc["construction"]["model"])
    return doc


def test_altered_weights_give_an_honest_counterexample_certificate():
    honest = T.rebuild(swapped_output(doc_of("make_length")))
    assert honest["result"]["counterexamples"] == 2 + 4 and honest["result"]["correct"] == 8
    assert CLAIM.check(honest) == [] and rebuilt_differences(CLAIM, honest) == []


def test_forgery_altered_weights_still_claiming_correct_fails():
    forged = swapped_output(doc_of("make_length"))
    problems = CLAIM.check(forged)
    assert any("counterexamples" in p for p in problems), problems
    assert status(forged) == REJECTED


def test_forgery_reference_matching_the_altered_model_fails_in_the_rebuild():
    """The RASP outputs replaced by what the altered model decodes: the forward pass agrees with them,
    so the check passes; the recorded program evaluates to the lengths, so the rebuild does not."""
    forged = swapped_output(doc_of("make_length"))
    ref = forged["reference"]["rasp"]
    values = [K.value(v) for v in ref["values"]]
    swap = {1: 2, 2: 1}
    index = {v: i for i, v in enumerate(values)}
    for row in ref["outputs"]:
        for out in row:
            out[:] = [index[swap.get(values[i], values[i])] for i in out]
    assert CLAIM.check(forged) == []
    assert any("reference" in p for p in rebuilt_differences(CLAIM, forged))
    assert status(forged) == REJECTED


def swap_columns(classes: list) -> None:
    """The first two output classes read each other's columns: a decoder that names the wrong values."""
    classes[0][1], classes[1][1] = classes[1][1], classes[0][1]


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda m: m["layers"][0]["linear_2"]["w"][0].__setitem__(2, "1/3"), "float32"),
        (lambda m: m.update(scale="3"), "divisor"),
        (lambda m: m.update(mask_logit="-1000000000000000000000000000000"), "masked"),
        (lambda m: swap_columns(m["output"]["classes"]), "column"),
    ],
)
def test_forgery_of_the_model_record_fails_the_hypotheses(change, match):
    forged = doc_of("make_length")
    change(forged["construction"]["model"])
    assert CLAIM.check(forged) == ["construction.model_sha256 is not the sha256 of the recorded model"]
    with_sha(forged)
    assert any(match in p for p in CLAIM.check(forged))
    assert status(forged) == REJECTED


def test_forgery_a_decoder_missing_a_class_whose_column_the_model_writes_fails():
    """Issue 30: class 0 left out of the recorded decoder while its column OUTPUT:0 stays in the residual, and
    the last MLP writes a large bias there. Read as recorded, the other classes still decode every length; tracr's
    argmax reads every OUTPUT:VALUE column and decodes 0 everywhere. The decoder is derived from the labels, so
    the record is refused by the check and by the rebuild's reader."""
    forged = doc_of("make_length")
    m = forged["construction"]["model"]
    zero = next(c for v, c in m["output"]["classes"] if K.value(v) == 0)
    assert m["residual"][zero] == m["output"]["label"] + ":0"
    m["output"]["classes"] = [[v, c] for v, c in m["output"]["classes"] if c != zero]
    last = m["layers"][-1]["linear_2"]
    last["b"] = sorted([e for e in last["b"] if e[0] != zero] + [[zero, "1000"]])
    with_sha(forged)
    problems = CLAIM.check(forged)
    assert any("tracr's argmax reads every one" in p for p in problems), problems
    with pytest.raises(ParseError, match="argmax reads every one"):
        model_from_json(m)
    assert status(forged) == REJECTED


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda cl: cl.append(copy.deepcopy(cl[0])), "same column"),  # a class twice
        (lambda cl: cl.__setitem__(0, [{"q": "7"}, cl[0][1]]), "column"),  # a value its column's label does not spell
        (lambda cl: cl.pop(), "reads every one"),  # the last class deleted
    ],
)
def test_forgery_of_the_decoder_by_structure_fails(change, match):
    forged = doc_of("make_length")
    change(forged["construction"]["model"]["output"]["classes"])
    with_sha(forged)
    assert any(match in p for p in CLAIM.check(forged)), CLAIM.check(forged)
    assert status(forged) == REJECTED


# -- bad input: one line, exit 2 ---------------------------------------------------------------


def exit_code(argv: list[str]) -> int:
    """The command line in this process (argparse's own errors exit through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code)


@pytest.mark.parametrize(
    "args, match",
    [
        (["--vocab", "a,BOS"], "holds the BOS token"),
        (["--vocab", "a,b,c", "--max-seq-len", "12"], "797,160 input sequences, over the limit of 100,000 (raise it with --max-inputs)"),
        (["--program", "no_colon"], "MODULE:FUNCTION"),
        (["--vocab", "a,,b"], "comma-separated"),
        (["--causal", "1"], "unrecognized arguments"),
    ],
)
def test_bad_input_is_one_line(args, match, capsys):
    assert exit_code(["prove", "tracr_model", *args, "--out", "-"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 2 and match in err[-1]


def test_without_tracr_the_claim_names_the_install_command(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tracr" else real(name, *a))
    assert not available("tracr_model") and available("transpose")
    assert exit_code(["prove", "tracr_model", "--out", "-"]) == 2
    assert "pip install '.[tracr]' in attncert's folder" in capsys.readouterr().err


def test_a_model_shorter_than_asked_is_refused():
    doc = doc_of("make_length")
    model = model_from_json(doc["construction"]["model"])
    prog = program_from_json(doc["construction"]["program"])
    with pytest.raises(ParseError, match="max_seq_len 4 is over the model's 3"):
        T._certify(model, prog, ["a", "b"], 4, "python", fmpq(0), 64, 1000, 1)
    with pytest.raises(ParseError, match="has no token 'c'"):
        T._certify(model, prog, ["a", "c"], 2, "python", fmpq(0), 64, 1000, 1)


def test_an_input_the_program_fails_on_is_undefined_not_an_error():
    """1 / (x - 1) has no value at x = 1: that input is undefined (counted apart, never correct)."""
    prog = from_tracr(rasp.numerical(rasp.Map(lambda x: 1 / (x - 1), rasp.tokens)))
    outs, _ = C.exact_outputs(prog, [[1], [2], [2, 1]])
    assert isinstance(outs[0], C.EvaluationFailed) and isinstance(outs[2], C.EvaluationFailed)
    assert outs[1] == [1]


def test_a_causal_model_is_compared_with_tracrs_causal_semantics():
    """tracr's causal_eval masks every selector to the keys k <= q; the width of tokens == tokens on
    a a b a is then 1, 2, 1, 3 (by hand), and 3, 3, 1, 3 without the mask."""
    width = rasp.categorical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)))
    prog = from_tracr(width)
    assert C.exact_outputs(prog, [list("aaba")], causal=True)[0] == [[1, 2, 1, 3]]
    assert C.exact_outputs(prog, [list("aaba")])[0] == [[3, 3, 1, 3]]


def test_tuple_values_are_recorded_and_read_back():
    pair = rasp.SequenceMap(lambda x, i: (x, i), rasp.tokens, rasp.indices)
    first = rasp.Map(lambda p: p[0] + p[1], pair)
    prog = from_tracr(rasp.numerical(first))
    outs = C.tabulated(prog, [[1, 2], [2, 2]])
    recorded = program_from_json(json.loads(json.dumps(program_to_json(C.recorded(prog)))))
    assert C.exact_outputs(recorded, [[1, 2], [2, 2]])[0] == outs == [[1, 3], [2, 3]]
    assert K.value({"t": [{"q": "1"}, {"s": "a"}]}) == (1, "a") and K.same((fmpq(1), "a"), (1, "a"))


def test_a_class_tracr_holds_as_a_float_stands_for_the_numbers_that_round_to_it():
    """tracr computes categorical value sets in floats: the class 0.3333333333333333 is RASP's 1/3."""
    from attncert.constructions.tracr.model import FloatClass, class_value, spells

    third = class_value(1 / 3)
    assert isinstance(third, FloatClass) and third.matches(fmpq(1, 3)) and not third.matches(fmpq(3333333333333333, 10**16 + 1))
    assert not third.matches("1/3") and not third.matches(True)
    assert spells("0.3333333333333333", third) and spells("0.3333333333333333", fmpq(1, 3)) and not spells("0.3333333333333333", fmpq(1, 2))
    assert spells("2", fmpq(2)) and spells("True", True) and not spells("1", True)
    assert K._Double(third.value).matches(fmpq(1, 3)) and K._spells("0.3333333333333333", K._Double(third.value))
