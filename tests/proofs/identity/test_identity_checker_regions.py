"""The identity checker on piecewise maps: region splitting and uninterpreted ReLU
(proofs/checkers/identity/regions.py, docs/identity.md).

Honest relu, maxmin and encoder-layer certificates verify OK. Self-consistent forgeries (re-sealed)
REJECTED or are BAD, each refused by the check itself: a tree pruned or with a zero branch dropped, a
feasible option marked empty with made-up multipliers, leaves renumbered, a question changed, a
group split so that an output reads two groups, a ReLU wrong only at 0, a division by an
uninterpreted value, a changed count of uninterpreted values. Each wrong claim is shown wrong apart
from the checker: the construction evaluated in QQ or EE at a point, or a point of a region recorded
empty.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.exact import EE, QQ
from attncert.proofs.checkers.identity.check import check_identity
from attncert.proofs.checkers.identity.regions import motzkin_holds
from attncert.proofs.core.verify import OK
from tests.proofs.identity.test_identity_checker import CLAIMS, prove, prove_changed, refused, status

# -- honest certificates -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base, sizes",
    [("relu", {"n": 3}), ("maxmin", {"n": 4}), ("maxmin", {"n": 5}), ("encoder_layer", {"n": 2, "d": 2, "dv": 1, "h": 1, "f": 2})],
    ids=["relu3", "maxmin4", "maxmin5", "encoder"],
)
def test_honest_piecewise_certificates_verify(base, sizes):
    doc = prove(base, **sizes)
    assert doc["result"]["holds"] and check_identity(doc) == [] and status(doc) == OK
    if base == "encoder_layer":
        # the n f hidden entries (Y W_1 + b_1)_ij are distinct functions (each has its own b_1j and
        # row i of Y): n f uninterpreted values, the construction's and the reference's shared
        assert doc["result"]["uninterpreted"] == sizes["n"] * sizes["f"]
    else:
        assert doc["outputs"]["regions"]


def test_every_identity_claim_has_an_independent_check():
    from attncert.proofs.checkers.identity.compiled import check_compiled_identity
    from attncert.proofs.checkers.identity.hierarchy import check_hierarchy_identity

    for name, claim in CLAIMS.items():
        if name.endswith("_identity"):
            assert claim.check in (check_identity, check_hierarchy_identity, check_compiled_identity), name


# -- Motzkin certificates ----------------------------------------------------------------------------

X = (((0, fmpq(1)),), fmpq(0))  # x
X_MINUS_1 = (((0, fmpq(1)),), fmpq(-1))  # x - 1


def test_motzkin_certificates_by_hand():
    # {x > 0, x < 0}: 1 (x) + 1 (-x) = 0 <= 0 with a positive strict multiplier
    assert motzkin_holds([(X, 1), (X, -1)], [fmpq(1), fmpq(1)])
    # {x = 0, x - 1 = 0}: x - (x - 1) = 1 != 0, every multiplier of a zero decision
    assert motzkin_holds([(X, 0), (X_MINUS_1, 0)], [fmpq(1), fmpq(-1)])
    # {x > 0, x - 1 < 0} holds at x = 1/2: no multipliers certify it
    feasible = [(X, 1), (X_MINUS_1, -1)]
    for ms in ([1, 1], [0, 0], [1, 0], [2, 1], [-1, -1]):
        assert not motzkin_holds(feasible, [fmpq(m) for m in ms])
    assert not motzkin_holds([(X, 1), (X, -1)], [fmpq(-1), fmpq(-1)])  # a strict multiplier < 0
    assert not motzkin_holds([(X, 1), (X, -1)], [fmpq(1)])  # one per decision
    assert not motzkin_holds([(X, 0)], [fmpq(0)])  # 0 = 0 is no contradiction


def _empty_on_the_line(decisions) -> bool:
    """Whether {s (a x + b) > 0, a x + b = 0 (s = 0)} is empty, by hand: the equalities fix x (or
    contradict), else the strict ones cut an open interval."""
    lo, hi, at = None, None, None
    for ((pairs, b), s) in decisions:
        a = pairs[0][1] if pairs else fmpq(0)
        if s == 0:
            if not a:
                if b:
                    return True
                continue
            x = -b / a
            if at is not None and at != x:
                return True
            at = x
        elif not a:
            if s * b <= 0:
                return True
        else:
            bound, below = -b / a, s * a > 0  # s a x > -s b: x > -b/a if s a > 0, else x < -b/a
            if below:
                lo = bound if lo is None else max(lo, bound)
            else:
                hi = bound if hi is None else min(hi, bound)
    if at is not None:
        return (lo is not None and at <= lo) or (hi is not None and at >= hi)
    return lo is not None and hi is not None and lo >= hi


small = st.fractions(min_value=-3, max_value=3, max_denominator=3)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([Fraction(1), Fraction(-2), Fraction(1, 2)]), small, st.sampled_from([-1, 0, 1])), min_size=1, max_size=4),
    st.lists(st.integers(-2, 2), min_size=4, max_size=4),
)
def test_a_motzkin_certificate_is_only_accepted_for_an_empty_region(rows, ms):
    # one variable, so emptiness is decided by hand; random multipliers that the check accepts prove it
    decisions = [((((0, fmpq(a.numerator, a.denominator)),), fmpq(b.numerator, b.denominator)), s) for a, b, s in rows]
    if motzkin_holds(decisions, [fmpq(m) for m in ms[: len(decisions)]]):
        assert _empty_on_the_line(decisions)


# -- forged trees --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def relu2() -> dict:
    """relu(2) through its compiled weights: one group of both variables, a tree of depth 2 (9 leaves)."""
    doc = CLAIMS["compiled_identity"].prove(of="relu", sizes="n=2")
    (group,) = doc["outputs"]["regions"]
    assert group["variables"] == [0, 1] and group["tree"]["form"]["coefficients"] == [[0, "1"]]
    return doc


def _renumber(tree: dict) -> None:
    """Number the leaves 0, 1, ... in depth-first order."""
    count = 0

    def walk(b):
        nonlocal count
        if "leaf" in b:
            b["leaf"] = count
            count += 1
        elif "form" in b:
            for c in b["branches"]:
                walk(c)

    walk(tree)


def test_honest_compiled_relu_tree_verifies(relu2):
    assert CLAIMS["compiled_identity"].check(relu2) == [] and status(relu2) == OK


def test_a_pruned_subtree_fails(relu2):
    # the x0 > 0 branch cut to one leaf: the region x0 > 0 holds (1, 1) and (1, -1), where relu(x1)
    # takes different forms, so one leaf cannot stand for it; the evaluation asks x1's sign there
    doc = copy.deepcopy(relu2)
    tree = doc["outputs"]["regions"][0]["tree"]
    tree["branches"][2] = {"leaf": 0}
    _renumber(tree)
    problems = CLAIMS["compiled_identity"].check(doc)
    assert any("recorded tree has a leaf" in p for p in problems), problems
    assert status(doc) != OK


def test_a_dropped_branch_is_malformed(relu2):
    doc = copy.deepcopy(relu2)
    tree = doc["outputs"]["regions"][0]["tree"]
    del tree["branches"][1]
    _renumber(tree)
    refused(doc, "branches", CLAIMS["compiled_identity"].check)


@pytest.mark.parametrize("multipliers", [["1", "1"], ["0", "0"], ["1", "0"], ["0", "-1"]])
def test_a_feasible_option_marked_empty_fails(relu2, multipliers):
    # {x0 > 0, x1 < 0} holds (1, -1), so no multipliers certify it empty
    point = (fmpq(1), fmpq(-1))
    assert point[0] > 0 and point[1] < 0
    doc = copy.deepcopy(relu2)
    tree = doc["outputs"]["regions"][0]["tree"]
    tree["branches"][2]["branches"][0] = {"empty": multipliers}
    _renumber(tree)
    refused(doc, "do not certify its region empty", CLAIMS["compiled_identity"].check)


def test_the_zero_branch_of_relu_marked_empty_fails():
    # x0 = 0 is a region (the point 0): dropping it would hide a ReLU that is wrong only at 0
    doc = prove("relu", n=2)
    tree = doc["outputs"]["regions"][0]["tree"]
    tree["branches"][1] = {"empty": ["1"]}
    _renumber(tree)
    refused(doc, "do not certify its region empty")


def test_leaves_out_of_walk_order_fail():
    doc = prove("relu", n=2)
    branches = doc["outputs"]["regions"][0]["tree"]["branches"]
    branches[0]["leaf"], branches[2]["leaf"] = branches[2]["leaf"], branches[0]["leaf"]
    refused(doc, "order of the walk")


def test_a_changed_question_fails():
    doc = prove("relu", n=2)
    doc["outputs"]["regions"][1]["tree"]["form"]["constant"] = "1"  # x1 + 1 instead of x1
    refused(doc, "another question")


def test_groups_that_overlap_or_miss_a_variable_fail():
    doc = prove("relu", n=2)
    doc["outputs"]["regions"][1]["variables"] = [0]
    refused(doc, "share a variable")
    doc = prove("relu", n=2)
    del doc["outputs"]["regions"][1]
    refused(doc, "cover 1 of the 2 variables")


# -- forged constructions, proven by the prover and then claimed to hold --------------------------


def _relu_construction(out: rasp.SOp, n: int) -> Construction:
    return Construction("relu", out, Layout((("x", 1, n),), (1, n), n))


def _prove_relu_with(monkeypatch, cons: Construction) -> dict:
    doc = prove_changed(monkeypatch, "relu", {"n": cons.layout.length}, cons)
    monkeypatch.undo()
    return doc


def _output(cons: Construction, xs: list, domain=QQ) -> list:
    return rasp.evaluate_graph(cons.graph(), xs, domain)["output"]


def _relu_of(x):
    return x if x > 0 else 0


def test_an_output_reading_two_groups_fails(monkeypatch):
    # out_p = relu(x_p) + relu(x_{p+1}) relu(-x_p) (x_2 read as 0): relu(x_p) wherever x_p and x_{p+1}
    # have one sign, so on every pass where both groups {x_0}, {x_1} stand on the same sign; wrong at
    # x = (-1, 1), where out_0 = 1
    x = rasp.tokens
    r = rasp.numerical(rasp.Map(rasp.fn("relu"), x))
    r_neg = rasp.numerical(rasp.Map(rasp.fn("relu"), rasp.numerical(rasp.Map(rasp.fn("mul_const", c=-1), x))))
    successor = rasp.Map(rasp.fn("radix_affine", radices=[1], coeffs=[1], const=1, bound=None, other=0), rasp.indices)
    r_next = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, successor, rasp.Comparison.EQ), r, default=0))
    out = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), r, rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), r_next, r_neg))))
    cons = _relu_construction(out, 2)
    assert _output(cons, [fmpq(-1), fmpq(1)]) == [1, 1] != [_relu_of(-1), _relu_of(1)]
    doc = _prove_relu_with(monkeypatch, cons)
    # the regions of the honest relu(2) certificate: one group per variable, as if out_p read x_p alone
    doc["outputs"]["regions"] = prove("relu", n=2)["outputs"]["regions"]
    doc["result"].update(holds=True, mismatches=[])
    refused(doc, "depends on the recorded variable groups [0, 1]")


def test_a_relu_wrong_only_at_zero_fails(monkeypatch):
    # relu(x) + [x = 0]: 1 at x = 0, relu(x) elsewhere
    x = rasp.tokens
    r = rasp.numerical(rasp.Map(rasp.fn("relu"), x))
    bump = rasp.numerical(rasp.Map(rasp.fn("lookup", table=[(0, 1)], other=0), x))
    cons = _relu_construction(rasp.numerical(rasp.SequenceMap(rasp.fn("add"), r, bump)), 2)
    assert _output(cons, [fmpq(0), fmpq(-1)]) == [1, 0] and _output(cons, [fmpq(2), fmpq(-1)]) == [2, 0]
    doc = _prove_relu_with(monkeypatch, cons)
    doc["result"].update(holds=True, mismatches=[])
    problems = refused(doc, "result.holds")
    # found on the leaves x_0 = 0 and x_1 = 0 (the second pass), entries (0, 0) and (0, 1)
    assert any("result.mismatches" in p and "'row': 0, 'col': 0" in p for p in problems), problems


def test_a_division_by_an_uninterpreted_value_fails(monkeypatch):
    # relu(x) relu(x^2) / relu(x^2): relu(x^2) is not affine, so uninterpreted; with it taken for a unit
    # the quotient is relu(x), but at x = 0 the construction divides by 0
    x = rasp.tokens
    r = rasp.numerical(rasp.Map(rasp.fn("relu"), x))
    r_square = rasp.numerical(rasp.Map(rasp.fn("relu"), rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), x, x))))
    one = rasp.numerical(rasp.SequenceMap(rasp.fn("div"), r_square, r_square))
    cons = _relu_construction(rasp.numerical(rasp.SequenceMap(rasp.fn("mul"), r, one)), 1)
    with pytest.raises(Exception, match="division by an exact zero"):
        _output(cons, [fmpq(0)], EE)
    doc = _prove_relu_with(monkeypatch, cons)
    # the prover records relu(x^2) != 0 as a hypothesis; the check accepts none about an uninterpreted value
    assert doc["result"]["hypotheses"] == 1
    refused(doc, "uninterpreted value")
    doc["outputs"]["divisors"] = []
    doc["result"].update(holds=True, mismatches=[], hypotheses=0)
    refused(doc, "by a value with an uninterpreted function")


@pytest.mark.parametrize("change", [1, -1])
def test_a_changed_count_of_uninterpreted_values_fails(change):
    doc = prove("encoder_layer", n=1, d=1, dv=1, h=1, f=2)
    assert doc["result"]["uninterpreted"] == 2  # n f
    doc["result"]["uninterpreted"] += change
    refused(doc, "result.uninterpreted")


def test_regions_of_a_layout_longer_than_its_inputs_are_checked(monkeypatch):
    # relu(2) on 3 positions: the data flow is read at the layout's length, the padding position
    # depends on no variable (compared once) and is relu(0) = 0
    cons = Construction("relu", rasp.numerical(rasp.Map(rasp.fn("relu"), rasp.tokens)), Layout((("x", 1, 2),), (1, 2), 3))
    doc = prove_changed(monkeypatch, "relu", {"n": 2}, cons)
    monkeypatch.undo()
    assert doc["construction"]["layout"]["length"] == 3 and doc["result"]["holds"]
    assert check_identity(doc) == []  # (verify then rebuilds the registered relu(2), of length 2, and differs)
