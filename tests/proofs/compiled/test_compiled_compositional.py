"""compiled_program --method compositional: every input of every length proven without enumerating them.

The target of issue 25 (tracr's make_sort_unique over five tokens, a model for every length 1..8);
the proof against the exhaustive route on a small case, and the independent forward pass against
the program's definition; forgeries: well-formed, re-sealed documents whose claim is false (a model
right at max_seq_len and wrong at a shorter length), which must REJECTED."""

from __future__ import annotations

import copy
import itertools

import pytest

from attncert.exact import QQ, ParseError
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.compiled import program as P
from attncert.proofs.checkers.compiled.construction import model_sha256
from attncert.proofs.checkers.compiled.every_input import result_of
from attncert.proofs.checkers.forward import forward
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes

pytest.importorskip("tracr")
CLAIM = load_claim("compiled_program")


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def compositional(program: str, vocab: str, n: int, lengths: str = "every", causal: bool = False) -> dict:
    return P.prove(vocab, n, lengths, causal, 100_000, 10, program=f"tests.proofs.tracr.programs:{program}", method="compositional")


@pytest.fixture(scope="module")
def sort_unique() -> dict:
    return compositional("sort_unique", "1,2,3,4,5", 8)


def test_sort_unique_over_five_tokens_is_proven_for_every_length_to_8(sort_unique):
    res = sort_unique["result"]
    # 5 + 5^2 + ... + 5^8 = (5^9 - 5) / 4 sequences, none enumerated
    assert res["holds"] and res["problems"] == [] and res["lengths"] == list(range(1, 9)) and res["inputs"] == (5**9 - 5) // 4 == 488_280
    assert sort_unique["params"]["method"] == "compositional" and sort_unique["construction"]["model"]["mode"] == "every_length"
    steps = sort_unique["outputs"]["proof"]["steps"]
    assert [s["sublayer"].split()[0] for s in steps] == ["head", "mlp", "head"]
    assert status(sort_unique) == OK


def sort_unique_by_definition(xs: list) -> list:
    """Token j goes to position #{k : x_k < x_j}; a position no token goes to is None."""
    target = [sum(1 for y in xs if y < x) for x in xs]
    return [next((x for x, t in zip(xs, target) if t == i), None) for i in range(len(xs))]


def test_the_proof_agrees_with_the_exhaustive_route_and_the_definition():
    proven = compositional("sort_unique", "1,2,3", 4)
    enumerated = P.prove("1,2,3", 4, "every", False, 100_000, 10, program="tests.proofs.tracr.programs:sort_unique")
    assert proven["result"]["holds"] and enumerated["result"]["holds"]
    assert proven["result"]["inputs"] == enumerated["result"]["inputs"] == 3 + 9 + 27 + 81
    assert proven["construction"]["model"]["summary"] == enumerated["construction"]["model"]["summary"]
    model = proven["construction"]["model"]
    cols, values = model["outputs"]["output"], model["output_values"]["output"]
    for n in range(1, 5):
        for xs in itertools.product([1, 2, 3], repeat=n):
            res = forward(model, [{"q": str(x)} for x in xs], QQ)
            got = [next((int(v["q"]) for v, c in zip(values, cols) if res[c][p] == 1), None) for p in range(1, n + 1)]
            assert got == sort_unique_by_definition(list(xs))


def reseal_claiming_it_holds(doc: dict, model: dict) -> dict:
    """The certificate with ``model`` in place: its sha256, and the proof's steps recomputed for it,
    but the result claiming that it holds (a self-consistent forgery)."""
    forged = copy.deepcopy(doc)
    forged["construction"]["model"] = model
    forged["construction"]["model_sha256"] = model_sha256(model)
    try:
        outputs, result = result_of(model, forged["construction"]["program"]["program"], len(forged["inputs"]["vocab"]))
        forged["outputs"] = outputs
        forged["result"] = {**result, "holds": True, "problems": []}
    except ParseError:  # outside the proof's class: keep the honest record's steps
        pass
    return forged


