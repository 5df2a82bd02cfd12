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


__all__ = ["Domain", "QQ", "EE", "Ball", "Float", "RationalField", "ExpField", "BallField", "FloatField", "domain_from_name"]
