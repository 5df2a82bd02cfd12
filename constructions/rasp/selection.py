"""Selection matrices stored sparsely, as sorted pair codes.

A selection of n_q queries over n_k keys is the set of selected pairs (q, k),
stored as the sorted int64 array of codes q * n_k + k. Gathers and row-wise
selectors select O(n) pairs, so a uniform construction on tens of thousands of
positions never builds an n x n boolean matrix; dense selectors (TRUE, LEQ)
cost what their pairs cost, which the mean in Aggregate has to touch anyway.

Comparison selectors are built from sorted key codes: for each query the
selected keys of EQ form one run of the sorted keys, and those of LT, LEQ,
GT, GEQ a prefix or suffix, found with ``searchsorted``. And / or / not are
set operations on the codes.
"""

from __future__ import annotations

import numpy as np

from attncert.exact.groups import grouping
from attncert.exact.limits import current as current_limits


class SelectionTooLarge(ValueError):
    pass


class Selection:
    __slots__ = ("pairs", "n_queries", "n_keys", "_grouping")

    def __init__(self, pairs: np.ndarray, n_queries: int, n_keys: int):
        self.pairs, self.n_queries, self.n_keys = pairs, n_queries, n_keys
        self._grouping: tuple[np.ndarray, list[list[int]]] | None = None

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_dense(cls, m: np.ndarray) -> "Selection":
        nq, nk = m.shape
        return cls(np.flatnonzero(m.ravel()).astype(np.int64), nq, nk)

    @classmethod
    def full(cls, nq: int, nk: int) -> "Selection":
        _check_size(nq * nk)
        return cls(np.arange(nq * nk, dtype=np.int64), nq, nk)

    @classmethod
    def empty(cls, nq: int, nk: int) -> "Selection":
        return cls(np.zeros(0, dtype=np.int64), nq, nk)

    @classmethod
    def compare(cls, keys: np.ndarray, queries: np.ndarray, op: str) -> "Selection":
        """Pairs (q, k) with keys[k] op queries[q], for op in == != < <= > >= (codes are numbers)."""
        nq, nk = len(queries), len(keys)
        if op == "!=":
            return ~cls.compare(keys, queries, "==")
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        lo = np.searchsorted(sk, queries, side="left")
        hi = np.searchsorted(sk, queries, side="right")
        zero, end = np.zeros(nq, dtype=np.int64), np.full(nq, nk, dtype=np.int64)
        start, stop = {
            "==": (lo, hi),
            "<": (zero, lo),
            "<=": (zero, hi),
            ">": (hi, end),
            ">=": (lo, end),
        }[op]
        counts = (stop - start).astype(np.int64)
        total = int(counts.sum())
        _check_size(total)
        rows = np.repeat(np.arange(nq, dtype=np.int64), counts)
        first = np.repeat(start.astype(np.int64) - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        cols = order[first + np.arange(total, dtype=np.int64)]
        pairs = rows * nk + cols
        if nk > 1 and not bool(np.all(order[1:] > order[:-1])):  # keys not already in order
            pairs.sort()
        return cls(pairs, nq, nk)

    # -- boolean algebra ----------------------------------------------------------------
    def _same_shape(self, other: "Selection") -> None:
        if (self.n_queries, self.n_keys) != (other.n_queries, other.n_keys):
            raise ValueError("selections of different shapes cannot be combined")

    def __and__(self, other: "Selection") -> "Selection":
        self._same_shape(other)
        return Selection(np.intersect1d(self.pairs, other.pairs, assume_unique=True), self.n_queries, self.n_keys)

    def __or__(self, other: "Selection") -> "Selection":
        self._same_shape(other)
        return Selection(np.union1d(self.pairs, other.pairs), self.n_queries, self.n_keys)

    def __invert__(self) -> "Selection":
        n = self.n_queries * self.n_keys
        _check_size(n - len(self.pairs))
        keep = np.ones(n, dtype=bool)
        keep[self.pairs] = False
        return Selection(np.flatnonzero(keep).astype(np.int64), self.n_queries, self.n_keys)

    # -- reading ------------------------------------------------------------------------
    def widths(self) -> np.ndarray:
        return np.bincount(self.pairs // self.n_keys, minlength=self.n_queries)

    def csr(self) -> tuple[np.ndarray, list[int]]:
        """(cols, offsets): query q selects cols[offsets[q]:offsets[q+1]], in increasing order."""
        return self.pairs % self.n_keys, [0] + np.cumsum(self.widths()).tolist()

    def grouping(self) -> tuple[np.ndarray, list[list[int]]]:
        """Which mean each query reads (:func:`exact.groups.grouping`); computed once per selection,
        so a selection cached per length (every construction's) is grouped once."""
        if self._grouping is None:
            cols, offsets = self.csr()
            self._grouping = grouping(cols, offsets, self.n_keys)
        return self._grouping

    def to_dense(self) -> np.ndarray:
        m = np.zeros(self.n_queries * self.n_keys, dtype=bool)
        m[self.pairs] = True
        return m.reshape(self.n_queries, self.n_keys)


def _check_size(n: int) -> None:
    limit = current_limits().max_pairs
    if n > limit:
        raise SelectionTooLarge(f"a selection of {n:,} pairs, over the limit of {limit:,} (raise it with --max-pairs)")
