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
    res, (conf,) = length12["result"], length12["outputs"]["confirmation"]
    assert (res["proven_up_to"], res["first_failing_length"], res["verdict"], res["holds"]) == (9, 10, "counterexample", False)
    assert res["counterexample_length"] == 10
    # the inputs built at length 10 (the constant ones among them) all decode their length 10 as 9: by hand,
    # tracr's discretising MLP has its ramp (width 1/100) between 1/11 and 1/10 ending at their midpoint, and
    # 1/11 lies on it, 0.545 of the way to 9's side
    assert conf["length"] == 10 and conf["inputs"] == "constructed" and conf["counts"]["correct"] == 0
    assert conf["counts"]["counterexamples"] == conf["counts"]["inputs"] >= 2
    first = conf["counterexamples"][0]
    assert [p["decoded"] for p in first["positions"]][:1] == [{"q": "9"}] and first["rasp"] == [{"q": "10"}] * 10
    assert CLAIM.check(length12) == [] and rebuilt_differences(CLAIM, length12) == []
    assert status(length12) != OK  # genuine, and its claim (every length to 12) does not hold


def test_agreement_with_the_exhaustive_method_where_the_model_is_right():
    from tracr.compiler import lib
    from tracr.rasp import rasp

    runs = {}
    for name, program, vocab, n in (
        ("length", lib.make_length(), ["a", "b", "c"], 5),
        ("frac_prevs", lib.make_frac_prevs(rasp.tokens == "a"), ["a", "b"], 4),
        ("hist", lib.make_hist(), ["a", "b", "c"], 4),
    ):
        comp, exh = runs[name] = both(program, vocab, n)
        assert comp["result"]["holds"] and exh["result"]["holds"], comp["result"]
        assert comp["result"]["proven_up_to"] == n and CLAIM.check(comp) == []
    # frac_prevs: the radius the induction carries and the largest error bound of the exhaustive method's balls
    # (both upper bounds of the same softmax leak) agree to 1%, far below the tolerance of 10^-6
    comp, exh = runs["frac_prevs"]
    from fractions import Fraction

    radius = max(Fraction(r) for step in comp["outputs"]["proof"]["proven"]["steps"] if step.get("computes") == "frac_prevs" for _, r in step["radius"])
    measured = Fraction(exh["outputs"]["max_error"])
    assert abs(radius - measured) <= measured / 100 and radius < Fraction(1, 10**6)


def test_agreement_where_the_model_is_wrong():
    """make_sort_unique on repeated tokens: RASP gives None where two keys collide, which argmax cannot
    say. The exhaustive method lists counterexamples. The induction proves length 1: the SelectorWidth of
    Select(tokens, tokens, LT) never selects the query's own position (v < v is false), so its width is 0
    there, and the query at index 0 selects every key configuration, its own among them: no None. At
    length 2 a width of 0 at both positions leaves index 1 with no key (None): the bound fails, and of
    the 9 inputs of length 2 exactly the 3 constant ones are counterexamples (by hand: equal tokens have
    rank 0 both, so position 2 selects nothing)."""
    from tracr.compiler import lib
    from tracr.rasp import rasp

    comp, exh = both(lib.make_sort_unique(rasp.tokens, rasp.tokens), [1, 2, 3], 3)
    assert not exh["result"]["holds"] and exh["result"]["counterexamples"] > 0
    res, (conf,) = comp["result"], comp["outputs"]["confirmation"]
    assert not res["holds"] and (res["proven_up_to"], res["first_failing_length"], res["verdict"], res["counterexample_length"]) == (1, 2, "counterexample", 2)
    # the inputs built at length 2 include the constant ones, and those are the only counterexamples
    assert conf["inputs"] == "constructed" and conf["counts"]["counterexamples"] == 3
    assert sorted((c["input"] for c in conf["counterexamples"]), key=repr) == [[{"q": str(t)}] * 2 for t in (1, 2, 3)]
    assert all(c["rasp"][1] is None for c in conf["counterexamples"])
    assert any("None" in p for p in comp["outputs"]["proof"]["failing"]["problems"])
    assert CLAIM.check(comp) == []


