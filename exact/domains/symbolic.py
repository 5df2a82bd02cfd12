"""Sym: the symbolic field, where a value is a function of the inputs and equality is identity.

Elements are :class:`exact.symbolic.number.SymNumber` (quotients of exponential
polynomials Σ p_k(x) e^{c_k} E^{a_k} in named input variables x) and, for speed, plain
FLINT rationals, as EE keeps them. Evaluating a RASP graph here on variables instead of
numbers computes each output as a function of the inputs; comparing it with a reference
computed the same way decides the identity for all real inputs (where the recorded
divisors are nonzero). The facts it rests on, Ax's theorem and Lindemann–Weierstrass,
are stated in :mod:`exact.symbolic.basis` and :mod:`exact.symbolic.polyexp`.

What has no symbolic rule is refused with :class:`exact.errors.NotInFieldError`: exp of
a non-polynomial, a power with a non-integer exponent, and any sign, comparison or branch
whose answer depends on the inputs (:class:`exact.symbolic.ring.InputDependentSign`).
Constants are EE's, with EE's exact signs.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable, Sequence

from flint import arb, fmpq, fmpq_mpoly

from attncert.exact.domains.base import Domain
from attncert.exact.errors import ExactZeroDivision, NotInFieldError
from attncert.exact.rationals import parse_rational
from attncert.exact.symbolic.number import SymNumber
from attncert.exact.symbolic.ring import SymbolicRing

_SERIAL = itertools.count()


class SymbolicField(Domain):
    """The symbolic field over one :class:`SymbolicRing` (its variables and exponential basis)."""

    exact = True
    relation = "identity"

    def __init__(self, variables: Sequence[str], basis: Iterable[fmpq_mpoly] = ()):
        self.ring = SymbolicRing(variables, basis)
        # Unique per field: the evaluator caches static values by domain name, and numbers of
        # two rings do not mix.
        self.name = f"Sym#{next(_SERIAL)}"

    def variable(self, name: str) -> SymNumber:
        return self.ring.variable(name)

    def convert(self, x: object) -> SymNumber:
        if type(x) is SymNumber:
            return x
        return self.ring.constant(parse_rational(x, where="the symbolic field"))

    def native(self, x: object) -> SymNumber | fmpq:
        """Rationals stay ``fmpq`` (cheaper); everything else is a SymNumber of this ring."""
        if type(x) is SymNumber or type(x) is fmpq:
            return x
        return parse_rational(x, where="the symbolic field")

    def exp(self, x: Any) -> SymNumber:
        return self.ring.exp(self.native(x))

    def sign(self, x: Any) -> int:
        return self.ring.sign(self.native(x))

    def eq(self, a: Any, b: Any) -> bool:
        d = self.native(a) - self.native(b)
        if type(d) is SymNumber and d.is_zero():
            return True
        return self.sign(d) == 0

    def div(self, a: Any, b: Any) -> SymNumber | fmpq:
        if type(b) is fmpq:
            if not b:
                raise ExactZeroDivision(f"division by an exact zero in the symbolic field: ({a}) / 0")
            return a / b
        if b.is_zero():
            raise ExactZeroDivision(f"division by an exact zero (the zero function) in the symbolic field: ({a}) / 0")
        return self.convert(a) / b

    def relu(self, x: Any) -> Any:
        """max(x, 0): by its sign where that is decided (a constant, or an affine form split into
        regions); otherwise uninterpreted (:meth:`SymbolicRing.uninterpreted`), as relu of an
        exponential expression has no rule."""
        x = self.native(x)
        if type(x) is SymNumber and x.depends_on_inputs() and self.ring.affine(x) is None:
            return self.ring.uninterpreted("relu", x)
        return super().relu(x)

    def real_power(self, x: Any, y: Any) -> Any:
        """x^y for a non-integer rational y: of a value of the inputs, uninterpreted (layer norm's
        (var + delta)^(-1/2)); of a constant, the exact root where there is one (else NotInFieldError)."""
        x = self.native(x)
        if type(x) is SymNumber and x.depends_on_inputs():
            return self.ring.uninterpreted(f"power({y})", x)
        q = x.rational_value() if type(x) is SymNumber else x
        if q is None:
            raise NotInFieldError(f"({x}) ^ {y}: a non-integer power of an exponential constant has no rule")
        return super().real_power(q, y)

    def to_json(self, x: Any) -> Any:
        raise NotInFieldError("symbolic values are not written into certificates; the checker recomputes them")

    def from_json(self, obj: Any) -> Any:
        raise NotInFieldError("symbolic values are not read from certificates")

    def enclose(self, x: Any, prec: int = 128) -> arb:
        raise NotInFieldError("a symbolic value is a function of the inputs: it has no enclosure")


def Sym(variables: Sequence[str], basis: Iterable[fmpq_mpoly] = ()) -> SymbolicField:
    """The symbolic field over the named real variables (and a seeded exponential basis)."""
    return SymbolicField(variables, basis)
