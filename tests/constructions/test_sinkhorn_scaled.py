"""ScaledKernel: diag(r) K diag(c) read as rows of balls, equal to the plain products, formed once when first read."""

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn.kernel import ball_array
from attncert.constructions.sinkhorn.scaled import ScaledKernel


def _factors(n=3, m=4):
    with ctx.workprec(128):
        K = ball_array([arb(fmpq(i + 1, 7)).exp() for i in range(n * m)]).reshape(n, m)
        r = [arb(fmpq(2 * i + 1, 3), fmpq(1, 10**30)) for i in range(n)]
        c = [arb(fmpq(1, j + 2)).sqrt() for j in range(m)]
    return r, K, c


def test_rows_are_the_plain_ball_products_and_are_formed_once():
    r, K, c = _factors()
    P = ScaledKernel(r, K, c, 128)
    assert "_rows" not in vars(P)  # nothing formed until read
    assert len(P) == 3 and len(P[0]) == 4
    with ctx.workprec(128):
        plain = [[r[i] * K[i, j] * c[j] for j in range(4)] for i in range(3)]
    assert all(P[i][j].mid() == plain[i][j].mid() and P[i][j].rad() == plain[i][j].rad() for i in range(3) for j in range(4))
    assert [row for row in P] == P[:] and P[1] is P[1]  # iteration, slices and indexing read the same rows
    assert "_rows" in vars(P) and np.array(P, dtype=object).shape == (3, 4)  # numpy reads it as the matrix


def test_scaled_rows_contain_every_entry_times_the_factor():
    r, K, c = _factors()
    P = ScaledKernel(r, K, c, 128)
    with ctx.workprec(128):
        f = arb(0, fmpq(1, 10**20)).exp()  # [e^-1e-20, e^1e-20]
        W = P.scaled_rows(f)
        for i in range(3):
            for j in range(4):
                for t in (f.lower(), f.upper()):
                    assert W[i][j].contains(P[i][j].mid() * t)


def test_factors_of_the_wrong_length_are_refused():
    r, K, c = _factors()
    with pytest.raises(ValueError, match="3x4 kernel scaled by 2 rows and 4 columns"):
        ScaledKernel(r[:2], K, c, 128)
