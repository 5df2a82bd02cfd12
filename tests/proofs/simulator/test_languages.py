"""Match2 and k-PARITY: T decides each language, and U runs T, on every word checked."""

import copy
import itertools
import random

import pytest

from attncert.constructions.languages import match2, parity
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers import references
from attncert.proofs.simulator import languages
from attncert.proofs.simulator.languages import parity_set, prove_match2, prove_parity, verify_match2, verify_parity
from attncert.proofs.core.verify import OK, REJECTED, verify_bytes


def ref_match2(word, M):
    return [int(any((x + y) % M == 0 for y in word)) for x in word]


def test_match2_definition_pairs_zero_with_itself():
    layer = match2(5, 8)
    assert layer.language([0]) == [1]  # the case the published RASP program misses
    assert layer.language([1, 2, 4]) == [1, 0, 1]
    assert ref_match2([2, 2], 4) == [1, 1]  # M/2 pairs with itself for even M
    assert match2(1, 3).language([0, 0, 0]) == [1, 1, 1]  # M = 1: every letter is 0, which pairs with itself


@pytest.mark.parametrize("M", [1, 2, 3, 4, 5])
def test_T_decides_match2_directly_on_random_words(M):
    """T computed by the independent reference attention (no U), read out exactly."""
    layer = match2(M, 8)
    rng = random.Random(M)
    for _ in range(40):
        word = [rng.randrange(M) for _ in range(rng.randint(1, 8))]
        T = references.attention(layer.embed(word), layer.A, layer.V)
        assert layer.readout(T, word) == ref_match2(word, M)


def test_T_decides_parity_directly():
    for n in (1, 5, 9):
        for k in range(1, min(4, n) + 1):
            S = parity_set(n, k)
            layer = parity(n, S)
            for word in itertools.islice(itertools.product((0, 1), repeat=n), 64):
                T = references.attention(layer.embed(word), layer.A, layer.V)
                assert layer.readout(T, word) == [sum(word[i] for i in S) % 2] * n


def test_u_recognises_match2_on_every_short_word():
    doc = prove_match2(max_M=3, max_length=4)
    assert doc["result"]["holds"] and doc["result"]["words_checked"] == sum(M**n for M in (1, 2, 3) for n in range(1, 5))
    assert {case["case"] for case in doc["inputs"]["cases"]} == {f"M={M},n={n}" for M in (1, 2, 3) for n in range(1, 5)}
    assert doc["outputs"]["readouts"]["M=1,n=4"] == "1111"  # the one word 0000: every position is matched
    for case, got in doc["outputs"]["readouts"].items():
        M, n = (int(part.split("=")[1]) for part in case.split(","))
        want = "".join("".join(map(str, ref_match2(w, M))) for w in itertools.product(range(M), repeat=n))
        assert got == want


def test_u_recognises_parity_on_every_short_string():
    doc = prove_parity(max_k=3, max_length=5, jobs=2)  # in two processes: same certificate as one
    assert doc["outputs"] == prove_parity(max_k=3, max_length=5)["outputs"]
    assert doc["result"]["holds"]
    for case in doc["inputs"]["cases"]:
        assert case["words"] == 2 ** case["length"]


@pytest.mark.slow
def test_u_recognises_parity_on_every_string_up_to_16():
    doc = prove_parity(max_k=4, max_length=16, jobs=2)
    assert doc["result"]["holds"] and doc["result"]["words_checked"] == sum(2**n * min(4, n) for n in range(1, 17))


@pytest.mark.slow
def test_u_recognises_match2_on_every_word_up_to_8_as_recorded():
    """The full run again (batched, a few minutes): the certificate recorded from the single-input evaluator."""
    from pathlib import Path

    from attncert.exact.certificate import read_certificate

    doc = prove_match2(max_M=5, max_length=8, jobs=2)
    recorded = read_certificate(Path(__file__).parents[3] / "docs" / "evidence" / "match2-M5-L8.json")
    assert doc["result"]["holds"]
    assert {k: doc[k] for k in ("params", "inputs", "outputs", "reference", "result")} == {
        k: recorded[k] for k in ("params", "inputs", "outputs", "reference", "result")
    }


