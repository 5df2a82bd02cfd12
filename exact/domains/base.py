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
from flint import arb

from exact.errors import ExactZeroDivision


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
        computed mean, which in EE also means one shared denominator object.
        """
        mean_of = self.group_mean(values)
        memo: dict[bytes, Any] = {}
        out: list[Any] = []
        for a, b in zip(offsets[:-1], offsets[1:]):
            if b - a <= 1:
                out.append(values[int(cols[a])] if b > a else None)
                continue
            key = cols[a:b].tobytes()
            m = memo.get(key)
            if m is None:
                m = memo[key] = mean_of(cols[a:b].tolist())
            out.append(m)
        return out

    def group_mean(self, values: Sequence[Any]) -> Callable[[list[int]], Any]:
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
