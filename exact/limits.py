"""Limits on what a document may contain before any computation trusts it.

A verifier reads files from strangers. Every parser in :mod:`exact` consults the
limits in force (a context variable), so that a 10^6-digit integer, an exponent
of 10^9 or a million-entry matrix is refused with a clear message instead of
being computed with.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 64 * 1024 * 1024  # size of one document
    max_depth: int = 64  # JSON nesting
    max_digits: int = 10_000  # digits in one numerator or denominator
    max_exponent: int = 1_000_000  # |q| for an exponent e^q in EE
    max_terms: int = 100_000  # terms in one EE numerator or denominator
    max_entries: int = 1_000_000  # entries in one matrix
    max_length: int = 1 << 16  # RASP sequence length to re-evaluate
    max_nodes: int = 100_000  # nodes in one RASP graph


_CURRENT: contextvars.ContextVar[Limits] = contextvars.ContextVar("attncert_limits", default=Limits())


def current() -> Limits:
    return _CURRENT.get()


@contextlib.contextmanager
def limits(lim: Limits) -> Iterator[Limits]:
    """Run a block with these limits in force."""
    token = _CURRENT.set(lim)
    try:
        yield lim
    finally:
        _CURRENT.reset(token)