@pytest.fixture(scope="module")
def sort16():
    """tracr's make_sort over 0, 1, 2 to 16 (keys x + i/16, made unique by position)."""
    from tracr.compiler import lib
    from tracr.rasp import rasp

    from attncert.proofs.tracr.model import certify_tracr

    program = lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=16, min_key=1)
    return certify_tracr(program, compiled(program, [0, 1, 2], 16), [0, 1, 2], 16, method="compositional")


def test_a_counterexample_past_the_first_failing_length_is_built_and_confirmed(sort16):
    """The bound proves every length to 10 and fails at 11, where the inputs built show no counterexample
    (the model is right there on them); at 12 they show real ones. By hand: the target position is the rank of
    the key, a SelectorWidth of Select(keys, keys, LT); tracr's MLP puts 0.62 of width 11 on the column of 10
    (1/12 lies on the ramp between 1/11 and 1/12), so the query at index 10 prefers the rank-11 key over the
    rank-10 one, and decodes the token ranked 11th (0-based) wherever it differs from the token ranked 10th."""
    res, runs = sort16["result"], sort16["outputs"]["confirmation"]
    assert (res["proven_up_to"], res["first_failing_length"], res["counterexample_length"], res["verdict"]) == (10, 11, 12, "counterexample")
    assert [(r["length"], r["inputs"], r["counts"]["counterexamples"] > 0) for r in runs] == [(11, "constructed", False), (12, "constructed", True)]
    assert runs[0]["counts"]["correct"] == runs[0]["counts"]["inputs"] > 100
    for c in runs[1]["counterexamples"]:
        ranked = sorted(int(t["q"]) for t in c["input"])
        assert ranked[10] != ranked[11]
        assert [(p["position"], p["status"], p["decoded"]) for p in c["positions"]] == [(11, "counterexample", {"q": str(ranked[11])})]
    assert CLAIM.check(sort16) == [] and rebuilt_differences(CLAIM, sort16) == []
    assert status(sort16) != OK


@pytest.mark.parametrize(
    "change, match",
    [
        # the run at 11 (no counterexample there) dropped: the confirmation must start at the first failing length
        (lambda x: x["outputs"]["confirmation"].pop(0), "must run the lengths 11, 12"),
        # the counterexample claimed at the first failing length
        (lambda x: x["result"].update(counterexample_length=11), "result.counterexample_length"),
        # the counterexample listed, the verdict says none was found
        (lambda x: x["result"].update(verdict="undecided"), "exactly when one is listed"),
        # the listed counterexamples moved to the run at 11
        (lambda x: x["outputs"]["confirmation"][0].update(counterexamples=x["outputs"]["confirmation"][1]["counterexamples"], counts=x["outputs"]["confirmation"][1]["counts"]), "not an input of length 11"),
    ],
)
def test_a_forged_confirmation_past_the_first_failing_length_is_refused(sort16, change, match):
    forged = edit(sort16, change)
    problems = CLAIM.check(forged)
    assert any(match in p for p in problems), problems
    assert status(forged) != OK


def test_a_static_sop_is_in_every_configuration_s_centre():
    """tracr's sort_2 case sorts by keys 1 - indices + i/5: the MLP writes map_1 = 1 - indices, a function of the
    position, which the heads after it read. Proven at every length to 5 (as the exhaustive method finds). A
    forged model whose sort head also reads map_1:1 (1 at position 1 only) and adds 5 to the class b there
    decodes b wherever position 1's token is ranked and is not b (its own forward pass on ["a"]); resealed, it is
    refused: the induction carries map_1's one-hot in the centre of every configuration with a position (an
    induction leaving it out sees 0 there, the forged weights add nothing, and it would prove the forged model)."""
    from flint import fmpq
    from tracr.compiler import lib
    from tracr.rasp import rasp

    from attncert.proofs.checkers.tracr.model import Model, position_status, run, value

    program = lib.make_sort(vals=rasp.tokens, keys=1 - rasp.indices, max_seq_len=5, min_key=1)
    comp, exh = both(program, ["a", "b", "c", "d"], 5)
    assert comp["result"]["verdict"] == "proven" and exh["result"]["holds"]

    def forge(m):
        col = {label: c for c, label in enumerate(m["residual"])}
        free = m["key_size"] - 1  # a head dimension the sort head does not use
        assert all(w[1] != free for w in m["layers"][3]["value"]["w"])
        m["layers"][3]["value"]["w"].append([col["map_1:1"], free, "1"])
        m["layers"][3]["linear"]["w"].append([free, col["sort:b"], "5"])

    forged = resealed_model(comp, forge)
    model = Model(forged["construction"]["model"])
    (stream,) = run(model, [[value({"s": "a"})]])
    # the forged claim is false: RASP sorts ["a"] to ["a"], the forged model's argmax is certainly not a
    assert position_status(model, stream[1], "a", fmpq(1, 10**6), {}) == "counterexample"
    problems = CLAIM.check(forged)
    assert any("does not prove every length up to the recorded N* = 5" in p for p in problems), problems
    assert status(forged) != OK


