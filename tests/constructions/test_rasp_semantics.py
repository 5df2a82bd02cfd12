"""Evaluation semantics: exact means, defaults, domains, tracr-style programs, bad inputs."""

import math

import pytest
from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.rasp import Comparison as Cmp
from attncert.exact import EE, QQ, Ball, Float

prefix = rasp.Select(rasp.indices, rasp.indices, Cmp.LEQ)


def test_mean_of_integers_is_an_exact_rational():
    prog = rasp.numerical(rasp.Aggregate(prefix, rasp.numerical(rasp.tokens), default=0))
    assert prog([1, 2, 2, 10]) == [1, fmpq(3, 2), fmpq(5, 3), fmpq(15, 4)]


def test_mean_of_rationals_and_of_ee_values():
    prog = rasp.numerical(rasp.Aggregate(prefix, rasp.numerical(rasp.tokens), default=0))
    with pytest.raises(rasp.EvaluationError, match="different values"):
        prog(["1/3", "1/6"])  # strings are tokens, not numbers: they have no mean
    assert prog([fmpq(1, 3), fmpq(1, 6)]) == [fmpq(1, 3), fmpq(1, 4)]
    e = EE.exp(1)
    out = prog([e, EE.exp(2), EE.convert(1)])
    assert out[1] == (e + EE.exp(2)) / 2
    assert out[2] == (e + EE.exp(2) + 1) / 3


def test_empty_selection_gives_the_default():
    never = rasp.Select(rasp.indices, rasp.indices, Cmp.FALSE)
    assert rasp.numerical(rasp.Aggregate(never, rasp.tokens, default=7))([1, 2]) == [7, 7]
    assert rasp.Aggregate(never, rasp.tokens)([1, 2]) == [None, None]  # tracr's default
    assert rasp.SelectorWidth(never)([1, 2, 3]) == [0, 0, 0]


def test_booleans_average_as_zero_one():
    frac = rasp.numerical(rasp.Aggregate(prefix, rasp.numerical(rasp.tokens == "x"), default=0))
    assert frac("xaxx") == [1, fmpq(1, 2), fmpq(2, 3), fmpq(3, 4)]


def test_categorical_aggregate_of_distinct_tokens_is_refused():
    everything = rasp.Select(rasp.indices, rasp.indices, Cmp.TRUE)
    with pytest.raises(rasp.EvaluationError, match="different values"):
        rasp.Aggregate(everything, rasp.tokens)("ab")
    assert rasp.Aggregate(everything, rasp.tokens)("aa") == ["a", "a"]


def test_tracr_style_lambdas_operators_and_selector_combinators():
    x = rasp.Map(lambda t: t * 2, rasp.tokens)
    y = rasp.SequenceMap(lambda a, b: a - b, x, rasp.indices)
    assert y([fmpq(1, 2), 3]) == [1, 5]
    sel = (rasp.Select(rasp.indices, rasp.indices, Cmp.LT) | rasp.Select(rasp.indices, rasp.indices, Cmp.EQ)) & ~rasp.Select(
        rasp.indices, rasp.indices, Cmp.FALSE
    )
    assert rasp.SelectorWidth(sel)("abcd") == [1, 2, 3, 4]
    custom = rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: int(k) % 2 == int(q) % 2)
    assert rasp.SelectorWidth(custom)([1, 2, 3, 5]) == [3, 1, 3, 3]
    assert (1 - rasp.tokens)([3]) == [-2] and (rasp.tokens / 4)([3]) == [fmpq(3, 4)]
    assert (2 / rasp.tokens)([4]) == [fmpq(1, 2)]
    assert rasp.LinearSequenceMap(rasp.tokens, rasp.indices, 2, -1)([5, 5]) == [10, 9]


def test_map_of_map_is_merged_into_one_map():
    m = rasp.Map(rasp.fn("add_const", c=1), rasp.Map(rasp.fn("mul_const", c=3), rasp.tokens))
    assert isinstance(m.inner, type(rasp.tokens))
    assert m.f.name == "compose"
    assert m([2]) == [7]
    assert rasp.size(rasp.to_graph(m)).layers == 1


def test_named_and_annotations_follow_tracr():
    a = rasp.tokens + 1
    b = a.named("plus_one")
    assert b.name == "plus_one" and a.name == "map"
    assert rasp.is_categorical(a) and rasp.is_numerical(rasp.numerical(a))
    assert b.unique_id != a.unique_id


@pytest.mark.parametrize("domain", [QQ, EE, Ball(128), Float], ids=str)
def test_the_same_graph_in_every_domain(domain):
    prog = rasp.numerical(rasp.Aggregate(prefix, rasp.numerical(rasp.Map(rasp.fn("exp"), rasp.tokens) if domain is not QQ else rasp.tokens), default=0))
    g = rasp.to_graph(prog)
    out = rasp.evaluate_graph(g, [0, 1, fmpq(1, 2)], domain)["output"]
    want = [1.0, (1 + math.e) / 2, (1 + math.e + math.exp(0.5)) / 3] if domain is not QQ else [0, fmpq(1, 2), fmpq(1, 2)]
    for o, w in zip(out, want):
        assert math.isclose(float(domain.enclose(o, 64).mid()) if domain is not Float else o, float(w), rel_tol=1e-14)


def test_ee_selectors_compare_exactly():
    e = EE.exp(1)
    close = [e, EE.convert("2718281828459045/1000000000000000"), (EE.exp(2) - 1) / (e - 1) - 1]
    # keys: e, a rational just below e, and e written differently
    assert rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, Cmp.EQ))(close) == [2, 1, 2]
    assert rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, Cmp.LT))(close) == [1, 0, 1]


def test_float_returned_by_a_lambda_in_an_exact_domain_is_refused():
    with pytest.raises(rasp.EvaluationError, match="returned a float"):
        rasp.Map(lambda t: float(t) / 2, rasp.tokens)([1])


def test_bad_programs_and_inputs_fail_clearly():
    with pytest.raises(TypeError, match="must be an SOp"):
        rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, Cmp.EQ), rasp.Select(rasp.indices, rasp.indices, Cmp.EQ))
    with pytest.raises(TypeError, match="must be a Selector"):
        rasp.SelectorWidth(rasp.tokens)
    with pytest.raises(TypeError, match="must be an SOp"):
        rasp.Map(lambda x: x, [1, 2])
    with pytest.raises(rasp.EvaluationError, match="empty input"):
        (rasp.tokens + 1)([])
    with pytest.raises(rasp.EvaluationError, match="division by an exact zero"):
        (rasp.tokens / rasp.indices)([1, 2])
    with pytest.raises(rasp.EvaluationError, match="length"):
        rasp.ConstantSOp([1, 2, 3])([1])
    with pytest.raises(rasp.EvaluationError, match="order comparison"):
        rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, Cmp.LT))(["a", 1])
