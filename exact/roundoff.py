r"""A priori bounds on float64 rounding errors, and an exponential with a proven error bound, vectorised.

The model (IEEE 754 binary64, round to nearest; Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., SIAM 2002, section 2.2, Thm 2.2): for doubles x, y and op one of + - * /,

    fl(x op y) = (x op y)(1 + d),   |d| <= u = 2^-53,

whenever the exact result lies in the normal range [2^-1022, 2^1024) in magnitude (or is 0). numpy's
``add``, ``subtract``, ``multiply``, ``divide`` and ``floor`` are these IEEE operations applied entry
by entry (no contraction into fused operations across ufunc calls), and multiplying by a power of two
or taking ``floor`` is exact when nothing under- or overflows. Products of such factors (Higham,
Lemma 3.1): if |d_i| <= u and k u < 1, then prod_{i <= k} (1 + d_i)^{+-1} = 1 + t with

    |t| <= gamma_k = k u / (1 - k u).

numpy has no directed rounding, so nothing here rounds "up": every computed array comes with an
exact rational (fmpq) bound on its relative error, derived a priori from the operations that
produced it, and the final scalar bounds are formed in exact arithmetic (fmpq, arb). Where a bound
needs the normal range (no subnormal, no overflow), the caller checks it first and otherwise takes
another route (arb).

:func:`exp_neg` encloses e^-y for 0 <= y <= :data:`EXP_MAX` entry by entry (the derivation is in its
docstring); :func:`float_of` rounds an exact rational to the nearest double.
"""

from __future__ import annotations

import sys
from functools import cache

import numpy as np
from flint import arb, ctx, fmpq

#: The unit roundoff of binary64, round to nearest.
U = fmpq(1, 2**53)
#: The smallest positive normal double, 2^-1022.
SMALLEST_NORMAL = 2.0**-1022
#: The largest finite double, (2 - 2^-52) 2^1023, as an exact rational (:func:`float_of` overflows above it).
LARGEST = fmpq(int(sys.float_info.max))
#: The largest argument of :func:`exp_neg`: e^-700 (about 1e-304) is still a normal double.
EXP_MAX = 700.0
#: :func:`exp_neg` reduces y modulo 2^-GRID_BITS; the Taylor polynomial then has degree EXP_DEGREE.
GRID_BITS = 12
EXP_DEGREE = 4
#: Precision of the tables of e^-k and e^(-k 2^-GRID_BITS) before they are rounded to doubles.
TABLE_BITS = 128


def gamma(k: int) -> fmpq:
    """gamma_k = k u / (1 - k u), exactly (Higham, Lemma 3.1): k roundings change a value by a factor in [1 - gamma_k, 1 + gamma_k]."""
    if not 0 <= k * U < 1:
        raise ValueError(f"gamma_{k} is not defined (k u >= 1)")
    return k * U / (1 - k * U)


def float_of(q: fmpq) -> float:
    """The double nearest to q (CPython's int / int is correctly rounded): relative error <= u in the normal range."""
    return int(q.p) / int(q.q)


def exact(x: float | np.floating) -> fmpq:
    """The exact value of a finite double, as a rational."""
    p, q = float(x).as_integer_ratio()
    return fmpq(p, q)


@cache
def _tables() -> tuple[np.ndarray, np.ndarray, fmpq]:
    """Doubles near e^-k (k = 0..700) and e^(-k 2^-GRID_BITS) (k < 2^GRID_BITS), and an exact bound on their
    relative errors, measured in arb (each rounded double against a 128-bit ball), not assumed."""
    worst = arb(0)
    tables = []
    with ctx.workprec(TABLE_BITS):
        for step, count in ((arb(1), int(EXP_MAX) + 1), (arb(2) ** -GRID_BITS, 1 << GRID_BITS)):
            balls = [(-step * k).exp() for k in range(count)]
            doubles = np.array([float(t) for t in balls])
            for d, t in zip(doubles.tolist(), balls):
                worst = max(worst, ((arb(d) - t) / t).abs_upper(), key=lambda x: x.mid())
            tables.append(doubles)
        return tables[0], tables[1], worst.upper().fmpq()


