"""Values of a batch evaluation: numeric sequences over a batch as exact arrays, with their types.

A :class:`Numbers` is what the single-input evaluator (:mod:`.evaluate`) holds
for one data-dependent sequence, for every input of a batch at once: entry
(b, t) is the value at position t on input b, num / den with num and den in
Q[e^Q] (:class:`~exact.exparray.ExpArray`; den absent means 1). The evaluator's
values carry a type as well as a value, and the batch keeps it so that reading
an entry back gives the very object the single-input evaluator gives: where
``ee`` is False the entry is an ``fmpq`` (in QQ, and for EE's rationals), where
it is True an :class:`~exact.EENumber`, built as ``EENumber(num, den)`` (so with
the same light normal form). ``ints`` records that the single-input evaluator
holds the sequence as an int64 array (selector widths, integer maps of them),
which is what a function falling back to it per input must be handed.

Arrays are (batch, positions), or (1, positions) for a sequence shared by the
batch; operations broadcast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from flint import fmpq

from attncert.exact import EENumber
from attncert.exact.expsum import E0, ONE
from attncert.exact.exparray import MAX_EXPONENTS, ExpArray
from attncert.exact.ratarray import RatArray


@dataclass(frozen=True)
class Numbers:
    """Exact numeric sequences over a batch (see the module docstring)."""

    num: ExpArray
    ee: np.ndarray  # bool, broadcast against num: an EENumber (True) or an fmpq (False)
    den: ExpArray | None = None
    ints: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(self.num.shape, np.shape(self.ee))

    @property
    def plain(self) -> bool:
        """No denominator: an element of Q[e^Q] per entry (what the arithmetic forms take)."""
        return self.den is None

    def rational(self) -> RatArray | None:
        """The values as rationals, if every entry is one (no denominator, no term but e^0)."""
        if self.den is not None or not bool(self.num.rational_entries().all()):
            return None
        return self.num.rational_part().broadcast(self.shape)

    def integers(self) -> np.ndarray | None:
        """The values as an int64 array, if every entry is an integer held as an fmpq."""
        r = self.rational()
        if r is None or bool(np.any(self.ee)):
            return None
        r = r.reduced()
        return None if bool(np.any(r.den != 1)) else np.broadcast_to(r.num, self.shape)

    def fraction(self) -> tuple[ExpArray, ExpArray]:
        """(num, den) as arrays of Q[e^Q] (den 1 where there is none)."""
        one = ExpArray.rational(RatArray.constant(fmpq(1), (1, 1)))
        return self.num, self.den if self.den is not None else one

    @classmethod
    def concat(cls, parts: Sequence["Numbers"]) -> "Numbers":
        """The sequences side by side (positions of parts[0] first), broadcast over the batch."""
        rows = max(p.shape[0] for p in parts)
        exponents = list(dict.fromkeys(q for p in parts for q in p.num.terms))
        terms = {}
        for q in exponents:
            pieces = [p.num.terms.get(q) or RatArray.zeros(p.shape) for p in parts]
            num = np.concatenate([np.broadcast_to(c.num, (rows, c.shape[-1])) for c in pieces], axis=1)
            if all(c.den.ndim <= 1 for c in pieces):  # denominators per position stay so
                den = np.concatenate([np.broadcast_to(c.den, c.shape[-1:]) for c in pieces])
            else:
                den = np.concatenate([np.broadcast_to(c.den, (rows, c.shape[-1])) for c in pieces], axis=1)
            terms[q] = RatArray(num, den)
        ee = np.concatenate([np.broadcast_to(p.ee, (rows, p.shape[-1])) for p in parts], axis=1)
        return cls(ExpArray(terms, ee.shape), ee)

    @classmethod
    def of_ints(cls, a: np.ndarray, ints: bool) -> "Numbers":
        return cls(ExpArray.rational(RatArray.integers(a)), np.zeros((1, 1), dtype=bool), ints=ints)

    @classmethod
    def constant(cls, v: Any) -> "Numbers | None":
        """A domain constant, as a (1, 1) array that broadcasts (None unless it is an fmpq or an EENumber over 1)."""
        if type(v) is fmpq:
            return cls(ExpArray.rational(RatArray.constant(v, (1, 1))), np.zeros((1, 1), dtype=bool))
        if type(v) is EENumber and v.den is ONE:
            terms = {q: RatArray.constant(c, (1, 1)) for q, c in v.num.terms.items()}
            return cls(ExpArray(terms, (1, 1)), np.ones((1, 1), dtype=bool))
        return None

    @classmethod
    def of_values(cls, rows: Sequence[Sequence[Any]]) -> "Numbers | None":
        """Rows of fmpq and EENumbers over 1 (one row per input), or None if another value is among them."""
        flat = [v for row in rows for v in row]
        shape = (len(rows), len(rows[0]) if rows else 0)
        kinds = set(map(type, flat))
        if not kinds <= {fmpq, EENumber}:
            return None
        if EENumber not in kinds:
            return cls(ExpArray.rational(RatArray.from_fmpqs(flat, shape)), np.zeros(shape, dtype=bool))
        found: dict[Any, None] = {E0: None}
        for v in flat:
            if type(v) is EENumber:
                if v.den is not ONE:
                    return None
                found.update(dict.fromkeys(v.num.terms))
                if len(found) > MAX_EXPONENTS:  # as ExpArray.bounded would refuse, before building any array
                    return None
        ee = np.fromiter((type(v) is EENumber for v in flat), dtype=bool, count=len(flat)).reshape(shape)
        zero = fmpq(0)
        terms = {}
        for q in found:
            if q == 0:
                column = [v.num.terms.get(q, zero) if type(v) is EENumber else v for v in flat]
            else:
                column = [v.num.terms.get(q, zero) if type(v) is EENumber else zero for v in flat]
            terms[q] = RatArray.from_fmpqs(column, shape)
        return cls(ExpArray(terms, shape), ee)

    # -- reading back ---------------------------------------------------------------------
    def rows(self) -> list[list[Any]]:
        """Every input's sequence as the single-input evaluator holds it after its last step (lists of objects)."""
        shape = self.shape
        ee = np.broadcast_to(self.ee, shape).ravel()
        p, q = (a.ravel().tolist() for a in self.num.rational_part().broadcast(shape).lowest_terms())
        if self.den is not None:  # an fmpq divided by an fmpq: the divisor's rational part
            dp, dq = (a.ravel().tolist() for a in _broadcast(self.den, shape).rational_part().lowest_terms())
            out = [None if e else fmpq(a, b) / fmpq(c, d) for a, b, c, d, e in zip(p, q, dp, dq, ee.tolist())]
        else:
            out = [fmpq(a, b) for a, b in zip(p, q)]
        at = np.flatnonzero(ee)
        if len(at):  # EENumbers, built as the single-input evaluator builds them: EENumber(num, den)
            nums = _broadcast(self.num, shape).expsums(at)
            dens = _broadcast(self.den, shape).expsums(at) if self.den is not None else None
            for k, i in enumerate(at.tolist()):
                out[i] = EENumber(nums[k], dens[k]) if dens is not None else EENumber(nums[k])
        width = shape[-1]
        return [out[b * width : (b + 1) * width] for b in range(shape[0])]

def _broadcast(x: ExpArray, shape: tuple[int, ...]) -> ExpArray:
    return ExpArray({q: c.broadcast(shape) for q, c in x.terms.items()}, shape)


@dataclass
class Tokens:
    """The input tokens of a batch: each input's list (as the evaluator's ``tokens`` holds it), and, where
    every token is a number or a pair (number, tag), what ``token_value`` and ``token_tag`` give, as arrays."""

    length: int
    size: int
    lists: list[list[Any]] | None = None
    value: Numbers | None = None
    tag: Numbers | None = None
    #: No token is a pair: each token is its own value.
    plain: bool = False

    def row(self, b: int) -> list[Any]:
        if self.lists is None:  # built from arrays: every token is its value
            self.lists = self.value.rows()
        return self.lists[b]
