"""tracr's own compiler test cases through attncert's exact compiler (the tracr extra; CI installs it).

Every case of ``tracr.compiler.test_cases.TEST_CASES`` is read from the installed tracr package,
converted by constructions/tracr/program.py, compiled by ``compile_graph`` for its test input's
length, and its output is computed by the independent forward pass of proofs/checkers/forward.py
(which never imports the compiler) from the model's JSON; the expected output is tracr's
``expected_output``. The residual width is compared with tracr's compiler at the case's vocab and
max_seq_len (bench/tracr_cases.py, which also writes the table of docs/compiler.md).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.compiler import NotCompilable, compile_graph
from attncert.constructions.compiler.blocks import aff, indicator_units, interpolant_block
from attncert.constructions.compiler.model import model_to_json
from attncert.constructions.compiler.values import mean_values
from attncert.constructions.tracr.program import from_tracr, to_rasp
from attncert.exact import QQ

pytest.importorskip("tracr", reason="the tracr extra: pip install '.[tracr]' in attncert's folder")

from bench.tracr_cases import compile_case, equals_expected, independent_output, tracr_size  # noqa: E402
from tracr.compiler import test_cases  # noqa: E402
from tracr.rasp import rasp as tracr_rasp  # noqa: E402

CASES = pytest.mark.parametrize("case", test_cases.TEST_CASES, ids=[c["testcase_name"] for c in test_cases.TEST_CASES])


@CASES
def test_every_tracr_test_case_compiles_and_equals_its_expected_output(case):
    model = compile_case(case)  # checked against the RASP evaluation, SOp by SOp, as every compile is
    assert model.checked is not None
    got = independent_output(model_to_json(model), case["test_input"])
    assert equals_expected(got, case["expected_output"]), (got, case["expected_output"])


@CASES
def test_no_tracr_test_case_is_wider_than_tracrs_model(case):
    tracr_width, _ = tracr_size(case["program"], case["vocab"], case["max_seq_len"])
    for length in (len(case["test_input"]), case["max_seq_len"]):  # the test's length, and tracr's largest
        assert compile_case(case, length, check=False).width() <= tracr_width


def test_equals_expected_compares_rationals_as_their_nearest_double():
    assert equals_expected([fmpq(1, 3), "a", None, True], [1 / 3, "a", None, 1])
    assert not equals_expected([fmpq(1, 3)], [0.3333])
    assert not equals_expected([fmpq(0)], [None]) and not equals_expected(["a"], ["b"]) and not equals_expected([1], [1, 2])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["frac_prevs_2", "shuffle_dyck2_1", "sort_freq", "make_nary_sequencemap_2"])
def test_tracr_size_is_the_residual_of_tracrs_compiled_model(name):
    from tracr.compiler import compiling

    case = next(c for c in test_cases.TEST_CASES if c["testcase_name"] == name)
    assembled = compiling.compile_rasp_to_model(case["program"], vocab=case["vocab"], max_seq_len=case["max_seq_len"])
    assert tracr_size(case["program"], case["vocab"], case["max_seq_len"]) == (len(assembled.residual_labels), assembled.model_config.num_layers)


# -- the piecewise-linear interpolant (blocks.interpolant_block) ---------------------------------


def _relu_block_at(block, x: fmpq) -> list[fmpq]:
    """A block of one ReLU stage over one input x (column 0), evaluated by its definition."""
    def form(a, inputs):
        terms, bias = a
        return bias + sum((w * inputs[i] for i, w in terms), fmpq(0))

    if not block.stages:
        return [form(o, [x]) for o in block.outputs]
    (stage,) = block.stages
    units = [max(form(u.args[0], [x]), fmpq(0)) for u in stage]
    assert all(u.kind == "relu" for u in stage)
    return [form(o, units) for o in block.outputs]


rationals = st.fractions(min_value=-20, max_value=20, max_denominator=12).map(lambda f: fmpq(f.numerator, f.denominator))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(rationals, rationals), min_size=1, max_size=12, unique_by=lambda p: p[0]))
def test_the_interpolant_equals_the_function_at_every_point_of_the_set(points):
    points.sort()
    xs = [x for x, _ in points]
    g = [y for _, y in points]
    block = interpolant_block(aff({0: 1}), xs, [g])
    assert len(block.stages[0] if block.stages else []) <= len(xs) - 1
    assert [_relu_block_at(block, x)[0] for x in xs] == g


def test_a_step_takes_two_relu_units_and_indicators_are_exact():
    xs = [fmpq(k, 4) - 1 for k in range(9)]  # -1, -3/4, ..., 1
    below = interpolant_block(aff({0: 1}), xs, [[fmpq(int(x < 0)) for x in xs]])
    assert len(below.stages[0]) == 2
    units, forms = indicator_units(aff({0: 1}), xs)
    for j, x in enumerate(xs):
        vals = [max(fmpq(0), u.args[0][1] + sum(w * x for _, w in u.args[0][0])) for u in units]
        assert [f[1] + sum((w * vals[i] for i, w in f[0]), fmpq(0)) for f in forms] == [fmpq(int(i == j)) for i in range(len(xs))]


def test_the_mean_value_set_is_every_average_of_w_values():
    values, widths = (0, 1, 3), {0, 2, 3}
    brute = {Fraction(sum(c), w) for w in widths - {0} for c in itertools.product(values, repeat=w)} | {Fraction(7)}
    assert {Fraction(int(q.p), int(q.q)) for q in mean_values(values, widths, 7)} == brute


# -- numerical maps of finite value sets, end to end -----------------------------------------------


def _words(vocab, n):
    return [list(w) for w in itertools.product(vocab, repeat=n)]


def test_a_non_affine_function_of_two_prefix_means_compiles_exactly():
    prefix = tracr_rasp.Select(tracr_rasp.indices, tracr_rasp.indices, tracr_rasp.Comparison.LEQ)
    frac = {t: tracr_rasp.numerical(tracr_rasp.Aggregate(prefix, tracr_rasp.numerical(tracr_rasp.Map(lambda x, t=t: x == t, tracr_rasp.tokens)), default=0)) for t in "ab"}
    prog = tracr_rasp.numerical(tracr_rasp.SequenceMap(lambda x, y: x * y - x, frac["a"], frac["b"]))
    model = compile_graph(rasp.to_graph(to_rasp(from_tracr(prog))), 4, "categorical", {"a", "b", "c"})
    j = model_to_json(model)
    for word in _words("abc", 4):
        a = [Fraction(word[: i + 1].count("a"), i + 1) for i in range(4)]
        b = [Fraction(word[: i + 1].count("b"), i + 1) for i in range(4)]
        assert [Fraction(int(q.p), int(q.q)) for q in independent_output(j, word)] == [x * y - x for x, y in zip(a, b)]


# -- tracr issue #25's program: a categorical Aggregate with default None ----------------------------


def _shift(select):
    return rasp.to_graph(to_rasp(from_tracr(tracr_rasp.categorical(tracr_rasp.Aggregate(tracr_rasp.Select(tracr_rasp.indices, tracr_rasp.indices, select), tracr_rasp.tokens, default=None)))))


def test_issue_25s_program_compiles_with_one_hot_tokens_and_gives_none_where_nothing_is_selected():
    j = model_to_json(compile_graph(_shift(lambda k, q: q == k + 1), 3, "categorical", {"x", "y"}))
    for word in _words("xy", 3):
        assert independent_output(j, word) == [None, word[0], word[1]]


def test_issue_25s_program_with_numerical_tokens_is_refused_naming_the_empty_query_and_why():
    with pytest.raises(NotCompilable, match="query position 0 selects no key at length 3.*a numerical column holds a number, never None"):
        compile_graph(_shift(lambda k, q: q == k + 1), 3, "scalar")


def test_a_default_none_aggregate_where_every_query_selects_a_key_compiles_with_numerical_tokens():
    j = model_to_json(compile_graph(_shift(lambda k, q: k == max(q - 1, 0)), 3, "scalar"))
    for word in ([5, -1, 2], [fmpq(1, 2), 0, 3]):
        assert independent_output(j, word) == [word[0], word[0], word[1]]


def test_default_none_is_decided_at_every_length_for_a_model_of_every_length():
    j = compile_graph(_shift(lambda k, q: k == max(q - 1, 0)), 3, "scalar", lengths="every")
    assert j.forward([5, -1, 2], QQ)[0]["output"] == [5, 5, -1]
    with pytest.raises(NotCompilable, match="query position 0 selects no key at length"):
        compile_graph(_shift(lambda k, q: q == k + 1), 3, "scalar", lengths="every")


def test_a_symbol_default_of_a_numerical_column_is_refused():
    prog = tracr_rasp.numerical(tracr_rasp.Aggregate(tracr_rasp.Select(tracr_rasp.indices, tracr_rasp.indices, tracr_rasp.Comparison.LT), tracr_rasp.tokens, default="x"))
    with pytest.raises(NotCompilable, match="default 'x'.*numerical column holds numbers"):
        compile_graph(rasp.to_graph(to_rasp(from_tracr(prog))), 3, "scalar")
