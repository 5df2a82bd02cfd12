"""attncert's .rasp programs (constructions/rasp/language/programs) against their Python-API versions
and plain-Python references.

Each .rasp program and its Python-API counterpart are evaluated with ``rasp.evaluate`` on the same
input and must give the same values of the same types (``fmpq(1) == True`` would hide a boolean
turned into a number). Expected values come from the references in this file and in
test_classic_programs.py, never from the code under test.
"""

from __future__ import annotations

import functools
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import activations, linalg
from attncert.constructions import classic as C
from attncert.constructions import rasp
from attncert.constructions.rasp.language import programs
from attncert.exact import EE, QQ, Domain
from attncert.exact.testing import rational_matrices, rationals
from tests.constructions.test_classic_programs import (
    _dyck_words,
    ref_double_histogram,
    ref_dyck,
    ref_histogram,
    ref_most_frequent,
    ref_sort,
)

words = st.lists(st.sampled_from("abcde"), min_size=1, max_size=12)
SETTINGS = settings(max_examples=30, deadline=None)


@functools.cache
def classic(expr: str) -> rasp.SOp:
    return programs.build("classic", expr)


def same(rasp_version: rasp.SOp, python_version: rasp.SOp, xs: list, domain: Domain = QQ) -> list:
    """The values of both versions on xs in domain, checked equal (values and types); returns them."""
    got, want = rasp.evaluate(rasp_version, xs, domain), rasp.evaluate(python_version, xs, domain)
    assert got == want
    assert [type(v) for v in got] == [type(v) for v in want]
    return got


# -- the classic programs --------------------------------------------------------------------


@SETTINGS
@given(words)
def test_length_reverse_histogram_first_occurrence(xs):
    n = len(xs)
    assert same(classic("make_length()"), C.make_length(), xs) == [n] * n
    assert same(classic("make_reverse(tokens)"), C.make_reverse(rasp.tokens), xs) == xs[::-1]
    assert same(classic("make_histogram(tokens)"), C.make_histogram(), xs) == ref_histogram(xs)
    assert same(classic("make_first_occurrence(tokens)"), C.make_first_occurrence(), xs) == [x not in xs[:i] for i, x in enumerate(xs)]


@SETTINGS
@given(words)
def test_double_histogram_and_most_frequent(xs):
    assert same(classic("make_double_histogram(tokens)"), C.make_double_histogram(), xs) == ref_double_histogram(xs)
    assert same(classic("make_most_frequent(tokens)"), C.make_most_frequent(), xs) == ref_most_frequent(xs)


@SETTINGS
@given(st.lists(rationals(20, 4), min_size=1, max_size=10))
def test_sort_by_rational_keys_is_stable(qs):
    assert same(classic("make_sort(tokens, tokens)"), C.make_sort(rasp.tokens, rasp.tokens), qs) == sorted(qs)
    # sorting the positions by key shows the order of ties: input order
    positions = same(classic("make_sort(indices, tokens)"), C.make_sort(rasp.indices, rasp.tokens), qs)
    assert positions == ref_sort(list(range(len(qs))), qs)


@settings(max_examples=40, deadline=None)
@given(_dyck_words(["()"]))
def test_dyck1(word):
    assert same(classic("make_dyck1()"), C.make_dyck(["()"]), list(word)) == [ref_dyck(word, ["()"])] * len(word)


@settings(max_examples=40, deadline=None)
@given(_dyck_words(["()", "[]"]))
def test_dyck2(word):
    pairs = ["()", "[]"]
    assert same(classic("make_dyck2()"), C.make_dyck(pairs), list(word)) == [ref_dyck(word, pairs)] * len(word)


def test_dyck_hand_checked_words():
    for word, dyck1, dyck2 in [("([)]", 1, 0), ("([])[]", 1, 1), ("())(", 0, 0), (")(", 0, 0), ("x", 1, 1), ("(((", 0, 0)]:
        assert rasp.evaluate(classic("make_dyck1()"), list(word)) == [dyck1] * len(word), word
        assert rasp.evaluate(classic("make_dyck2()"), list(word)) == [dyck2] * len(word), word


# -- the lemma constructions -------------------------------------------------------------------


