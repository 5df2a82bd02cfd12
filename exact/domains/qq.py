"""QQ: the rationals, on FLINT's ``fmpq`` (exact).

Floats are refused (:class:`exact.errors.FloatRefused`) by :meth:`convert`,
:meth:`exp`, :meth:`sign` and the comparisons :meth:`eq` and :meth:`lt`. The
operator ``fmpq == float`` is FLINT's and answers False, the rule for ``==``
between any exact value and a float (:func:`exact.rationals.float_equality_message`
says why); compare through the domain (``QQ.eq``) to have a float refused instead.
``fmpq == Fraction`` compares exactly (:mod:`exact.rationals` declares ``fmpq`` a
``numbers.Rational``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from flint import arb, ctx, fmpq

from attncert.exact.domains.base import Domain
from attncert.exact.errors import NotInFieldError
from attncert.exact.rationals import parse_rational, rational_from_json, rational_to_json, refuse_floats


class RationalField(Domain):
    """Q with exact arithmetic. exp is defined only at 0 (e^q is irrational for q != 0)."""

    name = "QQ"
    exact = True
    relation = "exact_equal"

    def convert(self, x: object) -> fmpq:
        return parse_rational(x, where="QQ")

    def exp(self, x: Any) -> fmpq:
        # Lindemann: e^q is transcendental for rational q != 0, so it is not in QQ.
        q = self.convert(x)  # a number given as a string is that number ("0"), a float is refused
        if q == 0:
            return fmpq(1)
        raise NotInFieldError(f"exp({q}) is not rational; evaluate in EE for exact exponentials")

    def sign(self, x: fmpq) -> int:
        if type(x) is not fmpq:
            refuse_floats(x, where="QQ")
        return (x > 0) - (x < 0)

    def lt(self, a: fmpq, b: fmpq) -> bool:
        if type(a) is not fmpq or type(b) is not fmpq:
            refuse_floats(a, b, where="QQ")
        return a < b

    def eq(self, a: fmpq, b: fmpq) -> bool:
        if type(a) is not fmpq or type(b) is not fmpq:
            refuse_floats(a, b, where="QQ")  # fmpq == float is False, not an error
        return a == b

    def sum(self, values: Iterable[fmpq]) -> fmpq:
        return sum(values, fmpq(0))

    def group_mean(self, values: Sequence[fmpq]) -> Callable[[Sequence[int]], fmpq]:
        """(1/|G|) sum_{i in G} values[i] by FLINT's rational additions.

        One gcd per addition, in C: faster than integers over the lcm of all
        denominators, whose size grows with every distinct denominator.
        """
        return lambda g: sum(map(values.__getitem__, g), fmpq(0)) / len(g)

    def to_json(self, x: fmpq) -> str:
        return rational_to_json(x)

    def from_json(self, obj: Any) -> fmpq:
        return rational_from_json(obj)

    def enclose(self, x: fmpq, prec: int = 128) -> arb:
        with ctx.workprec(prec):
            return arb(x)


QQ = RationalField()
