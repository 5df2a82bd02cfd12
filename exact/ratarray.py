"""Arrays of exact rationals: int64 numerators over shared int64 denominators.

A :class:`RatArray` stands for the array of rationals num / den, where ``num`` is
an int64 array (typically batch x positions) and ``den`` a positive int64 array
that broadcasts against it: one denominator per position shared by the whole
batch where the values allow it, one per entry otherwise. Every operation is the
exact rational operation, entry by entry:

* a/b + c/d = (a (L/b) + c (L/d)) / L with L = lcm(b, d);
* (a/b)(c/d) = ac / bd, reduced by the gcd shared along the batch once the
  numbers grow (common factors cost nothing to keep while they are small);
* the mean of a group G of entries is (sum_{i in G} a_i (L_G / b_i)) / (L_G |G|)
  with L_G = lcm_{i in G} b_i.

No operation rounds: before any product or sum is formed its size is bounded
from the operands' largest magnitudes, and an intermediate that could pass
2^62 raises :class:`Overflow` instead (int64 holds 2^63 - 1). The caller then
computes those values with FLINT objects instead; exactness never depends on
the bound, only speed does.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from flint import fmpq

#: Bound on every numerator, denominator and intermediate (int64 holds 2^63 - 1).
SAFE = 1 << 62


class Overflow(ArithmeticError):
    """An exact intermediate would not fit in int64: compute these values another way."""


def _magnitude(a: np.ndarray) -> int:
    """max |a| (two reductions: no temporary array of absolute values)."""
    return max(int(a.max(initial=0)), -int(a.min(initial=0)))


def _check(bound: int) -> None:
    if bound >= SAFE:
        raise Overflow(f"an intermediate of magnitude up to {bound} does not fit in int64")


def _lcm_reduceat(den: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """lcm of each group of ``den`` along the last axis (groups begin at ``starts``), exactly.

    int64's lcm wraps around silently on overflow, so unless every denominator is the
    same the lcm is taken on Python integers and then bounded.
    """
    first = den.flat[0] if den.size else 1
    if not den.size or bool(np.all(den == first)):
        return np.full(den.shape[:-1] + (len(starts),), first, dtype=np.int64)
    L = np.lcm.reduceat(den.astype(object), starts, axis=-1)
    _check(int(L.max()))
    return L.astype(np.int64)


def _take_last(a: np.ndarray, index: np.ndarray) -> np.ndarray:
    """a[..., index], where a last axis of length 1 is one value broadcast along it."""
    if a.ndim and a.shape[-1] == 1:
        return np.broadcast_to(a, a.shape[:-1] + np.shape(index))
    return a[..., index]


def _int64(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.int64)


class RatArray:
    """The array num / den of exact rationals (den > 0, broadcast against num)."""

    __slots__ = ("num", "den")

    def __init__(self, num: np.ndarray, den: np.ndarray):
        self.num, self.den = num, den

    # -- construction -------------------------------------------------------------------
    @classmethod
    def integers(cls, a: Any) -> "RatArray":
        a = _int64(a)
        _check(_magnitude(a))
        return cls(a, np.ones(a.shape[-1:] if a.ndim else (), dtype=np.int64))

    @classmethod
    def zeros(cls, shape: tuple[int, ...]) -> "RatArray":
        return cls(np.zeros(shape, dtype=np.int64), np.ones(shape[-1:], dtype=np.int64))

    @classmethod
    def constant(cls, q: fmpq, shape: tuple[int, ...]) -> "RatArray":
        p, d = int(q.p), int(q.q)
        _check(max(abs(p), d))
        return cls(np.full(shape, p, dtype=np.int64), np.full(shape[-1:], d, dtype=np.int64))

    @classmethod
    def from_fmpqs(cls, values: Sequence[Any], shape: tuple[int, ...]) -> "RatArray":
        """The rationals ``values`` (fmpq, row-major) as an array of the given shape."""
        nums = [int(v.p) for v in values]
        dens = [int(v.q) for v in values]
        _check(max(map(abs, nums), default=0))
        _check(max(dens, default=1))
        num, den = _int64(nums).reshape(shape), _int64(dens).reshape(shape)
        if len(shape) > 1 and bool(np.all(den == den[:1])):  # one denominator per position, shared by the batch
            den = den[0]
        return cls(num, den)

    # -- shape --------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(self.num.shape, self.den.shape)

    def take(self, index: np.ndarray) -> "RatArray":
        """Entries ``index`` along the last axis."""
        return RatArray(_take_last(self.num, index), _take_last(self.den, index))

    def broadcast(self, shape: tuple[int, ...]) -> "RatArray":
        return RatArray(np.broadcast_to(self.num, shape), self.den)

    def where(self, mask: np.ndarray, other: "RatArray") -> "RatArray":
        """self where mask, other elsewhere."""
        if not other.num.any():  # zero is written over any denominator
            return RatArray(np.where(mask, self.num, 0), self.den)
        L = self.lcm_den(other)
        a, b = self.over(L), other.over(L)
        return RatArray(np.where(mask, a.num, b.num), L)

    def put(self, index: np.ndarray, values: "RatArray") -> "RatArray":
        """self with its entries ``index`` (last axis) replaced by ``values``; values unchanged elsewhere."""
        shape = np.broadcast_shapes(self.shape, values.shape[:-1] + self.shape[-1:])
        num = np.array(np.broadcast_to(self.num, shape))
        num[..., index] = values.num
        if self.den.ndim <= 1 and values.den.ndim <= 1:  # denominators per position stay so
            den = np.array(np.broadcast_to(self.den, shape[-1:]))
            den[index] = values.den
        else:
            den = np.array(np.broadcast_to(self.den, shape))
            den[..., index] = values.den
        return RatArray(num, den)

    # -- arithmetic ---------------------------------------------------------------------
    def lcm_den(self, other: "RatArray") -> np.ndarray:
        """lcm of the two denominators, entry by entry (broadcast)."""
        if self.den is other.den or (self.den.shape == other.den.shape and np.array_equal(self.den, other.den)):
            return self.den
        a, b = self.den, other.den
        g = np.gcd(a, b)
        _check(_magnitude(a // g) * _magnitude(b))
        return (a // g) * b

    def over(self, den: np.ndarray) -> "RatArray":
        """The same values written over ``den`` (a multiple of the current denominators)."""
        if den is self.den or (den.shape == self.den.shape and np.array_equal(den, self.den)):
            return self if den is self.den else RatArray(self.num, den)
        factor = den // self.den
        _check(_magnitude(self.num) * _magnitude(factor))
        return RatArray(self.num * factor, den)

    def __add__(self, other: "RatArray") -> "RatArray":
        L = self.lcm_den(other)
        a, b = self.over(L), other.over(L)
        _check(_magnitude(a.num) + _magnitude(b.num))
        return RatArray(a.num + b.num, L)

    def __neg__(self) -> "RatArray":
        return RatArray(-self.num, self.den)

    def __mul__(self, other: "RatArray") -> "RatArray":
        _check(_magnitude(self.num) * _magnitude(other.num))
        _check(_magnitude(self.den) * _magnitude(other.den))
        return RatArray(self.num * other.num, self.den * other.den).compact()

    def reciprocal(self) -> "RatArray":
        """1 / x entry by entry; every entry must be nonzero."""
        s = np.sign(self.num)
        return RatArray(np.broadcast_to(self.den, self.shape) * s, np.abs(self.num)).compact()

    def compact(self) -> "RatArray":
        """:meth:`reduced` once the numbers grow (past 2^20 in a denominator or 2^40 in a numerator):
        common factors cost nothing to keep while they are small, and a gcd pass over the batch does."""
        if _magnitude(self.den) < 1 << 20 and _magnitude(self.num) < 1 << 40:
            return self
        return self.reduced()

    def reduced(self) -> "RatArray":
        """Divide numerators and denominators by their common factors (values unchanged).

        A denominator shared along the batch is divided only by what it shares with
        every numerator it serves, so it stays shared.
        """
        num, den = self.num, self.den
        if not bool(np.any(den > 1)):
            return self
        if den.ndim < num.ndim:
            lead = num.reshape(-1, *den.shape) if den.ndim else num.reshape(-1)
            g = np.gcd(den, np.gcd.reduce(lead, axis=0)) if lead.shape[0] else den
        else:
            g = np.gcd(num, den)
        g = np.where(g == 0, 1, g)
        if not np.any(g > 1):
            return self
        return RatArray(num // g, den // g)

    def group_means(self, index: np.ndarray, starts: np.ndarray, widths: np.ndarray) -> "RatArray":
        """Means of groups of entries along the last axis: group g averages the entries
        ``index[starts[g] : starts[g] + widths[g]]`` (consecutive groups, every width >= 1).

        Group g is written over L_g |G_g| with L_g = lcm of its denominators, its
        numerator sum_{i in G_g} num_i (L_g / den_i): integer sums, no gcd per term.
        """
        if bool(np.all(widths == 1)):  # a gather: each group is one entry, its own mean
            return self.take(index)
        num = self.num[..., index]
        den = np.broadcast_to(self.den, self.shape)[..., index] if self.den.ndim == self.num.ndim else self.den[..., index]
        L = _lcm_reduceat(den, starts)
        widest = int(widths.max(initial=1))
        _check(_magnitude(L) * widest)
        if L.ndim == 1 and den.ndim == 1 and bool(np.all(den == den[:1])):  # one denominator: no rescaling
            _check(_magnitude(num) * widest)
            return RatArray(np.add.reduceat(num, starts, axis=-1), L * widths).compact()
        group = np.repeat(np.arange(len(starts)), widths)
        factor = L[..., group] // den
        _check(_magnitude(num) * _magnitude(factor) * widest)
        return RatArray(np.add.reduceat(num * factor, starts, axis=-1), L * widths).compact()

    # -- reading ------------------------------------------------------------------------
    def sign(self) -> np.ndarray:
        return np.sign(self.num)

    def lowest_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """(p, q) with p / q each entry in lowest terms, q > 0: equal values give equal pairs."""
        den = np.broadcast_to(self.den, self.shape)
        if not bool(np.any(self.den != 1)):  # integers: already in lowest terms
            return np.broadcast_to(self.num, self.shape), den
        g = np.gcd(self.num, den)
        g = np.where(g == 0, 1, g)
        p, q = self.num // g, den // g
        return p, np.where(p == 0, 1, q)