def test_recorded_evidence_for_match2_up_to_length_8():
    """The committed certificate of the full run: hash, coverage and outcome (the slow test above runs it again)."""
    from pathlib import Path

    from attncert.exact.certificate import read_certificate

    doc = read_certificate(Path(__file__).parents[3] / "docs" / "evidence" / "match2-M5-L8.json")
    assert doc["params"] == {"max_M": 5, "max_length": 8, "beta": 3}
    assert doc["result"]["words_checked"] == sum(M**n for M in range(1, 6) for n in range(1, 9)) == 586_018
    assert doc["result"]["statement"].startswith("for every M with 1 <= M <= max_M")
    assert doc["result"]["holds"] and all(t["holds"] for t in doc["reference"]["T_decides"])
    assert doc["outputs"]["readouts"] == doc["reference"]["language"]
    # The language values of the shorter words, recomputed here from the definition.
    for key, got in doc["reference"]["language"].items():
        M, n = (int(part.split("=")[1]) for part in key.split(","))
        if M**n <= 5_000:
            want = "".join("".join(map(str, ref_match2(w, M))) for w in itertools.product(range(M), repeat=n))
            assert got == want, key


# -- self-consistent forgeries: re-sealed documents whose statement is false ----------------------

COVERAGE = "the recorded cases are not every case the statement names, each once with all its words"


def status(doc: dict) -> str:
    return verify_bytes(canonical_json(seal(doc))).status


def without_cases(doc: dict, dropped) -> dict:
    """The document with the cases whose key ``dropped`` accepts removed everywhere, words_checked recounted."""
    doc = copy.deepcopy(doc)
    doc["inputs"]["cases"] = [c for c in doc["inputs"]["cases"] if not dropped(c["case"])]
    for values in (doc["outputs"]["readouts"], doc["reference"]["language"]):
        for key in [k for k in values if dropped(k)]:
            del values[key]
    doc["result"]["words_checked"] = sum(c["words"] for c in doc["inputs"]["cases"])
    return doc


def test_match2_at_M_1_verifies():
    doc = prove_match2(max_M=1, max_length=3)
    assert doc["outputs"]["readouts"] == {"M=1,n=1": "1", "M=1,n=2": "11", "M=1,n=3": "111"}
    assert verify_match2(doc) == [] and status(doc) == OK


def test_a_match2_certificate_without_M_1_fails():
    """The statement names every M from 1; a document that leaves M = 1 out, consistently, is false."""
    doc = prove_match2(max_M=2, max_length=3)
    assert status(doc) == OK
    skipped = without_cases(doc, lambda key: key.startswith("M=1,"))
    assert verify_match2(skipped) == [COVERAGE] and status(skipped) == REJECTED


def test_a_prover_that_skips_M_1_cannot_certify_the_statement(monkeypatch):
    """The prover before M = 1 was covered, made again by patching its plan: an ordinary prove run writes a
    consistent certificate, and the verifier refuses it even with the same plan, since it restates the
    statement's cases from the parameters."""
    real = languages._match2_plan

    def plan_from_2(max_M, max_length):
        layers, t_checks, beta = real(max_M, max_length)
        return {k: v for k, v in layers.items() if not k.startswith("M=1,")}, t_checks, beta

    monkeypatch.setattr(languages, "_match2_plan", plan_from_2)
    doc = prove_match2(max_M=2, max_length=3)
    assert doc["result"]["holds"] and doc["result"]["words_checked"] == 2 + 4 + 8
    assert status(doc) == REJECTED


def test_match2_at_M_1_with_forged_readouts_and_language_fails():
    doc = prove_match2(max_M=2, max_length=2)
    forged = copy.deepcopy(doc)
    forged["outputs"]["readouts"]["M=1,n=2"] = forged["reference"]["language"]["M=1,n=2"] = "01"  # holds stays true
    assert verify_match2(forged) == ["M=1,n=2: the recorded language values are not the language's", "M=1,n=2: U's recorded readout differs from the language"]
    assert status(forged) == REJECTED


def test_a_parity_certificate_without_a_case_fails():
    doc = prove_parity(max_k=2, max_length=3)
    assert status(doc) == OK
    skipped = without_cases(doc, lambda key: key.startswith("k=2,n=3,"))
    assert verify_parity(skipped) == [COVERAGE] and status(skipped) == REJECTED