@cache
def exp_error() -> fmpq:
    r"""The exact bound delta of :func:`exp_neg`: |E(y) / e^-y - 1| <= delta for every y in [0, EXP_MAX].

    With t = y 2^12, N = floor(t) = 2^12 N1 + N0 (0 <= N0 < 2^12) and f = (t - N) 2^-12 in [0, 2^-12):

        e^-y = e^-N1 * e^(-N0 2^-12) * e^-f.

    t, N and f are exact (scaling by a power of two and floor are exact; t - N is the fractional part of
    t >= 0, representable by Sterbenz's lemma). The first two factors are tables T1, T0 of doubles with
    relative error <= eps_T (measured in arb). e^-f is the Taylor polynomial
    p(f) = 1 - f + f^2/2 - f^3/6 + f^4/24, evaluated by Horner's rule with the double coefficients
    c_3 = fl(1/6), c_4 = fl(1/24); three errors:

    * truncation: |p(f) - e^-f| <= f^5 / 120 < 2^-60 / 120;
    * the coefficients: |p_c(f) - p(f)| <= u (f^3/6 + f^4/24) <= u 2^-36;
    * Horner's rounding (Higham, eq. (5.3)): |fl(p_c(f)) - p_c(f)| <= gamma_8 sum_i |c_i| f^i
      <= gamma_8 (1 + u) e^(2^-12);

    divided by e^-f >= e^(-2^-12), a relative error eta_p. Then E = fl(fl(T1 T0) p^), two more roundings,
    and all factors are normal (T1 T0 >= e^-701 > 2^-1022), so

        delta = (1 + eps_T)^2 (1 + eta_p) (1 + u)^2 - 1.
    """
    *_, eps_t = _tables()
    with ctx.workprec(TABLE_BITS):
        g = arb(2) ** -GRID_BITS
        absolute = g**5 / 120 + arb(U) * (g**3 / 6 + g**4 / 24) + arb(gamma(2 * EXP_DEGREE)) * (1 + arb(U)) * g.exp()
        eta_p = absolute * g.exp()  # / e^-f >= e^-g
        one_u = 1 + arb(U)
        delta = (1 + arb(eps_t)) ** 2 * (1 + eta_p) * one_u**2 - 1
        return delta.upper().fmpq()


#: Horner's coefficients of e^-f, from the top: f^4/24, -f^3/6, f^2/2, -f, 1 (the doubles nearest 1/24, 1/6).
_C4, _C3 = 1 / 24, 1 / 6
#: 2^52 as a double, and its bit pattern: for an integer-valued double 0 <= N < 2^52, N + 2^52 is exact and its
#: bits minus this pattern are N as an int64 (converting in place, without a new array).
_TWO52 = 2.0**52
_TWO52_BITS = np.array(_TWO52).view(np.int64).item()


