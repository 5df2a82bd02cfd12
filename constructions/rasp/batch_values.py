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

from exact import EENumber
from exact.expsum import ONE, ExpSum
from exact.exparray import ExpArray
from exact.ratarray import RatArray


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
        if r is None or bool(np.any(self.ee)) or bool(np.any(r.reduced().den != 1)):
            return None
        return np.broadcast_to(r.reduced().num, self.shape)

    @classmethod
    def of_ints(cls, a: np.ndarray, ints: bool) -> "Numbers":
        return cls(ExpArray.rational(RatArray.integers(a)), np.zeros(a.shape, dtype=bool), ints=ints)

    @classmethod
    def constant(cls, v: Any, n: int = 1) -> "Numbers | None":
        """A domain constant at every position (None unless it is an fmpq or an EENumber over 1)."""
        if type(v) is fmpq:
            return cls(ExpArray.rational(RatArray.constant(v, (1, n))), np.zeros((1, n), dtype=bool))
        if type(v) is EENumber and v.den is ONE:
            terms = {q: RatArray.constant(c, (1, n)) for q, c in v.num.terms.items()}
            return cls(ExpArray(terms, (1, n)), np.ones((1, n), dtype=bool))
        return None

    @classmethod
    def of_values(cls, rows: Sequence[Sequence[Any]]) -> "Numbers | None":
        """Rows of fmpq and EENumbers over 1 (one row per input), or None if another value is among them."""
        flat = [v for row in rows for v in row]
        shape = (len(rows), len(rows[0]) if rows else 0)
        kinds = set(map(type, flat))
        if not kinds <= {fmpq, EENumber}:
            return None
        ee = np.fromiter((type(v) is EENumber for v in flat), dtype=bool, count=len(flat)).reshape(shape)
        if not ee.any():
            return cls(ExpArray.rational(RatArray.from_fmpqs(flat, shape)), ee)
        sums = [v.num if type(v) is EENumber else ExpSum.constant(v) for v in flat]
        if any(type(v) is EENumber and v.den is not ONE for v in flat):
            return None
        exponents = list(dict.fromkeys(q for s in sums for q in s.terms))
        zero = fmpq(0)
        terms = {q: RatArray.from_fmpqs([s.terms.get(q, zero) for s in sums], shape) for q in exponents}
        return cls(ExpArray(terms, shape), ee)

    # -- reading back ---------------------------------------------------------------------
    def rows(self) -> list[list[Any]]:
        """Every input's sequence as the single-input evaluator holds it after its last step (lists of objects)."""
        shape = self.shape
        ee = np.broadcast_to(self.ee, shape).ravel().tolist()
        num = _broadcast(self.num, shape)
        nums = num.expsums()
        dens = _broadcast(self.den, shape).expsums() if self.den is not None else None
        rational = num.rational_part().broadcast(shape)
        p, q = (a.ravel().tolist() for a in rational.lowest_terms())
        if dens is not None:
            dp, dq = (a.ravel().tolist() for a in _broadcast(self.den, shape).rational_part().lowest_terms())
        out = []
        for i, is_ee in enumerate(ee):
            if is_ee:
                out.append(EENumber(nums[i], dens[i]) if dens is not None else EENumber(nums[i]))
            elif dens is not None:
                out.append(fmpq(p[i], q[i]) / fmpq(dp[i], dq[i]))
            else:
                out.append(fmpq(p[i], q[i]))
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
