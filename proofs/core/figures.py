"""Figures for the terminal: one line on a certificate document, read from the document alone.

A claim's ``summary(doc)`` (:class:`~proofs.core.registry.Claim`) gives the figures of a
bound claim (eps and lower of ``lipschitz_approx``, the certified Sinkhorn bounds)
or why a claim does not hold (the violating grid pair, the expected and the actual
output); ``attncert prove`` prints it under its table. It reads nothing but the
document, so that the same line can be said of any certificate.

The exact values stay in the certificate. Here a rational is shown as a decimal of
a few significant digits rounded outward: an upper bound up and a lower bound down
(:func:`upper`, :func:`lower`), so that what is printed is still true.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from math import ceil, floor

#: Significant digits of a figure.
DIGITS = 4


def upper(q: str, digits: int = DIGITS) -> str:
    """A decimal >= the rational ``q`` ("p/q" as certificates record it), ``digits`` significant digits."""
    return _rounded(Fraction(q), digits, up=True)


def lower(q: str, digits: int = DIGITS) -> str:
    """A decimal <= the rational ``q``, ``digits`` significant digits."""
    return _rounded(Fraction(q), digits, up=False)


def _rounded(x: Fraction, digits: int, up: bool) -> str:
    """x rounded to ``digits`` significant digits towards +infinity (``up``) or -infinity."""
    if x == 0:
        return "0"
    a = abs(x)
    e = len(str(a.numerator)) - len(str(a.denominator))  # floor(log10 a) is e - 1 or e
    if Fraction(10) ** e > a:
        e -= 1
    shift = digits - 1 - e  # a * 10^shift has ``digits`` digits before the point
    scaled = x * Fraction(10) ** shift
    n = ceil(scaled) if up else floor(scaled)
    return str(Decimal(n).scaleb(-shift)).lower().replace("e+", "e")


def ball(mid: str, rad: str, digits: int = DIGITS) -> str:
    """The ball mid +/- rad (rationals) as an interval of decimals that contains it: [lower, upper]."""
    m, r = Fraction(mid), Fraction(rad)
    return f"[{_rounded(m - r, digits, up=False)}, {_rounded(m + r, digits, up=True)}]"


def cut(text: str, width: int = 80) -> str:
    """``text`` on one line of at most ``width`` characters."""
    return text if len(text) <= width else text[: width - 3] + "..."


def abbreviate(text: str, width: int, sep: str = ",") -> str:
    """``text`` within ``width`` characters: whole, or cut after the last ``sep`` that leaves room for "…" (a
    parameter list loses whole parameters, never half a word); cut at the width only when no separator fits."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    at = head.rfind(sep)
    return (head[: at + 1] if at > 0 else head) + "…"
