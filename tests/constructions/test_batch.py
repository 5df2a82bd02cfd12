"""Batched evaluation gives, input by input, exactly what the single-input evaluator gives.

Identical means: the same values, the same types (fmpq, EENumber, bool, str,
None, Selection), EE values in the same normal form (their JSON), and on a batch
with a failing input, the error that input raises alone.
"""

import itertools

import pytest
from flint import fmpq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.languages import match2
from attncert.constructions.rasp import Comparison as Cmp
from attncert.constructions.rasp.batch import evaluate_batch
from attncert.constructions.rasp.selection import Selection
from attncert.constructions.simulator import pad_for, universal
from attncert.exact import EE, QQ, EENumber


def assert_identical(want, got):
    assert type(want) is type(got), (want, got)
    if isinstance(want, list):
        assert len(want) == len(got)
        for a, b in zip(want, got):
            assert_identical(a, b)
    elif isinstance(want, Selection):
        assert want.to_dense().tolist() == got.to_dense().tolist()
    elif isinstance(want, EENumber):
        assert EE.to_json(want) == EE.to_json(got)
    else:
        assert want == got


def check_batch(g, inputs, domain):
    want, error = [], None
    for xs in inputs:
        try:
            want.append(rasp.evaluate_graph(g, xs, domain))
        except Exception as e:  # noqa: BLE001  (the first failing input's error is what the batch must raise)
            error = error or e
    if error is not None:
        with pytest.raises(type(error)) as raised:
            evaluate_batch(g, inputs, domain)
        assert str(raised.value) == str(error)
        return
    got = evaluate_batch(g, inputs, domain)
    assert len(got) == len(want)
    for w, o in zip(want, got):
        assert set(w) == set(o)
        for name in w:
            assert_identical(w[name], o[name])


# -- random programs ---------------------------------------------------------------------------

e = EE.exp(1)
TOKENS = {
    "small": st.integers(-3, 3).map(fmpq),
    "rational": st.builds(fmpq, st.integers(-9, 9), st.integers(1, 6)),
    "ee": st.sampled_from([e, EE.exp(2), EE.convert(2), e + 1, EE.exp(fmpq(-1, 2)) * 3, EE.convert(0)]),
    "fraction": st.sampled_from([1 / (e + 1), e / (e + 2)]),
    "pair": st.tuples(st.integers(-3, 3).map(fmpq), st.integers(0, 1)),
    "token": st.sampled_from(["a", "b", True]),
}

UNARY = [
    rasp.fn("identity"),
    rasp.fn("neg"),
    rasp.fn("add_const", c=fmpq(1, 2)),
    rasp.fn("sub_const", c=2),
    rasp.fn("rsub_const", c=1),
    rasp.fn("mul_const", c=-3),
    rasp.fn("mul_const", c=e),
    rasp.fn("div_const", c=fmpq(2, 3)),
    rasp.fn("rdiv_const", c=2),
    rasp.fn("exp"),
    rasp.fn("compare_const", op="<", c=1),
    rasp.fn("token_value"),
    rasp.fn("token_tag"),
    rasp.fn("radix_affine", radices=(0, 2), coeffs=(1, 3), const=1, bound=3, other=-1),
    rasp.fn("compose", fns=(rasp.fn("add_const", c=1), rasp.fn("mul_const", c=2))),
    lambda x: x,
]
BINARY = [
    rasp.fn("add"),
    rasp.fn("sub"),
    rasp.fn("mul"),
    rasp.fn("div"),
    rasp.fn("mul_scaled", c=3),
    rasp.fn("linear", a=2, b=fmpq(-1, 3)),
    rasp.fn("masked_exp", c=2),
]


