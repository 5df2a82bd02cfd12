"""exact/slices.py: BLAS products of digits are exact (checked against Python fractions), and the digits hold what they say."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncert.exact.roundoff import gamma
from attncert.exact.slices import (
    MATRIX_BITS,
    MatrixDigits,
    float_value,
    grid_floor,
    integer_digits,
    integer_value,
    table_digits,
    vector_bits,
    vector_digits,
)


def _value_of_digits(F: MatrixDigits) -> list[list[Fraction]]:
    n, m = F.digits[0].shape
    return [
        [sum(Fraction(int(F.digits[s][i, j])) * Fraction(2) ** (F.exponent - MATRIX_BITS * (s + 1)) for s in range(len(F.digits))) for j in range(m)]
        for i in range(n)
    ]


def test_vector_bits_keep_every_partial_sum_below_2_to_53():
    for matrix_bits in (24, 32):
        for inner in [1, 2, 31, 32, 33, 2048, 4096, 8192]:
            k = vector_bits(inner, matrix_bits)
            assert k % 8 == 0 and inner * 2 ** (matrix_bits + k) <= 2**53
    assert vector_bits(32) == 16 and vector_bits(33) == 8 and vector_bits(8192, 24) == 16
    with pytest.raises(ValueError):
        vector_bits(8193)


def test_a_table_of_24_bit_digits_gives_exact_products_with_wider_vector_digits():
    rng = np.random.default_rng(9)
    n, m = 40, 30
    values = [int(v) for v in rng.integers(1, 2**62, 7)]
    index = rng.integers(0, 7, (n, m))
    F = MatrixDigits.of_table(table_digits(values, 3, 24), index, 1, 24)  # value_z 2^(1 - 72)
    x = [int(v) for v in rng.integers(1, 2**62, m)]
    width = F.vector_bits()
    assert width == vector_bits(30, 24) == 24  # 24 + 24 + ceil(log2 30) <= 53
    got, g = integer_value(F.products(integer_digits(x, width, 3)), width, 24)
    want = [sum(Fraction(values[index[i, j]]) * Fraction(2) ** (1 - 72) * x[j] for j in range(m)) for i in range(n)]
    assert [Fraction(v) * Fraction(2) ** (g + 1 + width * 3) for v in got] == want


@settings(deadline=None, max_examples=25)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32), st.floats(0, 12))
def test_products_of_digits_are_exact(n, m, seed, spread):
    rng = np.random.default_rng(seed)
    A = rng.random((n, m)) ** 4  # entries of [0, 1], some far below 2^-11 (truncated by the two digits)
    x = rng.random(m) * np.exp(rng.random(m) * spread) + 1e-300
    y = rng.random(n) + 1e-3
    F = MatrixDigits.of(A, 2, 1)
    exact_F = _value_of_digits(F)
    cut = Fraction(F.truncation.p, F.truncation.q)
    assert all(0 <= Fraction(float(A[i, j])) - exact_F[i][j] < cut for i in range(n) for j in range(m))
    X, f = vector_digits(x, vector_bits(m))
    assert [sum(Fraction(int(X[j, t])) * Fraction(2) ** (f - vector_bits(m) * (t + 1)) for t in range(X.shape[1])) for j in range(m)] == [Fraction(float(v)) for v in x]
    values, g = integer_value(F.products(X), vector_bits(m))
    want = [sum(exact_F[i][j] * Fraction(float(x[j])) for j in range(m)) for i in range(n)]
    assert [Fraction(v) * Fraction(2) ** (g + F.exponent + f) for v in values] == want
    # the transposed product, and its rounding to doubles within gamma_{ST-1}
    Y, fy = vector_digits(y, vector_bits(n))
    R = F.products(Y, transpose=True)
    rounded, bound = float_value(R, F.exponent + fy, vector_bits(n))
    assert bound == gamma(len(R) * R[0].shape[1] - 1)
    for j in range(m):
        true = sum(exact_F[i][j] * Fraction(float(y[i])) for i in range(n))
        if true:
            assert abs(Fraction(float(rounded[j])) / true - 1) <= Fraction(bound.p, bound.q)


def test_integer_and_table_digits_round_trip():
    rng = np.random.default_rng(5)
    for width in (8, 16, 24):
        values = [int(v) for v in rng.integers(0, 2**62, 20)] + [0, 2 ** (8 * width) - 1]
        X = integer_digits(values, width, 8)
        assert [sum(int(X[j, t]) << (width * (7 - t)) for t in range(8)) for j in range(len(values))] == values
    table = [int(v) << 40 | int(w) for v, w in zip(rng.integers(0, 2**60, 10), rng.integers(0, 2**40, 10))]
    for width in (24, 32):
        digits = table_digits(table, 128 // width + 1, width)
        count = digits.shape[0]
        assert [sum(int(digits[s][k]) << (width * (count - 1 - s)) for s in range(count)) for k in range(10)] == table


def test_grid_floor_rounds_down_onto_few_digits():
    x = np.array([1.0, 2.0**-70 * 3, 0.7])
    y = grid_floor(x, 8, 4)
    assert (y <= x).all() and y[1] == 0.0 and vector_digits(y, 8)[0].shape[1] <= 4
    assert vector_digits(np.array([0.5, 0.25]), 8)[0].shape[1] == 1  # one bit each: one digit


def test_vector_digits_refuse_what_they_cannot_hold():
    with pytest.raises(ValueError):
        vector_digits(np.array([1.0, 1e-300]), 8)  # 1000 binary orders of magnitude
    with pytest.raises(ValueError):
        vector_digits(np.array([1.0, -1.0]), 8)


def test_float_value_refuses_scales_that_could_round_below_the_normal_range():
    R = [np.ones((3, 2))]
    assert float_value(R, 0, 8)[0].tolist() == [2.0**-40 + 2.0**-48] * 3  # 2^(-32-8) + 2^(-32-16), exactly
    with pytest.raises(ValueError):
        float_value(R, -1000, 8)
