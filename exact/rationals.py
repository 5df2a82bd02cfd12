"""Reading and writing rational numbers exactly.

User numbers (ints, Fractions, FLINT rationals, strings ``"p/q"`` and decimal
strings such as ``"0.1"`` or ``"-2.5e-3"``, numpy integers) all become
:class:`flint.fmpq` without rounding: ``"0.1"`` is exactly 1/10.

Binary floats (Python floats, numpy floating scalars, numpy arrays of a floating
dtype) are refused with :class:`exact.errors.FloatRefused` (a ParseError), whose
message names the value and says to write decimals as strings: the float 0.1 is
3602879701896397/2^55, so reading it would make an exact result exact about the
wrong number. Only the domains whose elements are approximations anyway (Ball,
Float) read a float, as the dyadic rational it stores, by passing
``dyadic_floats=True``. NaN, infinities, booleans and anything else are refused
with a :class:`ParseError`.

Certificates store rationals as strings ``"p/q"`` in lowest terms with q > 0,
or ``"p"`` when q = 1 (see docs/design.md, "Certificates"). :func:`rational_from_json`
accepts only that canonical spelling, so one value has one spelling.

Loading this module declares FLINT's ``fmpz`` an integer and ``fmpq`` a rational to
Python's numeric tower (``numbers.Integral``, ``numbers.Rational``), as gmpy2 does for
its own types. Python's ``Fraction`` compares with any ``numbers.Rational`` through
its numerator and denominator, so every rational attncert returns is then equal to
the same ``Fraction``, in either order (``fmpq(3, 2) == Fraction(3, 2)``), and
``Fraction(q)`` converts one. FLINT hashes both types as Python hashes ints and
Fractions, so equal values hash alike, as the tower requires. Nothing else changes:
FLINT's own operators are untouched, so exact arithmetic costs what it did.
An exact value compared with a float is unequal (FLINT's ``fmpq == 1.5`` is False;
:class:`~attncert.exact.eenumber.EENumber` does the same); :func:`float_equality_message`
says why.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from numbers import Integral, Rational
from typing import NoReturn

import numpy as np
from flint import fmpq, fmpz

from attncert.exact.errors import FloatRefused, LimitExceeded, ParseError
from attncert.exact.limits import current as current_limits

Integral.register(fmpz)
Rational.register(fmpq)

_CANONICAL = re.compile(r"-?(0|[1-9][0-9]*)(/[1-9][0-9]*)?")
_FRACTION = re.compile(r"\s*([+-]?[0-9]+)\s*/\s*([+-]?[0-9]+)\s*")


def parse_rational(
    x: object, max_digits: int | None = None, *, dyadic_floats: bool = False, where: str = "exact arithmetic"
) -> fmpq:
    """Convert a user-supplied number to an exact rational, or raise ParseError.

    Floats are refused with :class:`FloatRefused` unless ``dyadic_floats`` is set
    (only the Ball and Float domains set it), in which case a finite float is read
    as the dyadic rational it stores. Strings longer than the digit limit in force
    (:mod:`exact.limits`) are refused. ``where`` names the domain in the refusal.
    """
    if isinstance(x, fmpq):
        return x
    if isinstance(x, bool):
        raise ParseError(f"not a number: {x!r} (booleans are not accepted as numbers)")
    if isinstance(x, (int, fmpz)):
        return fmpq(x)
    if isinstance(x, (float, np.floating)):
        return dyadic_rational(x) if dyadic_floats else refuse_float(x, where)
    if isinstance(x, np.ndarray) and x.shape != ():
        refuse_float_array(x, where)
        raise ParseError(f"not a rational number: a numpy array {_one_line(x)} (convert its entries one by one)")
    if isinstance(x, Fraction):
        return fmpq(x.numerator, x.denominator)
    if isinstance(x, str):
        return _parse_string(x, max_digits if max_digits is not None else current_limits().max_digits)
    if isinstance(x, Rational):  # e.g. sympy.Rational, numpy integers via Integral
        return fmpq(int(x.numerator), int(x.denominator))
    if isinstance(x, Integral):
        return fmpq(int(x))
    if hasattr(x, "dtype") and getattr(x, "shape", None) == ():  # other numpy scalars (bool_, 0-d arrays)
        return parse_rational(x.item(), max_digits, dyadic_floats=dyadic_floats, where=where)
    raise ParseError(f"not a rational number: {x!r} (of type {type(x).__name__})")


def is_float(x: object) -> bool:
    """True for binary floats: Python floats and numpy floating scalars (np.float64, np.float32, ...)."""
    return isinstance(x, (float, np.floating))


def dyadic_rational(x: float | np.floating) -> fmpq:
    """The exact dyadic rational a finite float stores (0.1 gives 3602879701896397/2^55).

    For the domains of approximations only (Ball, Float); exact domains refuse floats.
    """
    if not math.isfinite(x):
        raise ParseError(f"not a finite number: {x!r}")
    p, q = x.as_integer_ratio()  # Python and numpy floats (float16 ... longdouble) have it
    return fmpq(p, q)


def refuse_float(x: object, where: str = "exact arithmetic", *, strings: bool = True) -> NoReturn:
    """Raise :class:`FloatRefused` naming the float x and how to write it exactly.

    ``strings=False`` where a string is not read as a number (RASP constants, which
    are tokens when they are strings): the hint is then ``Fraction(p, q)``.
    """
    raise FloatRefused(float_message(x, where, strings=strings))


def refuse_floats(*xs: object, where: str = "exact arithmetic") -> None:
    """Raise :class:`FloatRefused` if any x is a float or a numpy array of floats; else do nothing."""
    for x in xs:
        if isinstance(x, (float, np.floating)):
            refuse_float(x, where)
        if isinstance(x, np.ndarray):
            refuse_float_array(x, where)


def refuse_float_array(a: np.ndarray, where: str = "exact arithmetic") -> None:
    """Raise :class:`FloatRefused` if the numpy array a has a floating (or complex) dtype."""
    if a.dtype.kind in "fc":
        raise FloatRefused(
            f"numpy array of dtype {a.dtype} refused in {where}: {_one_line(a)} holds binary floats, "
            'not the decimals they print as; give exact entries (ints, Fractions, fmpq) or decimal strings '
            '("0.1" is exactly 1/10)'
        )


def float_message(x: object, where: str = "exact arithmetic", *, strings: bool = True) -> str:
    """One line naming the float x, the binary value it stores, and its exact decimal spelling."""
    why, decimal, text = _float_reading(x)
    if decimal is None:
        how = (
            'write decimals as strings ("0.1" is exactly 1/10)'
            if strings
            else "write the number exactly, e.g. Fraction(1, 10) or fmpq(1, 10) for 1/10 (a string here is a token, not a number)"
        )
    elif strings:
        how = f'write decimals as strings ("{text}" is exactly {decimal})'
    else:
        how = f"write the number exactly: Fraction({decimal.p}, {decimal.q}) or fmpq({decimal.p}, {decimal.q}) is {text} (a string here is a token, not a number)"
    return f"float {x!r} refused in {where}: {why}; {how}; to compare approximately, convert the exact value: float(value) == pytest.approx({x!r}) or math.isclose(float(value), {x!r})"


def float_equality_message(x: object) -> str:
    """One line saying why an exact value is unequal to the float x, and what to compare with instead.

    ``==`` between an exact value and a float is False rather than an error (a comparison
    must not raise inside ``==``), even when the float stores the same dyadic number:
    a float is never read as an exact number, so it is never equal to one.
    """
    why, decimal, text = _float_reading(x)
    how = f"compare with Fraction({decimal.p}, {decimal.q}), which is {text} exactly" if decimal is not None else "compare with an exact number (an int or a Fraction)"
    return f"an exact value is never equal to a float, so == {x!r} is False: {why}; {how}"


def _float_reading(x: object) -> tuple[str, fmpq | None, str]:
    """Why the float x is not an exact number, the decimal it prints as (None if not a short finite one), and that text."""
    try:
        finite = math.isfinite(x)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        finite = False
    if not finite:
        return "it is a binary float, and not a finite number", None, str(x)
    stored = dyadic_rational(x)  # type: ignore[arg-type]
    text = str(x)  # numpy and Python print the shortest decimal that reads back as x
    try:
        decimal: fmpq | None = _parse_string(text, 64)
    except ParseError:
        decimal = None
    if decimal is not None and len(decimal.str()) > 60:
        decimal = None
    if decimal is not None and decimal != stored and len(stored.str()) <= 60:
        return f"a float is a binary approximation (this one is {stored}, not {decimal})", decimal, text
    return "floats are binary approximations (the float 0.1 is not 1/10)", decimal, text


def _one_line(x: object, n: int = 60) -> str:
    r = " ".join(repr(x).split())
    return r if len(r) <= n else r[: n - 3] + "..."


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
        raise LimitExceeded(f"decimal exponent {exp} in {s[:40]!r}, over the limit of {max_digits:,} digits (raise it with --max-digits)")
    n = fmpz("".join(map(str, digits)) or "0")
    n = -n if sign else n
    return fmpq(n * fmpz(10) ** exp) if exp >= 0 else fmpq(n, fmpz(10) ** (-exp))


def _int(s: str) -> fmpz:
    # fmpz parses any length; Python's int() stops at 4300 digits by default.
    s = s.lstrip("+")
    return -fmpz(s[1:]) if s.startswith("-") else fmpz(s)


def _check_digits(s: str, max_digits: int) -> None:
    if len(s) > 2 * max_digits + 16:
        raise LimitExceeded(f"number string of {len(s):,} characters, over the limit of {max_digits:,} digits (raise it with --max-digits)")


def rational_to_json(q: fmpq) -> str:
    """The canonical string of a rational: ``"p/q"`` in lowest terms, ``"p"`` if q = 1 (FLINT's ``q.str()``).

    A rational whose numerator or denominator has more digits than the limit in force is refused with the
    line :func:`rational_from_json` gives for its string: what attncert writes, it reads back at the same limits.
    """
    p, d = int(q.p), int(q.q)
    pb, db = p.bit_length(), d.bit_length()
    # Python writes a small integer in decimal about twice as fast as FLINT's str.
    s = q.str() if pb > _PYTHON_DIGITS_BITS or db > _PYTHON_DIGITS_BITS else str(p) if d == 1 else f"{p}/{d}"
    # Below 2^33 a part has at most 10 digits, the least digit limit (exact.limits.FLOORS): the limit is not looked up.
    if (pb > 33 or db > 33) and max(pb, db) > current_limits().max_digits * _BITS_PER_DIGIT:
        _refuse_digits(s, current_limits().max_digits)
    return s


#: log2(10) rounded down: a number of at most k digits has fewer than k * 3.32 bits.
_BITS_PER_DIGIT = 3.32
#: Python's own int-to-decimal conversions are used below these sizes (its default limit is 4300 digits).
_PYTHON_DIGITS_BITS = 8000
_PYTHON_DIGITS = 4000


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
    _refuse_digits(s, max_digits)
    num, _, den = s.partition("/")
    if len(s) < _PYTHON_DIGITS:  # Python's int() parses a short decimal faster than fmpz
        p, d = int(num), int(den) if den else 1
    else:
        p, d = _int(num), _int(den) if den else fmpz(1)
    # The pattern fixed the shape, so the text is q's canonical one (q.str()) exactly when q is in
    # lowest terms, a denominator 1 is not written, and zero has no sign.
    if (den and (d == 1 or math.gcd(int(p), int(d)) != 1)) or (p == 0 and num[0] == "-"):
        raise ParseError(f"rational {_short(s)} is not in lowest terms (canonical: {fmpq(p, d).str()})")
    return fmpq(p, d)


def _refuse_digits(s: str, max_digits: int) -> None:
    """LimitExceeded for a canonical rational string whose numerator or denominator has more than max_digits digits."""
    _check_digits(s, max_digits)
    num, _, den = s.partition("/")
    if len(num.lstrip("-")) > max_digits or len(den) > max_digits:
        raise LimitExceeded(f"rational {_short(s)} has {max(len(num.lstrip('-')), len(den)):,} digits, over the limit of {max_digits:,} (raise it with --max-digits)")


def _short(x: object, n: int = 40) -> str:
    r = repr(x)
    return r if len(r) <= n else r[: n - 3] + "..."