def decode(model: dict, xs: str) -> list:
    res = forward(model, [{"s": x} for x in xs], QQ)
    cols, values = model["outputs"]["output"], model["output_values"]["output"]
    if values is None:  # a numerical output: its column
        return [int(x) for x in res[cols[0]][1:]]
    return [next((int(v["q"]) for v, c in zip(values, cols) if res[c][p] == 1), None) for p in range(1, len(xs) + 1)]


@pytest.fixture(scope="module")
def length() -> dict:
    return compositional("make_length", "a,b", 5)


def swapped_decoder(length: dict) -> dict:
    """make_length's model with the columns of 3 and 4 swapped in its decoder: right at 5, wrong at 3 and 4."""
    model = copy.deepcopy(length["construction"]["model"])
    cols, values = model["outputs"]["output"], model["output_values"]["output"]
    three, four = cols[values.index({"q": "3"})], cols[values.index({"q": "4"})]
    out = model["layers"][0]["mlp"]["out"]
    for entry in out:  # the decoder writes 3's indicator into 4's column and the other way round
        entry[0] = {three: four, four: three}.get(entry[0], entry[0])
    assert decode(model, "ababa") == [5] * 5 and decode(model, "aba") == [4] * 3  # right at 5, wrong at 3
    return model


def test_forgery_a_model_right_at_max_length_and_wrong_at_3_fails(length):
    assert length["result"]["holds"] and status(length) == OK
    model = swapped_decoder(length)
    forged = reseal_claiming_it_holds(length, model)
    problems = CLAIM.check(forged)
    assert any("MLP" in p for p in problems), problems
    assert status(forged) == REJECTED


def test_the_honest_record_of_a_wrong_model_has_failures_and_no_problem(length):
    """The same model recorded as the proof finds it (holds = false, the proof's problems listed): the check
    tells the proof's failures from recorded values that are not the recomputed ones, and finds none of
    the latter. verify still REJECTS it: the rebuild recompiles the program, and this model is not its."""
    model = swapped_decoder(length)
    honest = copy.deepcopy(length)
    honest["construction"]["model"] = model
    honest["construction"]["model_sha256"] = model_sha256(model)
    honest["outputs"], honest["result"] = result_of(model, honest["construction"]["program"]["program"], len(honest["inputs"]["vocab"]))
    assert honest["result"]["holds"] is False and any("MLP" in p for p in honest["result"]["problems"])
    assert CLAIM.check(honest) == []
    assert status(honest) == REJECTED
    assert any("MLP" in p for p in CLAIM.check({**honest, "result": {**honest["result"], "holds": True}}))


def test_forgery_a_fixed_length_model_recorded_as_one_for_every_length_fails(length):
    fixed = P.prove("a,b", 5, "fixed", False, 100_000, 10, program="tests.proofs.tracr.programs:make_length")
    model = copy.deepcopy(fixed["construction"]["model"])
    assert model["format"] == "attncert-model/1"
    n = model.pop("length")
    model.update({"format": "attncert-model/2", "mode": "every_length", "max_seq_len": n, "causal": False})
    model["model_class"] = length["construction"]["model"]["model_class"]
    assert decode(model, "ababa") == [5] * 5 and decode(model, "aba") == [5] * 3  # the length precomputed for 5
    forged = reseal_claiming_it_holds(length, model)
    assert any("does not apply" in p for p in CLAIM.check(forged))
    assert status(forged) == REJECTED


def test_causal_sort_unique_is_proven_and_agrees_with_every_input():
    """Under the causal mask target_pos counts earlier smaller tokens only, so it is at most the position,
    and Select(target_pos, indices, EQ) selects one key at most (the rule of every_input's docstring)."""
    proven = compositional("sort_unique", "1,2,3", 4, causal=True)
    enumerated = P.prove("1,2,3", 4, "every", True, 100_000, 10, program="tests.proofs.tracr.programs:sort_unique")
    assert proven["result"]["holds"] and enumerated["result"]["holds"] and proven["construction"]["model"]["causal"] is True
    assert status(proven) == OK