@st.composite
def programs(draw):
    """A random program over tokens, indices and length: maps, selections (static and data), aggregates, widths."""
    sops = [rasp.tokens, rasp.indices, rasp.length, rasp.numerical(rasp.Map(rasp.fn("token_value"), rasp.tokens))]
    sels = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["map", "sequence_map", "select", "aggregate", "width", "combine"]))
        pick = lambda xs: xs[draw(st.integers(0, len(xs) - 1))]  # noqa: E731
        if kind == "map":
            sops.append(rasp.numerical(rasp.Map(pick(UNARY), pick(sops), simplify=False)))
        elif kind == "sequence_map":
            sops.append(rasp.numerical(rasp.SequenceMap(pick(BINARY), pick(sops), pick(sops))))
        elif kind == "select":
            sels.append(rasp.Select(pick(sops), pick(sops), pick(list(Cmp))))
        elif kind == "combine" and sels:
            a, b = pick(sels), pick(sels)
            sels.append(pick([a & b, a | b, ~a]))
        elif kind in ("aggregate", "width") and sels:
            sel = pick(sels)
            if kind == "width":
                sops.append(rasp.SelectorWidth(sel))
            else:
                default = draw(st.sampled_from([0, None, fmpq(1, 2), e]))
                sops.append(rasp.numerical(rasp.Aggregate(sel, pick(sops), default=default)))
    outputs = {f"s{i}": s for i, s in enumerate(sops[-3:])}
    if sels:
        outputs["sel"] = sels[-1]
    return rasp.to_graph(outputs)


@st.composite
def batches(draw, allowed=tuple(sorted(TOKENS))):
    n = draw(st.integers(1, 5))
    kinds = draw(st.lists(st.sampled_from(allowed), min_size=1, max_size=2, unique=True))
    token = st.one_of(*(TOKENS[k] for k in kinds))
    return draw(st.lists(st.lists(token, min_size=n, max_size=n), min_size=1, max_size=6))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), batches(), st.sampled_from([EE, QQ, None]))
def test_random_programs_on_random_batches(g, inputs, domain):
    check_batch(g, inputs, domain)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), batches(allowed=("small", "rational", "ee")), st.sampled_from([EE, QQ]))
def test_random_programs_on_numeric_batches(g, inputs, domain):
    """Numbers only, so that most nodes take the array path rather than the per-input one."""
    check_batch(g, inputs, domain)


# -- the constructions the proofs batch ----------------------------------------------------------

rational = st.builds(fmpq, st.integers(-6, 6), st.integers(1, 5))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.data())
def test_universal_on_random_rational_batches(n, d, dv, data):
    U = universal(n, d, dv)
    size = data.draw(st.integers(1, 4))
    inputs = [
        U.layout.encode({k: [[data.draw(rational) for _ in range(c)] for _ in range(r)] for k, r, c in U.layout.inputs}, EE)
        for _ in range(size)
    ]
    check_batch(U.graph(), inputs, EE)


def test_universal_on_padded_inputs_and_match2_words():
    U = universal(3, 2, 2)
    X, A, V = [[fmpq(1), fmpq(-1, 2)]], [[fmpq(2), fmpq(0)], [fmpq(1, 3), fmpq(1)]], [[fmpq(1), fmpq(2)], [fmpq(0), fmpq(5)]]
    check_batch(U.graph(), [pad_for((3, 2, 2), X, A, V, EE), pad_for((3, 2, 2), X[:1], A[:1], [r[:1] for r in V[:1]], EE)], EE)
    layer = match2(3, 3)
    U = universal(3, 3, 3)
    words = list(itertools.product(range(3), repeat=3))
    check_batch(U.graph(), [U.layout.encode({"X": layer.embed(w), "A": layer.A, "V": layer.V}, EE) for w in words], EE)


def test_errors_are_the_first_failing_inputs():
    g = rasp.to_graph(rasp.numerical(rasp.SequenceMap(rasp.fn("div"), rasp.tokens, rasp.tokens)))
    check_batch(g, [[fmpq(1), fmpq(2)], [fmpq(3), fmpq(0)], [fmpq(0), fmpq(1)]], QQ)
    check_batch(g, [[fmpq(1), e], [e - e, fmpq(1)]], EE)


def test_inputs_of_different_lengths_are_refused_as_alone():
    g = rasp.to_graph(rasp.numerical(rasp.Map(rasp.fn("add_const", c=1), rasp.tokens)))
    assert evaluate_batch(g, [[1, 2], [3]], QQ) == [rasp.evaluate_graph(g, [1, 2], QQ), rasp.evaluate_graph(g, [3], QQ)]
    assert evaluate_batch(g, [], QQ) == []
