"""The number tower: QQ (exact), EE (exact, with e^Q), Ball(prec) (rigorous), Float (agreement)."""

from exact.domains.ball import Ball, BallField
from exact.domains.base import Domain
from exact.domains.ee import EE, ExpField
from exact.domains.floats import Float, FloatField
from exact.domains.qq import QQ, RationalField
from exact.errors import ParseError


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

    from exact.eenumber import EENumber
    from exact.rationals import is_float

    if isinstance(x, EENumber):
        return EE
    if isinstance(x, arb):
        from flint import ctx

        return Ball(ctx.prec)
    if is_float(x):  # Python and numpy floats
        return Float
    return QQ


__all__ = ["domain_of", "Domain", "QQ", "EE", "Ball", "Float", "RationalField", "ExpField", "BallField", "FloatField", "domain_from_name"]
