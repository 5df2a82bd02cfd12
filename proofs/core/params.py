"""Parsing of command-line parameter values shared by every claim."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from attncert.exact.errors import ParseError

if TYPE_CHECKING:
    from flint import fmpq


def _int_at_least(s: str, low: int, what: str) -> int:
    """An integer >= low from a command-line string, or a one-line ParseError naming ``what`` it must be."""
    try:
        v = int(s)
    except ValueError:
        raise ParseError(f"expected a {what} integer, got {s!r:.40}") from None
    if v < low:
        raise ParseError(f"expected a {what} integer, got {v}")
    return v


def positive_int(s: str) -> int:
    """A positive integer from a command-line string, or a one-line ParseError."""
    return _int_at_least(s, 1, "positive")


def nonnegative_int(s: str) -> int:
    """A non-negative integer from a command-line string, or a one-line ParseError."""
    return _int_at_least(s, 0, "non-negative")


#: The largest iteration budget of a float or mpmath reference run (10^6 mpmath iterations of an 8 x 8
#: Sinkhorn already take hours).
MAX_ITERATIONS = 10**6


def iteration_budget(s: str) -> int:
    """An iteration budget: a positive integer of at most MAX_ITERATIONS, or a one-line ParseError."""
    v = positive_int(s)
    if v > MAX_ITERATIONS:
        raise ParseError(f"expected an iteration budget of at most {MAX_ITERATIONS:,}, got {v:,}")
    return v


def rational_list(s: str) -> list[fmpq]:
    """'1/5,1/20,0.001' -> exact rationals; ParseError on anything else (or on an empty list)."""
    from attncert.exact.rationals import parse_rational  # FLINT loads with the first number, not when the command line starts

    items = [t for t in str(s).split(",") if t.strip()]
    if not items:
        raise ParseError(f"expected a comma-separated list of numbers, got {s!r}")
    return [parse_rational(t.strip()) for t in items]


def int_list(s: str) -> list[int]:
    """'1,2,3' -> [1, 2, 3]: a non-empty list of positive integers, or a one-line ParseError."""
    try:
        v = [int(t) for t in str(s).split(",") if t.strip()]
    except ValueError:
        raise ParseError(f"expected a comma-separated list of positive integers, got {s!r}") from None
    if not v or min(v) < 1:
        raise ParseError(f"expected a comma-separated list of positive integers, got {s!r}")
    return v


def size_values(spec: str, option: str = "--sizes") -> dict[str, list[str]]:
    """``"n=2,3,d=1"`` -> ``{"n": ["2", "3"], "d": ["1"]}``: each ``NAME=V`` starts a name, a bare value
    adds one to the name before it (values stay text, for the claim's own parameter types). The one
    spelling of ``--sizes`` on every verb; a one-line ParseError naming ``option`` for anything else."""
    sizes: dict[str, list[str]] = {}
    name = None
    for item in [t.strip() for t in str(spec).split(",")]:
        key, eq, value = item.partition("=")
        if eq:
            name = key.strip()
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise ParseError(f"{option}: expected NAME=VALUE, got {item!r:.40}")
            item = value.strip()
        if name is None or not item:
            raise ParseError(f"{option}: expected NAME=V1,V2,... such as n=4,d=3, got {spec!r:.60}")
        sizes.setdefault(name, []).append(item)
    return {k: list(dict.fromkeys(v)) for k, v in sizes.items()}


def positive_rational(s: object, name: str = "eps") -> fmpq:
    """An exact rational > 0 (a temperature, a target, a tolerance), or a one-line ParseError naming it."""
    from attncert.exact.rationals import parse_rational

    v = parse_rational(s)
    if not v > 0:
        raise ParseError(f"{name} must be > 0, got {v}")
    return v
