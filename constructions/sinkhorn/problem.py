"""The data of a Sinkhorn problem, read exactly and validated once.

A problem is a cost matrix C (n x m), two marginals a (length n) and b
(length m) with positive masses and equal totals, and a temperature eps > 0.
Every number is read as an exact rational (:func:`exact.parse_rational`), so
validation is exact: "equal totals" means sum(a) == sum(b) in QQ. The cost may
instead be a :class:`CostEnclosure`: a cost that is exact in EE (or known only
through a forward pass in arb) and is enclosed at whatever precision a run
needs, as a Sinkhorn Transformer's cost -<Q, K> is. Floats are
refused unless the caller passes ``dyadic_floats=True`` (the Ball and Float
paths of :func:`constructions.sinkhorn.sinkhorn`, whose inputs may be float
data), and then a float becomes the dyadic rational it stores. Bad input raises
one :class:`SinkhornInputError` naming what is wrong.

Also here: seeded generators of random problems with small-height rational
entries, shared by the proof scripts, the tests and the benchmark.
"""

from __future__ import annotations

import random
from itertools import chain
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np
from flint import arb, fmpq

from attncert.exact.domains.qq import QQ
from attncert.exact.errors import ParseError
from attncert.exact.matrices import Rows, convert_rows, to_fmpq_mat
from attncert.exact.rationals import dyadic_rational, is_float, parse_rational


class SinkhornInputError(ParseError):
    """Marginals, cost or temperature that do not define a Sinkhorn problem."""


@runtime_checkable
class CostEnclosure(Protocol):
    """A cost matrix that is not rational: enclosed entrywise at any requested precision.

    ``exact`` says whether the entries are exact numbers (EE) that the balls
    enclose, or values known only as enclosures (a forward pass that left EE).
    """

    exact: bool

    @property
    def shape(self) -> tuple[int, int]: ...

    def balls(self, prec: int) -> list[list[arb]]:
        """Balls containing C_ij, with about ``prec`` bits of accuracy."""
        ...


