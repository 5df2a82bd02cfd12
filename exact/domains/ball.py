"""Ball(prec): arb midpoint-radius balls at ``prec`` bits (rigorous enclosures).

Every operation returns a ball that contains the exact result of the same
operation on any points of its arguments (Johansson, "Arb: efficient
arbitrary-precision midpoint-radius interval arithmetic", IEEE Trans. Comput.
2017). A ball result is therefore an *enclosure*, never an exact value.
Comparisons go through the one three-valued decision (:mod:`exact.decide`): a ball
that lies on one side decides them, one that contains the other side raises
:class:`UndecidedError` rather than guess.

FLINT's arb precision is a global setting; :meth:`BallField.context` sets it for
a computation, and the evaluator runs inside that context.

Floats are accepted, unlike in QQ and EE: a Python or numpy float is read as the
exact dyadic rational it stores (0.1 becomes 3602879701896397/2^55, then a ball
around that at ``prec`` bits), not as the decimal it prints as. A ball of a
float input therefore encloses the binary value; pass ``"0.1"`` for 1/10.
"""

from __future__ import annotations

from typing import Any, ContextManager

from flint import arb, ctx, fmpq

from attncert.exact import decide
from attncert.exact.domains.base import Domain
from attncert.exact.eenumber import EENumber
from attncert.exact.errors import LimitExceeded, NotRealError, ParseError, UndecidedError
from attncert.exact.limits import current as current_limits
from attncert.exact.rationals import parse_rational, rational_from_json, rational_to_json


class BallField(Domain):
    """Balls at a fixed working precision."""

    exact = False
    relation = "enclosure"

    def __init__(self, prec: int = 128):
        if not isinstance(prec, int) or isinstance(prec, bool) or not 2 <= prec <= 1 << 24:
            raise ParseError(f"Ball precision must be an integer number of bits in [2, 2^24], got {prec!r}")
        self.prec = prec
        self.name = f"Ball({prec})"

    def context(self) -> ContextManager[None]:
        return ctx.workprec(self.prec)

    def convert(self, x: object) -> arb:
        if isinstance(x, arb):
            return x
        if isinstance(x, EENumber):
            return x.enclose(self.prec)
        with self.context():
            return arb(parse_rational(x, dyadic_floats=True))  # a float: its exact binary value

    def exp(self, x: arb) -> arb:
        with self.context():
            return self.convert(x).exp()

    def real_power(self, x: Any, y: Any) -> arb:
        """A rigorous ball around x^y = exp(y log x) for x >= 0 (arb's pow), at this precision."""
        if decide.sign(x) < 0:  # a rational base is signed exactly, a ball's sign decided from it
            raise NotRealError(f"{x} ^ {y}: a negative number to a non-integer power is not a real number")
        with self.context():
            x, y = self.convert(x), self.convert(y)
            r = x**y
        if not r.is_finite():  # 0 to a negative power, or a base ball too wide for the exponent
            raise UndecidedError(f"{x} ^ {y} is not a finite ball at {self.prec} bits")
        return r

    def sign(self, x: arb) -> int:
        return decide.sign(x)

    def lt(self, a: arb, b: arb) -> bool:
        return decide.compare("<", a, b)

    def eq(self, a: arb, b: arb) -> bool:
        return decide.equal(a, b)

    def to_json(self, x: arb) -> dict[str, str]:
        return {"mid": rational_to_json(exact_dyadic(x.mid())), "rad": rational_to_json(exact_dyadic(x.rad()))}

    def from_json(self, obj: Any) -> arb:
        if not isinstance(obj, dict) or set(obj) != {"mid", "rad"}:
            raise ParseError('a ball must be an object with exactly the keys "mid" and "rad"')
        mid, rad = rational_from_json(obj["mid"]), rational_from_json(obj["rad"])
        if rad < 0:
            raise ParseError(f"a ball radius must be >= 0, got {rad}")
        with self.context():
            # arb(mid, rad) rounds outward, so the ball read contains the one written.
            return arb(mid, rad)

    def enclose(self, x: arb, prec: int = 128) -> arb:
        return x

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BallField) and other.prec == self.prec

    def __hash__(self) -> int:
        return hash(("Ball", self.prec))


def exact_dyadic(x: arb) -> fmpq:
    """The exact rational value of an exact (dyadic) arb, such as a midpoint or radius.

    m 2^e has a numerator of bits(m) + e bits (e >= 0) or a denominator of -e bits: far past the digit limit
    in force it is refused (LimitExceeded) before it is formed (arb keeps e apart, so a ball near e^(10^30)
    is cheap until its rational would take 10^29 bytes)."""
    m, e = x.man_exp()
    bits = max(int(m).bit_length() + int(e), -int(e))
    limit = current_limits().max_digits
    # log2(10) < 3.33: nothing a reader accepts is refused. Up to 2^20 bits past the limit the rational is formed
    # (cheaply), and its writer refuses it with its reader's own line.
    if bits > limit * 3.33 + (1 << 20):
        raise LimitExceeded(
            f"a ball endpoint of about 2^{int(e) + int(m).bit_length():,} would have about {int(bits * 0.30103):,} digits, "
            f"over the limit of {limit:,} (raise it with --max-digits)"
        )
    return fmpq(m) * fmpq(2) ** int(e) if e >= 0 else fmpq(m, 2 ** int(-e))


def Ball(prec: int = 128) -> BallField:
    """The ball domain at ``prec`` bits."""
    return BallField(prec)
