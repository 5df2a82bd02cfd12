"""The lemma constructions, exactly, against plain-Python references written here.

Each lemma runs on at least 200 hypothesis-drawn rational inputs with sizes in
1..16 (fewer sizes where the size is fixed). References use Python's Fraction
and sympy, not the code under test.
"""

import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy
from flint import fmpq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attncert.constructions import activations, linalg, rasp
from attncert.exact import EE, QQ, Float
from attncert.exact.testing import ee_numbers, rationals

MANY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
sizes = st.integers(1, 16)


def F(x) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def as_fmpq(rows):
    return [[fmpq(x.numerator, x.denominator) for x in r] for r in rows]


EDGE = [fmpq(0), fmpq(1), fmpq(-1), fmpq(10**30 + 1, 7), fmpq(-3, 10**25 + 9)]


@st.composite
def matrix(draw, r, c, height=10**6, den=10**4):
    """Entries from a drawn seed (drawing each entry through hypothesis is slow), with
    zeros, ones and huge numerators and denominators mixed in."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    edge = draw(st.floats(0, 0.5))
    return [
        [rng.choice(EDGE) if rng.random() < edge else fmpq(rng.randint(-height, height), rng.randint(1, den)) for _ in range(c)]
        for _ in range(r)
    ]


@MANY
@given(st.data(), sizes, sizes)
def test_transpose(data, r, c):
    m = data.draw(matrix(r, c))
    out = linalg.transpose(r, c)({"M": m}, QQ)
    assert out == [[m[i][j] for i in range(r)] for j in range(c)]


@MANY
@given(st.data(), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9))
def test_matmul(data, r, k, c):
    a, b = data.draw(matrix(r, k, 1000, 50)), data.draw(matrix(k, c, 1000, 50))
    cons = linalg.matmul(r, k, c)
    seq = cons.run({"A": a, "B": b}, QQ)
    want = [[sum((F(a[i][l]) * F(b[l][j]) for l in range(k)), Fraction(0)) for j in range(c)] for i in range(r)]
    assert [[F(x) for x in row] for row in cons.layout.decode(seq)] == want
    assert all(x == 0 for x in cons.layout.rest(seq))


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from([(16, 16, 16), (1, 16, 1), (16, 1, 16), (12, 16, 9)]))
def test_matmul_at_size_16(data, dims):
    r, k, c = dims
    a, b = data.draw(matrix(r, k, 99, 9)), data.draw(matrix(k, c, 99, 9))
    out = linalg.matmul(r, k, c)({"A": a, "B": b}, QQ)
    assert out == (sympy.Matrix([[F(x) for x in row] for row in a]) * sympy.Matrix([[F(x) for x in row] for row in b])).applyfunc(
        lambda v: fmpq(int(v.p), int(v.q))
    ).tolist()


def _softmax_ref_mp(row):
    with mpmath.workdps(50):
        e = [mpmath.exp(mpmath.mpf(int(x.p)) / int(x.q)) for x in row]
        s = mpmath.fsum(e)
        return [v / s for v in e]


@MANY
@given(st.data(), st.integers(1, 16), st.integers(1, 16))
def test_softmax_rows(data, r, c):
    s = data.draw(matrix(r, c, 30, 7))
    out = activations.softmax_rows(r, c)({"S": [[EE.convert(x) for x in row] for row in s]}, EE)
    for i in range(r):
        assert EE.sum(out[i]) == 1  # exact
        for j in range(c):
            # e^{s_ij} / e^{s_i0} = out_ij / out_i0 exactly (a quotient no code under test forms)
            assert out[i][j] / out[i][0] == EE.exp(s[i][j] - s[i][0])
    ref = _softmax_ref_mp(s[0])  # and one row against an independent 50-digit value
    for j in range(c):
        assert abs(out[0][j].to_mpmath(40) - ref[j]) <= mpmath.mpf(10) ** -35


@MANY
@given(st.lists(st.one_of(rationals(10**9, 10**9), ee_numbers(2)), min_size=1, max_size=16))
def test_relu_exact_in_ee(xs):
    xs = [EE.convert(x) for x in xs]
    out = activations.relu(len(xs))({"x": [xs]}, EE)[0]
    for x, y in zip(xs, out):
        v = x.to_mpmath(60)
        assert (y == x) if v > 0 else (y == 0)


@MANY
@given(st.lists(rationals(10**9, 10**9), min_size=1, max_size=16))
def test_maxmin_qq(xs):
    out = activations.maxmin(len(xs))({"x": [xs]}, QQ)[0]
    want = []
    for m in range(0, len(xs) - 1, 2):
        want += sorted(xs[m : m + 2], key=F, reverse=True)
    if len(xs) % 2:
        want.append(xs[-1])
    assert out == want


@settings(max_examples=60, deadline=None)
@given(st.lists(ee_numbers(2), min_size=2, max_size=8))
def test_maxmin_ee_close_values(xs):
    out = activations.maxmin(len(xs))({"x": [xs]}, EE)[0]
    for m in range(0, len(xs) - 1, 2):
        a, b = xs[m].to_mpmath(60), xs[m + 1].to_mpmath(60)
        assert out[m] == (xs[m] if a >= b else xs[m + 1])
        assert out[m + 1] == (xs[m + 1] if a >= b else xs[m])


@MANY
@given(st.data())
def test_inverse3(data):
    m = data.draw(matrix(3, 3, 10**4, 10**3))
    sm = sympy.Matrix([[F(x) for x in row] for row in m])
    if sm.det() == 0:
        with pytest.raises(rasp.EvaluationError, match="exact zero"):
            linalg.inverse3()({"M": m}, QQ)
        return
    out = linalg.inverse3()({"M": m}, QQ)
    assert [[F(x) for x in row] for row in out] == [[Fraction(int(v.p), int(v.q)) for v in row] for row in sm.inv().tolist()]


# --- edge cases ----------------------------------------------------------------------------


def test_edge_shapes_and_zero_matrices():
    big = fmpq(-(10**40) + 7, 10**30 + 3)
    assert linalg.transpose(1, 1)({"M": [[big]]}, QQ) == [[big]]
    assert linalg.transpose(1, 4)({"M": [[1, 2, 3, big]]}, QQ) == [[1], [2], [3], [big]]
    assert linalg.matmul(1, 1, 1)({"A": [[big]], "B": [[big]]}, QQ) == [[big * big]]
    zero = [[fmpq(0)] * 3 for _ in range(2)]
    assert linalg.matmul(2, 3, 1)({"A": zero, "B": [[1], [2], [3]]}, QQ) == [[0], [0]]
    assert linalg.matmul(4, 1, 3)({"A": [[1], [2], [3], [4]], "B": [[1, big, -1]]}, QQ)[3] == [4, 4 * big, -4]
    with pytest.raises(rasp.EvaluationError, match="exact zero"):
        linalg.inverse3()({"M": [[0] * 3] * 3}, QQ)


def test_softmax_equal_scores_and_single_column():
    out = activations.softmax_rows(2, 3)({"S": [[EE.convert(5)] * 3, [EE.convert(-2), EE.convert(-2), EE.convert(1)]]}, EE)
    assert out[0] == [EE.convert(fmpq(1, 3))] * 3
    assert out[1][0] == out[1][1]
    assert activations.softmax_rows(3, 1)({"S": [[EE.convert(9)], [EE.convert(0)], [EE.convert(-9)]]}, EE) == [[1], [1], [1]]


def test_relu_and_maxmin_edge_cases():
    assert activations.relu(1)({"x": [[fmpq(0)]]}, QQ) == [[0]]
    assert activations.maxmin(1)({"x": [[fmpq(7)]]}, QQ) == [[7]]
    tiny = EE.exp(fmpq(1, 10**6)) - EE.exp(fmpq(-1, 10**6)) - fmpq(2, 10**6)  # positive, about 3e-19
    assert activations.maxmin(2)({"x": [[EE.zero(), tiny]]}, EE) == [[tiny, 0]]
    assert activations.relu(2)({"x": [[-tiny, tiny]]}, EE) == [[0, tiny]]


# --- float agreement --------------------------------------------------------------------------


def test_float_evaluation_agrees_with_numpy():
    rng = np.random.default_rng(0)
    for r, k, c in [(3, 4, 5), (8, 8, 8), (1, 7, 2)]:
        a, b = rng.normal(size=(r, k)), rng.normal(size=(k, c))
        out = np.array(linalg.matmul(r, k, c)({"A": a.tolist(), "B": b.tolist()}, Float))
        np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)
        out = np.array(linalg.transpose(r, c)({"M": a.T.tolist() if False else rng.normal(size=(r, c)).tolist()}, Float))
        assert out.shape == (c, r)
    s = rng.normal(size=(4, 6)) * 5
    out = np.array(activations.softmax_rows(4, 6)({"S": s.tolist()}, Float))
    ref = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    m = rng.normal(size=(3, 3))
    np.testing.assert_allclose(np.array(linalg.inverse3()({"M": m.tolist()}, Float)), np.linalg.inv(m), rtol=1e-10)
    x = rng.normal(size=7)
    out = np.array(activations.maxmin(7)({"x": [x.tolist()]}, Float))[0]
    want = np.concatenate([np.sort(x[i : i + 2])[::-1] for i in range(0, 6, 2)] + [x[6:]])
    np.testing.assert_allclose(out, want, rtol=0)
    np.testing.assert_allclose(np.array(activations.relu(7)({"x": [x.tolist()]}, Float))[0], np.maximum(x, 0), rtol=0)
