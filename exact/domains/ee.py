"""EE = Frac(Q[e^Q]): the exact field that contains e^q for every rational q.

Elements are :class:`exact.eenumber.EENumber`. The facts the domain rests on
(Lindemann–Weierstrass zero test, exact sign by arb refinement, closure under
exp of rationals only) are stated in :mod:`exact.expsum` and
:mod:`exact.eenumber`.

JSON form (docs/design.md, "Certificates"): ``{"num": [[q, c], ...], "den": [[q, c], ...]}``,
exponent q and coefficient c as canonical rational strings, sorted by exponent,
with den monic at its largest exponent, which is 0 (zero is 0/1). Reading checks
this light normal form, so that changing any number of a written element either
changes its value or makes the document malformed.

Floats are refused (:class:`exact.errors.FloatRefused`) by conversion, exp,
sign, the domain's comparisons and the arithmetic and ordering of EENumbers:
write decimals as strings. ``==`` with a float is False (never an error).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence

from flint import arb, fmpq

from attncert.exact.domains.base import Domain
from attncert.exact.eenumber import EENumber, ee_sum
from attncert.exact.errors import ExactZeroDivision, LimitExceeded, ParseError
from attncert.exact.limits import current as current_limits
from attncert.exact.expsum import Exponent, ExpSum, exponent
from attncert.exact.rationals import parse_rational, rational_from_json, rational_to_json, refuse_floats


class ExpField(Domain):
    """The exact exponential field EE."""

    name = "EE"
    exact = True
    relation = "exact_equal"

    def convert(self, x: object) -> EENumber:
        return x if isinstance(x, EENumber) else EENumber.rational(x)

    def native(self, x: object) -> EENumber | fmpq:
        """Rationals stay ``fmpq``: EE's evaluators work on the union QQ ∪ EENumber."""
        return x if isinstance(x, (EENumber, fmpq)) else parse_rational(x, where="EE")

    def exp(self, x: Any) -> EENumber:
        """e^x, exactly, for rational x; NotInFieldError names x otherwise."""
        return EENumber.exp(x)

    def sign(self, x: EENumber | fmpq) -> int:
        if isinstance(x, EENumber):
            return x.sign()
        if type(x) is not fmpq:
            refuse_floats(x, where="EE")
        return (x > 0) - (x < 0)

    def eq(self, a: EENumber | fmpq, b: EENumber | fmpq) -> bool:
        _check_operands(a, b)  # fmpq == float is False, not an error
        return a == b

    def lt(self, a: EENumber | fmpq, b: EENumber | fmpq) -> bool:
        _check_operands(a, b)
        return self.sign(a - b) < 0

    def sum(self, values: Iterable[EENumber | fmpq]) -> EENumber | fmpq:
        rational, other = fmpq(0), []
        for v in values:
            if type(v) is EENumber:
                other.append(v)
            else:
                rational += v
        return ee_sum(other) + rational if other else rational

    def div(self, a: EENumber | fmpq, b: EENumber | fmpq) -> EENumber | fmpq:
        """a / b; the zero test of b is exact (Lindemann–Weierstrass), with no sign evaluation."""
        if (b == 0) if type(b) is not EENumber else b.is_zero():
            raise ExactZeroDivision(f"division by an exact zero in EE: ({a}) / 0")
        return a * (1 / b) if type(b) is not EENumber else a / b

    def group_mean(self, values: Sequence[EENumber | fmpq]) -> Callable[[Sequence[int]], EENumber | fmpq]:
        def mean(g: Sequence[int]) -> EENumber | fmpq:
            group = list(map(values.__getitem__, g))
            if all(type(v) is fmpq for v in group):  # a rational group is averaged at QQ speed
                return sum(group, fmpq(0)) / len(group)
            return self.div(self.sum(group), fmpq(len(group)))

        return mean

    def to_json(self, x: EENumber | fmpq) -> dict[str, list[list[str]]]:
        if type(x) is fmpq:  # r = r e^0 / 1, written without building the EENumber (zero has no terms)
            return {"num": [["0", rational_to_json(x)]] if x else [], "den": [["0", "1"]]}
        x = self.convert(x)
        return {"num": _sum_to_json(x.num), "den": _sum_to_json(x.den)}

    def from_json(self, obj: Any) -> EENumber:
        if not isinstance(obj, dict) or set(obj) != {"num", "den"}:
            raise ParseError('an EE element must be an object with exactly the keys "num" and "den"')
        num = _sum_from_json(obj["num"], "num")
        den = _sum_from_json(obj["den"], "den")
        if den.is_zero():
            raise ParseError("an EE element has an empty (zero) denominator")
        top = max(den.terms)
        if top != 0 or den.terms[top] != 1 or (num.is_zero() and len(den) != 1):
            raise ParseError(
                "an EE element must be lightly normalised: the denominator's largest exponent is 0 with "
                "coefficient 1, and zero is written with denominator 1"
            )
        return EENumber(num, den)

    def enclose(self, x: EENumber | fmpq, prec: int = 128) -> arb:
        return self.convert(x).enclose(prec)


def _check_operands(a: object, b: object) -> None:
    ta, tb = type(a), type(b)
    if (ta is not fmpq and ta is not EENumber) or (tb is not fmpq and tb is not EENumber):
        refuse_floats(a, b, where="EE")


def _sum_to_json(s: ExpSum) -> list[list[str]]:
    return [[_exponent_json(q), rational_to_json(s.terms[q])] for q in s.ascending()]


@lru_cache(maxsize=1 << 16)
def _exponent_json(q: Exponent) -> str:
    """An exponent's string, kept: the entries of one softmax row (numerators and denominator) share their exponents."""
    return rational_to_json(q)


def _sum_from_json(obj: Any, where: str) -> ExpSum:
    lim = current_limits()
    if not isinstance(obj, list):
        raise ParseError(f'EE "{where}" must be a list of [exponent, coefficient] pairs')
    if len(obj) > lim.max_terms:
        raise LimitExceeded(f'EE "{where}" has {len(obj):,} terms, over the limit of {lim.max_terms:,} (raise it with --max-terms)')
    terms: dict[fmpq, fmpq] = {}
    last: fmpq | None = None
    for pair in obj:
        if not isinstance(pair, list) or len(pair) != 2:
            raise ParseError(f'EE "{where}" term must be a pair [exponent, coefficient], got {pair!r:.60}')
        q, c = rational_from_json(pair[0]), rational_from_json(pair[1])
        if abs(q) > lim.max_exponent:
            raise LimitExceeded(f"EE exponent {str(q)[:30]}, over the limit of {lim.max_exponent:,} in absolute value (raise it with --max-exponent)")
        if last is not None and not q > last:
            raise ParseError(f'EE "{where}" exponents must be strictly increasing ({last} then {q})')
        if c == 0:
            raise ParseError(f'EE "{where}" has a zero coefficient at exponent {q}')
        terms[exponent(q)] = c
        last = q
    return ExpSum(terms)


EE = ExpField()
