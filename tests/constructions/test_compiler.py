"""The compiler, stage by stage, and its forward pass against the RASP evaluator (docs/compiler.md)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from flint import fmpq
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.activations import maxmin, relu, softmax_rows
from attncert.constructions.compiler import NotCompilable, compile_graph
from attncert.constructions.compiler.basis import Basis, columns
from attncert.constructions.compiler.export import run_npz, to_npz
from attncert.constructions.compiler.layers import allocate
from attncert.constructions.compiler.model import model_from_json, model_to_json
from attncert.constructions.compiler.values import infer
from attncert.constructions.linalg import gather, index_map, inverse3, matmul, transpose
from attncert.constructions.simulator import encoder_layer, multihead, universal
from attncert.exact import EE, QQ, Ball, Float, ParseError
from attncert.exact.testing import rationals
from attncert.proofs.checkers.forward import forward as independent_forward
from attncert.proofs.core.inputs import random_matrix

CONSTRUCTIONS = {
    "transpose": lambda: transpose(2, 3),
    "matmul": lambda: matmul(2, 3, 2),
    "softmax": lambda: softmax_rows(2, 3),
    "relu": lambda: relu(4),
    "maxmin": lambda: maxmin(5),
    "inverse3": inverse3,
    "universal": lambda: universal(3, 2, 2),
    "multihead": lambda: multihead(2, 2, 1, 2, 2),
    "encoder_layer": lambda: encoder_layer(2, 2, 1, 2, 2),
}
EXACT = {"softmax": EE, "universal": EE, "multihead": EE, "encoder_layer": EE}


def compiled(cons):
    return compile_graph(cons.graph(), cons.layout.length, "scalar")


def tokens_for(cons, seed, dom):
    import random

    rng = random.Random(seed)
    mats = {name: random_matrix(rng, r, c, QQ) for name, r, c in cons.layout.inputs}
    if cons.name == "inverse3":
        mats = {"M": [[fmpq(2), fmpq(1), fmpq(seed % 5)], [fmpq(1), fmpq(3), fmpq(1)], [fmpq(0), fmpq(1), fmpq(4)]]}
    return cons.layout.encode(mats, dom)


# -- stage 1: value sets ---------------------------------------------------------------------


def test_value_sets_separate_static_from_dynamic():
    cons = transpose(2, 3)
    g = cons.graph()
    info = infer(g, cons.layout.length, "scalar")
    static = {d.label: d.values for v, d in info.items() if d.static and d.values is not None}
    assert static["indices"] == [fmpq(i) for i in range(6)]
    # the source of entry (i, j) of the transposed 3 x 2 matrix at t = 2 i + j is j 3 + i... as built: radices (c, r)
    src = next(vals for label, vals in static.items() if "source" in label)
    assert sorted(src) == [fmpq(i) for i in range(6)]  # a permutation of the positions
    dyn = {d.label: d.width for d in info.values() if not d.static}
    assert dyn["tokens"] == 1 and dyn["transpose"] == 1
    assert infer(g, 6, "pair")[next(v for v in g if g.nodes[v]["op"] == "tokens")].width == 2


def _program(sop):
    return rasp.to_graph(sop)


@pytest.mark.parametrize(
    "program, match",
    [
        (lambda: rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.indices, rasp.Comparison.EQ), rasp.tokens, default=0)), "data-dependent selection"),
        (lambda: rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ) & rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.GEQ), rasp.tokens, default=0)), "selector_and"),
        (lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)), "data-dependent"),
        (lambda: rasp.numerical(rasp.Map(lambda x: x + 1, rasp.tokens)), "unregistered Python function"),
        (lambda: rasp.numerical(rasp.Map(rasp.fn("floordiv_const", k=2), rasp.tokens)), "function floordiv_const"),
    ],
)
def test_programs_outside_the_class_are_refused_naming_node_and_feature(program, match):
    with pytest.raises(NotCompilable, match=match) as e:
        compile_graph(_program(program()), 4, "scalar")
    assert str(e.value).startswith("cannot compile node ")


# -- stage 2: the basis ----------------------------------------------------------------------


def test_basis_starts_with_one_and_bos_and_labels_are_unique():
    b = Basis()
    assert b.labels[:2] == ["one", "bos"] and b.add("x") == 2 and b.add("x") == 2 and len(b) == 3
    assert columns("p", 2) == ["p.0", "p.1"] and columns("q", 1) == ["q"]
    m = compiled(universal(2, 2, 1))
    assert len(set(m.basis)) == len(m.basis) and m.basis[:2] == ("one", "bos")


# -- stages 3-5: blocks, layers, assembly, against the RASP evaluator --------------------------

SHIFT = index_map((1,), (1,), const=1, bound=3, other=-1)  # t + 1 for t < 3, else -1 (reads the default)
UNARY = ["identity", "neg", "exp", "relu", "abs"]
CONST = [("add_const", {"c": 3}), ("sub_const", {"c": Fraction(1, 2)}), ("rsub_const", {"c": 2}), ("mul_const", {"c": -3}), ("div_const", {"c": 4}), ("rdiv_const", {"c": 2}), ("ramp", {"a": Fraction(1, 2), "b": 2}), ("alternating_steps", {"k": 3}), ("mul_exp", {"c": -1})]
BINARY = [("add", {}), ("sub", {}), ("mul", {}), ("div", {}), ("mul_scaled", {"c": 3}), ("affine_relu", {"c": -2}), ("linear", {"a": 2, "b": -1}), ("max", {}), ("min", {}), ("masked_exp", {"c": 1})]


def _one_map(name, params, arity):
    x = rasp.numerical(rasp.Map(rasp.fn("identity"), rasp.tokens)).named("x")
    y = rasp.numerical(gather(SHIFT, rasp.tokens)).named("y")
    f = rasp.fn(name, **params)
    return rasp.numerical(rasp.Map(f, x) if arity == 1 else rasp.SequenceMap(f, x, y)).named("out")


@settings(max_examples=25, deadline=None)
@given(st.lists(rationals(max_num=9, max_den=5).filter(lambda q: q != 0), min_size=4, max_size=4), st.sampled_from(UNARY + CONST + BINARY))
def test_every_compiled_map_equals_the_registered_function(toks, case):
    name, params = (case, {}) if isinstance(case, str) else case
    arity = 2 if case in BINARY else 1
    g = _program(_one_map(name, params, arity))
    dom = EE if "exp" in name else QQ
    xs = [dom.native(dom.convert(t)) for t in toks]
    if name == "div":
        assume(all(t != 0 for t in toks[1:]))  # y = tokens shifted, 0 (the default) at the last position
    try:
        want = rasp.evaluate_graph(g, xs, dom)["output"]
    except rasp.EvaluationError:
        return  # e.g. division by the default 0: RASP refuses it too
    got, _ = compile_graph(g, 4, "scalar").forward(xs, dom)
    assert all(dom.eq(a, b) for a, b in zip(got["output"], want)), (name, got["output"], want)


@pytest.mark.parametrize("name", sorted(CONSTRUCTIONS))
def test_layers_follow_the_rasp_schedule(name):
    cons = CONSTRUCTIONS[name]()
    g = cons.graph()
    m = compiled(cons)
    size = rasp.size(g)
    assert len(m.layers) == size.layers
    assert all(len(layer.heads) <= h for layer, h in zip(m.layers, size.heads))
    layers, heads, maps, _, _ = allocate(g, infer(g, cons.layout.length, "scalar"))
    assert [len(h) for h in heads] == [len(layer.heads) for layer in m.layers]


@pytest.mark.parametrize("name", sorted(CONSTRUCTIONS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_forward_equals_the_rasp_evaluation_exactly(name, seed):
    cons = CONSTRUCTIONS[name]()
    dom = EXACT.get(name, QQ)
    xs = tokens_for(cons, seed, dom)
    m = compiled(cons)
    got, _ = m.forward(xs, dom)
    want = rasp.evaluate_graph(cons.graph(), xs, dom)["output"]
    assert len(got["output"]) == len(want) and all(dom.eq(a, b) for a, b in zip(got["output"], want))
    # the independent minimal forward pass of the verifier agrees with the compiler's own
    res = independent_forward(model_to_json(m), xs, dom)
    assert all(dom.eq(a, b) for a, b in zip(res[m.outputs["output"][0]][1:], want))


@pytest.mark.parametrize("name", ["universal", "inverse3", "maxmin"])
def test_float_agrees_and_ball_encloses(name):
    cons = CONSTRUCTIONS[name]()
    dom = EXACT.get(name, QQ)
    exact = [dom.enclose(v, 128) for v in compiled(cons).forward(tokens_for(cons, 0, dom), dom)[0]["output"]]
    xs = tokens_for(cons, 0, QQ)
    m = compiled(cons)
    floats = m.forward([float(x) for x in xs], Float)[0]["output"]
    assert all(abs(f - float(e.mid())) <= 1e-9 * (1 + abs(float(e.mid()))) for f, e in zip(floats, exact))  # agreement
    if name != "maxmin":  # its ReLU meets rounded zeros, whose sign Ball refuses to guess (UndecidedError)
        balls = m.forward(xs, Ball(128))[0]["output"]
        assert all(b.overlaps(e) for b, e in zip(balls, exact))  # enclosure


@pytest.mark.parametrize("pred", ["LT", "LEQ", "GT", "GEQ", "NEQ", "TRUE", "FALSE", "EQ"])
def test_static_selections_with_every_predicate_compile_exactly(pred):
    # prefix means and their relatives: a one-hot value table (or 2qk - k^2 for EQ), BOS for empty selections
    sel = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison[pred])
    mean = rasp.numerical(rasp.Aggregate(sel, rasp.numerical(rasp.Map(rasp.fn("identity"), rasp.tokens)), default=Fraction(-1, 3)))
    g = _program(mean)
    xs = [fmpq(3), fmpq(-1, 2), fmpq(7), fmpq(0), fmpq(5, 4)]
    got = compile_graph(g, 5, "scalar").forward(xs, QQ)[0]["output"]
    assert got == rasp.evaluate_graph(g, xs, QQ)["output"]


def test_selector_width_of_a_static_selection_and_an_unread_token():
    # tracr's make_length: the width of Select(tokens, tokens, TRUE) is the length, whatever the tokens are
    length = rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)))
    m = compile_graph(_program(length), 4, "scalar")
    assert m.token_columns == () and len(m.layers) == 1 and not m.layers[0].heads  # a positional column
    assert m.forward(list("abcd"), QQ)[0]["output"] == [fmpq(4)] * 4


def test_a_query_that_selects_nothing_reads_the_default_exactly():
    # positions 3 has source -1: no key matches, so the head must read BOS and give the default 7/2
    out = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, SHIFT, rasp.Comparison.EQ), rasp.tokens, default=Fraction(7, 2)))
    g = _program(out)
    xs = [fmpq(1), fmpq(-2), fmpq(5), fmpq(9)]
    got = compile_graph(g, 4, "scalar").forward(xs, QQ)[0]["output"]
    assert got == [fmpq(-2), fmpq(5), fmpq(9), fmpq(7, 2)] == rasp.evaluate_graph(g, xs, QQ)["output"]


# -- JSON, npz and the documentation ---------------------------------------------------------


def test_json_round_trip_and_malformed_models():
    m = compiled(universal(2, 2, 1))
    j = model_to_json(m)
    assert model_from_json(j) == m
    bad = model_to_json(m)
    bad["layers"][1]["heads"][0]["qk"][0][0] = 10**6
    with pytest.raises(ParseError, match="column"):
        model_from_json(bad)
    bad = model_to_json(m)
    next(layer for layer in bad["layers"] if layer["mlp"])["mlp"]["stages"][0][0]["unit"] = "sigmoid"
    with pytest.raises(ParseError, match="unit"):
        model_from_json(bad)


def test_the_numpy_forward_pass_of_the_npz_export_reproduces_our_float_outputs(tmp_path):
    for cons in (universal(3, 2, 2), inverse3(), maxmin(5), matmul(2, 3, 2)):
        m = compiled(cons)
        path = tmp_path / f"{cons.name}.npz"
        path.write_bytes(to_npz(m))
        xs = [float(x) for x in tokens_for(cons, 1, QQ)]
        ours = np.array(m.forward(xs, Float)[0]["output"])
        theirs = run_npz(path, xs)
        assert len(theirs) == len(ours) and np.allclose(theirs, ours, rtol=1e-9, atol=1e-12), cons.name


def test_the_size_table_of_the_documentation():
    text = (Path(__file__).parents[2] / "docs" / "compiler.md").read_text()
    for (n, d, dv), length, width, params in [((1, 1, 1), 3, 62, 191), ((4, 3, 2), 48, 62, 1620), ((16, 4, 4), 1024, 62, 33630)]:
        U = universal(n, d, dv)
        s = compile_graph(U.graph(), U.layout.length, "scalar", check=False).summary()  # sizes only: the check is tested below
        assert (U.layout.length, s["width"], s["parameters"]) == (length, width, params)
        assert s["heads"] == [0, 6, 2, 2, 1, 2, 1] and s["parameters"] <= 134 + 34 * (length + 1)
        assert f"| ({n}, {d}, {dv}) | {length:,} | {width} | {params:,} |" in text


# -- categorical programs, tracr's way: one-hot symbols, functions tabulated on finite value sets ----


def _reverse_letters():
    """tracr's make_reverse: opp_index = length - index - 1, then Aggregate(Select(indices, opp_index, EQ), tokens)."""
    length = rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)))
    opp = rasp.numerical(rasp.SequenceMap(lambda n, i: n - i - 1, length, rasp.indices))
    return rasp.Aggregate(rasp.Select(rasp.indices, opp, rasp.Comparison.EQ), rasp.tokens)


