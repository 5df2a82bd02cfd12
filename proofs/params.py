"""Parsing of command-line parameter values shared by every claim."""

from __future__ import annotations

from exact.errors import ParseError


def positive_int(s: str) -> int:
    """A positive integer from a command-line string, or a one-line ParseError."""
    try:
        v = int(s)
    except ValueError:
        raise ParseError(f"expected a positive integer, got {s!r}") from None
    if v < 1:
        raise ParseError(f"expected a positive integer, got {v}")
    return v
