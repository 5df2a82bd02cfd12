r"""e^-y in multi-digit fixed point, vectorised, with a proven absolute error: the kernel of a float64 cost to
about 100-300 bits without a Python object or an arb ball per entry.

**Digits.** A fixed-point array is a float64 array d of shape (S, ...) of integers, with value
sum_k d[k] 2^(-24 k) (d[0] the integer part). :func:`normalise` carries from the last digit up (c = floor(d[k] 2^-24),
d[k] -= c 2^24, d[k-1] += c): every step is an operation on integers below 2^53, so exact, and afterwards
d[1:] lies in [0, 2^24) (d[0] takes the sign). ulp = 2^(-24 (S - 1)).

**Products** (:func:`multiply`): for loosely normalised a, b (:func:`carry`: digits |d[1:]| < 2^24 + 33) with
|a[0]|, |b[0]| <= 2^24, the sums c[k] = sum_{i+j=k} a[i] b[j] for k <= S are sums of at most S + 1 products below
2^48 (1 + 2^-18) (exact for S <= 24); the pairs with i + j > S are dropped (each term below 2^(48 - 24 (i + j))
(1 + 2^-18), at most i + j + 1 of them per i + j: their total is below (S + 2)(1 + 2^-17) 2^(48 - 24 (S + 1)) =
(S + 2)(1 + 2^-17) ulp), then c is carried twice and its digit S dropped (below (1 + 2^-19) ulp):
|fl(a b) - a b| <= (S + 4) ulp = :func:`product_error`.

**The exponential** (:func:`fixed_exp_neg`), for y = z s with z = t + e1 + e2 exactly (doubles: a shifted cost
and its TwoSum errors) and a rational s > 0:

1. z' = z 2^-c (2^-c exact, c so that max t 2^-c < 1/2) and s' = s 2^c, so y = z' s'. Each of t, e1, e2 is cut
   into S digits of |x| 2^-c (floor and subtract: the fractional part of a double >= 0 is a double, so exact),
   with the sign of x: each truncation is below 1 ulp. Adding the offset o = 2^-24 j (an exact digit, o >= twice
   the largest |e1| + |e2| scaled, and >= 8 ulp) gives Z with |Z - (z' + o)| < 4 ulp (3 truncations; a scaling
   2^-c that underflows rounds by at most 2^-1075 more) and Z >= 0.
2. Fields: the first F bytes of Z's fractional digits, f_1 .. f_F (F = 3, 6 or 9: the fewest with y_lo small), and the rest Z_lo < 2^(-8 F).
   Tables T_k[f] = floor(lower / ulp) ulp of an arb ball of e^(-f 2^(-8 k) s') (T_1 also times e^(o s')) narrower
   than one ulp (checked), so T_k <= exact < T_k + 2 ulp, all in [0, e^(o s')]; every constant below likewise.
3. y_lo = Z_lo s~' with s' - s~' < 2 ulp: |y_lo - Z_lo s'| <= (S + 4) ulp + 2 ulp.
4. e^(-y_lo) by the Taylor polynomial of degree D (y_lo^(D+1) / (D+1)! <= ulp, y_lo < 2^(-8F) s' + ulp <= 2^-32,
   checked), by Horner: p_D = 1/D!, p_k = 1/k! - y_lo p_{k+1} (coefficients truncated, each < ulp): every p_k in
   [0, 1], so each step adds at most 2 ulp + (S + 4) ulp to the error, which y_lo < 1 does not amplify:
   |p_0 - e^(-y_lo)| <= (D + 1)(S + 6) ulp + ulp (the remainder).
5. K = T_1 T_2 ... T_F p_0 (F products). With every factor in [0, g], g = e^(o s') (1 + 2^-20), the error of a
   product of two approximations is at most g (sum of their errors) + (S + 4) ulp, so the total is
   g^(F+1) (2 F ulp + F (S + 4) ulp + (D + 1)(S + 6) ulp + ulp + Ylo), Ylo = 4 ulp s' + (S + 6) ulp from steps 1
   and 3 (|e^-a - e^-b| <= e^max(-a, -b, 0) |a - b|, and y_lo >= -4 ulp s': the slack 2^-20 in g covers it).

So |K - e^-y| <= :attr:`FixedExp.error` entrywise, an exact rational; every operation on n m entries is a numpy
operation on float64 integers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from flint import arb, ctx, fmpq

WIDTH = 24
BASE = 2.0**WIDTH
INV_BASE = 2.0**-WIDTH
#: Bits per table field (tables of 2^FIELD entries).
FIELD = 8
#: y_lo must stay below 2^-LOW_BITS (then the Taylor polynomial has a small degree).
LOW_BITS = 32
#: Entries per block (the digit arrays of a block stay in cache).
CHUNK = 16384


def normalise(d: np.ndarray) -> np.ndarray:
    """Carry so that d[1:] lies in [0, 2^24) (module docstring): exact, in place; returns d."""
    c, t = np.empty_like(d[0]), np.empty_like(d[0])  # in place: the whole kernel's digits are normalised at once
    for k in range(len(d) - 1, 0, -1):
        np.floor(np.multiply(d[k], INV_BASE, out=c), out=c)
        d[k] -= np.multiply(c, BASE, out=t)
        d[k - 1] += c
    return d


def carry(d: np.ndarray) -> np.ndarray:
    """Two parallel carry passes (every digit's excess moved one place up at once, twice): exact, in place, and
    afterwards d[1:] lies in (-33, 2^24 + 33) for |d| < 2^53 before. "Loosely normalised" is |d[1:]| < 2^24 + 33
    (so is a normalised number minus such a one): products of such digits stay below 2^48 (1 + 2^-18); returns d."""
    c, t = np.empty_like(d[1:]), np.empty_like(d[1:])  # in place: temporaries of S x N cost more than the arithmetic
    for _ in range(2):
        np.floor(np.multiply(d[1:], INV_BASE, out=c), out=c)
        np.subtract(d[1:], np.multiply(c, BASE, out=t), out=d[1:])
        np.add(d[:-1], c, out=d[:-1])
    return d


def product_error(S: int) -> fmpq:
    """The error bound of :func:`multiply` in ulps of S digits."""
    return fmpq(S + 4)


def multiply(a: np.ndarray, b: np.ndarray, S: int) -> np.ndarray:
    """a b to S digits (module docstring, "Products"), loosely normalised (:func:`carry`); a and b (loosely)
    normalised digits of blocks of entries (shape (S, N)), b also one number (shape (S, 1))."""
    out = np.empty((S + 1,) + a.shape[1:])
    for k in range(S + 1):  # c[k] = sum_{i+j=k} a[i] b[j], one call a digit (the sums are exact in any order)
        lo, hi = max(0, k - len(b) + 1), min(k, len(a) - 1)
        if b.shape[1:] == a.shape[1:]:
            np.einsum("in,in->n", a[lo : hi + 1], b[k - hi : k - lo + 1][::-1], out=out[k])
        else:
            np.dot(b[k - hi : k - lo + 1, 0][::-1], a[lo : hi + 1], out=out[k])
    carry(out)
    return out[:S]


def digits_of(x: np.ndarray, S: int) -> np.ndarray:
    """S digits of the doubles x (any sign): sign(x) times the digits of |x| truncated, within 1 ulp of x."""
    sign = np.sign(x)
    t = np.abs(x)
    out = np.empty((S,) + x.shape)
    for k in range(S):
        out[k] = np.floor(t)
        t -= out[k]  # the fractional part of a double >= 0: exact
        t *= BASE
    out *= sign
    return out


def constant_digits(q: arb, S: int) -> tuple[np.ndarray, bool]:
    """floor(lower(q) / ulp) ulp as S digits (shape (S,)), for an arb q >= 0 below 2^24, and whether it is within
    2 ulp below every point of q (q's ball narrower than one ulp; a value next to a multiple of ulp, as e^(o s') is,
    need not be resolved to one side of it)."""
    digits, ok = _constants([q], S)
    return digits[:, 0], ok


def _constants(qs: list[arb], S: int) -> tuple[np.ndarray, bool]:
    """:func:`constant_digits` of each of qs, as the columns of one (S, len(qs)) array, and whether all are resolved:
    the integers floor(lower(q) 2^(24 (S - 1))) cut into base-2^24 digits through their bytes, not a divmod each."""
    shift = arb(2) ** (WIDTH * (S - 1))
    ints, ok = [], True
    for q in qs:
        scaled = q * shift
        lo = int(scaled.lower().floor().unique_fmpz())
        ok = ok and bool(scaled.upper() < lo + 2)
        ints.append(lo)
    width = WIDTH // 8
    try:
        raw = b"".join(x.to_bytes(width * S, "big") for x in ints)
    except OverflowError:  # negative, or a value of 2^24 or more
        raise ValueError("a fixed-point constant is 2^24 or more") from None
    bytes_ = np.frombuffer(raw, dtype=np.uint8).reshape(len(ints), S, width).astype(np.float64)
    digits = sum(bytes_[:, :, i] * 256.0 ** (width - 1 - i) for i in range(width))
    return np.ascontiguousarray(digits.T), ok


@dataclass(frozen=True)
class FixedExp:
    """K (digits, shape (S,) + shape of y) with |K - e^-y| <= error entrywise, in [0, 2) after :meth:`lowered`."""

    digits: np.ndarray
    error: fmpq  # absolute, an exact rational
    S: int

    @property
    def ulp(self) -> fmpq:
        return fmpq(1, 2 ** (WIDTH * (self.S - 1)))


def _table(k: int, s: arb, extra: arb, S: int) -> np.ndarray:
    """T_k[f] within 2 ulp below e^(-f 2^(-8 k) s) extra for f < 2^8, as S digits (shape (S, 256))."""
    ratio = (-(s * arb(2) ** (-FIELD * k))).exp()
    values = [extra]
    for _ in range((1 << FIELD) - 1):  # e^(-f step) extra by products: arb carries their error, and 64 guard bits
        values.append(values[-1] * ratio)  # hold 255 of them (the check below decides)
    out, ok = _constants(values, S)
    if not ok:
        raise ArithmeticError("a table entry of the fixed-point exponential is not resolved")
    return out


def fixed_exp_neg(t: np.ndarray, e1: np.ndarray, e2: np.ndarray, s: fmpq, S: int) -> FixedExp:
    """e^(-(t + e1 + e2) s) to S digits, entrywise, with its error bound (module docstring). t >= 0 and e1, e2 small
    doubles of one shape; ValueError where the method does not apply (y_lo not small: s too large for the fields)."""
    if not 5 <= S <= 24:
        raise ValueError(f"{S} digits: the fixed-point exponential takes 5 to 24")
    top = float(t.max())
    c = int(np.frexp(top)[1]) + 1 if top > 0 else 0  # max t 2^-c < 1/2
    scale = 2.0**-c
    ulp = fmpq(1, 2 ** (WIDTH * (S - 1)))
    # the offset o: a power of two >= 2 (max |e1| + max |e2|) 2^-c and >= 8 ulp, placed as one digit
    err = (float(np.abs(e1).max()) + float(np.abs(e2).max())) * scale
    o_exp = max(int(np.frexp(2 * err)[1]) if err > 0 else -WIDTH * (S - 1), -WIDTH * (S - 1) + 3)
    if o_exp > -2 * FIELD:
        raise ValueError("the cost's rounding errors are too large for the fixed-point exponential")
    prec = WIDTH * S + 64
    with ctx.workprec(prec):
        s_arb = arb(s) * arb(2) ** c  # s'
        o = arb(2) ** o_exp
        fields = FIELD * 3
        while arb(2) ** -fields * s_arb + arb(ulp) >= arb(2) ** -LOW_BITS:
            fields += FIELD * 3
            if fields > WIDTH * 3:
                raise ValueError(f"1/eps = {float(s):.3g} is too large for the fixed-point exponential's fields")
        F = fields // FIELD
        tables = [_table(j + 1, s_arb, (o * s_arb).exp() if j == 0 else arb(1), S) for j in range(F)]
        if not s_arb < arb(2) ** WIDTH:
            raise ValueError("1/eps is too large for the fixed-point exponential")
        s_digits, ok = constant_digits(s_arb, S)
        y_max = (arb(2) ** -fields * s_arb + arb(ulp) * (product_error(S) + 2)).upper()
        D = 1
        while not (y_max ** (D + 1) / arb(math.factorial(D + 1))) <= arb(ulp):
            D += 1
        coeffs = []
        for k_ in range(D + 1):
            d, good = constant_digits(1 / arb(math.factorial(k_)), S)
            coeffs.append(d)
            ok = ok and good
        if not ok:
            raise ArithmeticError("a constant of the fixed-point exponential is not resolved")
        g = (o * s_arb).exp() * (1 + arb(2) ** -20)
        if not g.upper() < arb(2):
            raise ValueError("the fixed-point exponential's offset is too large")
    out = np.empty((S, t.size))
    flat = [x.reshape(-1) for x in (t, e1, e2)]
    for a in range(0, t.size, CHUNK):  # blocks that stay in cache: the digit arrays are S times the block
        b = min(a + CHUNK, t.size)
        out[:, a:b] = _block(*(x[a:b] * scale for x in flat), o_exp, F, tables, s_digits, coeffs, S)
    with ctx.workprec(prec):
        m = arb(product_error(S))
        ylo_err = 4 * arb(ulp) * s_arb + (m + 2) * arb(ulp)
        total = g ** (F + 1) * (2 * F * arb(ulp) + F * m * arb(ulp) + (D + 1) * (m + 2) * arb(ulp) + arb(ulp) + ylo_err)
        error = total.upper().fmpq()
    return FixedExp(out.reshape((S,) + t.shape), error, S)


def _block(t: np.ndarray, e1: np.ndarray, e2: np.ndarray, o_exp: int, F: int, tables: list[np.ndarray], s_digits: np.ndarray,
           coeffs: list[np.ndarray], S: int) -> np.ndarray:
    """Steps 1-5 of the module docstring on one block of scaled entries (1-D arrays t 2^-c, e1 2^-c, e2 2^-c)."""
    Z = digits_of(t, S) + digits_of(e1, S) + digits_of(e2, S)
    k, r = divmod(-o_exp, WIDTH)
    if r:
        Z[k + 1] += 2.0 ** (WIDTH - r)  # o = 2^o_exp = 2^(WIDTH - r) 2^(-24 (k + 1))
    else:
        Z[k] += 1.0
    normalise(Z)
    if not (Z[0] == 0).all():
        raise ValueError("the scaled cost is not in [0, 1)")
    byte = []  # the fields: the first F bytes of the fractional digits
    for j in range(F):
        digit, pos = divmod(j, WIDTH // FIELD)
        byte.append((np.floor(Z[1 + digit] * 2.0 ** -(WIDTH - FIELD * (pos + 1))) % (1 << FIELD)).astype(np.intp))
    Z[: 1 + F * FIELD // WIDTH] = 0.0  # Z_lo (F is a multiple of 3: whole digits)
    y_lo = multiply(Z, s_digits[:, None], S)
    p = np.repeat(coeffs[-1][:, None], len(t), axis=1)
    for c in coeffs[-2::-1]:
        p = c[:, None] - multiply(y_lo, p, S)  # digits within (-2^24 - 33, 2^24 + 33): loosely normalised still
    K = np.take(tables[0], byte[0], axis=1)
    for j in range(1, F):
        K = multiply(K, np.take(tables[j], byte[j], axis=1), S)
    return normalise(multiply(K, p, S))
