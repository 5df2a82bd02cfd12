"""The tracr_model checker's size (issue 30, the fresh audit): the cost model reads the recorded model's shapes
and the number of inputs before any weight, and the forward passes run in chunks.

The audit's file: a make_length certificate with 1,500 extra residual columns read diagonally by W_Q, W_K
and W_1 (nothing in the parameters sees the width) took 113 s and 3.9 GB to verify, and under a 3 GiB cap
FLINT aborted. These run on the recorded certificate of tests/proofs/tracr/data (no tracr needed); the
slow test of tests/proofs/core/test_fresh_attack_issue30.py runs the audit's own file in a capped process.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from attncert.exact import LimitExceeded
from attncert.exact.certificate import read_certificate
from attncert.exact.limits import Limits, limits
from attncert.proofs.checkers.tracr import model as checker
from attncert.proofs.checkers.tracr.model import check_tracr_model, model_sha256
from attncert.proofs.core.cost import tracr_model

DATA = Path(__file__).parent / "data"


def genuine() -> dict:
    return read_certificate(DATA / "make_length.json")


def widened(doc: dict, J: int) -> dict:
    """The audit's change (tests/proofs/core/test_fresh_attack_issue30.py, ``wide_tracr_model``), model hash recomputed."""
    from tests.proofs.core.test_fresh_attack_issue30 import wide_tracr_model

    return wide_tracr_model(doc, J)


def test_a_hugely_wide_model_is_refused_from_its_shapes_before_any_weight(monkeypatch):
    doc = widened(genuine(), 1500)

    def read(m):
        raise AssertionError("the weights were read")

    monkeypatch.setattr(checker, "Model", read)
    with pytest.raises(LimitExceeded) as refused:
        check_tracr_model(doc)
    line = str(refused.value)
    # W_Q's block with its bias row: (1,513 + 1) x 1,504 entries, over 2^21
    assert "width=1513" in line and "--max-entries" in line and "\n" not in line


def test_the_refusal_follows_the_limit_in_force():
    doc = widened(genuine(), 200)
    with limits(Limits(max_entries=200 * 200)):
        with pytest.raises(LimitExceeded, match="entries"):
            check_tracr_model(doc)
    # within the default limits the same file runs, and is found false (its key_size is not what the rebuild
    # recomputes, but the check alone has nothing against the model: the junk columns change no output)
    assert check_tracr_model(doc) == []


def test_more_inputs_than_the_limit_are_refused_before_they_are_listed():
    # inputs.vocab (what the check enumerates) of 30 tokens to length 8: 6.8e11 sequences, never materialised
    doc = copy.deepcopy(genuine())
    doc["inputs"]["vocab"] = [{"s": f"t{i}"} for i in range(30)]
    doc["inputs"]["max_seq_len"] = 8
    with pytest.raises(LimitExceeded, match="evaluations"):
        check_tracr_model(doc)


@pytest.mark.parametrize("chunk", [1, 3])
def test_chunks_of_inputs_give_the_same_verdicts(monkeypatch, chunk):
    doc = genuine()
    assert check_tracr_model(doc) == []
    monkeypatch.setattr(checker, "tracr_chunk", lambda positions, balls: chunk)
    assert check_tracr_model(doc) == []
    # a false certificate stays false in chunks: one output class fewer (the decoder does not read its column)
    forged = copy.deepcopy(doc)
    m = forged["construction"]["model"]
    m["output"]["classes"] = m["output"]["classes"][1:]
    forged["construction"]["model_sha256"] = model_sha256(m)
    assert check_tracr_model(forged)


def test_the_cost_model_sees_the_width():
    # the same inputs, the model 1,500 columns wider: its blocks, memory and time grow, the inputs do not
    doc = genuine()
    m = doc["construction"]["model"]
    narrow = tracr_model(14, 3, len(m["residual"]), 1, m["key_size"], 8, 1, 6, 64)
    wide = tracr_model(14, 3, len(m["residual"]) + 1500, 1, m["key_size"] + 1500, 1508, 1, 6, 64)
    assert narrow.evaluations == wide.evaluations == 14
    assert wide.entries > Limits().max_entries >= narrow.entries
    assert wide.memory > narrow.memory and wide.seconds > 100 * narrow.seconds
