"""attncert.exact: number domains, exact matrices, canonical JSON and certificates.

This package knows nothing about RASP. See docs/design.md, "The number tower".
"""

from typing import Any

from attncert.exact.errors import (
    AttncertError,
    CertificateError,
    ExactZeroDivision,
    LimitExceeded,
    NotInFieldError,
    ParseError,
    UndecidedError,
)

#: Names loaded on first use (PEP 562), so that importing a light module of the package (its errors,
#: limits, canonical JSON) does not load FLINT, mpmath and the domains: the command line starts fast.
_LAZY = {
    "EE": "attncert.exact.domains", "QQ": "attncert.exact.domains", "Ball": "attncert.exact.domains",
    "Float": "attncert.exact.domains", "Domain": "attncert.exact.domains", "domain_from_name": "attncert.exact.domains",
    "EENumber": "attncert.exact.eenumber", "parse_rational": "attncert.exact.rationals",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'attncert.exact' has no attribute {name!r}")


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
