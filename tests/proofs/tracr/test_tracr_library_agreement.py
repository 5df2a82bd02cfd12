"""--method compositional against --method exhaustive on tracr's own library (compiler/test_cases.py, which covers
lib.py): the same model tracr compiled, the same verdict. Where the exhaustive method finds counterexamples the
induction must not prove the model, and its own confirmation must find one (checked by the independent checker);
where every input is certified correct the induction proves every length. Each case runs at its max_seq_len,
lowered (as bench/tracr_library.py does) until the exhaustive method has at most 20,000 inputs."""

from __future__ import annotations

import pytest

from attncert.proofs.core.registry import load_claim

pytest.importorskip("tracr")

CLAIM = load_claim("tracr_model")
#: Inputs the exhaustive method runs, at most, per case.
MAX_INPUTS = 20_000
#: A case of each kind the induction needs and no other test covers: the length counted (reverse, shuffle_dyck:
#: Select(indices, length - 1, EQ)), a label tracr computed in floats (sort_freq: -0.19999999999999996), tuple
#: values (make_nary_sequencemap), a causal model (test_tracr_compositional.py has a static map of the position,
#: repeated keys and the softmax leak).
QUICK = ["reverse_1", "shuffle_dyck2_1", "sort_freq", "make_nary_sequencemap_2", "selector_width"]


def library():
    from tracr.compiler import test_cases

    universal = len(test_cases.UNIVERSAL_TEST_CASES)
    return [(c, False) for c in test_cases.TEST_CASES] + [(c, True) for c in test_cases.CAUSAL_TEST_CASES[universal:]]


def verdicts(case, causal):
    """(compositional certificate, exhaustive certificate) of one compiled model."""
    from tracr.compiler import compiling

    from attncert.constructions.tracr.program import input_count
    from attncert.proofs.tracr.model import certify_tracr

    vocab = sorted(case["vocab"], key=repr)
    n = case["max_seq_len"]
    while n > 1 and input_count(len(vocab), n) > MAX_INPUTS:
        n -= 1
    model = compiling.compile_rasp_to_model(case["program"], vocab=set(vocab), max_seq_len=n, causal=causal, compiler_bos="BOS")
    kw = {"max_inputs": MAX_INPUTS}
    return certify_tracr(case["program"], model, vocab, n, method="compositional", **kw), certify_tracr(case["program"], model, vocab, n, **kw)


def agree(comp, exh):
    res = comp["result"]
    if exh["result"]["holds"]:
        assert res["holds"] and res["verdict"] == "proven", res
    else:
        assert exh["result"]["counterexamples"] > 0
        assert not res["holds"] and res["verdict"] == "counterexample", res
    assert CLAIM.check(comp) == []


@pytest.mark.parametrize("name", QUICK)
def test_the_methods_agree_on_a_case_of_each_kind(name):
    case, causal = next((c, causal) for c, causal in library() if c["testcase_name"] == name)
    agree(*verdicts(case, causal))


@pytest.mark.slow
def test_the_methods_agree_on_every_case_of_tracr_s_library():
    """37 of the 44 cases hold on every input (docs/tracr.md's table), 7 have counterexamples: both methods say so."""
    held = 0
    for case, causal in library():
        comp, exh = verdicts(case, causal)
        agree(comp, exh)
        held += exh["result"]["holds"]
    assert held == 37