def test_pair_balance_at_tracr_s_size_by_means_taken_together():
    """make_pair_balance over (, ), a, b, c to 10 (tracr's own test size): opens and closes are the means of
    bools_open and bools_close over one selection, and no token is both, so they average pairs (1, 0), (0, 1),
    (0, 0): at length 2 exactly the pairs listed below (by hand), never (1, 1), whose radii (the BOS leak, 5.4e-7
    each) would add past the tolerance of 10^-6. With them apart (and BOS's share apart from the unselected keys')
    every length to 10 is proven: 12,207,030 inputs, none run."""
    from flint import fmpq
    from tracr.compiler import lib
    from tracr.rasp import rasp

    from attncert.proofs.checkers.programs import Program
    from attncert.proofs.checkers.tracr.every_input import Induction
    from attncert.proofs.checkers.tracr.model import Model, value
    from attncert.proofs.tracr.model import certify_tracr

    vocab = ["(", ")", "a", "b", "c"]
    program = lib.make_pair_balance(rasp.tokens, "(", ")")
    doc = certify_tracr(program, compiled(program, vocab, 10), vocab, 10, method="compositional")
    assert doc["result"]["verdict"] == "proven" and doc["result"]["proven_up_to"] == 10
    assert CLAIM.check(doc) == []
    cons = doc["construction"]
    induction = Induction(Model(cons["model"]), Program(cons["program"]), [value(t) for t in doc["inputs"]["vocab"]], 2, fmpq(1, 10**6))
    q = lambda a, b=1: ("q", a, b)  # noqa: E731
    assert induction._joint_means("opens", "closes") == {(q(0), q(0)), (q(1), q(0)), (q(0), q(1)), (q(1, 2), q(0)), (q(0), q(1, 2)), (q(1, 2), q(1, 2))}


def width_values(doc, run, sop):
    """The widths a SelectorWidth's head step gives values (and radii) in a recorded run."""
    (step,) = [s for s in doc["outputs"]["proof"][run]["steps"] if s.get("computes") == sop and "head" in s["sublayer"]]
    return [int(v["q"]) for v, _ in step["radius"]]


def test_the_width_range_follows_the_query_s_own_key(length12, sort16):
    """The lemma of every_input.py: make_hist's Select(tokens, tokens, EQ) selects the query's own key (v == v), so its
    width at length bound 4 is 1..4; make_sort's Select(keys, keys, LT) never does (v < v is false), so its rank at
    length bound 10 is 0..9, never 10; make_length's Select(tokens, tokens, TRUE) selects every key, so it is proven
    length by length and its width at the length 9 is 9."""
    from tracr.compiler import lib

    from attncert.proofs.tracr.model import certify_tracr

    program = lib.make_hist()
    hist = certify_tracr(program, compiled(program, ["a", "b", "c"], 4), ["a", "b", "c"], 4, method="compositional")
    assert hist["result"]["verdict"] == "proven" and not hist["outputs"]["proof"]["proven"]["exact"]
    assert sorted(width_values(hist, "proven", "hist")) == [1, 2, 3, 4]
    assert sorted(width_values(sort16, "proven", "target_pos")) == list(range(0, 10))
    assert length12["outputs"]["proof"]["proven"]["exact"] and width_values(length12, "proven", "length") == [9]


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
        (lambda d: edit(d, lambda x: x["outputs"]["confirmation"][0]["counterexamples"][0].__setitem__("rasp", [{"q": "9"}] * 10)), "no counterexample"),
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
