"""The universal simulator U against an attention layer computed here, independently."""

import random

import mpmath
import numpy as np
import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions import rasp
from attncert.constructions.simulator import pad_for, read_output, universal
from attncert.exact import EE, Float


def rand_matrix(rng, r, c, height=9, den=7):
    return [[fmpq(rng.randint(-height, height), rng.randint(1, den)) for _ in range(c)] for _ in range(r)]


def attention_here(X, A, V):
    """T(X) entry by entry from the definition, with EE exponentials, without any shared code."""
    n, d, dv = len(X), len(A), len(V[0])
    S = [[sum((X[i][l] * A[l][j] * X[k][j] for l in range(d) for j in range(d)), fmpq(0)) for k in range(n)] for i in range(n)]
    W = [[sum((X[k][l] * V[l][v] for l in range(d)), fmpq(0)) for v in range(dv)] for k in range(n)]
    out = []
    for i in range(n):
        den = EE.convert(0)
        for k in range(n):
            den = den + EE.exp(S[i][k])
        out.append([])
        for v in range(dv):
            num = EE.convert(0)
            for k in range(n):
                num = num + EE.exp(S[i][k]) * W[k][v]
            out[-1].append(num / den)
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**32))
def test_universal_is_exact(n, d, dv, seed):
    rng = random.Random(seed)
    X, A, V = rand_matrix(rng, n, d), rand_matrix(rng, d, d), rand_matrix(rng, d, dv)
    U = universal(n, d, dv)
    seq = U.run({"X": X, "A": A, "V": V}, EE)
    assert U.layout.decode(seq) == attention_here(X, A, V)
    assert all(x == 0 for x in U.layout.rest(seq))


def test_depth_is_constant_in_n():
    sizes = [rasp.size(universal(n, 3, 2).graph()) for n in range(1, 33)]
    assert {s.layers for s in sizes} == {7}
    assert {tuple(s.heads) for s in sizes} == {(0, 6, 2, 2, 1, 2, 1)}
    for d, dv in [(1, 1), (8, 8), (5, 2)]:
        assert rasp.size(universal(4, d, dv).graph()).layers == 7


def test_equal_scores_and_zero_input():
    X = [[fmpq(0)] * 2 for _ in range(3)]
    A = [[fmpq(1), fmpq(2)], [fmpq(3), fmpq(4)]]
    V = [[fmpq(5)], [fmpq(-1)]]
    assert universal(3, 2, 1)({"X": X, "A": A, "V": V}, EE) == [[0], [0], [0]]
    X = [[fmpq(1), fmpq(0)]] * 3  # identical rows: uniform attention
    out = universal(3, 2, 1)({"X": X, "A": A, "V": V}, EE)
    assert out == [[5], [5], [5]]


def test_tagged_padding_simulates_smaller_layers():
    rng = random.Random(3)
    big = (5, 3, 2)
    U = universal(*big)
    g = U.graph()
    for n, d, dv in [(1, 1, 1), (3, 2, 1), (5, 3, 2), (2, 3, 2)]:
        X, A, V = rand_matrix(rng, n, d), rand_matrix(rng, d, d), rand_matrix(rng, d, dv)
        seq = rasp.evaluate_graph(g, pad_for(big, X, A, V, EE), EE)["output"]
        assert read_output(seq, n, dv, big[2]) == attention_here(X, A, V)


def test_float_agreement_with_numpy_up_to_scores_of_50():
    rng = np.random.default_rng(0)
    n, d, dv = 6, 3, 2
    for scale in (0.1, 1.0, 3.0):
        X, A, V = rng.normal(size=(n, d)), rng.normal(size=(d, d)) * scale, rng.normal(size=(d, dv))
        S = X @ A @ X.T
        if np.abs(S).max() > 50:
            continue
        P = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
        out = np.array(universal(n, d, dv)({"X": X.tolist(), "A": A.tolist(), "V": V.tolist()}, Float))
        np.testing.assert_allclose(out, P @ (X @ V), rtol=1e-12, atol=1e-13)


def test_exact_result_is_close_to_a_high_precision_value():
    rng = random.Random(9)
    X, A, V = rand_matrix(rng, 3, 2), rand_matrix(rng, 2, 2), rand_matrix(rng, 2, 2)
    out = universal(3, 2, 2)({"X": X, "A": A, "V": V}, EE)
    with mpmath.workdps(60):
        mp = lambda q: mpmath.mpf(int(q.p)) / int(q.q)  # noqa: E731
        Xm, Am, Vm = (mpmath.matrix([[mp(x) for x in r] for r in M]) for M in (X, A, V))
        S = Xm * Am * Xm.T
        W = Xm * Vm
        for i in range(3):
            z = [mpmath.exp(S[i, k]) for k in range(3)]
            for v in range(2):
                want = mpmath.fsum(z[k] * W[k, v] for k in range(3)) / mpmath.fsum(z)
                assert abs(out[i][v].to_mpmath(50) - want) < mpmath.mpf(10) ** -45


