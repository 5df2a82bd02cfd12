"""Exponential polynomials  s = Σ_k p_k(x) e^{c_k} E^{a_k}  over the input variables x.

These are the numerators and denominators of the symbolic field
(:mod:`exact.symbolic.number`): p_k in Q[x] (FLINT ``fmpq_mpoly``), c_k rational, and
E^{a} = Π_j E_j^{a_j} a monomial in the exponentials E_j = e^{b_j} of the basis of
:mod:`exact.symbolic.basis` (a_j integers of either sign).

**Zero test.** s = 0 as a function of x iff every p_k is the zero polynomial, for distinct
keys (a_k, c_k). Proof: group the terms by a. By Ax's theorem the E^a with distinct a are
linearly independent over C(x), so each group Σ_c p_c(x) e^c vanishes identically. At a
rational point x these are rationals p_c(x) times e^c with distinct rational c, so by
Lindemann–Weierstrass every p_c(x) = 0; a polynomial vanishing on Q^m is zero. The
representation keeps keys distinct and drops zero coefficients, so s = 0 iff its
dictionary is empty: an exact test, with no evaluation anywhere.

Keys are tuples (a, p, q) for the constant c = p/q (Python integers hash quickly, FLINT
rationals do not). Instances are immutable and cache their monic form.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Mapping

from flint import fmpq, fmpq_mpoly

if TYPE_CHECKING:
    from attncert.exact.symbolic.ring import SymbolicRing

#: (basis coordinates a, numerator and denominator of the constant exponent c).
Key = tuple[tuple[tuple[int, int], ...], int, int]
#: The key of the plain polynomial part (a = 0, c = 0).
ONE = ((), 0, 1)


@lru_cache(maxsize=1 << 16)
def key_product(k: Key, l: Key) -> Key:
    """The key of the product e^{c} E^{a} · e^{c'} E^{a'} = e^{c + c'} E^{a + a'}."""
    if k is ONE or k == ONE:
        return l
    if l is ONE or l == ONE:
        return k
    a = dict(k[0])
    for j, e in l[0]:
        s = a.get(j, 0) + e
        if s:
            a[j] = s
        else:
            del a[j]
    c = fmpq(k[1], k[2]) + fmpq(l[1], l[2])
    return (tuple(sorted(a.items())), int(c.p), int(c.q))


def key_inverse(k: Key) -> Key:
    return (tuple((j, -e) for j, e in k[0]), -k[1], k[2])


class PolyExp:
    """An immutable sum Σ_k p_k(x) e^{c_k} E^{a_k} with distinct keys and nonzero p_k."""

    __slots__ = ("terms", "ring", "_monic")

    def __init__(self, terms: Mapping[Key, fmpq_mpoly], ring: "SymbolicRing"):
        # Trusted constructor: the callers guarantee keys of this ring and no zero coefficient.
        self.terms = terms
        self.ring = ring
        self._monic: tuple[Key, fmpq, PolyExp] | None = None

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_terms(cls, pairs: Iterable[tuple[Key, fmpq_mpoly]], ring: "SymbolicRing") -> "PolyExp":
        acc: dict[Key, fmpq_mpoly] = {}
        for k, p in pairs:
            acc[k] = acc[k] + p if k in acc else p
        return cls({k: p for k, p in acc.items() if not p.is_zero()}, ring)

    # -- predicates --------------------------------------------------------------------
    def is_zero(self) -> bool:
        """Exact (Ax and Lindemann–Weierstrass, module docstring): zero iff no term survives."""
        return not self.terms

    def polynomial(self) -> fmpq_mpoly | None:
        """The polynomial p if s = p(x) (no exponential), else None."""
        t = self.terms
        if not t:
            return self.ring.ctx.constant(0)
        if len(t) == 1 and ONE in t:
            return t[ONE]
        return None

    def is_unit(self) -> bool:
        """Whether s is r e^c E^a with a nonzero rational r: invertible, and nowhere zero (an
        uninterpreted value R_k, coordinate -(k + 1), may be zero, so it is no unit)."""
        if len(self.terms) != 1:
            return False
        ((coords, _, _), p), = self.terms.items()
        return p.is_constant() and all(j >= 0 for j, _ in coords)

    def depends_on_inputs(self) -> bool:
        """Whether some term has a non-constant polynomial or an exponential of the inputs."""
        return any(k[0] or not p.is_constant() for k, p in self.terms.items())

    # -- arithmetic --------------------------------------------------------------------
    def __add__(self, other: "PolyExp") -> "PolyExp":
        a, b = self.terms, other.terms
        if len(a) < len(b):
            a, b = b, a
        out = dict(a)
        for k, p in b.items():
            if k in out:
                s = out[k] + p
                if s.is_zero():
                    del out[k]
                else:
                    out[k] = s
            else:
                out[k] = p
        return PolyExp(out, self.ring)

    def __neg__(self) -> "PolyExp":
        return PolyExp({k: -p for k, p in self.terms.items()}, self.ring)

    def __sub__(self, other: "PolyExp") -> "PolyExp":
        return self + (-other)

    def __mul__(self, other: "PolyExp") -> "PolyExp":
        a, b = self.terms, other.terms
        if len(a) == 1 and ONE in a:
            p = a[ONE]
            if p.is_one():
                return other
            return PolyExp.from_terms(((k, p * q) for k, q in b.items()), self.ring)
        if len(b) == 1 and ONE in b:
            return other * self
        out: dict[Key, fmpq_mpoly] = {}
        for k, p in a.items():
            for l, q in b.items():
                m = key_product(k, l)
                out[m] = out[m] + p * q if m in out else p * q
        return PolyExp({k: p for k, p in out.items() if not p.is_zero()}, self.ring)

    def scale(self, r: fmpq) -> "PolyExp":
        if r == 1:
            return self
        if not r:
            return PolyExp({}, self.ring)
        return PolyExp({k: p * r for k, p in self.terms.items()}, self.ring)

    def times_poly(self, q: fmpq_mpoly) -> "PolyExp":
        return PolyExp.from_terms(((k, p * q) for k, p in self.terms.items()), self.ring)

    def shift(self, key: Key) -> "PolyExp":
        """s · e^{c} E^{a} for the key (a, c): a unit, so no term vanishes or merges."""
        if key == ONE:
            return self
        return PolyExp({key_product(k, key): p for k, p in self.terms.items()}, self.ring)

    def monic(self) -> tuple[Key, fmpq, "PolyExp"]:
        """(u, r, m) with s = r e^{c} E^{a} m for u = (a, c): the unit r e^c E^a of s's largest term
        moved out, so that m's largest term has coefficient 1 and no constant or basis exponential.
        An uninterpreted value R_k (coordinate -(k + 1)) may be 0, so it is no unit and stays in m.
        Cached, so a denominator shared by many fractions is normalised once."""
        if self._monic is None:
            top = max(self.terms)  # any fixed total order: keys are tuples of integers in lowest terms
            r = self.terms[top].leading_coefficient()
            unit = (tuple((j, e) for j, e in top[0] if j >= 0), top[1], top[2])
            inv = key_inverse(unit)
            m = PolyExp({key_product(k, inv): p / r for k, p in self.terms.items()}, self.ring)
            m._monic = (ONE, fmpq(1), m)
            self._monic = (unit, r, m)
        return self._monic

    def same(self, other: "PolyExp") -> bool:
        """Structural equality (the same terms): for normalised forms, equality of values."""
        if self is other:
            return True
        a, b = self.terms, other.terms
        return len(a) == len(b) and all(k in b and b[k] == p for k, p in a.items())

    def is_one(self) -> bool:
        t = self.terms
        return len(t) == 1 and ONE in t and t[ONE].is_one()

    def __repr__(self) -> str:
        return " + ".join(f"({p})·{self.ring.key_str(k)}" for k, p in self.terms.items()) or "0"