def _frac_prevs(symbol):
    """tracr's make_frac_prevs: the fraction of earlier positions (inclusive) holding ``symbol``."""
    bools = rasp.numerical(rasp.Map(lambda t: t == symbol, rasp.tokens))
    prevs = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return rasp.numerical(rasp.Aggregate(prevs, bools, default=0))


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet="abc", min_size=1, max_size=6))
def test_categorical_programs_with_lambdas_compile_exactly(word):
    for program in (_reverse_letters(), _frac_prevs("a")):
        g = _program(program)
        m = compile_graph(g, len(word), "categorical", ["a", "b", "c"])
        assert m.forward(list(word), QQ)[0]["output"] == rasp.evaluate_graph(g, list(word), QQ)["output"]
    # checked by hand on one word: "cab" reversed, and the running fraction of "a"
    if word == "cab":
        assert compile_graph(_program(_reverse_letters()), 3, "categorical", ["a", "b", "c"]).forward(list(word), QQ)[0]["output"] == list("bac")


def test_categorical_outputs_and_selections_on_symbols():
    # Select(tokens, tokens, EQ) on symbols: a data-dependent selection compiled as a one-hot value table
    same = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.numerical(rasp.Map(lambda t: t == "a", rasp.tokens)), default=0))
    g = _program(same)
    m = compile_graph(g, 4, "categorical", ["a", "b"])
    assert m.forward(list("abba"), QQ)[0]["output"] == [1, 0, 0, 1] == rasp.evaluate_graph(g, list("abba"), QQ)["output"]
    assert compile_graph(_program(_reverse_letters()), 3, "categorical", ["x", "y"]).forward(list("xyy"), QQ)[0]["output"] == list("yyx")