def test_bad_sizes():
    with pytest.raises(ValueError):
        universal(0, 1, 1)


def _ee(m):
    return [[EE.convert(x) for x in row] for row in m]


def _matmul_here(a, b):
    out = []
    for row in a:
        out.append([])
        for j in range(len(b[0])):
            acc = EE.convert(0)
            for l, x in enumerate(row):
                acc = acc + x * b[l][j]
            out[-1].append(acc)
    return out


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(0, 2**32))
def test_multihead_is_exact(n, d, dv, h, do, seed):
    from attncert.constructions.simulator import multihead

    rng = random.Random(seed)
    X = rand_matrix(rng, n, d)
    heads = [(rand_matrix(rng, d, d), rand_matrix(rng, d, dv)) for _ in range(h)]
    WO = rand_matrix(rng, h * dv, do)
    mats = {"X": X, "WO": WO, **{f"A{m + 1}": a for m, (a, _) in enumerate(heads)}, **{f"V{m + 1}": v for m, (_, v) in enumerate(heads)}}
    outs = [attention_here(X, a, v) for a, v in heads]
    concat = [sum((o[i] for o in outs), []) for i in range(n)]
    cons = multihead(n, d, dv, h, do)
    seq = cons.run(mats, EE)
    assert cons.layout.decode(seq) == _matmul_here(concat, _ee(WO))
    assert all(x == 0 for x in cons.layout.rest(seq))


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), st.integers(1, 3), st.integers(0, 2**32))
def test_encoder_layer_is_exact(n, d, dv, h, f, seed):
    from attncert.constructions.simulator import encoder_layer

    rng = random.Random(seed)
    X = rand_matrix(rng, n, d)
    heads = [(rand_matrix(rng, d, d), rand_matrix(rng, d, dv)) for _ in range(h)]
    WO, W1, b1 = rand_matrix(rng, h * dv, d), rand_matrix(rng, d, f), rand_matrix(rng, 1, f)
    W2, b2 = rand_matrix(rng, f, d), rand_matrix(rng, 1, d)
    mats = {"X": X, "WO": WO, "W1": W1, "b1": b1, "W2": W2, "b2": b2}
    mats.update({f"A{m + 1}": a for m, (a, _) in enumerate(heads)})
    mats.update({f"V{m + 1}": v for m, (_, v) in enumerate(heads)})
    outs = [attention_here(X, a, v) for a, v in heads]
    mha = _matmul_here([sum((o[i] for o in outs), []) for i in range(n)], _ee(WO))
    Y = [[EE.convert(x) + m for x, m in zip(xr, mr)] for xr, mr in zip(X, mha)]
    pre = _matmul_here(Y, _ee(W1))
    H = [[p + b if (p + b).to_mpmath(50) > 0 else EE.convert(0) for p, b in zip(row, b1[0])] for row in pre]
    Z = [[y + o + b for y, o, b in zip(yr, orow, b2[0])] for yr, orow in zip(Y, _matmul_here(H, _ee(W2)))]
    cons = encoder_layer(n, d, dv, h, f)
    seq = cons.run(mats, EE)
    assert cons.layout.decode(seq) == Z
    assert all(x == 0 for x in cons.layout.rest(seq))


def test_multihead_and_encoder_depth_is_constant():
    from attncert.constructions.simulator import encoder_layer, multihead

    assert {rasp.size(multihead(n, 2, 2, 2, 2).graph()).layers for n in (1, 5, 12)} == {9}
    assert {rasp.size(encoder_layer(n, 2, 2, 2, 3).graph()).layers for n in (1, 5, 12)} == {13}


def test_heads_do_not_grow_with_the_number_of_attention_heads():
    from attncert.constructions.simulator import encoder_layer, multihead

    assert {tuple(rasp.size(multihead(3, 2, 2, h, 3).graph()).heads) for h in (1, 2, 4)} == {(0, 7, 2, 2, 1, 2, 1, 1, 1)}
    assert {tuple(rasp.size(encoder_layer(3, 2, 2, h, 3).graph()).heads) for h in (1, 3)} == {(0, 12, 2, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1)}
