"""The independent check of encoder_layer_norm_identity (proofs/checkers, docs/identity.md).

The layer norm's (σ² + δ)^(-1/2) of a value of the inputs is the uninterpreted ``power(-1/2)``
of its argument, in the checker as in the prover; the graph's arguments must be, as functions,
the reference's σ_i² + δ (positive, as δ > 0 is checked from the parameters). Honest
certificates verify OK. Self-consistent forgeries, each proven by the prover from a changed
construction (so every field agrees with every other) and then claimed to hold, REJECTED: a graph
whose norm_scale delta is not params.delta, and a layer norm whose mean is taken over the
columns; a changed count of uninterpreted values FAILs too, and a delta that is not a positive
rational string is BAD. That each changed construction is wrong is decided apart from both
checker and prover: its Ball evaluation at a rational input against layer norm computed in
mpmath at 50 digits from the exact Z (proofs.checkers.references, in EE).
"""

from __future__ import annotations

import random

import mpmath
import pytest
from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.constructions.linalg import gather, index_map
from attncert.constructions.simulator import _encoder_inputs, _encoder_z, _mean_over_groups, _mul, _offsets, _total, encoder_layer_norm, sequence_length
from attncert.exact import ParseError
from attncert.exact.domains import Ball
from attncert.proofs.checkers.identity.check import check_identity
from attncert.proofs.checkers.identity.field import Basis, Field, IdentityFailure, rational_power
from attncert.proofs.checkers.identity.graph import RULES, SignOracle
from attncert.proofs.checkers.identity.references import CLAIMS as REFERENCES, layer_norm
from attncert.proofs.core.verify import BAD, OK
from tests.proofs.simulator.test_encoder_norm import ball_mp, layer_norm_mp
from tests.proofs.identity.test_identity_checker import CLAIMS, prove, prove_changed, refused, status

BASE = "encoder_layer_norm"
SIZES = {"n": 2, "d": 2, "dv": 1, "h": 1, "f": 2}
DELTA = "1/100"


@pytest.fixture(scope="module")
def honest() -> dict:
    return prove(BASE, **SIZES, delta=DELTA)


# -- honest certificates -------------------------------------------------------------------------


@pytest.mark.parametrize("sizes", [SIZES, {"n": 1, "d": 2, "dv": 1, "h": 1, "f": 1}, {"n": 2, "d": 3, "dv": 1, "h": 2, "f": 1}])
def test_honest_certificates_verify(sizes):
    doc = prove(BASE, **sizes, delta=DELTA)
    # by hand: n f ReLUs of the hidden layer, one (σ_i² + δ)^(-1/2) per row
    assert doc["result"]["holds"] and doc["result"]["uninterpreted"] == sizes["n"] * sizes["f"] + sizes["n"]
    assert check_identity(doc) == []
    assert status(doc) == OK


def test_a_delta_written_as_a_decimal_verifies():
    doc = prove(BASE, **{**SIZES, "n": 1}, delta="0.04")  # the layer's delta is 1/25, whose root is 1/5
    assert check_identity(doc) == [] and status(doc) == OK


def test_the_checker_is_the_registered_check():
    assert CLAIMS[f"{BASE}_identity"].check is check_identity


# -- the field's power and the rule norm_scale -----------------------------------------------------


def test_rational_powers_by_hand():
    assert rational_power(fmpq(1, 100), fmpq(-1, 2)) == 10
    assert rational_power(fmpq(4, 9), fmpq(1, 2)) == fmpq(2, 3)
    assert rational_power(fmpq(8, 27), fmpq(-2, 3)) == fmpq(9, 4)
    assert rational_power(fmpq(0), fmpq(1, 2)) == 0
    for x, match in [(fmpq(1, 2), "irrational"), (fmpq(-4), "not a real number"), (fmpq(0), "division by zero")]:
        with pytest.raises(IdentityFailure, match=match):
            rational_power(x, fmpq(-1, 2))