@pytest.mark.parametrize("encoding", [rasp.numerical, rasp.categorical])
def test_selector_width_of_a_data_dependent_selection(encoding):
    # tracr's make_hist: how often each token occurs, by attention to BOS and an exact decoding MLP
    hist = encoding(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)))
    g = _program(hist)
    for word in ("abba", "aaab", "b", "abab", "aaaaaaaaab"):  # widths 9 and 1: exact where tracr drifts (>= 7)
        m = compile_graph(g, len(word), "categorical", ["a", "b"])
        want = [word.count(t) for t in word]
        assert m.forward(list(word), QQ)[0]["output"] == want == rasp.evaluate_graph(g, list(word), QQ)["output"]


def test_categorical_refusals_name_the_node():
    with pytest.raises(NotCompilable, match="unregistered Python function of a numerical value"):
        compile_graph(_program(rasp.numerical(rasp.Map(lambda x: x * x, rasp.tokens))), 3, "scalar")


def test_language_readouts_through_u_on_every_word():
    import itertools

    from attncert.constructions.languages import match2, match2_readout, parity, parity_readout

    for layer, cons, n, letters in [(match2(3, 3), match2_readout(3, 3), 3, 3), (parity(4, [0, 2]), parity_readout(4, 2), 4, 2)]:
        g = cons.graph()
        m = compile_graph(g, cons.layout.length, "scalar")
        for word in itertools.product(range(letters), repeat=n):
            xs = cons.layout.encode({"X": layer.embed(word), "A": layer.A, "V": layer.V}, EE)
            got = m.forward(xs, EE)[0]["output"]
            assert [int(EE.eq(b, 1)) for b in got[:n]] == layer.language(list(word))  # the language, exactly
            assert all(EE.eq(a, b) for a, b in zip(got, rasp.evaluate_graph(g, xs, EE)["output"]))


