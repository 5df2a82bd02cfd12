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

**Float range.** The Ball and Float paths start from float64 iterations, which hold the masses, the
log-kernel -C/eps and the dual potentials (log u, log v) as doubles. Two hypotheses make that
possible, and each is refused up front with its figure where it fails (instead of an OverflowError,
a NaN start or a precision ladder without end): every mass and the total mass lie in float64's normal
range [2^-1022, 2^1024) (:func:`check_float_masses`), and, for the paths that start from -C/eps (Hilbert's
and Krawczyk's), max_ij |C_ij| / eps <= :data:`MAX_SCALE` = 2^53 (:func:`check_float_scale`). The
potentials are of that size (on the support of the plan, x_i + y_j = log P_ij + C_ij/eps), and past
2^53 a double no longer resolves a unit of them; the projective diameter, a sum of four such ratios,
is then at most 2^55 and every float formed from it is finite. The exact (EE) path holds no float and
takes any size.

Also here: seeded generators of random problems with small-height rational
entries, shared by the proof scripts, the tests and the benchmark.
"""

from __future__ import annotations

import math
import random
from itertools import chain
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np
from flint import arb, ctx, fmpq

from attncert.exact.domains.qq import QQ
from attncert.exact.errors import ParseError
from attncert.exact.matrices import Rows, convert_rows, to_fmpq_mat
from attncert.exact.rationals import dyadic_rational, is_float, parse_rational
from attncert.exact.roundoff import LARGEST, float_of

#: The largest max_ij |C_ij| / eps whose problem the float starting points take (module docstring).
MAX_SCALE = fmpq(2**53)
#: The smallest positive normal double, exactly.
FLOAT_MIN = fmpq(1, 2**1022)


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
    def scale(self) -> fmpq:
        """max_ij |C_ij| / eps: exactly for a rational C, an exact upper bound for a CostEnclosure."""
        if not self.rational:
            return max(abs(x).upper().fmpq() for row in self.C.balls(64) for x in row) / self.eps
        Z, den = self.integer_cost
        return fmpq(max(int(Z.max()), -int(Z.min())), den) / self.eps

    @cached_property
    def log_kernel_float(self) -> np.ndarray:
        """-C/eps in float64: for warm starts and float comparisons only, never for a certificate.

        Finite where :func:`check_float_scale` holds. C/eps = Z / (D eps) is divided in float64 when Z and
        D eps are doubles; otherwise (a cost of binary floats with tiny exponents has D up to 2^1074) each entry
        is the correctly rounded quotient of its integers.
        """
        if not self.rational:
            with ctx.workprec(64):
                return np.array([[float(-(x / self.eps).mid()) for x in row] for row in self.C.balls(64)])
        Z, den = self.integer_cost
        s = den * self.eps  # C / eps = Z / s
        if Z.dtype != object and FLOAT_MIN <= s <= LARGEST:
            return -Z.astype(float) / float_of(s)
        p, q = int(s.p), int(s.q)
        return np.array([[-(z * q) / p for z in row] for row in Z.tolist()])

    def float_marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """a and b as doubles (nearest; within the normal range where :func:`check_float_masses` holds)."""
        return np.array([float_of(x) for x in self.a]), np.array([float_of(x) for x in self.b])


def figure(x: fmpq) -> str:
    """A rational of any size in three digits (2.00e+308), without forming a float."""
    return arb(x).str(3, radius=False)


def check_float_masses(a: Sequence[fmpq], b: Sequence[fmpq]) -> None:
    """SinkhornInputError unless every mass of a and b, and the total mass, lie in float64's normal range
    [2^-1022, 2^1024), where the float iterations hold them (module docstring)."""
    for name, v in (("a", a), ("b", b)):
        if v and FLOAT_MIN <= min(v) and max(v) <= LARGEST:  # the common case in two C loops; else name the entry
            continue
        for i, w in enumerate(v):
            if not FLOAT_MIN <= w <= LARGEST:
                raise SinkhornInputError(
                    f"marginal {name}: {name}[{i}] = {figure(w)} is outside float64's normal range [2.2e-308, 1.8e+308], "
                    "in which the float iterations hold the masses"
                )
    total = sum(a, fmpq(0))
    if total > LARGEST:
        raise SinkhornInputError(f"the total mass sum(a) = {figure(total)} is above float64's range (1.8e+308), in which the float iterations hold it")


def check_float_scale(p: Problem) -> None:
    """SinkhornInputError unless max_ij |C_ij| / eps <= MAX_SCALE, the size of the dual potentials that the float
    starting points of the Hilbert and Krawczyk paths resolve (module docstring)."""
    if p.scale > MAX_SCALE:
        raise SinkhornInputError(
            f"the cost over eps reaches max |C_ij| / eps = {figure(p.scale)}, over the limit of 2^53 (about 9.01e+15): "
            "the float starting points hold -C/eps and the dual potentials, which are of that size, in float64, which past 2^53 "
            "does not resolve a unit of them"
        )


#: The one rule for float marginals (API and command line, Sinkhorn and EMD): masses that are binary floats whose exact
#: totals differ by this relative amount or less differ by rounding (the doubles of np.ones(3) / 3 do not sum to 1).
FLOAT_TOTAL_RTOL = fmpq(1, 10**12)


def float_rule(a: Sequence[fmpq], b: Sequence[fmpq], floats: bool) -> list[fmpq]:
    """b, scaled by sum(a) / sum(b) exactly where the masses are binary floats (``floats``) whose exact totals differ by
    a relative FLOAT_TOTAL_RTOL at most, so that the plan has the total mass sum(a) (POT's); b itself otherwise (the
    caller refuses totals that still differ)."""
    sa, sb = sum(a, fmpq(0)), sum(b, fmpq(0))
    if floats and sa != sb and sb != 0 and abs(sa - sb) <= FLOAT_TOTAL_RTOL * sa:
        return [x * sa / sb for x in b]
    return list(b)


def holds_floats(*xs: Any) -> bool:
    """Whether any of the marginals holds binary floats (a float array, or a list with a float in it)."""
    for x in xs:
        if isinstance(x, np.ndarray):
            if x.dtype.kind == "f":
                return True
            x = x.tolist()
        if isinstance(x, (list, tuple)) and any(is_float(t) or (isinstance(t, (list, tuple)) and any(map(is_float, t))) for t in x):
            return True
    return False


def as_lists(x: Any) -> Any:
    """A numpy array (or anything with ``tolist``) as nested lists of Python numbers; anything else unchanged."""
    return x.tolist() if hasattr(x, "tolist") else x


def one_marginal(x: Any, name: str, error: type[ParseError]) -> Any:
    """``x`` as one marginal, by the rule of ``attncert.sinkhorn``, ``attncert.emd`` and the command line's files
    alike: an array or nested list of one row or one column is that vector; any other matrix is POT's batch of
    histograms (a 2-D b, one plan a column in POT), refused in one line (``error``): one plan is certified per call.
    Arrays become lists; anything else is returned as it is, for the caller's reader."""
    shape = x.shape if isinstance(x, np.ndarray) else None
    if shape is not None and len(shape) > 2:
        raise error(f"marginal {name} must be a vector, got an array of shape {shape}")
    x = as_lists(x)
    if not isinstance(x, (list, tuple)) or not x or not all(isinstance(r, (list, tuple)) for r in x):
        return x
    if len(x) == 1 or all(len(r) == 1 for r in x):
        return [v for r in x for v in r]
    what = f"a 2-D array of shape {shape}" if shape is not None else f"a matrix of {len(x)} rows"
    raise error(f"{name} is {what} (POT's batch of histograms): one plan is certified per call; call once per column")


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
    if dyadic_floats and all(type(v) is float for v in x) and all(map(math.isfinite, x)):
        return [fmpq(*v.as_integer_ratio()) for v in x]  # a float64 array's doubles: parse_rational's reading, inlined
    return [parse_rational(v, dyadic_floats=dyadic_floats) for v in x]


def read_marginal(x: Any, name: str, dyadic_floats: bool = False) -> list[fmpq]:
    """A vector of strictly positive masses."""
    v = read_vector(x, name, dyadic_floats)
    if min(v) > 0:
        return v
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