def test_powers_of_values_of_the_inputs_are_uninterpreted_and_identified_as_functions():
    F = Field(["x", "y"], Basis([]), 1)
    x, y = F.variable(0), F.variable(1)
    half = fmpq(-1, 2)
    p = F.power(F.add(F.mul(x, x), fmpq(1)), half)
    q = F.power(F.add(fmpq(1), F.mul(x, x)), half)  # the same function: the same R_0
    assert len(F.uninterpreted_values) == 1 and F.equal(p, q) and F.in_domain == set()
    r = F.power(F.add(F.mul(y, y), fmpq(1)), half, positive=True)  # another argument: R_1, shown positive
    assert len(F.uninterpreted_values) == 2 and not F.equal(p, r) and F.in_domain == {1}
    F.power(F.add(F.mul(x, x), fmpq(1)), half, positive=True)  # R_0 again, now shown positive
    assert F.in_domain == {0, 1}
    # ReLU of the same argument is another function: a new symbol
    SignOracle().relu(F, F.add(F.mul(x, x), fmpq(1)))
    assert [name for name, _ in F.uninterpreted_values] == ["power(-1/2)", "power(-1/2)", "relu"]
    with pytest.raises(IdentityFailure, match="constant with exponentials"):
        F.power(F.exp(fmpq(1)), half)


def test_norm_scale_by_hand():
    F = Field(["x", "v"], Basis([]), 1)
    scale = RULES["norm_scale"].build(F, SignOracle(), delta=fmpq(1, 4))
    assert scale(fmpq(3), fmpq(0)) == 6  # 3 (1/4)^(-1/2)
    assert scale(fmpq(3), fmpq(2)) == 2  # 3 (9/4)^(-1/2)
    x, v = F.variable(0), F.variable(1)
    out = scale(x, v)  # x R_0 with R_0 = (v + 1/4)^(-1/2)
    assert F.equal(out, F.mul(x, F.power(F.add(v, fmpq(1, 4)), fmpq(-1, 2))))
    assert len(F.uninterpreted_values) == 1


def test_the_layer_norm_reference_by_hand():
    F = Field(["g"], Basis([]), 1)
    # row (1, 3): mean 2, variance 1, delta 3: (1 + 3)^(-1/2) = 1/2; gamma (2, 5), beta (1, -1)
    out = layer_norm([[fmpq(1), fmpq(3)]], [[fmpq(2), fmpq(5)]], [[fmpq(1), fmpq(-1)]], fmpq(3), F)
    assert out == [[fmpq(0), fmpq(3, 2)]]
    # a row of one entry is centred to 0: beta whatever gamma
    assert layer_norm([[F.variable(0)]], [[fmpq(7)]], [[fmpq(2)]], fmpq(1, 4), F) == [[fmpq(2)]]
    spec = REFERENCES[BASE]
    assert spec.rationals == ("delta",) and spec.inputs(**SIZES)[-2:] == [("gamma", 1, 2), ("beta", 1, 2)]


# -- forgeries ---------------------------------------------------------------------------------------


def wrong_in_ball(cons: Construction, delta: fmpq, seed: int = 2) -> bool:
    """Apart from checker and prover: at a rational input, the construction's Ball output excludes LN(Z)
    computed in mpmath at 50 digits from the exact Z, in some entry."""
    rng = random.Random(seed)
    mats = {m: [[fmpq(rng.randint(-4, 4), rng.randint(1, 3)) for _ in range(c)] for _ in range(r)] for m, r, c in cons.layout.inputs}
    ball = Ball(256)
    with ball.context():
        out = cons.layout.decode(cons.run({k: [[ball.native(x) for x in row] for row in m] for k, m in mats.items()}, ball))
    with mpmath.workdps(50):
        for got_row, want_row in zip(out, layer_norm_mp(mats, delta)):
            for got, want in zip(got_row, want_row):
                mid, rad = ball_mp(got)
                if abs(want - mid) > rad + mpmath.mpf(10) ** -40:
                    return True
    return False


def claimed_to_hold(doc: dict) -> dict:
    doc["result"].update(holds=True, mismatches=[])
    return doc


def test_the_honest_construction_agrees_with_mpmath():
    # the independent route itself: the registered construction is not found wrong
    assert not wrong_in_ball(encoder_layer_norm(**SIZES, delta=fmpq(1, 100)), fmpq(1, 100))