def test_a_basis_that_would_outgrow_the_pair_limit_is_refused_while_compiling():
    from attncert.exact.errors import LimitExceeded
    from attncert.exact.limits import Limits, limits

    prefix = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), rasp.numerical(rasp.Map(rasp.fn("identity"), rasp.tokens)), default=0))
    assert compile_graph(_program(prefix), 100, "scalar").width() == 106  # a value table: one column per position
    with limits(Limits(max_pairs=5100)), pytest.raises(LimitExceeded, match="would exceed 50 dimensions"):
        compile_graph(_program(prefix), 100, "scalar")


# -- issue 21: no wrong model silently -------------------------------------------------------


def _words(vocab, n):
    import itertools

    return [list(w) for w in itertools.product(vocab, repeat=n)]


def test_a_numerical_mean_of_categorical_tokens_is_the_mean_of_the_numbers():
    # tracr's categorical_numerical_aggregate (tracr refuses it): compiled as a one-hot move, the mean of
    # different one-hot vectors decoded as None on 24 of the 27 words. Every query selects every key, so
    # the value at every position is the mean of the word, by hand.
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), rasp.tokens))
    m = compile_graph(_program(mean), 3, "categorical", [1, 2, 3])
    assert m.checked.exhaustive and m.checked.inputs == 27 and m.output_values["output"] is None
    j = model_to_json(m)
    for word in _words([1, 2, 3], 3):
        want = [fmpq(sum(word), 3)] * 3
        assert m.forward(word, QQ)[0]["output"] == want
        # the verifier's forward pass, written from docs/compiler.md, reads the same weights the same way
        res = independent_forward(j, [{"q": str(t)} for t in word], QQ)
        assert res[j["outputs"]["output"][0]][1:] == want


