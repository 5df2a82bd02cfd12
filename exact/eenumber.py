"""Elements of the exact field EE = Frac(Q[e^Q]).

An :class:`EENumber` is a quotient num/den of two :class:`exact.expsum.ExpSum`.
It is *lightly* normalised: den's largest exponent is 0 and its coefficient there
is 1 (the common factor c e^q is moved into num). No polynomial gcd is taken, so
two equal numbers may be written differently; equality is always decided by
cross-multiplication a/b = c/d  <=>  a*d = c*b, coefficient by coefficient, which
is exact by Lindemann–Weierstrass (see :mod:`exact.expsum`).

Why the light normalisation: fractions that share a denominator must not
multiply denominators when added. An attention output row is a sum of n terms
e^{s_j} v_j / D over one softmax denominator D; adding them naively gives a
denominator D^n. Here the monic form of D is cached on D, so all n terms carry
the *same* denominator object and addition merges numerators only.

Signs are exact: the sign of num/den is sign(num)*sign(den), each decided by
:meth:`ExpSum.sign`. So <, max and ReLU on EE are exact.

Floats never enter: constructing from, computing with or ordering against a Python
or numpy float (``EE.exp(0.1)``, ``x + 0.5``, ``x < 1.0``) raises
:class:`exact.errors.FloatRefused`; write decimals as strings (``EE.exp("0.1")``).
Equality never raises: ``x == 1.0`` is False (and ``!=`` True) for every float, as
FLINT's ``fmpq(1) == 1.0`` is, since an exact value is never equal to a binary
approximation; :func:`exact.rationals.float_equality_message` (and
``attncert.exact.testing.why_unequal``) says why. ``x == Fraction(3, 2)`` and
``x == 3`` compare exactly, and a rational x hashes as that Fraction or int does.
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Complex
from typing import TYPE_CHECKING, Iterable

import numpy as np
from flint import arb, ctx, fmpq, fmpz

from attncert.exact.errors import ExactZeroDivision, NotInFieldError
from attncert.exact.expsum import E0, ONE, Q0, ZERO, ExpSum, add_into, format_expsum
from attncert.exact.rationals import is_float, parse_rational, refuse_floats

if TYPE_CHECKING:
    import mpmath

_PLAIN = (int, fmpq, fmpz, Fraction)


class EENumber:
    """num/den in Frac(Q[e^Q]); immutable."""

    __slots__ = ("num", "den")

    def __init__(self, num: ExpSum, den: ExpSum = ONE):
        if den.is_zero():
            raise ExactZeroDivision("division by an exact zero in EE")
        if num.is_zero():
            num, den = ZERO, ONE
        elif den is not ONE:
            m = den.monic()[2]
            num = den.over_monic(num)
            den = ONE if len(m) == 1 else m  # a monic monomial is 1
            if len(num) == len(den) and den is not ONE:
                r = _ratio(num, den)
                if r is not None:  # e.g. a softmax row summed over its own denominator
                    num, den = ExpSum.constant(r), ONE
        self.num = num
        self.den = den

    @classmethod
    def _of(cls, num: ExpSum, den: ExpSum) -> "EENumber":
        """num/den where den is already normalised (ONE, or its own monic form) and num != 0."""
        self = object.__new__(cls)
        self.num, self.den = num, den
        return self

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def rational(cls, x: object) -> "EENumber":
        return cls(ExpSum.constant(parse_rational(x, where="EE")))

    @classmethod
    def exp(cls, x: object) -> "EENumber":
        """e^x for a rational x (a number, or an EENumber whose value is rational)."""
        if isinstance(x, EENumber):
            q = x.rational_value()
            if q is None:
                raise NotInFieldError(
                    f"exp of a non-rational EE element leaves the field EE: exp({x}); "
                    "evaluate in Ball(prec) instead"
                )
        else:
            q = parse_rational(x, where="EE")
        return cls(ExpSum.monomial(q))

    # -- exact predicates ---------------------------------------------------------------
    def is_zero(self) -> bool:
        return self.num.is_zero()

    def rational_value(self) -> fmpq | None:
        """The value as a rational if it is one, else None (an exact test).

        num/den = r with r rational iff num = r*den as elements of Q[e^Q], i.e.
        coefficient by coefficient (Lindemann–Weierstrass); r is then the ratio of
        the leading coefficients.
        """
        if self.den is ONE:
            return self.num.constant_value()
        return _ratio(self.num, self.den)

    def sign(self) -> int:
        """-1, 0 or 1, decided exactly (never a guess)."""
        s = self.num.sign()
        return s if self.den is ONE or s == 0 else s * self.den.sign()

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, other: object) -> "EENumber":
        if type(other) is fmpq or type(other) is int:  # x + c = (num + c den) / den
            if not other:
                return self
            return EENumber(self.num + self.den.scale_shift(fmpq(other), Q0), self.den)
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        a, b = self.den, o.den
        if a is b or a == b:
            return EENumber(self.num + o.num, a)
        return EENumber(self.num * b + o.num * a, a * b)

    __radd__ = __add__

    def __neg__(self) -> "EENumber":
        return EENumber(-self.num, self.den)

    def __pos__(self) -> "EENumber":
        return self

    def __sub__(self, other: object) -> "EENumber":
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return self + (-o)

    def __rsub__(self, other: object) -> "EENumber":
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return o + (-self)

    def __mul__(self, other: object) -> "EENumber":
        if type(other) is fmpq or type(other) is int:  # c x: scale the numerator only
            if not other:
                return _ZERO
            return self if other == 1 else EENumber._of(self.num.scaled(other), self.den)
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return EENumber(self.num * o.num, self.den * o.den)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> "EENumber":
        if (type(other) is fmpq or type(other) is int) and other:
            return self * (1 / fmpq(other))
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        if o.is_zero():
            raise ExactZeroDivision(f"division by an exact zero in EE: ({self}) / 0")
        return EENumber(self.num * o.den, self.den * o.num)

    def __rtruediv__(self, other: object) -> "EENumber":
        o = _coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return o / self

    def __pow__(self, k: int) -> "EENumber":
        if not isinstance(k, int):
            return NotImplemented
        if k < 0:
            return EENumber(ONE) / (self ** (-k))
        out, base = EENumber(ONE), self
        while k:
            if k & 1:
                out = out * base
            base, k = base * base, k >> 1
        return out

    # -- exact comparisons --------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if type(other) is EENumber:
            o = other
        elif is_float(other):  # unequal, not refused: == must not raise (float_equality_message says why)
            return False
        elif isinstance(other, np.ndarray):
            return NotImplemented  # numpy compares entry by entry
        else:
            o = _coerce(other)
            if o is NotImplemented:
                return NotImplemented
        if self.den is o.den or self.den == o.den:
            return self.num == o.num
        return self.num * o.den == o.num * self.den

    def __hash__(self) -> int:
        q = self.rational_value()
        if q is None:
            # Equal non-rational values may be written differently (no gcd), so no
            # structural hash is consistent with ==. Refuse instead of being wrong.
            raise TypeError(f"unhashable EE element (not rational): {self}")
        return hash(q)

    def _cmp(self, other: object) -> int:
        o = _coerce(other)
        if o is NotImplemented:
            raise TypeError(f"cannot compare EENumber with {type(other).__name__}")
        return (self - o).sign()

    def __lt__(self, other: object) -> bool:
        return self._cmp(other) < 0

    def __le__(self, other: object) -> bool:
        return self._cmp(other) <= 0

    def __gt__(self, other: object) -> bool:
        return self._cmp(other) > 0

    def __ge__(self, other: object) -> bool:
        return self._cmp(other) >= 0

    def __bool__(self) -> bool:
        return not self.is_zero()

    # -- real value ---------------------------------------------------------------------
    def enclose(self, prec: int = 128) -> arb:
        """A rigorous arb ball around the value with at least ``prec`` bits of relative accuracy.

        Working precision is raised until the ball is that accurate, so cancellation
        in num or den cannot silently degrade the result.
        """
        if self.is_zero():
            return arb(0)
        work = prec + 16
        while True:
            with ctx.workprec(work):
                v = self.num.evaluate(work) / (self.den.evaluate(work) if self.den is not ONE else 1)
            if v.rel_accuracy_bits() >= prec or work > 64 * prec + 4096:
                return v
            work *= 2

    def to_mpmath(self, dps: int = 30) -> mpmath.mpf:
        """An mpmath number for display, correct to about ``dps`` digits (not a certificate)."""
        import mpmath  # for display only: a proof does not load it

        b = self.enclose(int(dps * 3.33) + 8)
        m, e = b.mid().man_exp()
        with mpmath.workdps(dps + 5):  # mpf keeps the precision it was made with
            return mpmath.ldexp(mpmath.mpf(int(m)), int(e))

    def __float__(self) -> float:
        return float(self.enclose(64).mid())

    # numbers.Complex's parts (EE is a field of real numbers): Fraction's == reads them from any Complex
    @property
    def real(self) -> "EENumber":
        return self

    @property
    def imag(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"EENumber({self})"

    def __str__(self) -> str:
        if self.den is ONE:
            return format_expsum(self.num)
        n, d = format_expsum(self.num), format_expsum(self.den)
        n = n if len(self.num) == 1 else f"({n})"
        return f"{n}/({d})"


def _ratio(num: ExpSum, den: ExpSum) -> fmpq | None:
    """r if num = r*den for a rational r, else None; den must be monic at exponent 0."""
    n, d = num.terms, den.terms
    if len(n) != len(d) or n.keys() != d.keys():
        return None
    r = n[E0]
    return r if all(n[q] == r * c for q, c in d.items()) else None


def _coerce(x: object) -> EENumber:
    """x as an EENumber for arithmetic and comparison; NotImplemented for foreign types.

    Floats raise :class:`FloatRefused` instead: ``x + 0.5`` or ``x < 0.5`` would otherwise
    compute with, or order against, a binary approximation (``==`` answers before coercing).
    """
    if isinstance(x, EENumber):
        return x
    if isinstance(x, _PLAIN):
        return EENumber(ExpSum.constant(fmpq(x) if not isinstance(x, Fraction) else parse_rational(x)))
    if is_float(x) or isinstance(x, np.ndarray):
        refuse_floats(x, where="EE")
    return NotImplemented  # type: ignore[return-value]


def ee_sum(values: Iterable[EENumber]) -> EENumber:
    """Exact sum of many EE numbers without growing denominators.

    Terms are grouped by denominator (by identity first, then by equality) and each
    group's numerators are merged in one dictionary; only distinct denominators are
    cross-multiplied. A softmax-weighted row sum over a common denominator D
    therefore costs one merge, not a product of n copies of D.
    """
    values = list(values)  # keeps every den alive, so id() stays unique below
    groups: list[tuple[ExpSum, dict]] = []
    by_id: dict[int, dict] = {}
    for v in values:
        acc = by_id.get(id(v.den))
        if acc is None:
            for den, a in groups:
                if den == v.den:
                    acc = a
                    break
            else:
                acc = {}
                groups.append((v.den, acc))
            by_id[id(v.den)] = acc
        add_into(acc, v.num.terms)
    if len(groups) == 1:  # one denominator (a softmax row's, or 1): the merged numerator over it
        den, acc = groups[0]
        return EENumber(ExpSum(acc), den)
    total = EENumber(ZERO)
    for den, acc in groups:
        total = total + EENumber(ExpSum(acc), den)
    return total


_ZERO = EENumber(ZERO)

# EE is a field of complex (indeed real) numbers. Registered, an EENumber is a number to pytest.approx, which then
# subtracts it from the float it expects and so meets FloatRefused, whose message gives the one-line alternative
# (float(x) == pytest.approx(y)), instead of answering a silent False. (numbers.Real is not claimed: EE has no
# __floor__ or __round__ of Real's protocol.)
Complex.register(EENumber)
