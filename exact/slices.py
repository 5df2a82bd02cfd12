r"""Exact products of nonnegative matrices and vectors with float64 BLAS, by splitting them into digits.

Ozaki, Ogita, Oishi & Rump, "Error-free transformations of matrix multiplication by using fast
routines of matrix multiplication and its applications", Numer. Algorithms 59 (2012) 95-118: a
floating-point matrix product is exact when its factors have so few significant bits that every
product of entries and every partial sum is an integer below 2^53, whatever the order of
evaluation. Here:

* a matrix A with entries in [0, 2^e) is cut into S base-2^ka digits (``ka`` = :data:`MATRIX_BITS`),

      A = 2^e sum_{s<S} A_s 2^{-ka (s+1)} + E,    A_s integer in [0, 2^ka),   0 <= E < 2^{e - ka S},

  each A_s a float64 array of integers (floor and scaling by powers of two are exact, and the
  fractional part of a double t >= 0 is representable: Sterbenz's lemma);
* a vector x >= 0 of exact dyadic numbers is written with the same exponent f for every entry,
  x = 2^f sum_{t<T} X_t 2^{-kx (t+1)}, X_t integer in [0, 2^kx), with kx chosen so that
  L 2^{ka + kx} <= 2^53 for the inner dimension L (:func:`vector_bits`).

Then every entry of A_s X (X the L x T matrix of digits) is a sum of L products of integers
below 2^ka and 2^kx, so every partial sum is an integer of magnitude below L 2^{ka + kx} <= 2^53:
representable, so every floating-point addition, multiplication or fused multiply-add BLAS
performs is exact, in any order. The products are exact integers, and

    (F x)_i = 2^{e + f} sum_{s, t} (A_s X)_{i t} 2^{-ka (s+1) - kx (t+1)},   F = A - E.

:func:`float_value` adds these terms in one fixed order (so two runs, on any machine, give the same
doubles) with relative error at most gamma_{ST-1} (nonnegative terms; Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., 2002, section 4.2); :func:`integer_value` adds them
exactly, as Python integers, for the high-precision path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import fmpq

from attncert.exact.roundoff import gamma

#: Bits per digit of a matrix. A double holds 53, so two digits hold every entry >= 2^-11 of [0, 1] exactly.
MATRIX_BITS = 32
#: The most digits a vector may need (beyond, its entries span more than about 2^(MAX_DIGITS kx - 53)).
MAX_DIGITS = 64


def vector_bits(inner: int) -> int:
    """kx, the bits per digit of a vector multiplied by a matrix with ``inner`` columns: inner 2^(ka + kx) <= 2^53,
    and a whole number of bytes (16 up to 32 columns, 8 up to 8192), so that digits and sums pass through bytes."""
    k = (53 - MATRIX_BITS - (inner - 1).bit_length()) // 8 * 8  # (inner - 1).bit_length() = ceil(log2 inner)
    if k < 8:
        raise ValueError(f"an inner dimension of {inner} is too large for exact products in float64")
    return k


@dataclass
class MatrixDigits:
    """F = 2^exponent sum_s digits[s] 2^(-MATRIX_BITS (s+1)): a nonnegative matrix cut into base-2^32 digits."""

    digits: list[np.ndarray]
    exponent: int

    @classmethod
    def of(cls, A: np.ndarray, count: int, exponent: int) -> MatrixDigits:
        """The first ``count`` digits of A (0 <= A < 2^exponent entrywise, not checked here): F <= A < F + 2^(exponent - 32 count)."""
        t = np.multiply(A, 2.0 ** (MATRIX_BITS - exponent))  # A 2^(ka - e) in [0, 2^ka), exactly
        digits = []
        for s in range(count):
            if s == count - 1:
                np.floor(t, out=t)  # the last digit takes t's memory
                digits.append(t)
                break
            d = np.floor(t)
            t -= d  # the fractional part, exactly
            t *= 2.0**MATRIX_BITS
            digits.append(d)
        return cls(digits, exponent)

    @classmethod
    def of_table(cls, table: list[list[float]], index: np.ndarray, exponent: int) -> MatrixDigits:
        """F[i, j] = 2^exponent sum_s table[s][index[i, j]] 2^(-32 (s+1)): a matrix whose entries take few values, each given
        by its digits (:func:`table_digits`), placed by one gather per digit."""
        return cls([np.take(np.array(col, dtype=np.float64), index) for col in table], exponent)

    @property
    def truncation(self) -> fmpq:
        """An exact bound on A - F (entrywise, for A built by :meth:`of`): 2^(exponent - 32 count)."""
        return fmpq(2) ** (self.exponent - MATRIX_BITS * len(self.digits))

    def products(self, X: np.ndarray, transpose: bool = False) -> list[np.ndarray]:
        """[A_s X] (or [A_s^T X]) for the digits A_s: exact when X holds digits of :func:`vector_bits` bits."""
        return [(d.T if transpose else d) @ X for d in self.digits]


def vector_digits(x: np.ndarray, width: int) -> tuple[np.ndarray, int]:
    """(X, f) with x = 2^f sum_t X[:, t] 2^(-width (t+1)) exactly, X an L x T array of integers in [0, 2^width).

    x holds finite doubles >= 0, not all 0. T is the fewest digits that hold every entry exactly (from each
    double's lowest set bit); ValueError if more than MAX_DIGITS would be needed.
    """
    if not (x.min() >= 0 and np.isfinite(x).all() and x.max() > 0):
        raise ValueError("vector_digits needs finite entries >= 0, not all 0")
    mant, E = np.frexp(x[x > 0])
    bits = np.ldexp(mant, 53).astype(np.int64)  # the 53-bit significands, exactly
    lowest = E - 53 + (np.frexp((bits & -bits).astype(np.float64))[1] - 1)  # the exponent of each lowest set bit
    f = int(E.max())
    count = max(1, -(-(f - int(lowest.min())) // width))
    if count > MAX_DIGITS:
        raise ValueError(f"the entries span too many binary orders of magnitude for {MAX_DIGITS} digits")
    t = np.ldexp(x, width - f)  # in [0, 2^width), exactly
    X = np.empty((len(x), count))
    for c in range(count):
        X[:, c] = np.floor(t)
        t -= X[:, c]
        t *= 2.0**width
    return X, f


def grid_floor(x: np.ndarray, width: int, count: int) -> np.ndarray:
    """x rounded down to the grid 2^(f - width count), f = the exponent of max x: the nearest point below x
    that :func:`vector_digits` writes in at most ``count`` digits (entries far below max x may become 0)."""
    _, f = np.frexp(x.max())
    step = 2.0 ** (int(f) - width * count)
    return np.floor(x / step) * step


def float_value(R: list[np.ndarray], exponent: int, width: int) -> tuple[np.ndarray, fmpq]:
    """The doubles y_i = fl(sum_{s,t} R[s][i, t] 2^(exponent - 32 (s+1) - width (t+1))) and gamma_{ST - 1}, which bounds
    |y_i / value_i - 1| (the terms are >= 0 and exactly scaled; they are added in one fixed order, smallest scale first)."""
    S, T = len(R), R[0].shape[1]
    y = np.zeros(R[0].shape[0])
    for scale, s, t in sorted(((MATRIX_BITS * (s + 1) + width * (t + 1), s, t) for s in range(S) for t in range(T)), reverse=True):
        y += np.ldexp(R[s][:, t], exponent - scale)
    return y, gamma(max(S * T - 1, 0))


def integer_value(R: list[np.ndarray], width: int) -> tuple[list[int], int]:
    """(v, g) with value_i = v_i 2^g exactly: sum_{s,t} R[s][i, t] 2^(-32 (s+1) - width (t+1)) as Python integers.

    The scales are multiples of 8 bits. Terms of one scale are added in int64 (each below 2^53, at most
    len(R) of them), then carried into base-256 digits (a carry stays below 2^50) and read as one
    integer per row (int.from_bytes).
    """
    S, T = len(R), R[0].shape[1]
    by_scale: dict[int, np.ndarray] = {}
    for s in range(S):
        for t in range(T):
            scale = (MATRIX_BITS * (s + 1) + width * (t + 1)) // 8
            term = R[s][:, t].astype(np.int64)
            by_scale[scale] = by_scale[scale] + term if scale in by_scale else term
    top, low = max(by_scale), min(by_scale)
    n = R[0].shape[0]
    carry = np.zeros(n, dtype=np.int64)
    places = top - low + 1 + 8  # the carry out of the top scale takes at most 8 more bytes
    digits = np.zeros((n, places), dtype=np.uint8)
    for k in range(places):  # from the least significant byte, scale top, up
        scale = top - k
        if scale in by_scale:
            carry += by_scale[scale]
        digits[:, places - 1 - k] = (carry & 0xFF).astype(np.uint8)
        carry >>= 8
    raw = digits.tobytes()
    return [int.from_bytes(raw[i * places : (i + 1) * places], "big") for i in range(n)], -8 * top


def integer_digits(values: list[int], width: int, count: int) -> np.ndarray:
    """X (L x count) with values_j = sum_t X[j, t] 2^(width (count - 1 - t)), X integers in [0, 2^width): the digits of
    integers 0 <= values_j < 2^(width count), as :func:`vector_digits` writes a vector (x = values 2^(f - width count)).
    ``width`` is 8 or 16 (:func:`vector_bits`): the digits are the integers' bytes."""
    size = width * count // 8
    raw = np.frombuffer(b"".join(v.to_bytes(size, "big") for v in values), dtype=">u1" if width == 8 else ">u2")
    return raw.reshape(len(values), count).astype(np.float64)


def table_digits(values: list[int], count: int) -> list[list[int]]:
    """The base-2^32 digits of integers 0 <= v < 2^(32 count), most significant first: count lists (for
    :meth:`MatrixDigits.of_table`)."""
    raw = np.frombuffer(b"".join(v.to_bytes(4 * count, "big") for v in values), dtype=">u4").reshape(len(values), count)
    return [raw[:, s].astype(np.float64).tolist() for s in range(count)]
