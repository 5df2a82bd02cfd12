"""Arrays of exponential sums sharing their exponents: a batch of elements of Q[e^Q].

An :class:`ExpArray` stands for the array whose entries are the sums
sum_q c_q e^q (rational q and c_q; :mod:`exact.expsum`). It is stored as one
:class:`~exact.ratarray.RatArray` of coefficients per exponent q, the exponents
shared by the whole array: an entry with no term at q has coefficient 0 there.
Sums, products and group means act on the coefficient arrays, exponent by
exponent (e^p e^q = e^{p+q}), so a batch of U's softmax numerators, whose
exponents are the few distinct scores, costs a few integer arrays instead of one
Python object per entry.

Exactness rests on the same facts as :mod:`exact.expsum`: by Lindemann–Weierstrass
an entry is zero iff all its coefficients are, and the sign of a nonzero entry
is decided by :meth:`ExpSum.sign`. :meth:`ExpArray.sign` decides entries whose
coefficients all have one sign at once, and the others once per distinct
coefficient vector.
"""

from __future__ import annotations

import numpy as np
from flint import fmpq

from attncert.exact.expsum import E0, ExpSum, Exponent, exponent
from attncert.exact.ratarray import Overflow, RatArray

#: Most distinct exponents an array built by :meth:`ExpArray.exp` or checked by :meth:`ExpArray.bounded`
#: may hold (beyond this, the entries are better kept as objects).
MAX_EXPONENTS = 8


class TooManyExponents(Overflow):
    """More distinct exponents than :data:`MAX_EXPONENTS`: compute these values another way."""


class ExpArray:
    """The array of sums sum_q terms[q] e^q, entry by entry (every term of one shape)."""

    __slots__ = ("terms", "shape")

    def __init__(self, terms: dict[Exponent, RatArray], shape: tuple[int, ...]):
        self.terms, self.shape = terms, shape

    def bounded(self) -> "ExpArray":
        """self, or TooManyExponents if it has more than :data:`MAX_EXPONENTS` (past that, a batch of
        entries with exponents of their own is better held entry by entry)."""
        if len(self.terms) > MAX_EXPONENTS:
            raise TooManyExponents(f"{len(self.terms)} distinct exponents, more than {MAX_EXPONENTS}")
        return self

    @classmethod
    def rational(cls, r: RatArray) -> "ExpArray":
        return cls({E0: r}, r.shape)

    @classmethod
    def exp(cls, q: RatArray) -> "ExpArray":
        """e^{q_i} entry by entry, for rational exponents q: one term per distinct exponent."""
        p, d = q.lowest_terms()
        pairs, inverse = _distinct_pairs(p.ravel(), d.ravel())
        if len(pairs) > MAX_EXPONENTS:
            raise TooManyExponents(f"{len(pairs)} distinct exponents, more than {MAX_EXPONENTS}")
        inverse = inverse.reshape(p.shape)
        terms = {exponent(fmpq(a, b)): RatArray.integers(inverse == k) for k, (a, b) in enumerate(pairs)}
        return cls(terms, p.shape)

    # -- arithmetic ---------------------------------------------------------------------
    def _zero(self) -> RatArray:
        return RatArray.zeros(self.shape)

    def __add__(self, other: "ExpArray") -> "ExpArray":
        terms = dict(self.terms)
        for q, c in other.terms.items():
            terms[q] = terms[q] + c if q in terms else c
        return ExpArray(terms, np.broadcast_shapes(self.shape, other.shape))

    def __neg__(self) -> "ExpArray":
        return ExpArray({q: -c for q, c in self.terms.items()}, self.shape)

    def __sub__(self, other: "ExpArray") -> "ExpArray":
        return self + (-other)

    def __mul__(self, other: "ExpArray") -> "ExpArray":
        terms: dict[Exponent, RatArray] = {}
        for qa, ca in self.terms.items():
            for qb, cb in other.terms.items():
                q = qa if qb == 0 else qb if qa == 0 else exponent(qa + qb)
                terms[q] = terms[q] + ca * cb if q in terms else ca * cb
        return ExpArray(terms, np.broadcast_shapes(self.shape, other.shape)).pruned()

    def scale(self, r: RatArray) -> "ExpArray":
        """r times every entry, for a rational array r."""
        return ExpArray({q: c * r for q, c in self.terms.items()}, np.broadcast_shapes(self.shape, r.shape))

    def pruned(self) -> "ExpArray":
        """The same sums without exponents whose coefficients are all zero."""
        return ExpArray({q: c for q, c in self.terms.items() if c.num.any()}, self.shape)

    # -- shape --------------------------------------------------------------------------
    def take(self, index: np.ndarray) -> "ExpArray":
        terms = {q: c.take(index) for q, c in self.terms.items()}
        return ExpArray(terms, self.shape[:-1] + np.shape(index))

    def where(self, mask: np.ndarray, other: "ExpArray") -> "ExpArray":
        """self where mask, other elsewhere."""
        shape = np.broadcast_shapes(self.shape, other.shape, np.shape(mask))
        terms = {}
        for q in dict.fromkeys([*self.terms, *other.terms]):
            a = self.terms.get(q) or RatArray.zeros(shape)
            b = other.terms.get(q) or RatArray.zeros(shape)
            terms[q] = a.where(mask, b)
        return ExpArray(terms, shape).pruned()

    def put(self, index: np.ndarray, values: "ExpArray") -> "ExpArray":
        """self with its entries ``index`` (last axis) replaced by ``values``."""
        shape = np.broadcast_shapes(self.shape, values.shape[:-1] + self.shape[-1:])
        terms = {}
        for q in dict.fromkeys([*self.terms, *values.terms]):
            base = self.terms.get(q) or RatArray.zeros(shape)
            terms[q] = base.put(index, values.terms.get(q) or RatArray.zeros(values.shape))
        return ExpArray(terms, shape)

    def group_means(self, index: np.ndarray, starts: np.ndarray, widths: np.ndarray) -> "ExpArray":
        """Means of groups along the last axis, exponent by exponent (:meth:`RatArray.group_means`)."""
        terms = {q: c.group_means(index, starts, widths) for q, c in self.terms.items()}
        return ExpArray(terms, self.shape[:-1] + (len(starts),))

    # -- reading ------------------------------------------------------------------------
    def equals(self, other: "ExpArray") -> np.ndarray:
        """Entry by entry, whether the two sums are equal (coefficient by coefficient: Lindemann–Weierstrass)."""
        return (self - other).is_zero()

    def is_zero(self) -> np.ndarray:
        out = np.ones(self.shape, dtype=bool)
        for c in self.terms.values():
            out &= c.num == 0
        return out

    def rational_entries(self) -> np.ndarray:
        """Where an entry is a rational number (no nonzero term at an exponent other than 0)."""
        out = np.ones(self.shape, dtype=bool)
        for q, c in self.terms.items():
            if q != 0:
                out &= c.num == 0
        return out

    def rational_part(self) -> RatArray:
        """The coefficients at exponent 0 (the value itself where the entry is rational)."""
        c = self.terms.get(E0)
        return c.broadcast(self.shape) if c is not None else self._zero()

    def sign(self) -> np.ndarray:
        """The exact sign of every entry (-1, 0, 1)."""
        terms = sorted((q, c) for q, c in self.terms.items())
        if not terms:
            return np.zeros(self.shape, dtype=np.int64)
        signs = np.stack([np.broadcast_to(c.sign(), self.shape) for _, c in terms])
        positive, negative = (signs >= 0).all(axis=0), (signs <= 0).all(axis=0)
        out = np.where(positive, 1, np.where(negative, -1, 0)) * (signs != 0).any(axis=0)
        mixed = np.nonzero(~positive & ~negative)
        if len(mixed[0]):
            lowest = [c.lowest_terms() for _, c in terms]
            keys = np.stack([a for p, d in lowest for a in (p[mixed], d[mixed])], axis=1)
            vectors, inverse = np.unique(keys, axis=0, return_inverse=True)
            decided = np.array([_expsum([q for q, _ in terms], row).sign() for row in vectors.tolist()], dtype=np.int64)
            out[mixed] = decided[inverse.ravel()]
        return out

    def expsums(self, at: np.ndarray) -> list[ExpSum]:
        """The entries at the flat (row-major) indices ``at``, as :class:`ExpSum` objects."""
        qs = list(self.terms)
        columns = [[pq.ravel()[at].tolist() for pq in self.terms[q].lowest_terms()] for q in qs]
        return [ExpSum({q: fmpq(p[i], d[i]) for q, (p, d) in zip(qs, columns) if p[i]}) for i in range(len(at))]