LIBRARY = [  # tracr's lib.py programs (tests/proofs/tracr/programs.py and below), with a vocabulary each
    ("reverse", "a,b,c"), ("hist", "a,b,c"), ("sort", "1,2,3"), ("frac_prevs", "a,b"), ("count_less_freq", "a,b,c"),
    ("pair_balance", "(,),a"), ("sort_freq", "1,2,3"), ("shuffle_dyck", "(,),a"),
]


def test_pair_balance_a_map_of_numerical_means_is_proven_and_agrees_with_every_input():
    proven = compositional("pair_balance", "(,),a", 4)
    enumerated = P.prove("(,),a", 4, "every", False, 100_000, 10, program="tests.proofs.tracr.programs:pair_balance")
    assert proven["result"]["holds"] and enumerated["result"]["holds"] and proven["result"]["inputs"] == 3 + 9 + 27 + 81


@pytest.mark.slow
@pytest.mark.parametrize("name,vocab", LIBRARY)
def test_tracr_library_programs_are_proven_and_agree_with_every_input(name, vocab):
    proven = compositional(name, vocab, 4)
    enumerated = P.prove(vocab, 4, "every", False, 100_000, 10, program=f"tests.proofs.tracr.programs:{name}")
    assert proven["result"]["holds"] and enumerated["result"]["holds"]
    assert status(proven) == OK


def test_every_leaf_of_a_compositional_certificate_is_pinned():
    """As tests/proofs/core/test_every_leaf.py does for every claim at its defaults (compiled_program there is
    exhaustive): change any one leaf of a compositional certificate, reseal, and verify is not OK."""
    from tests.proofs.core.test_every_leaf import leaves, with_leaf_changed

    doc = compositional("make_length", "a,b", 3)
    paths = list(leaves({k: v for k, v in doc.items() if k not in ("provenance", "side_notes", "sha256")}))
    assert len(paths) > 100
    unnoticed = []
    for p in paths:
        if p == ("params", "program"):
            continue  # where the program came from, a label: the claim is about the recorded tables, and verify imports nothing
        forged = with_leaf_changed(doc, p)
        if status(forged) == OK:  # status reseals it
            unnoticed.append(p)
    # the exhaustive method's bounds, which a compositional proof does not use: any value certifies the same claim
    assert unnoticed == [("params", "max_inputs"), ("params", "listed")]


def test_forgery_a_head_computed_twice_fails(length):
    """Two copies of the width head add 2/(n + 1) where one adds 1/(n + 1): the invariant adds each SOp once."""
    model = copy.deepcopy(length["construction"]["model"])
    model["layers"][0]["heads"].append(copy.deepcopy(model["layers"][0]["heads"][0]))
    forged = reseal_claiming_it_holds(length, model)
    assert any("computed twice" in p for p in CLAIM.check(forged))
    assert status(forged) == REJECTED


def test_a_rasp_language_program_is_tabulated_and_proven(tmp_path):
    """A program of registered functions (the RASP language) carries the tables of its functions beside its
    record; the primitive length is the network's SelectorWidth in a model for every length."""
    prog = str(__import__("pathlib").Path(__file__).resolve().parents[3] / "examples" / "prog.rasp")
    frac = P.prove("a,b,c", 5, "every", False, 1000, 10, file=prog, expr="frac_a", method="compositional")
    assert frac["result"]["holds"] and frac["result"]["inputs"] == 3 + 9 + 27 + 81 + 243
    assert frac["construction"]["program"]["kind"] == "rasp" and "tables" in frac["construction"]
    assert status(frac) == OK
    # reverse reads the primitive length and a default 0 no one-hot column holds: every input, enumerated
    rev = P.prove("a,b,c", 4, "every", False, 1000, 10, file=prog, expr="reverse")
    assert rev["result"]["holds"] and rev["construction"]["model"]["mode"] == "every_length"
    with pytest.raises(ParseError, match="default"):
        P.prove("a,b,c", 4, "every", False, 1000, 10, file=prog, expr="reverse", method="compositional")
