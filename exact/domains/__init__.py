"""The number tower: QQ (exact), EE (exact, with e^Q), Ball(prec) (rigorous), Float (agreement)."""

from typing import Callable, Iterable, TypeVar

from attncert.exact.domains.ball import Ball, BallField
from attncert.exact.domains.base import Domain
from attncert.exact.domains.ee import EE, ExpField
from attncert.exact.domains.floats import Float, FloatField
from attncert.exact.domains.qq import QQ, RationalField
from attncert.exact.errors import NotInFieldError, ParseError

#: Working precision of the enclosures made when a value leaves the exact fields.
ENCLOSURE_BITS = 128
T = TypeVar("T")


def domain_from_name(name: str) -> Domain:
    """Parse a domain name as written in certificates: QQ, EE, Float, Ball(prec)."""
    fixed = {"QQ": QQ, "EE": EE, "Float": Float}
    if name in fixed:
        return fixed[name]
    if isinstance(name, str) and name.startswith("Ball(") and name.endswith(")") and name[5:-1].isdigit():
        return Ball(int(name[5:-1]))
    raise ParseError(f"unknown domain {name!r}: expected QQ, EE, Float or Ball(prec)")


def domain_of(x: object) -> Domain:
    """The smallest domain whose native type x has (ints and rationals are QQ)."""
    from flint import arb

    from attncert.exact.eenumber import EENumber
    from attncert.exact.rationals import is_float

    if isinstance(x, EENumber):
        return EE
    if isinstance(x, arb):
        from flint import ctx

        return Ball(ctx.prec)
    if is_float(x):  # Python and numpy floats
        return Float
    return QQ


def in_smallest_domain(compute: Callable[[Domain], T], bits: int = ENCLOSURE_BITS, least: Domain = QQ) -> tuple[T, Domain]:
    """``compute(D)`` in the first of QQ, EE, Ball(bits), from ``least`` on, where it does not leave the domain.

    A result found in QQ or EE is exact; one from Ball is a rigorous enclosure, and the
    returned domain says which (its ``relation``: exact_equal or enclosure). ``least``
    skips the fields that cannot hold the operands (an EE number, a ball).
    """
    exact_fields = () if isinstance(least, BallField) else (EE,) if least is EE else (QQ, EE)
    for d in exact_fields:
        try:
            with d.context():
                return compute(d), d
        except NotInFieldError:
            continue
    ball = Ball(bits)
    with ball.context():
        return compute(ball), ball


def least_domain(values: Iterable[object]) -> Domain:
    """The first of QQ, EE, Ball that holds every value (an arb needs Ball, an EENumber EE)."""
    found: Domain = QQ
    for v in values:
        d = domain_of(v)
        if isinstance(d, BallField):
            return d
        if d is EE:
            found = EE
    return found

__all__ = ["in_smallest_domain", "least_domain", "ENCLOSURE_BITS", "domain_of", "Domain", "QQ", "EE", "Ball", "Float", "RationalField", "ExpField", "BallField", "FloatField", "domain_from_name"]
