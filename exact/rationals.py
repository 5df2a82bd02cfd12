"""Reading and writing rational numbers exactly.

User numbers (ints, Fractions, FLINT rationals, strings ``"p/q"`` and decimal
strings such as ``"0.1"`` or ``"-2.5e-3"``) all become :class:`flint.fmpq`
without rounding: ``"0.1"`` is exactly 1/10. A Python float is converted through
``float.as_integer_ratio``, i.e. to the dyadic rational it stores. NaN,
infinities, booleans and anything else are refused with a :class:`ParseError`.

Certificates store rationals as strings ``"p/q"`` in lowest terms with q > 0,
or ``"p"`` when q = 1 (see DESIGN.md, "Certificates"). :func:`rational_from_json`
accepts only that canonical spelling, so one value has one spelling.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from numbers import Integral, Rational

from flint import fmpq, fmpz

from exact.errors import LimitExceeded, ParseError
from exact.limits import current as current_limits

_CANONICAL = re.compile(r"-?(0|[1-9][0-9]*)(/[1-9][0-9]*)?")
_FRACTION = re.compile(r"\s*([+-]?[0-9]+)\s*/\s*([+-]?[0-9]+)\s*")


def parse_rational(x: object, max_digits: int | None = None) -> fmpq:
    """Convert a user-supplied number to an exact rational, or raise ParseError.

    Strings longer than the digit limit in force (:mod:`exact.limits`) are refused.
    """
    if isinstance(x, fmpq):
        return x
    if isinstance(x, bool):
        raise ParseError(f"not a number: {x!r} (booleans are not accepted as numbers)")
    if isinstance(x, (int, fmpz)):
        return fmpq(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ParseError(f"not a finite number: {x!r}")
        p, q = x.as_integer_ratio()
        return fmpq(p, q)
    if isinstance(x, Fraction):
        return fmpq(x.numerator, x.denominator)
    if isinstance(x, str):
        return _parse_string(x, max_digits if max_digits is not None else current_limits().max_digits)
    if isinstance(x, Rational):  # e.g. sympy.Rational, numpy integers via Integral
        return fmpq(int(x.numerator), int(x.denominator))
    if isinstance(x, Integral):
        return fmpq(int(x))
    if hasattr(x, "dtype") and getattr(x, "shape", None) == ():  # numpy scalar float
        return parse_rational(x.item(), max_digits)
    raise ParseError(f"not a rational number: {x!r} (of type {type(x).__name__})")


def _parse_string(s: str, max_digits: int) -> fmpq:
    _check_digits(s, max_digits)
    m = _FRACTION.fullmatch(s)
    if m:
        p, q = _int(m.group(1)), _int(m.group(2))
        if q == 0:
            raise ParseError(f"zero denominator in {s!r}")
        return fmpq(p, q)
    try:
        d = Decimal(s.strip())
    except InvalidOperation:
        raise ParseError(f"not a rational number: {s!r}") from None
    if not d.is_finite():
        raise ParseError(f"not a finite number: {s!r}")
    sign, digits, exp = d.as_tuple()
    if abs(exp) > max_digits:
        raise LimitExceeded(f"decimal exponent {exp} in {s[:40]!r} exceeds the limit of {max_digits}")
    n = fmpz("".join(map(str, digits)) or "0")
    n = -n if sign else n
    return fmpq(n * fmpz(10) ** exp) if exp >= 0 else fmpq(n, fmpz(10) ** (-exp))


def _int(s: str) -> fmpz:
    # fmpz parses any length; Python's int() stops at 4300 digits by default.
    s = s.lstrip("+")
    return -fmpz(s[1:]) if s.startswith("-") else fmpz(s)


def _check_digits(s: str, max_digits: int) -> None:
    if len(s) > 2 * max_digits + 16:
        raise LimitExceeded(f"number string of {len(s)} characters exceeds the limit of {max_digits} digits")


def rational_to_json(q: fmpq) -> str:
    """The canonical string of a rational: ``"p/q"`` in lowest terms, ``"p"`` if q = 1."""
    return q.str()


def rational_from_json(s: object, max_digits: int | None = None) -> fmpq:
    """Read a rational written canonically as ``"p/q"`` or ``"p"``; refuse anything else.

    The digit limit defaults to the one in force (:mod:`exact.limits`).
    """
    if max_digits is None:
        max_digits = current_limits().max_digits
    if not isinstance(s, str):
        raise ParseError(f"expected a rational string \"p/q\", got {_short(s)} of type {type(s).__name__}")
    _check_digits(s, max_digits)
    if not _CANONICAL.fullmatch(s):
        raise ParseError(f"malformed rational {_short(s)}: expected \"p/q\" in lowest terms or \"p\"")
    num, _, den = s.partition("/")
    if len(num.lstrip("-")) > max_digits or len(den) > max_digits:
        raise LimitExceeded(f"rational {_short(s)} has more than {max_digits} digits")
    q = fmpq(_int(num), _int(den) if den else 1)
    if q.str() != s:
        raise ParseError(f"rational {_short(s)} is not in lowest terms (canonical: {q.str()})")
    return q


def _short(x: object, n: int = 40) -> str:
    r = repr(x)
    return r if len(r) <= n else r[: n - 3] + "..."