def constant(terms: dict[fmpq, fmpq]) -> ExpArray:
    """The one sum sum_q terms[q] e^q, as an array of shape (1, 1) that broadcasts."""
    return ExpArray({exponent(q): RatArray.constant(c, (1, 1)) for q, c in terms.items() if c}, (1, 1))


def fraction_sum(fractions: list[tuple[ExpArray, ExpArray]]) -> tuple[ExpArray, ExpArray]:
    """sum_k num_k / den_k entry by entry, as one fraction: numerators add where every entry's
    denominators are equal (one softmax row's), otherwise a/b + c/d = (a d + c b) / (b d)."""
    num, den = fractions[0]
    for n, d in fractions[1:]:
        if bool(den.equals(d).all()):
            num = num + n
        else:
            num, den = num * d + n * den, den * d
    return num, den


def _distinct_pairs(p: np.ndarray, d: np.ndarray) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The distinct pairs (p_i, d_i) (d_i >= 1) and, for each i, the index of its pair among them.

    The pairs are packed into one int64 key p' (max d + 1) + d (p' = p - min p) when that
    fits, so that a one-dimensional unique does the work; otherwise rows are compared.
    """
    if not len(p):
        return [], np.zeros(0, dtype=np.int64)
    low, high, top = int(p.min()), int(p.max()), int(d.max())
    span = (high - low + 1) * (top + 1)
    if span <= 1 << 20:  # few possible keys: a table of them instead of a sort
        keys = (p - low) * (top + 1) + d
        present = np.flatnonzero(np.bincount(keys, minlength=span))
        table = np.zeros(span, dtype=np.int64)
        table[present] = np.arange(len(present))
        return [(int(k) // (top + 1) + low, int(k) % (top + 1)) for k in present.tolist()], table[keys]
    if span < 1 << 62:
        keys, inverse = np.unique((p - low) * (top + 1) + d, return_inverse=True)
        return [(int(k) // (top + 1) + low, int(k) % (top + 1)) for k in keys.tolist()], inverse
    pairs, inverse = np.unique(np.stack([p, d], axis=1), axis=0, return_inverse=True)
    return [(int(a), int(b)) for a, b in pairs.tolist()], inverse.ravel()


def _expsum(exponents: list[Exponent], row: list[int]) -> ExpSum:
    """The sum with coefficient row[2k] / row[2k + 1] at exponents[k]."""
    return ExpSum({q: fmpq(row[2 * k], row[2 * k + 1]) for k, q in enumerate(exponents) if row[2 * k]})