def prove_without_the_positivity_rule(monkeypatch, cons: Construction) -> dict:
    """The certificate of a changed construction whose (.)^(-1/2) arguments the reference never forms:
    the prover refuses it (their positivity is not established), so it is made with that rule off."""
    from attncert.exact.symbolic.ring import SymbolicRing
    from attncert.proofs.identity.prove import NoSymbolicRule

    with pytest.raises(NoSymbolicRule, match="positivity"):
        prove_changed(monkeypatch, BASE, {**SIZES, "delta": DELTA}, cons)
    monkeypatch.undo()
    monkeypatch.setattr(SymbolicRing, "undefined_powers", lambda self: [])
    doc = prove_changed(monkeypatch, BASE, {**SIZES, "delta": DELTA}, cons)
    monkeypatch.undo()
    return doc


def test_a_graph_whose_delta_is_not_the_parameter_fails(monkeypatch):
    cons = encoder_layer_norm(**SIZES, delta=fmpq(1, 25))  # the parameter says 1/100
    assert wrong_in_ball(cons, fmpq(1, 100))
    doc = prove_without_the_positivity_rule(monkeypatch, cons)
    # as the prover records it: the graph's n arguments v + 1/25 and the reference's n, v + 1/100, apart
    assert doc["result"]["holds"] is False and doc["result"]["uninterpreted"] == SIZES["n"] * (SIZES["f"] + 2)
    # the graph takes (.)^(-1/2) of values the reference does not show positive: a problem even as recorded
    refused(doc, "not shown in its domain")
    problems = refused(claimed_to_hold(doc), "result.holds")
    assert any("result.mismatches" in p for p in problems)


def layer_norm_with_column_mean(n: int, d: int, dv: int, h: int, f: int, delta: fmpq) -> Construction:
    """encoder_layer_norm with its mean taken over each column (over i) instead of each row."""
    inputs = _encoder_inputs(n, d, dv, h, f) + (("gamma", 1, d), ("beta", 1, d))
    og, ob = _offsets(inputs, "gamma", "beta")
    z, value = _encoder_z(inputs, n, d, dv, h, f)
    row = index_map((0, d), (1, 0), bound=n * d)  # i d + j -> i
    column = index_map((0, d), (0, 1), bound=n * d)  # i d + j -> j: the wrong axis
    mean = gather(column, _mean_over_groups(column, z))
    centred = rasp.numerical(rasp.SequenceMap(rasp.fn("sub"), z, mean))
    var = gather(row, _mean_over_groups(row, _mul(centred, centred)))
    scaled = rasp.numerical(rasp.SequenceMap(rasp.fn("norm_scale", delta=delta), centred, var))
    gamma = gather(index_map((n, d), (0, 1), const=og, bound=n * d), value)
    beta = gather(index_map((n, d), (0, 1), const=ob, bound=n * d), value)
    out = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), _mul(gamma, scaled), beta))
    return Construction(BASE, out, Layout(inputs, (n, d), sequence_length(n, d, dv, h, d, f, inputs=_total(inputs))))


def test_a_layer_norm_centred_by_column_means_fails(monkeypatch):
    cons = layer_norm_with_column_mean(**SIZES, delta=fmpq(1, 100))
    assert wrong_in_ball(cons, fmpq(1, 100))
    doc = prove_without_the_positivity_rule(monkeypatch, cons)
    assert doc["result"]["holds"] is False
    problems = refused(claimed_to_hold(doc), "result.holds")
    assert any("result.mismatches" in p for p in problems)
    assert any("not shown in its domain" in p for p in problems)


@pytest.mark.parametrize("change", [1, -1])
def test_a_changed_count_of_uninterpreted_values_fails(honest, change):
    doc = {**honest, "result": {**honest["result"], "uninterpreted": honest["result"]["uninterpreted"] + change}}
    refused(doc, "result.uninterpreted")


@pytest.mark.parametrize("delta", ["0", "-1/100", "1/0", 1, "x"])
def test_a_delta_that_is_not_a_positive_rational_string_is_bad(honest, delta):
    doc = {**honest, "params": {**honest["params"], "delta": delta}}
    with pytest.raises(ParseError, match="delta"):
        check_identity(doc)
    assert status(doc) == BAD


def test_a_missing_delta_is_bad(honest):
    doc = {**honest, "params": {k: v for k, v in honest["params"].items() if k != "delta"}}
    with pytest.raises(ParseError, match="parameters of this claim"):
        check_identity(doc)
    assert status(doc) == BAD
