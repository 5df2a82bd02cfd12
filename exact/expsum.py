"""Sparse exponential sums  s = sum_q c_q e^q  with rational q and c.

These are the elements of the ring Q[e^Q] (the group ring of the additive
group Q over Q, evaluated at e). :class:`exact.eenumber.EENumber` builds the
field EE = Frac(Q[e^Q]) out of pairs of them.

Facts used here
---------------
* **Lindemann–Weierstrass** (Lindemann 1882, Weierstrass 1885; see Baker,
  *Transcendental Number Theory*, Thm. 1.4): for distinct algebraic numbers
  a_1..a_k, the numbers e^{a_1}..e^{a_k} are linearly independent over the
  algebraic numbers. Hence, for distinct rationals q, a sum sum_q c_q e^q with
  rational c_q is zero *iff every c_q is zero*. The representation below keeps
  exponents distinct and drops zero coefficients, so a sum is zero iff its
  dictionary is empty: an exact zero test without any precision.
* Q[e^Q] is an integral domain (it is a subring of the field R), so
  Frac(Q[e^Q]) exists and a/b = c/d iff a*d = c*b.
* A nonzero sum has a nonzero real value, so its sign is decided by arb
  evaluation at increasing precision until the ball excludes 0
  (:meth:`ExpSum.sign`); this always terminates.

Storage is a dict exponent -> coefficient: exponents are :class:`Exponent` (an
``fmpq`` with a cached hash, because ``fmpq`` hashes through Python's Fraction
at about 4 µs a call), coefficients ``fmpq``. Sums are
never made dense (exponents may have huge denominators) and never
gcd-normalised. Instances are immutable; each caches its monic form and sign,
so a denominator shared by many fractions is normalised and evaluated once.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Mapping

from flint import arb, ctx, fmpq

from attncert.exact.errors import UndecidedError

Q0 = fmpq(0)
Q1 = fmpq(1)


class Exponent(fmpq):
    """A rational exponent, hashed once on creation (dictionary keys of exponential sums).

    Equal to the fmpq of the same value, but with its own hash: a dictionary of
    exponents must be looked up with Exponents only, which this module guarantees.
    """

    __slots__ = ("_h",)

    def __init__(self, q: object):
        # fmpq takes its value in __init__, so the hash can only be taken after it.
        super().__init__(q)
        self._h = hash((self.p, self.q))

    def __hash__(self) -> int:
        return self._h


def exponent(q: fmpq) -> Exponent:
    return q if type(q) is Exponent else Exponent(q)


E0 = Exponent(0)

#: Largest working precision (bits) tried when deciding a sign. A nonzero sum
#: is always decided eventually; the cap only turns a pathological input
#: (astronomically close cancellation) into a clear error instead of a hang.
MAX_SIGN_PREC = 1 << 20


@lru_cache(maxsize=1 << 16)
def exp_ball(q: fmpq, prec: int) -> arb:
    """A rigorous arb enclosure of e^q at ``prec`` bits (cached: exponents repeat)."""
    with ctx.workprec(prec):
        return arb(q).exp()


class ExpSum:
    """An immutable sparse sum  sum_q c_q e^q  with distinct exponents and c_q != 0."""

    __slots__ = ("terms", "_monic", "_sign", "_shift")

    def __init__(self, terms: Mapping[fmpq, fmpq]):
        # Trusted constructor: callers guarantee fmpq keys/values and no zero coefficient.
        self.terms = terms
        self._monic: tuple[fmpq, fmpq, ExpSum] | None = None
        self._sign: int | None = None
        self._shift: dict[fmpq, Exponent] | None = None  # own exponent -> the monic form's (over_monic)

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[fmpq, fmpq]]) -> "ExpSum":
        """Build from (exponent, coefficient) pairs, adding repeated exponents."""
        acc: dict[fmpq, fmpq] = {}
        for q, c in pairs:
            q = exponent(q)
            acc[q] = acc.get(q, Q0) + c
        return cls({q: c for q, c in acc.items() if c})

    @classmethod
    def constant(cls, c: fmpq) -> "ExpSum":
        return cls({E0: c}) if c else ZERO

    @classmethod
    def monomial(cls, q: fmpq, c: fmpq = Q1) -> "ExpSum":
        return cls({exponent(q): c}) if c else ZERO

    # -- predicates --------------------------------------------------------------------
    def is_zero(self) -> bool:
        """Exact by Lindemann–Weierstrass: zero iff no term survives."""
        return not self.terms

    def constant_value(self) -> fmpq | None:
        """The rational value if the sum is a constant (only the exponent 0), else None."""
        t = self.terms
        if not t:
            return Q0
        if len(t) == 1:
            c = t.get(E0)
            if c is not None:
                return c
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExpSum):
            return NotImplemented
        return self is other or self.terms == other.terms

    __hash__ = None  # type: ignore[assignment]  # mutable-looking dict inside; equality is structural

    def __len__(self) -> int:
        return len(self.terms)

    def ascending(self) -> list[fmpq]:
        """The exponents in increasing order (the order of the JSON form).

        The order is proposed by the nearest doubles (sorting doubles is about 30
        times faster than sorting fmpq) and decided exactly: it is kept only if every
        pair of neighbours is strictly increasing as rationals. Otherwise (doubles
        that tie, or an exponent beyond the doubles' range) the rationals are sorted
        by exact comparison.
        """
        try:
            qs = sorted(self.terms, key=float)
        except OverflowError:
            return sorted(self.terms)
        return qs if all(a < b for a, b in zip(qs, qs[1:])) else sorted(self.terms)

    # -- ring operations ---------------------------------------------------------------
    def __add__(self, other: "ExpSum") -> "ExpSum":
        if not other.terms:
            return self
        if not self.terms:
            return other
        big, small = (self, other) if len(self.terms) >= len(other.terms) else (other, self)
        acc = dict(big.terms)
        add_into(acc, small.terms)
        return ExpSum(acc)

    def __neg__(self) -> "ExpSum":
        return ExpSum({q: -c for q, c in self.terms.items()})

    def __sub__(self, other: "ExpSum") -> "ExpSum":
        return self + (-other)

    def __mul__(self, other: "ExpSum") -> "ExpSum":
        if self is ONE:
            return other
        if other is ONE:
            return self
        a, b = self.terms, other.terms
        if not a or not b:
            return ZERO
        if len(a) < len(b):
            a, b = b, a
        if len(b) == 1:
            ((q, c),) = b.items()
            return self.scale_shift(c, q) if a is self.terms else other.scale_shift(c, q)
        acc: dict[fmpq, fmpq] = {}
        for qb, cb in b.items():
            for qa, ca in a.items():
                k = Exponent(qa + qb)
                acc[k] = acc.get(k, Q0) + ca * cb
        return ExpSum({q: c for q, c in acc.items() if c})

    def scale_shift(self, c: fmpq, s: fmpq) -> "ExpSum":
        """The sum  c * e^s * self."""
        if not c:
            return ZERO
        if not s:
            return self.scaled(c)
        if c == 1:
            return ExpSum({Exponent(q + s): v for q, v in self.terms.items()})
        return ExpSum({Exponent(q + s): v * c for q, v in self.terms.items()})

    def scaled(self, c: fmpq | int) -> "ExpSum":
        """The sum  c * self, for a nonzero rational c (an int or fmpq)."""
        return self if c == 1 else ExpSum({q: v * c for q, v in self.terms.items()})

    def over_monic(self, num: "ExpSum") -> "ExpSum":
        """num / (c e^q) for self = c e^q m (:meth:`monic`): num expressed over m instead of self.

        The exponents num shares with self are shifted to m's own exponent objects,
        which are made once: the numerators over one shared denominator (the outputs of
        one attention row over its softmax sum) then create no new exponents.
        """
        q, c, m = self.monic()
        if m is self:
            return num
        if self._shift is None:
            self._shift = dict(zip(self.terms, m.terms))  # m is self shifted term by term, in the same order
        shift, k, s = self._shift, 1 / c, -q
        get = shift.get
        return ExpSum({(t if (t := get(e)) is not None else Exponent(e + s)): v * k for e, v in num.terms.items()})

    def monic(self) -> tuple[fmpq, fmpq, "ExpSum"]:
        """(q, c, m) with self = c e^q m, where m's largest exponent is 0 with coefficient 1.

        Cached, so that a denominator shared by many fractions is normalised once and
        the normalised sums are the *same object*: equal denominators are then detected
        by identity.
        """
        if self._monic is None:
            if not self.terms:
                raise ZeroDivisionError("the zero sum has no monic form")
            q = max(self.terms)
            c = self.terms[q]
            if q == 0 and c == 1:
                self._monic = (Q0, Q1, self)
            else:
                m = self.scale_shift(1 / c, -q)
                m._monic = (Q0, Q1, m)
                self._monic = (q, c, m)
        return self._monic

    # -- real value --------------------------------------------------------------------
    def evaluate(self, prec: int) -> arb:
        """A rigorous ball containing the real value, computed at ``prec`` bits."""
        with ctx.workprec(prec):
            total = arb(0)
            for q, c in self.terms.items():
                total += exp_ball(q, prec) if c == 1 else arb(c) * exp_ball(q, prec)
            return total

    def sign(self) -> int:
        """The exact sign: 0 iff empty (Lindemann–Weierstrass), else decided by arb."""
        if self._sign is None:
            self._sign = _decide_sign(self)
        return self._sign

    def __repr__(self) -> str:
        return f"ExpSum({format_expsum(self)})"


def _decide_sign(s: ExpSum) -> int:
    t = s.terms
    if not t:
        return 0
    if len(t) == 1:  # c e^q has the sign of c
        (c,) = t.values()
        return 1 if c > 0 else -1
    if all(c > 0 for c in t.values()):
        return 1
    if all(c < 0 for c in t.values()):
        return -1
    prec = 64
    while prec <= MAX_SIGN_PREC:
        v = s.evaluate(prec)
        if v > 0:
            return 1
        if v < 0:
            return -1
        prec *= 2
    raise UndecidedError(
        f"sign of a nonzero exponential sum not resolved at {MAX_SIGN_PREC} bits: {format_expsum(s)[:200]}"
    )


def add_into(acc: dict[fmpq, fmpq], terms: Mapping[fmpq, fmpq]) -> None:
    """acc += terms, in place, dropping cancelled terms (exact: coefficients are rational)."""
    for q, c in terms.items():
        v = acc.get(q)
        if v is None:
            acc[q] = c
        else:
            v = v + c
            if v:
                acc[q] = v
            else:
                del acc[q]


def format_expsum(s: ExpSum) -> str:
    """Human-readable form, largest exponent first: e.g. ``e^2 - 1``."""
    if not s.terms:
        return "0"
    parts = []
    for q in sorted(s.terms, reverse=True):
        c = s.terms[q]
        if q == 0:
            body = str(abs(c))
        else:
            power = "e" if q == 1 else f"e^{q}" if q.q == 1 and q > 0 else f"e^({q})"
            body = power if abs(c) == 1 else f"{abs(c)}*{power}"
        parts.append(("-" if c < 0 else "+", body))
    first_sign, first = parts[0]
    out = ("-" if first_sign == "-" else "") + first
    for sg, body in parts[1:]:
        out += f" {sg} {body}"
    return out


ZERO = ExpSum({})
ONE = ExpSum({E0: Q1})
ONE._monic = (Q0, Q1, ONE)
