"""The evaluator's shortcuts give what the plain computation gives, value and type.

* nodes that repeat another (same operation, parameters, encoding and arguments) are
  computed once and share its value; Python callables are never merged;
* ``div`` on two rationals is FLINT's quotient, elsewhere the domain's division;
* ``masked_exp`` tests a rational mask directly, any other through the domain's sign;
* ``mul_scaled`` multiplies the scale into the second factor first.
"""

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.exact import EE, QQ, EENumber, ExactZeroDivision
from attncert.exact.testing import ee_numbers, rationals


def test_a_repeated_node_is_computed_once_and_shares_its_value():
    x = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=3), rasp.tokens))
    twice = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), rasp.numerical(x), rasp.numerical(x)))
    g = rasp.to_graph(twice.named("out"))
    maps = [v for v in g.nodes if g.nodes[v]["op"] == "map"]
    assert len(maps) == 2  # the graph keeps both copies; the evaluator computes one
    xs = [fmpq(1, 2), fmpq(-3), fmpq(7, 5)]
    seconds: dict[int, float] = {}
    out = rasp.evaluate_graph(g, xs, QQ, seconds=seconds)["output"]
    assert out == [6 * v for v in xs]
    assert len([v for v in maps if v in seconds]) == 1
    trace = rasp.trace_graph(g, xs, QQ)
    assert trace[maps[0]] == trace[maps[1]] == [3 * v for v in xs]


def test_python_callables_are_never_merged():
    calls = []

    def f(v):
        calls.append(v)
        return v + 1

    prog = rasp.numerical(rasp.SequenceMap(rasp.fn("add"), rasp.numerical(rasp.Map(f, rasp.tokens)), rasp.numerical(rasp.Map(f, rasp.tokens))))
    assert prog([1, 2]) == [4, 6]
    assert len(calls) == 4


@settings(max_examples=200, deadline=None)
@given(rationals(), rationals())
def test_div_of_rationals_is_the_domains_division(x, y):
    for domain in (QQ, EE):
        fast = rasp.fn("div").bind(domain)
        if y == 0:
            with pytest.raises(ExactZeroDivision):
                fast(x, y)
            with pytest.raises(ExactZeroDivision):
                domain.div(x, y)
        else:
            got, want = fast(x, y), domain.div(domain.native(x), domain.native(y))
            assert got == want and type(got) is type(want)


@settings(max_examples=100, deadline=None)
@given(rationals(), st.one_of(rationals(), ee_numbers(2)))
def test_masked_exp_is_zero_exactly_where_the_mask_is(s, m):
    f = rasp.fn("masked_exp", c=2).bind(EE)
    got = f(s, m)
    if EE.sign(m) == 0:
        assert got == 0 and type(got) is EENumber
    else:
        assert got == m * EE.exp(2 * s)


@settings(max_examples=100, deadline=None)
@given(st.one_of(rationals(), ee_numbers(2)), st.one_of(rationals(), ee_numbers(2)), rationals())
def test_mul_scaled_is_c_x_y(x, y, c):
    got = rasp.fn("mul_scaled", c=c).bind(EE)(x, y)
    assert got == c * x * y
    assert isinstance(got, EENumber) == (isinstance(x, EENumber) or isinstance(y, EENumber))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([fmpq(0), fmpq(1, 3), fmpq(-2), None]), min_size=1, max_size=12), st.data())
def test_a_run_of_the_same_arguments_gives_what_each_position_gives(pool_xs, data):
    # Sequences drawn from a few shared objects, as defaults past a block are: runs of identical arguments.
    ys = data.draw(st.lists(st.sampled_from([fmpq(1), fmpq(5, 2)]), min_size=len(pool_xs), max_size=len(pool_xs)))
    prog = rasp.numerical(rasp.SequenceMap(rasp.fn("linear", a=2, b=3), rasp.numerical(rasp.tokens), rasp.numerical(rasp.Map(rasp.fn("identity"), rasp.tokens))))
    g = rasp.to_graph(prog)
    f = rasp.fn("linear", a=2, b=3).bind(QQ)
    seq = [x if x is not None else ys[i] for i, x in enumerate(pool_xs)]
    assert rasp.evaluate_graph(g, seq, QQ)["output"] == [f(x, x) for x in seq]


def test_the_collector_is_left_as_it_was():
    import gc

    prog = rasp.numerical(rasp.Map(rasp.fn("mul_const", c=2), rasp.tokens))
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            assert prog([1, 2]) == [2, 4]
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
