"""Projective diameter, contraction ratio and Hilbert distance, against brute force and mpmath."""

from fractions import Fraction
from itertools import product

import mpmath
import numpy as np
import pytest
from flint import arb, ctx, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.constructions.sinkhorn.hilbert import contraction, hilbert_distance_upper, inverse_gap, projective_diameter
from attncert.constructions.sinkhorn.problem import read_problem
from attncert.exact.testing import rational_matrices

shapes = st.tuples(st.integers(1, 4), st.integers(1, 4))


@settings(deadline=None, max_examples=40)
@given(shapes.flatmap(lambda s: rational_matrices(s[0], s[1], 30, 7)), st.integers(1, 20))
def test_projective_diameter_is_the_brute_force_maximum(C, k):
    eps = fmpq(1, k)
    n, m = len(C), len(C[0])
    F = [[Fraction(int(x.p), int(x.q)) for x in row] for row in C]
    brute = max(F[j][kk] + F[i][l] - F[i][kk] - F[j][l] for i, j, kk, l in product(range(n), range(n), range(m), range(m)))
    p = read_problem(C, [1] * n, [fmpq(n, m)] * m, eps)
    got = projective_diameter(p)
    assert got == fmpq(brute.numerator, brute.denominator) / eps


def _mp_ball(v):
    """A ball of relative radius 1e-55 around a 60-digit mpmath value."""
    return arb(mpmath.nstr(v, 60), mpmath.nstr(abs(v) * mpmath.mpf(10) ** -55 + mpmath.mpf(10) ** -300, 5))


def test_contraction_and_inverse_gap_enclose_mpmath():
    with mpmath.workdps(60), ctx.workprec(256):
        for d in [fmpq(0), fmpq(1, 3), fmpq(10), fmpq(2000)]:
            x = mpmath.mpf(int(d.p)) / int(d.q)
            lam, ig = contraction(d, 200), inverse_gap(d, 200)
            assert lam.overlaps(_mp_ball(mpmath.tanh(x / 4))) and lam.rad() < fmpq(1, 10**50)
            ref = (mpmath.exp(x / 2) + 1) / 2
            assert ig.overlaps(_mp_ball(ref)) and ig.rel_accuracy_bits() > 150


def test_inverse_gap_has_no_cancellation_for_large_delta():
    g = inverse_gap(fmpq(2000), 128)
    assert g.rel_accuracy_bits() > 100  # 1 - tanh(500) would be the unresolvable 1 - 1


def test_hilbert_distance_upper_bounds_points_in_the_balls():
    with ctx.workprec(128):
        x = [arb(1), arb(2, fmpq(1, 100)), arb(4)]
        y = [arb(2), arb(2), arb(1)]
        d = hilbert_distance_upper(x, y, 128)
        # worst points: x2 = 1.99; true d_H = log(4/1) - log(1/2) = log 8 at the midpoint
        assert d >= arb(8).log() and d < arb(8).log() + fmpq(1, 50)


@pytest.mark.parametrize("scale", [1, 2**40, 2**70])  # int32, int64, and Python integers (too large for int64)
def test_projective_diameter_in_blocks_and_with_python_integers(monkeypatch, scale):
    """Several broadcast blocks, in every integer type the cost's size calls for, give the brute-force Delta."""
    import attncert.constructions.sinkhorn.hilbert as hilbert

    monkeypatch.setattr(hilbert, "DIAMETER_BLOCK", 20)  # 5x4 entries: one row i per block
    C = [[fmpq(((7 * i + 3 * j * j) % 11) * scale + i * j, 13) for j in range(4)] for i in range(5)]
    p = read_problem(C, [fmpq(1, 5)] * 5, [fmpq(1, 4)] * 4, fmpq(1, 3))
    assert p.integer_cost[0].dtype == {1: np.int32, 2**40: np.int64, 2**70: object}[scale]
    brute = max(C[j][k] + C[i][l] - C[i][k] - C[j][l] for i, j, k, l in product(range(5), range(5), range(4), range(4)))
    assert projective_diameter(p) == brute / fmpq(1, 3)