def test_a_numerical_mean_of_categorical_booleans_counts_them_as_0_and_1():
    is_a = rasp.categorical(rasp.Map(lambda t: t == "a", rasp.tokens))
    frac = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), is_a, default=0))
    m = compile_graph(_program(frac), 4, "categorical", ["a", "b"])
    for word in _words("ab", 4):
        assert m.forward(word, QQ)[0]["output"] == [fmpq(word[: i + 1].count("a"), i + 1) for i in range(4)]


def test_numerical_means_the_compiler_cannot_give_are_refused():
    mixed = rasp.categorical(rasp.Map(lambda t: 1 if t == "a" else "x", rasp.tokens))
    with pytest.raises(NotCompilable, match="mix numbers and symbols"):
        compile_graph(_program(rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), mixed))), 3, "categorical", ["a", "b"])
    # the least token selects nothing under LT: RASP gives None there, which a number cannot hold
    below = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT), rasp.tokens))
    with pytest.raises(NotCompilable, match="a numeric default is needed"):
        compile_graph(_program(below), 3, "categorical", [1, 2, 3])


def test_a_program_that_never_reads_its_tokens_compiles_with_categorical_tokens():
    # was a bare StopIteration: the vocabulary was looked up on a tokens node the program does not have
    m = compile_graph(_program(rasp.numerical(rasp.indices)), 3, "categorical", [1, 2, 3])
    assert m.token_columns == () and m.vocab == (1, 2, 3) and m.checked.inputs == 27
    assert all(m.forward(word, QQ)[0]["output"] == [0, 1, 2] for word in _words([1, 2, 3], 3))
    with pytest.raises(ParseError, match="not a symbol of the vocabulary"):
        m.forward([1, 2, 4], QQ)


