"""The interface every number domain offers (docs/design.md, "The number tower").

A domain is an object, not a type: ``QQ``, ``EE`` and ``Float`` are singletons
and ``Ball(prec)`` makes one domain per precision. Elements are the domain's
native Python values (``fmpq``, :class:`EENumber`, ``arb``, ``float``) and use
the ordinary operators; the domain supplies what operators cannot express
uniformly: conversion, exp, exact sign, JSON, enclosure and a working context.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from typing import Any, Callable, ContextManager, Iterable, Sequence

import numpy as np
from flint import arb, fmpq, fmpz

from attncert.exact.errors import ExactZeroDivision, LimitExceeded, NotInFieldError, NotRealError
from attncert.exact.groups import grouping, take


class Domain(ABC):
    """Abstract number domain."""

    #: Short name used in certificates and on the command line.
    name: str = ""
    #: True iff equality and sign are decided exactly (QQ, EE).
    exact: bool = False
    #: What a comparison in this domain establishes, as written in certificates.
    relation: str = "agreement"

    @abstractmethod
    def convert(self, x: object) -> Any:
        """Bring a user number or an element of a smaller domain into this domain."""

    def native(self, x: object) -> Any:
        """The cheapest representation of x in this domain, for evaluators.

        Equal to :meth:`convert` except in EE, where rationals stay FLINT rationals
        (EE contains QQ, and rational arithmetic is far cheaper than EE arithmetic).
        """
        return self.convert(x)

    def zero(self) -> Any:
        return self.convert(0)

    def one(self) -> Any:
        return self.convert(1)

    @abstractmethod
    def exp(self, x: Any) -> Any:
        """e^x in this domain, or a clear error if it leaves the domain."""

    @abstractmethod
    def sign(self, x: Any) -> int:
        """-1, 0 or 1. Exact domains decide it; Ball raises UndecidedError when it cannot."""

    def div(self, a: Any, b: Any) -> Any:
        if self.exact and self.sign(b) == 0:
            raise ExactZeroDivision(f"division by an exact zero in {self.name}: {a} / {b}")
        return a / b

    def lt(self, a: Any, b: Any) -> bool:
        return self.sign(a - b) < 0

    def eq(self, a: Any, b: Any) -> bool:
        return self.sign(a - b) == 0

    def max(self, a: Any, b: Any) -> Any:
        return b if self.lt(a, b) else a

    def min(self, a: Any, b: Any) -> Any:
        return a if self.lt(a, b) else b

    def relu(self, x: Any) -> Any:
        return x if self.sign(x) > 0 else self.zero()

    def power(self, x: Any, y: Any) -> Any:
        """x^y. For an integer y it is x·x·…·x (|y| factors; x^-k = 1/x^k), in every domain.

        For a non-integer rational y = p/q (lowest terms) and a rational x = a/b >= 0
        (lowest terms), x^y is rational iff a and b are perfect q-th powers
        (4^(1/2) = 2); otherwise it is an irrational algebraic number, which is not in
        EE either: by Lindemann–Weierstrass, sum c_i e^(r_i) = alpha with distinct
        rational r_i and rational c_i forces alpha = c_0, a rational. So exact domains
        return the exact root or raise NotInFieldError, and Ball encloses
        (:meth:`real_power`).
        """
        k = integer_value(y)
        if k is None:  # the approximate domains convert the base themselves, after signing it exactly if they can
            return self.real_power(self.native(x) if self.exact else x, y)
        x = self.native(x)
        if isinstance(x, fmpq):
            _refuse_huge_power(x, k)
        p = x ** abs(k)
        return p if k >= 0 else self.div(self.one(), p)

    def real_power(self, x: Any, y: Any) -> Any:
        """x^y for a non-integer y: the exact rational root when there is one, else NotInFieldError."""
        if self.sign(x) < 0:
            raise NotRealError(f"{x} ^ {y}: a negative number to a non-integer power is not a real number")
        if isinstance(x, fmpq) and isinstance(y, fmpq):
            root = _exact_root(x, int(y.q))
            if root is not None:
                p = self.native(root ** abs(int(y.p)))
                return p if y > 0 else self.div(self.one(), p)
        raise NotInFieldError(f"{x} ^ {y} is irrational, so not in {self.name}; it can only be enclosed (Ball)")

    def sum(self, values: Iterable[Any]) -> Any:
        total = self.zero()
        for v in values:
            total = total + v
        return total

    def means(self, values: Sequence[Any], cols: np.ndarray, offsets: Sequence[int]) -> list[Any]:
        """Row means of a selection in CSR form: row r selects cols[offsets[r]:offsets[r+1]].

        Entry r is (1/|G_r|) sum_{i in G_r} values[i], values[i] itself when |G_r| = 1,
        and None when G_r is empty. This is the averaging step of RASP's Aggregate.
        Rows that select the same keys (all queries of one softmax row, say) share one
        computed mean, which in EE also means one shared denominator object
        (:mod:`exact.groups`).
        """
        index, groups = grouping(cols, offsets, len(values))
        return take(list(values) + self.group_means(values, groups) + [None], index)

    def group_means(self, values: Sequence[Any], groups: Sequence[Sequence[int]]) -> list[Any]:
        """(1/|G|) sum_{i in G} values[i] for each group G of at least two indices."""
        mean_of = self.group_mean(values)
        return [mean_of(g) for g in groups]

    def group_mean(self, values: Sequence[Any]) -> Callable[[Sequence[int]], Any]:
        """A function mapping a list of at least two indices to the mean of those values."""
        return lambda g: self.div(self.sum(values[i] for i in g), self.native(len(g)))

    @abstractmethod
    def to_json(self, x: Any) -> Any:
        """The canonical JSON form of an element (docs/design.md, "Certificates")."""

    @abstractmethod
    def from_json(self, obj: Any) -> Any:
        """Read an element written by :meth:`to_json`; ParseError on anything else."""

    @abstractmethod
    def enclose(self, x: Any, prec: int = 128) -> arb:
        """A rigorous arb ball containing the value of x."""

    def context(self) -> ContextManager[None]:
        """A context in which element arithmetic runs (Ball sets FLINT's precision)."""
        return contextlib.nullcontext()

    def __repr__(self) -> str:
        return self.name


def integer_value(y: Any) -> int | None:
    """y as a Python int if it is an exact integer (int, fmpz, fmpq with denominator 1, an exact
    integer ball or float), else None."""
    if isinstance(y, bool):
        return None
    if isinstance(y, int):
        return y
    if isinstance(y, fmpq):
        return int(y.p) if y.q == 1 else None
    if isinstance(y, fmpz):
        return int(y)
    if isinstance(y, arb):
        return int(y.unique_fmpz()) if y.is_exact() and y.is_integer() else None
    if isinstance(y, float):
        return int(y) if y.is_integer() else None
    return None


def _exact_root(x: fmpq, q: int) -> fmpq | None:
    """The rational r >= 0 with r^q = x, if there is one."""
    a, b = fmpz(x.p).root(q), fmpz(x.q).root(q)
    return fmpq(a, b) if a**q == x.p and b**q == x.q else None


def _refuse_huge_power(x: fmpq, k: int) -> None:
    """Refuse x^k before computing it when its numerator or denominator would pass the digit limit."""
    from attncert.exact.limits import current

    bits = max(int(x.p).bit_length(), int(x.q).bit_length()) - 1  # x^k has at least bits*|k| bits
    digits = bits * abs(k) * 30103 // 100000  # log10(2) = 0.30103
    limit = current().max_digits
    if digits > limit:
        raise LimitExceeded(f"{x} ^ {k} would have about {digits:,} digits, over the limit of {limit:,} (raise it with --max-digits)")
