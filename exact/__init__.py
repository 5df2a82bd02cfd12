"""attncert.exact: number domains, exact matrices, canonical JSON and certificates.

This package knows nothing about RASP. See docs/design.md, "The number tower".
"""

from attncert.exact.domains import EE, QQ, Ball, Domain, Float, domain_from_name
from attncert.exact.eenumber import EENumber
from attncert.exact.errors import (
    AttncertError,
    CertificateError,
    ExactZeroDivision,
    LimitExceeded,
    NotInFieldError,
    ParseError,
    UndecidedError,
)
from attncert.exact.rationals import parse_rational

__all__ = [
    "QQ",
    "EE",
    "Ball",
    "Float",
    "Domain",
    "domain_from_name",
    "EENumber",
    "parse_rational",
    "AttncertError",
    "CertificateError",
    "ExactZeroDivision",
    "LimitExceeded",
    "NotInFieldError",
    "ParseError",
    "UndecidedError",
]
