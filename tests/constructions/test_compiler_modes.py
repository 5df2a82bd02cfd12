"""The compiler's two modes of issue 25: causal models, and models for every length 1..max_seq_len.

Expected values come from tracr's own CAUSAL_TEST_CASES (read from the installed package) or are
worked out by hand from the programs' definitions (the length of a word; sort_unique's definition
by counting smaller tokens), never from the code under test."""

from __future__ import annotations

import itertools

import pytest

from attncert.constructions import rasp
from attncert.constructions.compiler import compile_graph
from attncert.constructions.compiler.model import model_from_json, model_to_json
from attncert.constructions.rasp.evaluate import evaluate, evaluate_graph
from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.exact import QQ, ParseError
from attncert.proofs.checkers.forward import forward as independent_forward

tracr_cases = pytest.importorskip("tracr.compiler.test_cases")
from attncert.constructions.tracr.program import from_tracr, to_rasp  # noqa: E402
from tracr.compiler import lib  # noqa: E402
from tracr.rasp import rasp as tracr_rasp  # noqa: E402

CAUSAL = tracr_cases.CAUSAL_TEST_CASES


def graph_of(program):
    return rasp.to_graph(to_rasp(from_tracr(program)))


def same(got: list, expected: list) -> bool:
    """Our exact values against tracr's expected ones: a number as the double tracr holds (1/3 is
    0.3333333333333333), tokens, booleans and None as they are."""
    if len(got) != len(expected):
        return False
    for a, b in zip(got, expected):
        if isinstance(b, float) and not isinstance(a, (str, bool)) and a is not None:
            if float(a) != b:
                return False
        elif a != b or type(a) is bool and type(b) is not bool:
            return False
    return True


def decoded(model_json: dict, xs: list) -> list:
    """The output of the independent forward pass (proofs/checkers/forward.py), decoded as the JSON format says."""
    res = independent_forward(model_json, [encode_value(x) for x in xs], QQ)
    cols, values = model_json["outputs"]["output"], model_json["output_values"]["output"]
    if values is None:
        return res[cols[0]][1:]
    return [next((decode_value(v) for v, c in zip(values, cols) if res[c][p] == 1), None) for p in range(1, len(xs) + 1)]


def test_there_are_eleven_causal_cases():
    assert len(CAUSAL) == 11


@pytest.mark.parametrize("case", CAUSAL, ids=[c["testcase_name"] for c in CAUSAL])
def test_causal_evaluation_is_tracrs(case):
    got = evaluate_graph(graph_of(case["program"]), case["test_input"], QQ, causal=True)["output"]
    assert same(got, case["expected_output"]), (got, case["expected_output"])


@pytest.mark.parametrize("case", CAUSAL, ids=[c["testcase_name"] for c in CAUSAL])
def test_causal_models_compute_tracrs_expected_output(case):
    g, xs, vocab = graph_of(case["program"]), case["test_input"], sorted(case["vocab"], key=repr)
    fixed = compile_graph(g, len(xs), "categorical", vocab, causal=True)
    every = compile_graph(g, case["max_seq_len"], "categorical", vocab, causal=True, lengths="every")
    for m in (fixed, every):
        assert m.causal and same(m.forward(xs, QQ)[0]["output"], case["expected_output"])
        assert same(decoded(model_to_json(m), xs), case["expected_output"])
    assert model_to_json(every)["format"] == "attncert-model/2" and model_to_json(every)["mode"] == "every_length"


def test_prefix_selector_width_is_causal_and_the_full_one_is_not():
    width = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    assert evaluate(width, list("abcd"), causal=True) == [1, 2, 3, 4]
    assert evaluate(width, list("abcd")) == [4, 4, 4, 4]


def test_a_model_for_every_length_gives_the_length_at_every_length():
    g = graph_of(lib.make_length())
    m = compile_graph(g, 6, "categorical", list("ab"), lengths="every")
    mj = model_to_json(m)
    for n in range(1, 7):
        xs = list(itertools.islice(itertools.cycle("ab"), n))
        assert m.forward(xs, QQ)[0]["output"] == [n] * n
        assert decoded(mj, xs) == [n] * n
    assert m.checked.every_length and "every length 1..6" in m.checked.describe()
    fixed = compile_graph(g, 6, "categorical", list("ab"))
    with pytest.raises(ParseError, match="compiled for 6 tokens"):
        fixed.forward(list("ab"), QQ)


