r"""POT's argument order, ``sinkhorn(a, b, M, reg)``: the plan as a numpy array, and a certified bound on its error.

Code written against POT's ``ot.sinkhorn`` switches in one line (``attncert.sinkhorn`` is this function)::

    G = ot.sinkhorn(a, b, M, reg)                # POT: float64 iterations until its stopThr
    G, bound = attncert.sinkhorn(a, b, M, reg)   # the same plan, and a proof of how close it is

**The plan** is POT's: the entropic plan P* = diag(u) K diag(v), K = exp(-M/reg), with row sums a
and column sums b, which is S_reg(M; a, b) of :func:`constructions.sinkhorn.operator.sinkhorn`, here
certified in ``Ball(prec)`` (Hilbert's bound or Krawczyk's test, docs/sinkhorn.md). ``G`` is a float64
array: each entry is the double at the centre of its ball around P*_ij, and

    bound >= max_ij |G_ij - P*_ij|,

a :class:`fractions.Fraction`: an exact rational upper bound, proven in ball arithmetic (the ball's radius
plus the distance from the double to the ball, rounded up). It covers the rounding to float64, so it is
never below about half a unit in the last place of the largest entry.

**Numbers** are read exactly. A float is its exact binary value: ``reg=0.01`` is the double
0.01000000000000000020816681711721685..., and P* is the plan at that temperature (pass ``"1/100"`` or
``Fraction(1, 100)`` for exactly 1/100); strings ``"p/q"`` or decimals, ints and Fractions are the
rationals they spell. An empty ``a`` or ``b`` (POT's default ``[]``) is uniform, 1/n exactly.

**Totals.** POT does not check them; here sum(a) = sum(b) must hold exactly. Where ``a`` or ``b`` holds
binary floats and their exact totals differ by a relative 1e-12 or less (:func:`~constructions.sinkhorn.problem.float_rule`; the floats of
``np.ones(3) / 3`` do not sum to exactly 1), ``b`` is scaled by sum(a)/sum(b), exactly: the plan then has
POT's total mass, sum(a). ``full=True`` returns the run, whose ``problem.b`` is the ``b`` used.

POT's options that only tune its float iterations (``method``, ``numItermax``, ``stopThr``, ``verbose``,
``warn``) are accepted and change nothing: the run goes on until the plan is certified. ``warmstart``, POT's
dual potentials (log u, log v), e.g. from a run of ``ot.sinkhorn(..., log=True)``, starts the float iterations
of the float-verified and high-precision paths (numpy input) from POT's own result; the certificate does not
depend on it.
``log=True`` is refused (POT's log has no meaning here; ``full=True`` returns the whole run).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn.operator import SinkhornResult, certified_array
from attncert.constructions.sinkhorn.operator import sinkhorn as certified_sinkhorn
from attncert.constructions.sinkhorn.shifted import array_cost
from attncert.constructions.sinkhorn.problem import SinkhornInputError, as_lists, float_rule, holds_floats, one_marginal, read_marginal, uniform_marginal
from attncert.exact.domains.ball import Ball
from attncert.exact.errors import AttncertError, ParseError
from attncert.exact.rationals import parse_rational
from attncert.exact.roundoff import U, exact, float_of, gamma

#: POT's options that tune its float iterations; they have no meaning for a certified run.
POT_TUNING = frozenset({"method", "numItermax", "stopThr", "verbose", "warn", "warmstart"})


class NotCertified(AttncertError):
    """The run found no enclosure of the plan (Krawczyk's test failed at every precision it tried)."""


def sinkhorn(
    a: Any, b: Any, M: Any, reg: Any, *, tol: Any = "1e-30", prec: int = 128, full: bool = False, log: bool = False, **pot_options: Any
) -> tuple[np.ndarray, Fraction] | tuple[np.ndarray, Fraction, SinkhornResult]:
    """(G, bound): the entropic plan of (a, b, M, reg) as float64 and an exact bound >= max |G - P*| (module docstring).

    ``tol``: the certified bound on max |log P^ - log P*| the run reaches for its own plan P^ before ``G``
    is read from it (default 1e-30); ``prec``: the starting precision in bits. ``full=True`` also returns the
    :class:`SinkhornResult` (the enclosure ``plan``, its ``bound``, ``status``, ``problem``). Raises
    SinkhornInputError (a ParseError) on bad input, including a problem outside the float range its iterations
    start from (a mass outside float64's normal range, max |M_ij| / reg over 2^53 where the arb paths run:
    :mod:`constructions.sinkhorn.problem`), NotCertified when no enclosure was found, and TypeError for an
    unknown keyword argument; nothing else.
    """
    unknown = sorted(set(pot_options) - POT_TUNING)
    if unknown:
        raise TypeError(f"sinkhorn() got an unexpected keyword argument {unknown[0]!r}")
    if log:
        raise SinkhornInputError("log=True is POT's float log, which has no meaning here; full=True returns the certified run")
    try:
        return _certified(a, b, plain_cost(M), reg, tol, prec, full, pot_options.get("warmstart"))
    except SinkhornInputError:
        raise
    except ParseError as e:  # a number, a precision or a size the readers refuse: the one error of bad input here
        raise SinkhornInputError(str(e)) from None


def sinkhorn2(a: Any, b: Any, M: Any, reg: Any, **options: Any) -> tuple[float, Fraction]:
    """(loss, bound): POT's ``ot.sinkhorn2``, the transport cost <P*, M> of the entropic plan (without the entropy term),
    as the float sum of G * M for the certified plan G of :func:`sinkhorn` (same options), and an exact bound

        bound >= |loss - <P*, M>|,   N = n m, g = gamma_{N+1}, eta = 2^-1075 (half the least subnormal),
        bound = e (S|M~| + r) + g W + N eta (1 + g) + [M not float64] (u W + eta S G),

    e the bound on max |G - P*|, M~ the doubles of M (M itself for a float64 array; else each entry's nearest,
    within u |M~| + eta of it, and r = u S|M~| + N eta), S|M~| >= sum |M~|, S G >= sum G and W >= sum G |M~| from
    float sums times (1 + g)^2, which is at least 1 / (1 - gamma_{N-1}) (1 - u). The products and the sums are IEEE operations in any order (Higham,
    *Accuracy and Stability of Numerical Algorithms*, Lemma 3.1 and section 4.2): a product is within a relative u
    plus an absolute eta where it underflows (costs of 5e-324 times masses of 1/4), a sum of doubles within its
    relative gamma (it is exact where it is subnormal). A loss or an entry of M beyond float64's range is a
    SinkhornInputError: the loss is a double.
    """
    M = plain_cost(M)  # G * M below is entrywise only on a plain array
    G, e = sinkhorn(a, b, M, reg, **options)[:2]
    exact_floats = isinstance(M, np.ndarray) and M.dtype == np.float64
    Mf = M if exact_floats else _doubles(M)
    with np.errstate(over="ignore"):  # an overflow is refused below, in one line
        loss = float(np.sum(G * Mf))
        products, masses, costs = (float(np.sum(x)) for x in (G * np.abs(Mf), G, np.abs(Mf)))
    if not all(np.isfinite([loss, products, costs])):
        raise SinkhornInputError("the loss <G, M> is beyond float64's range: sinkhorn2 returns it as a double (attncert.sinkhorn gives the plan)")
    N = G.size
    with ctx.workprec(128):
        g, eta = arb(gamma(N + 1)), arb(fmpq(1, 2**1075))
        weighted = (arb(exact(products)) + N * eta) * (1 + g) ** 2  # >= sum G |M~|, underflowed products included
        cost_sum = arb(exact(costs)) * (1 + g) ** 2  # >= sum |M~|: a sum of doubles, no underflow term
        represented = 0 if exact_floats else arb(U) * cost_sum + N * eta  # >= sum |M - M~|
        bound = arb(fmpq(e.numerator, e.denominator)) * (cost_sum + represented) + g * weighted + N * eta * (1 + g)
        if not exact_floats:
            bound += arb(U) * weighted + eta * arb(exact(masses)) * (1 + g) ** 2
        q = bound.upper().fmpq()
    return loss, Fraction(int(q.p), int(q.q))


def plain_cost(M: Any) -> Any:
    """M as given, or an ndarray subclass as its plain array (a view, no copy): np.matrix's * is the matrix product and
    its reductions stay 2-D (sinkhorn2 of a square np.matrix returned sum(G @ M) as the loss <G, M> with a bound of
    1e-13 on its distance to <P*, M>, off by 1.36; sinkhorn raised TypeError at tol 1e-30). A masked array is refused:
    a masked entry has no cost (its data was read under the mask by some paths and skipped by others)."""
    if isinstance(M, np.ma.MaskedArray):
        raise SinkhornInputError("M is a masked array: a masked entry has no cost (pass M.filled(value) or M.data)")
    return np.asarray(M) if isinstance(M, np.ndarray) else M


def _doubles(M: Any) -> np.ndarray:
    """The double nearest each entry of M (read exactly, as :func:`sinkhorn` read it: floats as their values, "p/q"
    strings, ints, Fractions); an entry beyond float64's range is a SinkhornInputError."""
    if isinstance(M, np.ndarray) and M.dtype.kind in "iuf":
        return M.astype(np.float64)  # round to nearest: an integer or a narrower float is never subnormal-rounded
    try:
        return np.array([[float_of(parse_rational(x, dyadic_floats=True)) for x in row] for row in as_lists(M)])
    except OverflowError:
        raise SinkhornInputError("an entry of M is beyond float64's range: sinkhorn2 returns the loss as a double") from None


def _certified(
    a: Any, b: Any, M: Any, reg: Any, tol: Any, prec: Any, full: bool, start: Any
) -> tuple[np.ndarray, Fraction] | tuple[np.ndarray, Fraction, SinkhornResult]:
    """The body of :func:`sinkhorn`, on its arguments once POT's options are set aside."""
    domain = Ball(prec)  # a precision outside [2, 2^24] is refused before anything is read
    array = isinstance(M, np.ndarray) and M.ndim == 2 and M.size > 0 and M.dtype.kind in "iuf"
    if not array:
        M = as_lists(M)
        if not isinstance(M, list) or not M or not isinstance(M[0], list):
            raise SinkhornInputError("M must be a cost matrix (n x m): sinkhorn(a, b, M, reg) takes POT's order")
    n, m = M.shape if array else (len(M), len(M[0]))
    av, bv = _marginal(a, n, "a"), _marginal(b, m, "b")
    bv = float_rule(av, bv, holds_floats(a, b))
    r = _from_array(M, av, bv, reg, prec, tol, _log_u(start)) if array else None
    if r is None:
        if array:
            _announce(M, reg, tol)
        r = certified_sinkhorn(M.tolist() if array else M, av, bv, reg, domain, tol=tol)
    if r.plan is None:
        raise NotCertified(f"no enclosure of the Sinkhorn plan: {r.status}")
    G, bound = certified_plan(r)
    return (G, bound, r) if full else (G, bound)


class SlowPathWarning(UserWarning):
    """attncert.sinkhorn goes on with a path that may take far longer than POT (a ball per kernel entry)."""


#: A run that goes on to the arb paths is announced (SlowPathWarning) before it starts where it may take this long.
SLOW_SECONDS = 1.0
#: Seconds per plan entry and (bits / 128)^1.5 of an arb run (the constant of the cost model, proofs/core/cost.py).
ARB_SECONDS = 2.6e-5


def _announce(M: np.ndarray, reg: Any, tol: Any) -> None:
    """One line before a slow start (estimated at SLOW_SECONDS or more): the path and a rough estimate of its time,
    from the cost's range over reg (Krawczyk's precision is about Delta / (2 ln 2) + 128 bits, Delta <= 2 range / reg).
    Over the precision limit in force the ladder stops at the limit (constructions/sinkhorn/operator.py): the line says
    so, and times the run at the limit."""
    import warnings

    from attncert.exact.limits import current as current_limits

    spread = float(np.ptp(M)) if np.isfinite(M).all() else float("inf")
    try:
        ratio = 2 * spread / float(parse_rational(reg, dyadic_floats=True))
    except (OverflowError, ZeroDivisionError):  # reg beyond the doubles: the estimate is for the largest ratio
        ratio = float("inf")
    need, top = max(128.0, ratio * 0.7214 + 128), current_limits().max_precision
    bits = min(need, top)
    seconds = ARB_SECONDS * M.size * (bits / 128) ** 1.5
    if seconds < SLOW_SECONDS:
        return
    over = f", over the precision limit of {top:,} (max_precision), where its ladder stops: it may end NotCertified" if need > top else ""
    warnings.warn(
        SlowPathWarning(
            f"attncert.sinkhorn: no fast path certifies this {M.shape[0]}x{M.shape[1]} problem at tol {tol} (Delta up to "
            f"{ratio:.3g}); going on in arb (Hilbert or Krawczyk, {f'about {need:,.0f}' if need < 1e18 else 'more than 10^18'} bits{over}), "
            f"roughly {seconds:.3g} s"
        ),
        stacklevel=4,
    )


def certified_plan(r: SinkhornResult) -> tuple[np.ndarray, Fraction]:
    """The float64 plan of a certified result and an exact bound >= max |G - P*|: from the factors of a float-verified,
    convexity or high-precision run (two products per entry), else the doubles at the centres of the plan's balls."""
    if r.run is not None and hasattr(r.run, "float_plan"):
        G, bound = r.run.float_plan()
        return G, Fraction(int(bound.p), int(bound.q))
    return float_plan(r.plan, r.details.get("prec", 128))


def _from_array(M: np.ndarray, a: list[fmpq], b: list[fmpq], reg: Any, prec: int, tol: Any, log_u: np.ndarray | None = None) -> SinkhornResult | None:
    """The certified result of the float-verified or high-precision path on the array M (no rational per entry), or
    None where only the arb paths apply (the caller then reads M entry by entry). Bad input: SinkhornInputError."""
    try:
        cost = array_cost(M)
    except ValueError as e:
        raise SinkhornInputError(f"M: {e}") from None
    if len(a) != cost.shape[0] or len(b) != cost.shape[1]:
        raise SinkhornInputError(f"shapes disagree: M is {cost.shape[0]}x{cost.shape[1]}, but a has {len(a)} and b has {len(b)} entries")
    if sum(a, fmpq(0)) != sum(b, fmpq(0)):
        raise SinkhornInputError(f"marginals have different totals: sum(a) = {sum(a, fmpq(0))}, sum(b) = {sum(b, fmpq(0))}")
    eps, t = parse_rational(reg, dyadic_floats=True), parse_rational(tol, dyadic_floats=True)
    if eps <= 0:
        raise SinkhornInputError(f"the temperature reg must be > 0, got {eps}")
    if t <= 0:
        raise SinkhornInputError(f"the tolerance must be > 0, got {t}")
    r = certified_array(cost, a, b, eps, prec, t, log_u=log_u)
    return r if r is not None and r.certified else None


def _log_u(start: Any) -> np.ndarray | None:
    """log u of POT's dual potentials ``warmstart`` = (log u, log v) as doubles, or None without a warm start."""
    if start is None:
        return None
    try:
        return np.asarray(start[0], dtype=float)
    except (TypeError, ValueError, IndexError, KeyError):
        raise SinkhornInputError("warmstart must be POT's dual potentials (log u, log v), two arrays of numbers") from None


def float_plan(plan: Any, prec: int) -> tuple[np.ndarray, Fraction]:
    """The doubles at the centres of the balls of ``plan`` and an exact bound on their distance to any matrix in them.

    The distances are exact arbs, compared in arb; only the largest becomes a rational. An entry of a plan with a
    large Delta can be e^-(10^15), whose own rational would have 10^15 bits (FLINT aborts on it).
    """
    G = np.array([[float(x.mid()) for x in row] for row in plan], dtype=np.float64)
    worst = arb(0)
    with ctx.workprec(prec):
        for g_row, row in zip(G.tolist(), plan):
            for g, x in zip(g_row, row):
                d = (arb(g) - x).abs_upper()
                if d > worst:
                    worst = d
    q = worst.fmpq()
    return G, Fraction(int(q.p), int(q.q))


def _marginal(x: Any, size: int, name: str) -> list[fmpq]:
    """A marginal read exactly (floats as their binary values); None or empty is uniform over ``size`` points; one row
    or one column is the vector, POT's batch of histograms (a 2-D b) is refused in one line (:func:`one_marginal`)."""
    x = one_marginal(x, name, SinkhornInputError)
    if x is None or (isinstance(x, list) and not x):
        return uniform_marginal(size)
    return read_marginal(x, name, dyadic_floats=True)
