"""Elements of the symbolic field: sums of quotients of exponential polynomials in the inputs.

A :class:`SymNumber` is Σ_j n_j / d_j with n_j, d_j in the ring R of
:mod:`exact.symbolic.polyexp` (Σ_k p_k(x) e^{c_k} E^{a_k}). R is an integral domain (a
ring of real-analytic functions on the connected R^m), so these sums are elements of its
field of fractions, and two numbers are equal iff they are equal as functions of the inputs
wherever both are defined.

**Why sums.** Attention rows carry different denominators: head m of a multi-head layer
divides row i by its own softmax sum D_{m,i}. Putting Σ_m N_m / D_{m,i} over one
denominator multiplies the h sums (n^h terms: multihead(8, 4, 4, 4, 8) ran out of memory at
24 GB), although every later step adds and scales those terms separately. So a number keeps
one part per distinct denominator (the polynomial part has none), and only inversion
combines the parts into one fraction.

**Zero test.** A number with no part is zero. One part n/d is zero iff n = 0 (exact, in R).
Parts over distinct denominators may still cancel (n/d = (xn)/(xd)), so for two or more
parts the number is combined over the product of its denominators, and the numerator's zero
test decides; a random rational point at which an arb enclosure excludes 0 proves the
number nonzero first, without combining (:meth:`SymbolicRing.nonzero_at_a_point`).

Normalisation is light, as in EE (:mod:`exact.eenumber`): a denominator's largest term
is made a polynomial with leading coefficient 1 by moving the unit r e^c E^a into the
numerator, and a denominator that becomes 1 is dropped. No gcd is taken. Monic forms are
cached, so the n terms of an attention row, each over the row's softmax denominator D,
share one denominator object and add without multiplying it.

Inversion records its divisor with the ring (:meth:`SymbolicRing.note_divisor`): a
quotient is the function only where its divisors are nonzero.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable

from flint import fmpq, fmpz

from attncert.exact.decide import register_self_deciding
from attncert.exact.errors import ExactZeroDivision
from attncert.exact.symbolic.polyexp import ONE, PolyExp, key_inverse

if TYPE_CHECKING:
    from attncert.exact.symbolic.ring import SymbolicRing

_PLAIN = (int, fmpq, fmpz, Fraction)
#: One part n/d of a number; d is None for the polynomial part, else monic and not 1.
Part = tuple[PolyExp, "PolyExp | None"]


def normalised(num: PolyExp, den: PolyExp | None) -> Part:
    """num/den with den monic (its unit moved into num), and None for a denominator 1."""
    if den is None:
        return num, None
    unit, r, m = den.monic()
    if unit != ONE or r != 1:
        num = num.shift(key_inverse(unit)).scale(1 / r)
    return (num, None) if m.is_one() else (num, m)


def _same_den(a: PolyExp | None, b: PolyExp | None) -> bool:
    return a is b or (a is not None and b is not None and a.same(b))


def _merge(parts: Iterable[Part]) -> tuple[Part, ...]:
    """Parts with equal denominators added together, zero numerators dropped."""
    out: list[list] = []
    for n, d in parts:
        for slot in out:
            if _same_den(slot[1], d):
                slot[0] = slot[0] + n
                break
        else:
            out.append([n, d])
    return tuple((n, d) for n, d in out if not n.is_zero())


class SymNumber:
    """Σ_j n_j / d_j over the exponential polynomials of one :class:`SymbolicRing`; immutable."""

    __slots__ = ("parts", "ring", "_inverse")

    def __init__(self, parts: tuple[Part, ...], ring: "SymbolicRing"):
        # Trusted: distinct normalised denominators, no zero numerator.
        self.parts = parts
        self.ring = ring
        self._inverse: SymNumber | None = None  # cached: a softmax sum divides every entry of its row

    @classmethod
    def fraction(cls, num: PolyExp, den: PolyExp | None = None) -> "SymNumber":
        """num/den (den nonzero), normalised."""
        if num.is_zero():
            return cls((), num.ring)
        return cls((normalised(num, den),), num.ring)

    # -- views ---------------------------------------------------------------------------
    def polynomial(self):
        """The polynomial p (an ``fmpq_mpoly``) if this number is p(x), else None."""
        if not self.parts:
            return self.ring.ctx.constant(0)
        if len(self.parts) == 1 and self.parts[0][1] is None:
            return self.parts[0][0].polynomial()
        return None

    def rational_value(self) -> fmpq | None:
        """The rational number this is, if it is one (no variable, no exponential), else None."""
        p = self.polynomial()
        if p is None or not p.is_constant():
            return None
        return p.leading_coefficient() if not p.is_zero() else fmpq(0)

    def combined(self) -> Part:
        """The number as one fraction n/d, over the product of its denominators (d None for 1)."""
        if not self.parts:
            return PolyExp({}, self.ring), None
        if len(self.parts) == 1:
            return self.parts[0]
        dens = [d for _, d in self.parts if d is not None]
        num = PolyExp({}, self.ring)
        for n, d in self.parts:
            for o in dens:
                if o is not d:
                    n = n * o
            num = num + n
        den = dens[0]
        for o in dens[1:]:
            den = den * o
        return normalised(num, den)

    def depends_on_inputs(self) -> bool:
        return any(n.depends_on_inputs() or (d is not None and d.depends_on_inputs()) for n, d in self.parts)

    def is_zero(self) -> bool:
        """Exact: zero as a function of the inputs (module docstring)."""
        if not self.parts:
            return True
        if len(self.parts) == 1:
            return False  # a nonzero numerator over a nonzero denominator
        if self.ring.nonzero_at_a_point(self):
            return False
        return self.combined()[0].is_zero()

    # -- arithmetic ----------------------------------------------------------------------
    def _lift(self, other: Any) -> "SymNumber | None":
        if type(other) is SymNumber:
            return other
        if isinstance(other, _PLAIN) and not isinstance(other, bool):
            q = fmpq(other.numerator, other.denominator) if isinstance(other, Fraction) else fmpq(other)
            return self.ring.constant(q)
        return None

    def __add__(self, other: Any) -> "SymNumber":
        o = self._lift(other)
        if o is None:
            return NotImplemented
        a, b = self.parts, o.parts
        if len(a) == 1 and len(b) == 1 and _same_den(a[0][1], b[0][1]):
            s = a[0][0] + b[0][0]
            return SymNumber(((s, a[0][1]),) if not s.is_zero() else (), self.ring)
        return SymNumber(_merge(a + b), self.ring)

    __radd__ = __add__

    def __neg__(self) -> "SymNumber":
        return SymNumber(tuple((-n, d) for n, d in self.parts), self.ring)

    def __pos__(self) -> "SymNumber":
        return self

    def __sub__(self, other: Any) -> "SymNumber":
        o = self._lift(other)
        return NotImplemented if o is None else self + (-o)

    def __rsub__(self, other: Any) -> "SymNumber":
        o = self._lift(other)
        return NotImplemented if o is None else o + (-self)

    def __mul__(self, other: Any) -> "SymNumber":
        if type(other) is fmpq or (type(other) is int):
            if not other:
                return SymNumber((), self.ring)
            q = fmpq(other)
            return SymNumber(tuple((n.scale(q), d) for n, d in self.parts), self.ring)
        o = self._lift(other)
        if o is None:
            return NotImplemented
        a, b = self.parts, o.parts
        if not a or not b:
            return SymNumber((), self.ring)
        if len(b) == 1 and b[0][1] is None:  # times a polynomial: the denominators stay
            p = b[0][0]
            return SymNumber(tuple((n * p, d) for n, d in a), self.ring)
        if len(a) == 1 and a[0][1] is None:
            return o * self
        out = []
        for n1, d1 in a:
            for n2, d2 in b:
                den = d2 if d1 is None else d1 if d2 is None else d1 * d2
                out.append(normalised(n1 * n2, den))
        return SymNumber(_merge(out), self.ring)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> "SymNumber":
        o = self._lift(other)
        return NotImplemented if o is None else self * o.inverse()

    def __rtruediv__(self, other: Any) -> "SymNumber":
        o = self._lift(other)
        return NotImplemented if o is None else o * self.inverse()

    def inverse(self) -> "SymNumber":
        """1/self, with the parts combined first; the numerator is recorded as a divisor."""
        if self._inverse is not None:
            return self._inverse
        if self.is_zero():
            raise ExactZeroDivision("division by an exact zero (the zero function) in the symbolic field")
        n, d = self.combined()
        self.ring.note_divisor(n)
        one = PolyExp({ONE: self.ring.ctx.constant(1)}, self.ring)
        self._inverse = SymNumber.fraction(one if d is None else d, n)
        return self._inverse

    def __pow__(self, k: int) -> "SymNumber":
        if not isinstance(k, int) or isinstance(k, bool):
            return NotImplemented
        if k < 0:
            return self.inverse() ** (-k)
        out, base = self.ring.constant(fmpq(1)), self
        while k:
            if k & 1:
                out = out * base
            k >>= 1
            if k:
                base = base * base
        return out

    # -- comparison ----------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        """Whether the two are equal at the input: a question about an unknown point, answered like a
        sign (:meth:`SymbolicRing.sign`): True for the zero function, exactly for constants, by region
        splitting for an affine form, else InputDependentSign. A map's ``x == 0`` is such a
        question; equality as functions is :meth:`identical`."""
        o = self._lift(other)
        if o is None:
            return NotImplemented
        return self.ring.sign(self - o) == 0

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def identical(self, other: Any) -> bool:
        """Equality as functions of the inputs (wherever both are defined), decided exactly."""
        o = self._lift(other)
        if o is None:
            raise TypeError(f"cannot compare a symbolic value with {type(other).__name__}")
        return (self - o).is_zero()

    __hash__ = None  # type: ignore[assignment]  # equal values may be written differently

    def __bool__(self) -> bool:
        """Whether the value is nonzero: decided only for a constant (otherwise it depends on the inputs)."""
        return self.ring.sign(self) != 0

    def __repr__(self) -> str:
        return " + ".join(f"({n})" if d is None else f"({n}) / ({d})" for n, d in self.parts) or "0"


# exact.decide (comparisons, signs and choices everywhere) asks the ring of a SymNumber for its signs
register_self_deciding(SymNumber, lambda x: x.ring.sign(x))
