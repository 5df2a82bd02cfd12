"""Match2 and k-PARITY: T decides each language, and U runs T, on every word checked."""

import itertools
import random

import pytest

from constructions.languages import match2, parity
from proofs import references
from proofs.simulator.languages import parity_set, prove_match2, prove_parity


def ref_match2(word, M):
    return [int(any((x + y) % M == 0 for y in word)) for x in word]


def test_match2_definition_pairs_zero_with_itself():
    layer = match2(5, 8)
    assert layer.language([0]) == [1]  # the case the published RASP program misses
    assert layer.language([1, 2, 4]) == [1, 0, 1]
    assert ref_match2([2, 2], 4) == [1, 1]  # M/2 pairs with itself for even M


@pytest.mark.parametrize("M", [2, 3, 4, 5])
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
    assert doc["result"]["holds"] and doc["result"]["words_checked"] == sum(M**n for M in (2, 3) for n in range(1, 5))
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

    from exact.certificate import read_certificate

    doc = prove_match2(max_M=5, max_length=8, jobs=2)
    recorded = read_certificate(Path(__file__).parents[2] / "docs" / "evidence" / "match2-M5-L8.json")
    assert doc["result"]["holds"]
    assert {k: doc[k] for k in ("params", "inputs", "outputs", "reference", "result")} == {
        k: recorded[k] for k in ("params", "inputs", "outputs", "reference", "result")
    }


def test_recorded_evidence_for_match2_up_to_length_8():
    """The committed certificate of the full run: hash, coverage and outcome (not a re-run: that takes ~50 min)."""
    from pathlib import Path

    from exact.certificate import read_certificate

    doc = read_certificate(Path(__file__).parents[2] / "docs" / "evidence" / "match2-M5-L8.json")
    assert doc["params"] == {"max_M": 5, "max_length": 8, "beta": 3}
    assert doc["result"]["words_checked"] == sum(M**n for M in range(2, 6) for n in range(1, 9)) == 586_010
    assert doc["result"]["holds"] and all(t["holds"] for t in doc["reference"]["T_decides"])
    assert doc["outputs"]["readouts"] == doc["reference"]["language"]
    # The language values of the shorter words, recomputed here from the definition.
    for key, got in doc["reference"]["language"].items():
        M, n = (int(part.split("=")[1]) for part in key.split(","))
        if M**n <= 5_000:
            want = "".join("".join(map(str, ref_match2(w, M))) for w in itertools.product(range(M), repeat=n))
            assert got == want, key