def exp_neg(y: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """Doubles E with |E / e^-y - 1| <= :func:`exp_error` (about 1.3e-15) entrywise, for 0 <= y <= EXP_MAX.

    Raises ValueError for a y outside [0, EXP_MAX] (NaN included): there the bound does not hold.
    Vectorised: two table gathers and a degree-4 polynomial per entry (the derivation is
    :func:`exp_error`'s docstring). With ``overwrite`` the float64 array y is used as scratch space
    (large temporary arrays are what costs most here: each is new memory the system must map).
    """
    y = np.asarray(y, dtype=np.float64)
    if y.size and not (y.min() >= 0 and y.max() <= EXP_MAX):  # also false for NaN
        raise ValueError(f"exp_neg needs 0 <= y <= {EXP_MAX}")
    t1, t0, _ = _tables()
    f = y if overwrite else y.copy()
    f *= float(1 << GRID_BITS)
    N = np.floor(f)
    f -= N  # the fractional part of y 2^12, exactly
    f *= 2.0**-GRID_BITS  # f, exactly
    N += _TWO52
    index = N.view(np.int64)
    index -= _TWO52_BITS  # N as an integer, in place
    high = np.right_shift(index, GRID_BITS)
    E = np.take(t1, high)
    index &= (1 << GRID_BITS) - 1
    work = high.view(np.float64)
    np.take(t0, index, out=work)
    E *= work
    np.multiply(f, _C4, out=work)  # Horner's rule for p(f)
    work -= _C3
    work *= f
    work += 0.5
    work *= f
    work -= 1.0
    work *= f
    work += 1.0
    E *= work
    return E


#: Veltkamp's splitting constant for binary64, 2^27 + 1 (Dekker's product).
_SPLIT = 134217729.0
#: Beyond this magnitude Veltkamp's split overflows.
SPLIT_MAX = 2.0**995
#: An absolute bound on what underflow costs the exponent correction of :func:`shifted_exponent`: Dekker's product is
#: exact unless its error lies below the normal range, and then off by at most 5 * 2^-1074 (Ogita, Rump and Oishi,
#: "Accurate sum and dot product", SIAM J. Sci. Comput. 26 (2005), Thm 3.4); each product rounded in the subnormal
#: range adds 2^-1075 (sums there are exact). Rounded up.
UNDERFLOW_CORRECTION = fmpq(1, 2**1060)


def two_sum(a: np.ndarray | float, b: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (Knuth's TwoSum; Higham, section 4.3), for finite a, b
    whose sum does not overflow, underflow included."""
    s = np.add(a, b)
    # the same operations as (a - (s - bb)) + (b - bb), in place in arrays of the sum's shape (n m entries): allocated
    # for it, since either argument may be the one that broadcasts (or both be scalars, where s is no array)
    bb = np.subtract(s, a, out=np.empty(np.shape(s)))
    e = np.subtract(s, bb, out=np.empty(np.shape(s)))
    np.subtract(a, e, out=e)
    np.subtract(b, bb, out=bb)
    e += bb
    return s, e


def two_product(a: np.ndarray | float, b: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """(x, e) with x = fl(a b) and a b = x + e (Dekker's product with Veltkamp's split; Higham, section 4.3), exactly
    when |a|, |b| <= SPLIT_MAX and e is not below the normal range; within UNDERFLOW_CORRECTION otherwise."""
    x = np.multiply(a, b)
    shape = np.shape(x)  # a's parts in arrays of the product's shape: a may be the argument that broadcasts, or a scalar
    c = np.multiply(_SPLIT, a, out=np.empty(shape))
    ah = np.subtract(c, a, out=np.empty(shape))
    np.subtract(c, ah, out=ah)  # c - (c - a); the same operations as the formula, in place
    al = np.subtract(a, ah, out=c)
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    r = np.multiply(ah, bh, out=np.empty(shape))
    np.subtract(x, r, out=r)
    r -= al * bh
    r -= ah * bl
    al *= bl
    al -= r
    return x, al  # al bl - (((x - ah bh) - al bh) - ah bl)


def underflow_charge(ratio: float, tail: np.ndarray, x: np.ndarray, den: np.ndarray) -> fmpq:
    r"""An absolute term to add to max_j (tail^T x)_j / den_j beyond the relative errors of its float value ``ratio`` =
    max_j fl(fl(tail^T x)_j / den_j) (tail >= 0; x, den positive doubles): 0 where no product tail_ij x_i can fall below
    the normal range and ``ratio`` is 0 or normal (every rounding is then relative), else 2^-1074 (1 + len(x) / min den).
    A product below the normal range is off by up to 2^-1075, not by a relative u (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., section 2.1; sums there are exact), so a sum of len(x) of them by len(x) 2^-1075
    before the division, and a quotient below the normal range by 2^-1075 more."""
    lowest = float(np.min(tail, where=tail > 0, initial=np.inf))
    if lowest == np.inf or (exact(lowest) * exact(x.min()) >= exact(SMALLEST_NORMAL) and (ratio == 0 or ratio >= SMALLEST_NORMAL)):
        return fmpq(0)
    return fmpq(1, 2**1074) * (1 + fmpq(len(x)) / exact(den.min()))


def shifted_exponent(t: np.ndarray, e: np.ndarray | None, s: fmpq) -> tuple[np.ndarray, np.ndarray, fmpq]:
    r"""(ỹ, r, R) for the exponents y = (t + e) s, t >= 0 and e doubles (e None: 0), s > 0 exact, with
    ỹ = fl(t s~), s~ = fl(s), and |y - ỹ - r| <= R entrywise: r is the rounding error of ỹ, computed.

    With t s~ = ỹ + p exactly (:func:`two_product`), ds = s - s~ and d~ = fl(ds),
    y - ỹ = p + e s + t ds, and r = fl(fl(p + fl(e s~)) + fl(t d~)). Each of the four roundings changes its
    result by at most u of it, and e s - fl(e s~) = e s~ (1 - (1 + th)) + e ds, so

        |y - ỹ - r| <= 5u (max|p| + max|e| s~ + max t |d~| + max|r|) + 2 max|e| |ds| + max t |ds - d~| + 2^-1060,

    the last term for underflow (:data:`UNDERFLOW_CORRECTION`). The maxima are exact values of doubles (a maximum
    rounds nothing); R is that bound, exactly. ValueError where a product could overflow the split."""
    s_f = float_of(s) if 0 < s <= LARGEST else 0.0  # float_of raises OverflowError above the doubles
    if not (0 < s_f <= SPLIT_MAX and t.size and 0 <= t.min() and t.max() <= SPLIT_MAX):
        raise ValueError("the exponents' factors are beyond Dekker's product")
    with np.errstate(over="ignore", invalid="ignore"):
        y, p = two_product(t, s_f)
    if not (np.isfinite(y).all() and np.isfinite(p).all()):
        raise ValueError("the exponents overflow float64")
    ds = s - exact(s_f)
    d_f = float_of(ds)
    r = t * d_f
    if e is not None:
        r += p + e * s_f
        e_top = exact(np.abs(e).max())
    else:
        r += p
        e_top = fmpq(0)
    top = lambda x: exact(np.abs(x).max())  # noqa: E731
    R = 5 * U * (top(p) + e_top * exact(s_f) + top(t) * abs(exact(d_f)) + top(r)) + 2 * e_top * abs(ds) + top(t) * abs(ds - exact(d_f)) + UNDERFLOW_CORRECTION
    return y, r, R


def corrected_exp_neg(y: np.ndarray, r: np.ndarray, R: fmpq) -> tuple[np.ndarray, fmpq]:
    r"""(K, E): doubles K = fl(E(y) fl(1 - r)) (E = :func:`exp_neg`) for exponents x with |x - y - r| <= R, and E with

        e^-x / K in [e^-E / (1 + delta), e^E / (1 - delta)],   delta = :func:`exp_error`,   E = R + 2 max r^2 + 2u / (1 - u).

    Since e^-x = e^-y e^-r e^-(x - y - r): e^-y / E(y) = 1 / (1 + d0), |d0| <= delta; e^-r / (1 - r) lies in
    [1, 1 + 2 r^2] for |r| <= 1/2 (1 - r <= e^-r <= 1 - r + r^2 there); the two roundings give a factor in
    [(1 + u)^-2, (1 - u)^-2], inside [e^-2u, e^{2u/(1 - u)}]. ValueError for |r| > 2^-20 (not a rounding error)."""
    if not (np.abs(r).max() <= 2.0**-20):
        raise ValueError(f"the exponent's rounding error, up to {float(np.abs(r).max()):.3g}, is too large to correct (over 2^-20: costs over eps of 2^33 or more)")
    K = exp_neg(y)
    K *= 1.0 - r
    r_top = exact(np.abs(r).max())
    return K, R + 2 * r_top**2 + 2 * U / (1 - U)


class Factor:
    """A positive real known to lie in [lo, hi]: the multiplicative error of a computed quantity.

    lo and hi are arb balls at the working precision (narrow), and products and quotients of factors
    are formed endpoint by endpoint (all positive: [a, b][c, d] = [ac, bd], 1/[a, b] = [1/b, 1/a]),
    rounded outward by taking the lower or upper end of each result. So a factor keeps arb's full
    precision: the radius of an arb ball has only 30 significant bits, and products of wide balls would
    differ between two evaluations of the same bound in their 30th bit.
    """

    __slots__ = ("lo", "hi")

    def __init__(self, lo: arb, hi: arb) -> None:
        self.lo, self.hi = lo.lower(), hi.upper()  # exact points: comparing them decides
        if not (self.lo > 0 and self.hi >= self.lo):
            raise ValueError("a Factor is an interval of positive reals")

    @classmethod
    def within(cls, rel: fmpq | arb) -> Factor:
        """[1 - rel, 1 + rel]: a relative error of at most rel (< 1)."""
        r = arb(rel)
        return cls(1 - r, 1 + r)

    @classmethod
    def between(cls, lo: fmpq | arb | int, hi: fmpq | arb | int) -> Factor:
        return cls(arb(lo), arb(hi))

    def __mul__(self, other: Factor) -> Factor:
        return Factor(self.lo * other.lo, self.hi * other.hi)

    def __truediv__(self, other: Factor) -> Factor:
        return Factor(self.lo / other.hi, self.hi / other.lo)

    def __pow__(self, k: int) -> Factor:
        return Factor(self.lo**k, self.hi**k)

    def inverse(self) -> Factor:
        return Factor(1 / self.hi, 1 / self.lo)

    def ball(self) -> arb:
        """An arb ball containing the interval."""
        return arb.union(self.lo, self.hi)

    def __repr__(self) -> str:
        return f"Factor([{self.lo.str(6, radius=False)}, {self.hi.str(6, radius=False)}])"