def sort_unique_by_definition(xs: list) -> list:
    """make_sort_unique(tokens, tokens) from its definition: token j goes to position #{k : x_k < x_j}."""
    target = [sum(1 for y in xs if y < x) for x in xs]
    return [next((x for x, t in zip(xs, target) if t == i), None) for i in range(len(xs))]


def test_sort_unique_for_every_length_on_every_input():
    g = graph_of(lib.make_sort_unique(tracr_rasp.tokens, tracr_rasp.tokens))
    m = compile_graph(g, 4, "categorical", [1, 2, 3], lengths="every")
    mj = model_to_json(m)
    for n in range(1, 5):
        for xs in itertools.product([1, 2, 3], repeat=n):
            want = sort_unique_by_definition(list(xs))
            assert m.forward(list(xs), QQ)[0]["output"] == want
            assert decoded(mj, list(xs)) == want


def test_model_json_of_both_modes_round_trips_and_old_files_keep_format_1():
    g = graph_of(lib.make_length())
    fixed = compile_graph(g, 3, "categorical", list("ab"), check=False)
    assert model_to_json(fixed)["format"] == "attncert-model/1" and "length" in model_to_json(fixed)
    for lengths, causal in (("every", False), ("fixed", True), ("every", True)):
        m = compile_graph(g, 3, "categorical", list("ab"), check=False, lengths=lengths, causal=causal)
        mj = model_to_json(m)
        assert (mj["format"], mj["mode"], mj["max_seq_len"], mj["causal"]) == ("attncert-model/2", {"every": "every_length", "fixed": "fixed"}[lengths], 3, causal)
        assert "length" not in mj and model_from_json(mj) == m
    bad = {**model_to_json(compile_graph(g, 3, "categorical", list("ab"), check=False, lengths="every")), "mode": "sometimes"}
    with pytest.raises(ParseError, match="mode"):
        model_from_json(bad)
    with pytest.raises(ParseError, match="mode"):
        independent_forward(bad, [{"s": "a"}], QQ)
    with pytest.raises(ParseError, match="format"):
        model_from_json({**bad, "format": "attncert-model/3"})


def test_the_causal_mode_equals_the_programs_rewritten_with_a_prefix_mask():
    """Two routes to tracr's causal semantics: the evaluator's mode, and constructions/tracr/program.py's
    rewrite (every selector conjoined with Select(indices, indices, LEQ)) evaluated in full; every input."""
    programs = [c["program"] for c in CAUSAL] + [lib.make_sort_unique(tracr_rasp.tokens, tracr_rasp.tokens), lib.make_reverse(tracr_rasp.tokens), lib.make_hist()]
    for program in programs:
        prog = from_tracr(program)
        plain, masked = rasp.to_graph(to_rasp(prog)), rasp.to_graph(to_rasp(prog, causal=True))
        vocab = ["a", "b", "c"] if "frac" not in str(program.label) else ["x", "a"]
        for n in range(1, 5):
            for xs in itertools.product(vocab, repeat=n):
                try:
                    want = evaluate_graph(masked, list(xs), QQ)["output"]
                except Exception as e:  # outside the program's domain: the causal mode refuses it too
                    with pytest.raises(type(e)):
                        evaluate_graph(plain, list(xs), QQ, causal=True)
                    continue
                assert evaluate_graph(plain, list(xs), QQ, causal=True)["output"] == want


def test_the_primitive_length_is_computed_by_the_network_for_every_length():
    """reverse = aggregate(select(indices, length - indices - 1, ==), tokens) with RASP's primitive length: the
    model for every length 1..5 reverses every input (checked by hand: the reversed word); a causal model for
    every length cannot know the length and is refused."""
    from attncert.constructions.compiler import NotCompilable

    length = rasp.length
    flip = rasp.Select(rasp.indices, rasp.SequenceMap(lambda n, i: n - i - 1, length, rasp.indices), rasp.Comparison.EQ)
    g = rasp.to_graph(rasp.categorical(rasp.Aggregate(flip, rasp.tokens)))
    m = compile_graph(g, 5, "categorical", list("abc"), lengths="every")
    for n in range(1, 6):
        for xs in itertools.product("abc", repeat=n):
            assert m.forward(list(xs), QQ)[0]["output"] == list(reversed(xs))
    with pytest.raises(NotCompilable, match="causal"):
        compile_graph(g, 5, "categorical", list("abc"), lengths="every", causal=True)