def test_the_default_check_refuses_a_miscompiled_map(monkeypatch):
    import attncert.constructions.compiler.assemble as assemble
    from attncert.constructions.compiler import CheckFailed

    real = assemble.map_block
    monkeypatch.setattr(assemble, "map_block", lambda name, *a: real("identity" if name == "neg" else name, *a))
    g = _program(rasp.numerical(rasp.Map(rasp.fn("neg"), rasp.tokens)).named("negated"))
    with pytest.raises(CheckFailed, match=r"^cannot compile node 'negated': the compiled model disagrees with the RASP evaluation: on input \[.*\] at position 0 RASP gives -?\d[\d/]*, the model -?\d"):
        compile_graph(g, 4, "scalar")
    unchecked = compile_graph(g, 4, "scalar", check=False)
    assert unchecked.checked is None and unchecked.forward([fmpq(1)] * 4, QQ)[0]["output"] == [1] * 4  # neg(1) is -1


def test_the_default_check_refuses_a_miscompiled_table(monkeypatch):
    import attncert.constructions.compiler.assemble as assemble
    from attncert.constructions.compiler import CheckFailed

    real = assemble.tabulate

    def wrong(d, op, finite):
        table = real(d, op, finite)
        return {**table, ("a",): "a"}  # swap(a) is b

    monkeypatch.setattr(assemble, "tabulate", wrong)
    swap = rasp.categorical(rasp.Map(lambda t: {"a": "b", "b": "a"}[t], rasp.tokens)).named("swap")
    with pytest.raises(CheckFailed, match=r"node 'swap': .* on input \['a', 'a'\] at position 0 RASP gives 'b', the model 'a'"):
        compile_graph(_program(swap), 2, "categorical", ["a", "b"])


def test_a_categorical_mean_of_different_numbers_is_refused_by_the_check():
    # RASP averages 1, 1, 2 to 4/3; the one-hot columns move as (2/3, 1/3, 0), which would decode as None
    from attncert.constructions.compiler import CheckFailed

    mean = rasp.categorical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), rasp.tokens)).named("mean")
    with pytest.raises(CheckFailed, match=r"node 'mean': .* on input \[1, 1, 2\] at position 0 RASP gives 4/3, the model columns \(2/3, 1/3, 0\), not one-hot"):
        compile_graph(_program(mean), 3, "categorical", [1, 2, 3])


def test_the_check_reaches_every_value_it_can_and_names_the_others():
    # a histogram of 7 tokens over {a, b}: 2^7 words, so the covering search (the sweep abababa, the constant
    # words, then seeded random ones); its values 1..7 all occur (a^k b^(7-k)), but 0 never does: each token
    # counts itself
    hist = rasp.categorical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))).named("hist")
    r = compile_graph(_program(hist), 7, "categorical", ["a", "b"]).checked
    assert not r.exhaustive and 1 + 2 + 8 <= r.inputs <= 64 and r.refused == 0
    assert r.coverage == {"tokens": (2, 2), "hist": (7, 8)} and r.unreached == {"hist": (0,)}
    assert "reached 9 of their 10 values (not reached: hist: 0)" in r.describe()


