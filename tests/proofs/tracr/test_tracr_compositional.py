"""prove tracr_model --method compositional (issue 33): verdicts exact about lengths, agreement with the
exhaustive method, and self-consistent forgeries refused by the checker."""

from __future__ import annotations

import copy

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.checkers.tracr.model import model_sha256
from attncert.proofs.core.rebuild import rebuilt_differences
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import OK, verify_bytes

pytest.importorskip("tracr")

CLAIM = load_claim("tracr_model")


def compiled(program, vocab, n):
    from tracr.compiler import compiling

    return compiling.compile_rasp_to_model(program, vocab=set(vocab), max_seq_len=n, compiler_bos="BOS")


def both(program, vocab, n, **kw):
    """(compositional, exhaustive) certificates of one compiled model."""
    from attncert.proofs.tracr.model import certify_tracr

    model = compiled(program, vocab, n)
    return (
        certify_tracr(program, model, vocab, n, method="compositional", **kw),
        certify_tracr(program, model, vocab, n, **kw),
    )


@pytest.fixture(scope="module")
def length12():
    """make_length over a, b to 12: tracr's SelectorWidth decodes 10 as 9 (the failure at long widths)."""
    from tracr.compiler import lib

    from attncert.proofs.tracr.model import certify_tracr

    program = lib.make_length()
    return certify_tracr(program, compiled(program, ["a", "b"], 12), ["a", "b"], 12, method="compositional")


def status(doc):
    return verify_bytes(canonical_json(seal(doc))).status


def test_selector_width_at_long_widths_is_found_with_n_star_and_a_real_counterexample(length12):
    res, conf = length12["result"], length12["outputs"]["confirmation"]
    assert (res["proven_up_to"], res["first_failing_length"], res["verdict"], res["holds"]) == (9, 10, "counterexample", False)
    # every input of length 10 was run (2^10 = 1,024) and every one decodes its length 10 as 9: by hand,
    # the SelectorWidth MLP's thresholds sit between 1/(w+1) values and 1/11 falls on 9's side
    assert conf["inputs"] == "every" and conf["counts"] == {"inputs": 1024, "correct": 0, "counterexamples": 1024, "undecided": 0, "undefined": 0}
    first = conf["counterexamples"][0]
    assert [p["decoded"] for p in first["positions"]][:1] == [{"q": "9"}] and first["rasp"] == [{"q": "10"}] * 10
    assert CLAIM.check(length12) == [] and rebuilt_differences(CLAIM, length12) == []
    assert status(length12) != OK  # genuine, and its claim (every length to 12) does not hold


def test_agreement_with_the_exhaustive_method_where_the_model_is_right():
    from tracr.compiler import lib
    from tracr.rasp import rasp

    for program, vocab, n in ((lib.make_length(), ["a", "b", "c"], 5), (lib.make_frac_prevs(rasp.tokens == "a"), ["a", "b"], 4), (lib.make_hist(), ["a", "b", "c"], 4)):
        comp, exh = both(program, vocab, n)
        assert comp["result"]["holds"] and exh["result"]["holds"], comp["result"]
        assert comp["result"]["proven_up_to"] == n and CLAIM.check(comp) == []
    # frac_prevs: the radius the induction carries and the largest error bound of the exhaustive method's balls
    # (both upper bounds of the same softmax leak) agree to 1%, far below the tolerance of 10^-6
    comp, exh = both(lib.make_frac_prevs(rasp.tokens == "a"), ["a", "b"], 4)
    from fractions import Fraction

    radius = max(Fraction(r) for step in comp["outputs"]["proof"]["proven"]["steps"] if step.get("computes") == "frac_prevs" for _, r in step["radius"])
    measured = Fraction(exh["outputs"]["max_error"])
    assert abs(radius - measured) <= measured / 100 and radius < Fraction(1, 10**6)


def test_agreement_where_the_model_is_wrong():
    """make_sort_unique on repeated tokens: RASP gives None where two keys collide, which argmax cannot
    say. The exhaustive method lists counterexamples; the induction cannot exclude None at length 1
    (a width value of 1 is in its value set there), so it fails at length 1, where every input is
    correct: the certificate says the bound is not sharp there, and does not hold."""
    from tracr.compiler import lib
    from tracr.rasp import rasp

    comp, exh = both(lib.make_sort_unique(rasp.tokens, rasp.tokens), [1, 2, 3], 3)
    assert not exh["result"]["holds"] and exh["result"]["counterexamples"] > 0
    res = comp["result"]
    assert not res["holds"] and (res["proven_up_to"], res["first_failing_length"], res["verdict"]) == (0, 1, "bound not sharp")
    assert comp["outputs"]["confirmation"]["counts"]["correct"] == 3
    assert any("None" in p for p in comp["outputs"]["proof"]["failing"]["problems"])
    assert CLAIM.check(comp) == []


def resealed_model(doc, change):
    forged = copy.deepcopy(doc)
    change(forged["construction"]["model"])
    forged["construction"]["model_sha256"] = model_sha256(forged["construction"]["model"])
    return forged


def edit(doc, change):
    forged = copy.deepcopy(doc)
    change(forged)
    return forged


def steps(doc, run="proven"):
    return doc["outputs"]["proof"][run]["steps"]


@pytest.mark.parametrize(
    "forge, match",
    [
        # a weight of the SelectorWidth MLP changed (its sha256 recomputed): the recorded runs are not the model's
        (lambda d: resealed_model(d, lambda m: m["layers"][0]["linear_1"]["w"][0].__setitem__(2, "3")), "not the one the induction gives"),
        # a recorded radius (the SelectorWidth MLP's, at width 9) made smaller
        (lambda d: edit(d, lambda x: steps(x)[1]["radius"][-1].__setitem__(1, "0")), "recorded run at N\\* is not"),
        # a recorded margin of the output made larger
        (lambda d: edit(d, lambda x: steps(x)[-1].__setitem__("margin", "1")), "recorded run at N\\* is not"),
        # a value dropped from a SOp's value set
        (lambda d: edit(d, lambda x: steps(x)[0]["radius"].pop()), "recorded run at N\\* is not"),
        # N* claimed one higher, with its failing length and runs moved along
        (lambda d: edit(d, lambda x: (x["result"].update(proven_up_to=10, first_failing_length=11), x["outputs"]["proof"].update(proven=x["outputs"]["proof"]["failing"]))), "does not prove every length up to the recorded N\\* = 10"),
        # the confirmed counterexample hidden: the run at N* + 1 still fails, and a counterexample listed must be counted
        (lambda d: edit(d, lambda x: x["outputs"]["confirmation"]["counterexamples"][0].__setitem__("rasp", [{"q": "9"}] * 10)), "no counterexample"),
    ],
)
def test_self_consistent_forgeries_are_refused(length12, forge, match):
    forged = forge(length12)
    problems = CLAIM.check(forged)
    assert any(__import__("re").search(match, p) for p in problems), problems
    assert status(forged) != OK


def test_a_forged_claim_that_it_holds_is_refused(length12):
    forged = edit(length12, lambda x: x["result"].update(holds=True, proven_up_to=12, first_failing_length=None))
    assert CLAIM.check(forged) and status(forged) != OK


def test_a_hidden_output_class_is_refused(length12):
    forged = resealed_model(length12, lambda m: m["output"]["classes"].pop())
    assert any("argmax reads every one" in p for p in CLAIM.check(forged))
