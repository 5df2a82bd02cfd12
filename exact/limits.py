"""Limits on what a document may contain before any computation trusts it.

A verifier reads files from strangers. Every parser in :mod:`exact` consults the
limits in force (a context variable), so that a 10^6-digit integer, an exponent
of 10^9 or a million-entry matrix is refused with a clear message instead of
being computed with.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from dataclasses import dataclass, field
from typing import Iterator

from attncert.exact.errors import ParseError


def machine_memory() -> int:
    """The memory this machine can give a run, in bytes: MemAvailable of /proc/meminfo (Linux),
    else the physical memory (os.sysconf)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 64 * 1024 * 1024  # size of one document
    max_depth: int = 64  # JSON nesting
    max_digits: int = 10_000  # digits in one numerator or denominator
    max_exponent: int = 1_000_000  # |q| for an exponent e^q in EE
    max_terms: int = 100_000  # terms in one EE numerator or denominator
    max_entries: int = 1 << 21  # entries in one matrix (a 1024 x 2048 Sinkhorn plan); elements of one RASP-language value, characters of one string
    max_nodes: int = 100_000  # nodes in one RASP graph
    # What one run may compute, from a claim's cost model (proofs/core/cost.py), for prove and verify alike.
    max_positions: int = 1 << 15  # RASP sequence length
    max_pairs: int = 1 << 28  # selection pairs in one attention layer
    max_evaluations: int = 2_000_000  # sequences (words, cases) or Sinkhorn runs in one claim
    max_precision: int = 1 << 16  # arb precision of a Sinkhorn run, in bits
    max_memory: int = field(default_factory=machine_memory)  # bytes a run is predicted to need
    max_tasks: int = 100_000  # tasks (certificates) in one sweep
    max_symbolic_terms: int = 5_000_000  # polynomial terms a for-all-inputs proof is estimated to hold
    # What one run of a RASP-language program may do (constructions/rasp/language/bounds.py).
    max_steps: int = 1_000_000  # statements, expressions, loop iterations, elements built, positions evaluated
    max_recursion: int = 200  # nested evaluations: function calls and levels of nested expressions
    max_source: int = 1 << 17  # characters of source: the program, the files it loads, the expression


#: The largest value each limit may be set to (docs/limits.md). Past them a limit would no longer hold
#: what it guards within the machine's types: Python's integer-string limit is a C int, 10^(10^8) is
#: already 41 MB and e^(10^8) near 2^(1.44*10^8), pair codes i*N + j are int64 (N <= 2^31), an arb
#: precision above 2^24 bits is refused by the Ball domain; counts stay within int64.
CEILINGS: dict[str, int] = {
    "max_bytes": 1 << 40,
    "max_depth": 1_000,
    "max_digits": 10**8,
    "max_exponent": 10**8,
    "max_terms": 10**9,
    "max_entries": 10**9,
    "max_nodes": 10**9,
    "max_positions": 1 << 31,
    "max_pairs": 1 << 62,
    "max_evaluations": 10**18,
    "max_precision": 1 << 24,
    "max_memory": 1 << 60,
    "max_tasks": 10**9,
    "max_symbolic_terms": 10**12,
    "max_steps": 10**18,
    "max_recursion": 100_000,
    "max_source": 1 << 30,
}


#: The least value of a limit, where it is not 1: a digit limit of at least 10 lets rational_to_json skip
#: the lookup for numbers below 2^33, which are nearly all it writes.
FLOORS: dict[str, int] = {"max_digits": 10}


def limit_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the limit ``name`` (not an integer, below its floor, over its ceiling), or None."""
    ceiling, floor = CEILINGS[name], FLOORS.get(name, 1)
    if not isinstance(value, int) or isinstance(value, bool):
        return f"expected a positive integer, got {value!r:.40}"
    if not floor <= value <= ceiling:
        shown = f"{value:,}" if value.bit_length() < 200 else f"a number of {value.bit_length():,} bits"
        return f"expected an integer from {floor:,} to {ceiling:,} (docs/limits.md), got {shown}"
    return None


def checked(lim: Limits) -> Limits:
    """``lim``, once every limit is a positive integer within its ceiling; a ParseError naming the first that is not."""
    for name in CEILINGS:
        problem = limit_problem(name, getattr(lim, name))
        if problem is not None:
            raise ParseError(f"limit {name}: {problem}")
    return lim


_CURRENT: contextvars.ContextVar[Limits] = contextvars.ContextVar("attncert_limits", default=Limits())


def current() -> Limits:
    return _CURRENT.get()


@contextlib.contextmanager
def limits(lim: Limits) -> Iterator[Limits]:
    """Run a block with these limits in force (each within its ceiling, or a ParseError before anything runs)."""
    checked(lim)
    token = _CURRENT.set(lim)
    # Python's own limit on int <-> decimal string conversion must not be stricter than ours.
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(max(before, lim.max_digits) if before else 0)
    try:
        yield lim
    finally:
        sys.set_int_max_str_digits(before)
        _CURRENT.reset(token)