def test_inputs_outside_the_programs_domain_are_skipped_and_a_program_with_none_is_refused():
    inverse = rasp.numerical(rasp.Map(rasp.fn("rdiv_const", c=1), rasp.tokens))
    r = compile_graph(_program(inverse), 6, "scalar").checked
    assert r.inputs == 3 and r.inputs + r.refused <= 12 and "numerical value sets are not enumerated" in r.describe()
    never = rasp.numerical(rasp.Map(rasp.fn("rdiv_const", c=1), rasp.numerical(rasp.Map(rasp.fn("mul_const", c=0), rasp.tokens))))
    with pytest.raises(NotCompilable, match="the RASP evaluation refuses all 12 check inputs"):
        compile_graph(_program(never), 3, "scalar")


def test_a_large_vocabulary_is_swept_and_a_bad_one_refused():
    from attncert.exact.errors import AttncertError

    g = _program(rasp.categorical(rasp.Map(lambda t: t, rasp.tokens)).named("same"))
    # 100 symbols over 10 positions: 10 words of consecutive symbols hold every one
    r = compile_graph(g, 10, "categorical", list(range(100))).checked
    assert r.coverage == {"tokens": (100, 100), "same": (100, 100)} and r.inputs == 64
    for vocab in ([], ["a", None]):
        with pytest.raises(AttncertError, match="a vocabulary has at least one symbol, and None is not one"):
            compile_graph(g, 2, "categorical", vocab)
    with pytest.raises(AttncertError, match="the sequence length must be a positive integer"):
        compile_graph(g, 0, "categorical", ["a"])


def test_a_check_over_the_pair_limit_is_refused_with_the_way_out():
    from attncert.exact.errors import LimitExceeded
    from attncert.exact.limits import Limits, limits

    g = _program(rasp.numerical(rasp.Map(rasp.fn("neg"), rasp.tokens)))
    with limits(Limits(max_pairs=100)):
        with pytest.raises(LimitExceeded, match=r"121 query-key pairs per head, over the limit of 100 \(raise it with --max-pairs, or compile with check=False\)"):
            compile_graph(g, 10, "scalar")
        assert compile_graph(g, 10, "scalar", check=False).checked is None


def test_float_forward_passes_report_an_exp_overflow_instead_of_nan(tmp_path):
    U = universal(2, 2, 1)
    m = compiled(U)
    path = tmp_path / "u.npz"
    path.write_bytes(to_npz(m))
    # X = [[10, 20], [30, 40]], A = [[20, 30], [30, 40]]: scores X A X^T are in the tens of thousands, past 709.78
    mats = {name: [[fmpq(10 * (i + j + 1 + (name == "A"))) for j in range(c)] for i in range(r)] for name, r, c in U.layout.inputs}
    xs = U.layout.encode(mats, QQ)
    exact = m.forward(xs, EE)[0]["output"]
    assert exact == rasp.evaluate_graph(U.graph(), xs, EE)["output"]  # exact: no limit
    with pytest.raises(FloatingPointError, match="overflow"):
        run_npz(path, [float(x) for x in xs])
    with pytest.raises(OverflowError):
        m.forward([float(x) for x in xs], Float)




def test_the_documented_categorical_format_decodes_the_outputs():
    # docs/compiler.md, "Categorical tokens": token column k is 1 where the token is vocab[k]; an output is the
    # value of output_values whose column holds exactly 1, None if none does. Read from the JSON alone.
    from attncert.constructions.rasp.values import encode_value

    shift = rasp.Aggregate(rasp.Select(rasp.indices, rasp.numerical(rasp.Map(rasp.fn("sub_const", c=1), rasp.indices)), rasp.Comparison.EQ), rasp.tokens)
    g = _program(shift)  # query i selects the key i - 1: out[i] = tokens[i - 1], None at position 0
    j = model_to_json(compile_graph(g, 3, "categorical", ["x", "y", "z"]))
    assert [v["s"] for v in j["vocab"]] == ["x", "y", "z"]
    for word in _words("xyz", 3):
        res = independent_forward(j, [{"s": t} for t in word], QQ)
        cols = [res[c][1:] for c in j["outputs"]["output"]]
        decoded = [next((v for v, x in zip(j["output_values"]["output"], row) if x == 1), None) for row in zip(*cols)]
        assert decoded == [None] + [encode_value(t) for t in word[:-1]]
