"""The Sinkhorn Transformer: exact cost, pluggable encoders, and the universality sweep."""

from fractions import Fraction

import pytest
from flint import fmpq

from constructions.sinkhorn import SinkhornInputError
from constructions.sinkhorn.transformer import LinearEncoder, SinkhornTransformer
from constructions.sinkhorn.universality import chebyshev_features, systems, sweep, texts
from exact import Ball

XS = [["1/2", "-1"], ["0", "2/3"], ["1", "1"]]
YS = [["1", "0"], ["-1/3", "1/2"]]
WQ = [["1", "0", "1/2"], ["0", "-1", "1"]]
WK = [["2", "1", "0"], ["1/3", "0", "1"]]


def test_cost_is_minus_the_exact_inner_product():
    net = SinkhornTransformer(LinearEncoder([[fmpq(x) for x in r] for r in WQ]), LinearEncoder([[fmpq(x) for x in r] for r in WK]), fmpq(1, 2))
    C = net.cost(XS, YS)
    F = lambda M: [[Fraction(x) for x in r] for r in M]  # noqa: E731
    xs, ys, wq, wk = F(XS), F(YS), F(WQ), F(WK)
    q = [[sum(x[t] * wq[t][c] for t in range(2)) for c in range(3)] for x in xs]
    k = [[sum(y[t] * wk[t][c] for t in range(2)) for c in range(3)] for y in ys]
    for i in range(3):
        for j in range(2):
            want = -sum(q[i][c] * k[j][c] for c in range(3))
            assert C[i][j] == fmpq(want.numerator, want.denominator)


def test_encoders_are_pluggable_callables():
    def squares(points):  # any exact map from rows to rows
        return [[x * x for x in p] for p in points]

    net = SinkhornTransformer(squares, squares, fmpq(1))
    r = net([["1"], ["2"]], ["1/2", "1/2"], [["1"], ["3"]], ["1/4", "3/4"], Ball(128))
    assert r.certified
    assert net.cost([["2"]], [["3"]]) == [[fmpq(-36)]]


def test_mismatched_feature_widths_are_refused():
    net = SinkhornTransformer(LinearEncoder([[fmpq(1)]] * 2), LinearEncoder([[fmpq(1), fmpq(1)]] * 2), fmpq(1))
    with pytest.raises(SinkhornInputError, match="width"):
        net.cost([["1", "2"]], [["1", "2"]])


def test_chebyshev_features_are_exact():
    phi = chebyshev_features(5)
    x = fmpq(1, 3)
    assert phi([[x]]) == [[1, x, 2 * x**2 - 1, 4 * x**3 - 3 * x, 8 * x**4 - 8 * x**2 + 1]]


def test_universality_errors_fall_with_width():
    xs, a, ys, b = texts(5, 5, 1)
    for name, target in systems(fmpq(1, 2)).items():
        _, rows = sweep(target, xs, a, ys, b, fmpq(1, 2), [1, 3, 5])
        assert all(r.w1_lo <= r.w1_hi for r in rows)
        assert rows[-1].w1_hi < fmpq(1, 10**6), name  # width n interpolates on n support points
        if name != "independent":
            assert rows[0].w1_lo > rows[-1].w1_hi  # a real decrease, certified at both ends
