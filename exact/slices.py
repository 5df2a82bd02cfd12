r"""Exact products of nonnegative matrices and vectors with float64 BLAS, by splitting them into digits.

Ozaki, Ogita, Oishi & Rump, "Error-free transformations of matrix multiplication by using fast
routines of matrix multiplication and its applications", Numer. Algorithms 59 (2012) 95-118: a
floating-point matrix product is exact when its factors have so few significant bits that every
product of entries and every partial sum is an integer below 2^53, whatever the order of
evaluation. Here:

* a matrix A with entries in [0, 2^e) is cut into S base-2^ka digits (ka a whole number of bytes,
  :data:`MATRIX_BITS` unless said otherwise),

      A = 2^e sum_{s<S} A_s 2^{-ka (s+1)} + E,    A_s integer in [0, 2^ka),   0 <= E < 2^{e - ka S},

  each A_s a float64 array of integers (floor and scaling by powers of two are exact, and the
  fractional part of a double t >= 0 is representable: Sterbenz's lemma);
* a vector x >= 0 of exact dyadic numbers is written with the same exponent f for every entry,
  x = 2^f sum_{t<T} X_t 2^{-kx (t+1)}, X_t integer in [0, 2^kx), with kx chosen so that
  L 2^{ka + kx} <= 2^53 for the inner dimension L (:func:`vector_bits`). Fewer, wider vector digits
  for narrower matrix digits: the work is about S T products.

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


def vector_bits(inner: int, matrix_bits: int = MATRIX_BITS) -> int:
    """kx, the bits per digit of a vector multiplied by a matrix of ``matrix_bits``-bit digits with ``inner`` columns:
    inner 2^(ka + kx) <= 2^53, a whole number of bytes (so that digits and sums pass through bytes)."""
    k = (53 - matrix_bits - (inner - 1).bit_length()) // 8 * 8  # (inner - 1).bit_length() = ceil(log2 inner)
    if k < 8:
        raise ValueError(f"an inner dimension of {inner} is too large for exact products in float64")
    return k


@dataclass
class MatrixDigits:
    """F = 2^exponent sum_s digits[s] 2^(-width (s+1)): a nonnegative matrix cut into base-2^width digits."""

    digits: list[np.ndarray]
    exponent: int
    width: int = MATRIX_BITS

    @classmethod
    def of(cls, A: np.ndarray, count: int, exponent: int) -> MatrixDigits:
        """The first ``count`` 32-bit digits of A (0 <= A < 2^exponent, not checked): F <= A < F + 2^(exponent - 32 count)."""
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
        return cls(digits, exponent, MATRIX_BITS)

    @classmethod
    def of_table(cls, table: np.ndarray, index: np.ndarray, exponent: int, width: int) -> MatrixDigits:
        """F[i, j] = 2^exponent sum_s table[s, index[i, j]] 2^(-width (s+1)): a matrix whose entries take few values, each
        given by its digits (:func:`table_digits`), placed by one gather per digit."""
        return cls([np.take(col, index) for col in table], exponent, width)

    @property
    def truncation(self) -> fmpq:
        """An exact bound on A - F (entrywise, for A built by :meth:`of`): 2^(exponent - width count)."""
        return fmpq(2) ** (self.exponent - self.width * len(self.digits))

    def vector_bits(self, transpose: bool = False) -> int:
        """The digit width of a vector this matrix (or its transpose) multiplies exactly."""
        return vector_bits(self.digits[0].shape[0 if transpose else 1], self.width)

    def products(self, X: np.ndarray, transpose: bool = False) -> list[np.ndarray]:
        """[A_s X] (or [A_s^T X]) for the digits A_s: exact when X holds digits of :meth:`vector_bits` bits."""
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


def float_value(R: list[np.ndarray], exponent: int, width: int, matrix_bits: int = MATRIX_BITS) -> tuple[np.ndarray, fmpq]:
    """The doubles y_i = fl(sum_{s,t} R[s][i, t] 2^(exponent - ka (s+1) - width (t+1))) and gamma_{ST - 1}, which bounds
    |y_i / value_i - 1| (the terms are >= 0 and exactly scaled; they are added in one fixed order, smallest scale first).
    ValueError if the smallest scale is below 2^-1022: a scaled term could be subnormal, its rounding not relative."""
    S, T = len(R), R[0].shape[1]
    if exponent - (matrix_bits * S + width * T) < -1022:
        raise ValueError("the smallest digit's scale is below float64's normal range")  # a term could round
    y = np.zeros(R[0].shape[0])
    for scale, s, t in sorted(((matrix_bits * (s + 1) + width * (t + 1), s, t) for s in range(S) for t in range(T)), reverse=True):
        y += np.ldexp(R[s][:, t], exponent - scale)
    return y, gamma(max(S * T - 1, 0))


def integer_value(R: list[np.ndarray], width: int, matrix_bits: int = MATRIX_BITS) -> tuple[list[int], int]:
    """(v, g) with value_i = v_i 2^g exactly: sum_{s,t} R[s][i, t] 2^(-ka (s+1) - width (t+1)) as Python integers.

    The scales are whole bytes. The terms are added into one int64 per row and byte position (each term below
    2^53, at most len(R) per position); each such sum is spread into its bytes (so every position holds less
    than 2^11), then carried in rounds, all positions at once (each round keeps the low byte and moves the rest
    one byte up, until every position holds a byte), and each row is read as one integer (int.from_bytes).
    """
    S, T, n = len(R), R[0].shape[1], R[0].shape[0]
    q, w = matrix_bits // 8, width // 8
    low, top = q + w, q * S + w * T
    pad = 8  # leading bytes for what the carries bring above the most significant term
    size = pad + top - low + 1
    D = np.zeros((n, size), dtype=np.int64)
    for s in range(S):
        first = pad + q * (s + 1) + w - low
        D[:, first : first + w * T : w] += R[s].astype(np.int64)
    # Each int64 (below 2^57) spread into its 8 bytes, byte b of position c landing b positions higher: sums below 2^11.
    raw = D.view(np.uint8).reshape(n, size, 8)  # little-endian: byte b weighs 256^b
    P = raw[:, :, 0].astype(np.int64)
    for b in range(1, 8):
        P[:, : size - b] += raw[:, b:, b]
    while True:
        high = P >> 8
        if not high.any():
            break
        P &= 0xFF
        P[:, :-1] += high[:, 1:]
    data = P.astype(np.uint8).tobytes()
    return [int.from_bytes(data[i * size : (i + 1) * size], "big") for i in range(n)], -8 * top


def integer_digits(values: list[int], width: int, count: int) -> np.ndarray:
    """X (L x count) with values_j = sum_t X[j, t] 2^(width (count - 1 - t)), X integers in [0, 2^width): the digits of
    integers 0 <= values_j < 2^(width count), ``width`` a whole number of bytes (:func:`vector_bits`), read from the
    integers' bytes; as :func:`vector_digits` writes a vector (x = values 2^(f - width count))."""
    size = width // 8
    raw = np.frombuffer(b"".join(v.to_bytes(size * count, "big") for v in values), dtype=np.uint8).reshape(len(values), count, size)
    if size == 1:
        return raw[:, :, 0].astype(np.float64)
    digits = raw[:, :, 0].astype(np.float64)
    for k in range(1, size):
        digits *= 256
        digits += raw[:, :, k]
    return digits


def table_digits(values: list[int], count: int, width: int) -> np.ndarray:
    """The base-2^width digits of integers 0 <= v < 2^(width count), most significant first, as a count x len(values)
    array (for :meth:`MatrixDigits.of_table`)."""
    return np.ascontiguousarray(integer_digits(values, width, count).T)