@dataclass(frozen=True)
class Problem:
    """S_eps(C; a, b): cost C (n x m, rational or a CostEnclosure), marginals a, b (equal totals), temperature eps."""

    C: Rows | CostEnclosure
    a: list[fmpq]
    b: list[fmpq]
    eps: fmpq

    @cached_property
    def rational(self) -> bool:
        """Whether C is a rational matrix (else a CostEnclosure)."""
        return not isinstance(self.C, CostEnclosure)

    @property
    def n(self) -> int:
        return len(self.a)

    @property
    def m(self) -> int:
        return len(self.b)

    @cached_property
    def integer_cost(self) -> tuple[np.ndarray, int]:
        """(Z, D) with C = Z / D exactly, D the least common denominator (rational C only).

        Z is the narrowest integer array in which differences of differences of its entries
        cannot overflow (Delta sums two such differences): int32 if every |Z_ij| < 2^28, int64
        if < 2^60, else Python integers (dtype object).
        """
        if not self.rational:
            raise SinkhornInputError("the cost is not rational: it has no integer form")
        num, den = to_fmpq_mat(self.C).numer_denom()  # FLINT: one common denominator
        entries = num.entries()
        try:
            Z = np.fromiter(entries, dtype=np.int64, count=len(entries))
            top = np.abs(Z).max() if len(Z) else 0
            if top >= 2**60:
                raise OverflowError
            if top < 2**28:
                Z = Z.astype(np.int32)  # half the memory traffic in Delta's broadcast
        except OverflowError:
            Z = np.array([int(x) for x in entries], dtype=object)
        return Z.reshape(self.n, self.m), int(den)

    @cached_property
    def log_kernel_float(self) -> np.ndarray:
        """-C/eps in float64: for warm starts and float comparisons only, never for a certificate."""
        if not self.rational:
            return -np.array([[float(x.mid()) for x in row] for row in self.C.balls(64)]) / float(self.eps)
        Z, den = self.integer_cost
        return -Z.astype(float) / float(den * self.eps)

    def float_marginals(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([float(x) for x in self.a]), np.array([float(x) for x in self.b])


def as_lists(x: Any) -> Any:
    """A numpy array (or anything with ``tolist``) as nested lists of Python numbers; anything else unchanged."""
    return x.tolist() if hasattr(x, "tolist") else x


def _rational_rows(C: Any) -> Rows | None:
    """C itself if it is already a non-empty rectangular list of lists of fmpq (a fast path), else None."""
    if isinstance(C, list) and C and all(isinstance(r, list) and len(r) == len(C[0]) for r in C) and C[0]:
        if set(map(type, chain.from_iterable(C))) == {fmpq}:
            return [list(r) for r in C]
    return None


def read_vector(x: Any, name: str, dyadic_floats: bool = False) -> list[fmpq]:
    """A non-empty vector of exact rationals; SinkhornInputError if x is not one.

    Floats are refused unless ``dyadic_floats`` (then each is its exact binary value).
    """
    x = as_lists(x)
    if not isinstance(x, Sequence) or isinstance(x, (str, bytes)) or not x:
        raise SinkhornInputError(f"marginal {name} must be a non-empty list of numbers")
    return [parse_rational(v, dyadic_floats=dyadic_floats) for v in x]


def read_marginal(x: Any, name: str, dyadic_floats: bool = False) -> list[fmpq]:
    """A vector of strictly positive masses."""
    v = read_vector(x, name, dyadic_floats)
    for i, w in enumerate(v):
        if w <= 0:
            raise SinkhornInputError(f"marginal {name} must have positive masses, but {name}[{i}] = {w}")
    return v


def read_problem(
    C: Any, a: Any, b: Any, eps: Any, total_rtol: fmpq = fmpq(0), dyadic_floats: bool = False
) -> Problem:
    """Read and validate a Sinkhorn problem.

    ``total_rtol`` allows |sum a - sum b| <= total_rtol * sum a; it is 0 (exact
    equality) except for the Float comparison path, whose inputs are often
    decimal data already rounded to doubles. Floats are refused
    (:class:`exact.errors.FloatRefused`, a ParseError) unless ``dyadic_floats``,
    which reads each float as the dyadic rational it stores.
    """
    if isinstance(C, CostEnclosure):
        return Problem(C, *_marginals_and_eps(C.shape, a, b, eps, total_rtol, dyadic_floats))
    C = as_lists(C)
    if isinstance(C, list) and C and not isinstance(C[0], (list, tuple)):
        raise SinkhornInputError(
            "the cost must be a matrix (a list of rows), this is the order sinkhorn(C, a, b, eps); "
            "for POT's order sinkhorn(a, b, M, reg) use attncert.sinkhorn"
        )
    rows = _rational_rows(C)
    try:
        if rows is None and dyadic_floats and isinstance(C, list):
            C = [[dyadic_rational(x) if is_float(x) else x for x in r] if isinstance(r, list) else r for r in C]
        rows = rows or convert_rows(C, QQ)
    except ParseError as e:
        raise SinkhornInputError(f"cost matrix: {e}") from None
    return Problem(rows, *_marginals_and_eps((len(rows), len(rows[0])), a, b, eps, total_rtol, dyadic_floats))


def _marginals_and_eps(
    shape: tuple[int, int], a: Any, b: Any, eps: Any, total_rtol: fmpq, dyadic_floats: bool
) -> tuple[list[fmpq], list[fmpq], fmpq]:
    """a, b and eps read and checked against the cost's shape (n, m)."""
    av, bv = read_marginal(a, "a", dyadic_floats), read_marginal(b, "b", dyadic_floats)
    n, m = shape
    if (len(av), len(bv)) != (n, m):
        raise SinkhornInputError(
            f"shapes disagree: cost is {n}x{m}, but a has {len(av)} and b has {len(bv)} entries"
        )
    sa, sb = sum(av, fmpq(0)), sum(bv, fmpq(0))
    if abs(sa - sb) > total_rtol * sa:
        raise SinkhornInputError(f"marginals have different totals: sum(a) = {sa}, sum(b) = {sb}")
    e = parse_rational(eps, dyadic_floats=dyadic_floats)
    if e <= 0:
        raise SinkhornInputError(f"the temperature eps must be > 0, got {e}")
    return av, bv, e


# -- seeded random data (small-height rationals) -----------------------------------------------


def random_cost(n: int, m: int, seed: int, den: int = 1000) -> Rows:
    """A cost matrix with entries k/den, k uniform in [0, den]: a random cost in [0, 1]."""
    rng = random.Random(seed)
    return [[fmpq(rng.randint(0, den), den) for _ in range(m)] for _ in range(n)]


def random_marginal(n: int, seed: int, spread: int = 9) -> list[fmpq]:
    """A probability vector with entries k_i / sum(k), k_i uniform in [1, spread]."""
    rng = random.Random(seed)
    k = [rng.randint(1, spread) for _ in range(n)]
    s = sum(k)
    return [fmpq(x, s) for x in k]


def uniform_marginal(n: int) -> list[fmpq]:
    return [fmpq(1, n)] * n


def random_plan(a: Sequence[fmpq], b: Sequence[fmpq], seed: int, swaps: int = 0) -> Rows:
    """A strictly positive plan with marginals exactly a and b.

    Start from the independent coupling a b^T / s (s the total mass) and apply
    ``swaps`` (default 2 n m) random mass-preserving moves
    +d at (i,j), (k,l) and -d at (i,l), (k,j), with d below half of the smaller
    entry it decreases, so every entry stays positive and the marginals stay
    a and b exactly.
    """
    rng = random.Random(seed)
    n, m = len(a), len(b)
    s = sum(a, fmpq(0))
    p = [[ai * bj / s for bj in b] for ai in a]
    for _ in range(swaps or 2 * n * m):
        if n < 2 or m < 2:
            break
        i, k = rng.sample(range(n), 2)
        j, l = rng.sample(range(m), 2)
        d = min(p[i][l], p[k][j]) * fmpq(rng.randint(1, 9), 20)
        p[i][j] += d
        p[k][l] += d
        p[i][l] -= d
        p[k][j] -= d
    return p


def northwest_corner(a: Sequence[fmpq], b: Sequence[fmpq]) -> Rows:
    """The north-west corner plan: marginals a and b, at most n + m - 1 nonzero entries.

    A vertex of the transport polytope (Dantzig 1951), so it has zeros whenever
    n, m >= 2: the plans that :mod:`constructions.sinkhorn.fixed_point` cannot
    reach exactly and that ``sinkhorn_limit`` reaches as a limit.
    """
    ra, rb = list(a), list(b)
    p = [[fmpq(0)] * len(b) for _ in a]
    i = j = 0
    while i < len(ra) and j < len(rb):
        t = min(ra[i], rb[j])
        p[i][j] = t
        ra[i] -= t
        rb[j] -= t
        if ra[i] == 0:
            i += 1
        else:
            j += 1
    return p