def same_construction(name: str, expr: str, construction, mats: dict) -> list:
    """The whole output sequence of the .rasp program and of the Python construction on the
    construction's layout of mats, checked equal; returns the output matrix (decoded)."""
    xs = construction.layout.encode(mats, QQ)
    out = same(programs.build(name, expr), construction.program, xs)
    return construction.layout.decode(out)


def fractions(rows):
    return [[Fraction(int(x.p), int(x.q)) for x in row] for row in rows]


sizes = st.integers(1, 4)


@settings(max_examples=20, deadline=None)
@given(st.data(), sizes, sizes)
def test_transpose(data, r, c):
    m = data.draw(rational_matrices(r, c))
    out = same_construction("transpose", f"transpose(tokens, {r}, {c})", linalg.transpose(r, c), {"M": m})
    assert out == [[m[j][i] for j in range(r)] for i in range(c)]


@settings(max_examples=20, deadline=None)
@given(st.data(), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_matmul(data, r, k, c):
    a, b = data.draw(rational_matrices(r, k)), data.draw(rational_matrices(k, c))
    out = same_construction("matmul", f"matmul(tokens, {r}, {k}, {c})", linalg.matmul(r, k, c), {"A": a, "B": b})
    fa, fb = fractions(a), fractions(b)
    assert fractions(out) == [[sum(fa[i][l] * fb[l][j] for l in range(k)) for j in range(c)] for i in range(r)]


@settings(max_examples=20, deadline=None)
@given(st.lists(rationals(), min_size=1, max_size=9))
def test_relu(xs):
    out = same_construction("relu", "relu(tokens)", activations.relu(len(xs)), {"x": [xs]})
    assert out == [[x if x > 0 else 0 for x in xs]]


@settings(max_examples=20, deadline=None)
@given(st.lists(rationals(), min_size=1, max_size=9))
def test_maxmin(xs):
    n = len(xs)
    out = same_construction("maxmin", f"maxmin(tokens, {n})", activations.maxmin(n), {"x": [xs]})
    pairs = [sorted(xs[i : i + 2], reverse=True) for i in range(0, n, 2)]
    assert out == [[x for p in pairs for x in p]]


@settings(max_examples=10, deadline=None)
@given(st.data(), st.integers(1, 3), st.integers(1, 3))
def test_softmax_rows_with_the_e_literal(data, r, c):
    s = data.draw(rational_matrices(r, c, max_num=6, max_den=3))
    construction = activations.softmax_rows(r, c)
    xs = construction.layout.encode({"S": s}, EE)
    program = programs.build("softmax", f"softmax_rows(tokens, {r}, {c})", frozenset({programs.E_LITERAL}))
    out = construction.layout.decode(same(program, construction.program, xs, EE))
    # a softmax row sums to 1, and its entries are in the ratios of the exponentials of the scores
    for i in range(r):
        assert EE.sum(out[i]) == 1
        assert all(out[i][j] == out[i][0] * EE.exp(s[i][j] - s[i][0]) for j in range(c))


# -- one intermediate form: the graph, the size and the compiler take .rasp programs unchanged ----


def test_attncert_graph_exports_a_rasp_program_that_evaluates_as_the_python_api(tmp_path):
    from attncert.proofs.cli import main

    out = tmp_path / "hist.json"
    args = ["graph", "rasp_program", "--file", str(programs.path("classic")), "--expr", "make_histogram(tokens)", "--format", "json", "--out", str(out)]
    assert main(args) == 0
    import json

    g = rasp.graph_from_json(json.loads(out.read_text()))
    word = list("abcab")
    assert rasp.evaluate_graph(g, word)["output"] == ref_histogram(word) == rasp.evaluate(C.make_histogram(), word)
    assert rasp.size(classic("make_histogram(tokens)")).to_json(length=5) == rasp.size(C.make_histogram()).to_json(length=5)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.sampled_from("abc"), min_size=1, max_size=5))
def test_a_rasp_program_compiles_to_weights_that_compute_it(word):
    from attncert.constructions.compiler import compile_graph

    model = compile_graph(rasp.to_graph(classic("make_histogram(tokens)")), len(word), "categorical", vocab=("a", "b", "c"))
    out = model.forward(word, QQ)[0]["output"]
    assert out == ref_histogram(word)
