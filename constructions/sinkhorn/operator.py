"""The Sinkhorn operator S_eps(C; a, b) = diag(u) K diag(v), K = exp(-C/eps), in three domains.

* **EE** -- exact iterates u_k, v_k, for a few iterations on small problems.
  Each iterate is an exact element of Frac(Q[e^Q]); its distance to the limit
  is then bounded rigorously in arb by the Hilbert bound. Denominators grow
  like (number of terms)^n per iteration: 2x2 stays practical for about 4
  iterations, 3x3 for 2, 4x4 for 1 (docs/sinkhorn.md has measurements).
* **Ball(prec)** -- a plan certified to a tolerance. ``method="hilbert"``
  iterates and stops when the a-posteriori bound of
  :mod:`constructions.sinkhorn.hilbert` is below ``tol``;
  ``method="krawczyk"`` encloses the dual potentials by interval Newton
  (:mod:`constructions.sinkhorn.krawczyk`), for small eps where lambda -> 1.
  Two more evaluate the Hilbert bound for the shifted kernel without a ball per
  entry: ``"float-verified"`` (:mod:`constructions.sinkhorn.verified`: POT's float64
  iterations, the bound evaluated in float64 with proven rounding errors; bounds
  down to about 1e-13 / (1 - lambda)) and ``"high-precision"``
  (:mod:`constructions.sinkhorn.precise`: exact integer products in BLAS, arb on
  vectors; any tol). ``"convexity"`` and ``"precise-convexity"`` replace Hilbert's bound by
  the strong-convexity bound (:mod:`constructions.sinkhorn.convexity`, on the float evaluation;
  :mod:`constructions.sinkhorn.precise_convexity`, on the high-precision one: no precision
  growing with Delta). ``"auto"`` picks by the tolerance: float-verified when tol is
  above its floor, then convexity when tol >= 1e-14, then, for a plan of more than
  :data:`PLAIN_ENTRIES` entries and an integer cost, high-precision when Delta <=
  :data:`HILBERT_MAX_DELTA` and precise-convexity beyond, else Hilbert (arb) when
  Delta(K) <= :data:`HILBERT_MAX_DELTA`, else Krawczyk.
* **Float** -- log-domain float iterations (:mod:`constructions.sinkhorn.logdomain`),
  for agreement with POT and speed baselines; never certified.

Ball iterations start from float iterations on a rescaled kernel (a warm start: the
bound is a posteriori, so where the iterates come from is irrelevant to it)
and run on exact points: after each row update u is replaced by
the midpoint of its ball, an exact dyadic vector u^. The column update
v = b / (K^T u^) is a ball containing the exact real v^, and the bound is
evaluated on balls containing the row sums of P^ = diag(u^) K diag(v^), so it
holds for that exact real plan P^, whose column sums are exactly b, as the
bound requires. The rounding in the iterates is thereby irrelevant to rigour,
and radii cannot accumulate over iterations.

Every result says what it established: ``bound`` (a certified upper bound on
max_ij |log P^_ij - log P*_ij|, or None), ``plan`` (an enclosure of the
Sinkhorn plan P*, or None) and ``certified`` (bound <= tol). A run that does
not reach ``tol`` within ``max_iter`` says so in ``status``; it is never
reported as converged. The Ball paths hold their plans in factored form
(:class:`~constructions.sinkhorn.scaled.ScaledKernel`, diag(r) K diag(c)):
certifying needs only the factors, and the n m balls of ``iterate`` and
``plan`` are formed when first read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from attncert.constructions.sinkhorn.hilbert import a_posteriori_bound, contraction, hilbert_distance_upper, inverse_gap, projective_diameter
from attncert.constructions.sinkhorn.kernel import ee_kernel, kernel_entries
from attncert.constructions.sinkhorn.continuation import continuation_start
from attncert.constructions.sinkhorn.convexity import convexity_run, reachable
from attncert.constructions.sinkhorn.krawczyk import certify_dual
from attncert.constructions.sinkhorn.logdomain import LogSinkhorn, log_sinkhorn, row_correction, scaled_sinkhorn
from attncert.constructions.sinkhorn.precise import PreciseRun, precise
from attncert.constructions.sinkhorn.precise_convexity import precise_convexity
from attncert.constructions.sinkhorn.problem import Problem, SinkhornInputError, check_float_masses, check_float_scale, figure, read_problem
from attncert.constructions.sinkhorn.scaled import ScaledKernel
from attncert.constructions.sinkhorn.shifted import ArrayRows, ExactCost, ShiftedKernel, UnsupportedKernel, enclosed_kernel, exact_cost, shifted_kernel
from attncert.constructions.sinkhorn.verified import FloatRun, float_start, float_verified
from attncert.exact.domains.ball import Ball, BallField
from attncert.exact.domains.base import Domain
from attncert.exact.domains.ee import EE
from attncert.exact.domains.floats import Float
from attncert.exact.limits import current as current_limits
from attncert.exact.matrices import Rows
from attncert.exact.rationals import parse_rational
from attncert.exact.roundoff import LARGEST, float_of

#: ``method="auto"`` uses the Hilbert bound up to this projective diameter
#: (then 1/(1 - lambda) <= (e^20 + 1)/2, about 2.4e8) and Krawczyk beyond.
HILBERT_MAX_DELTA = 40
#: Precisions a Hilbert run tries, a limb apart, when its bound stalls above tol at the precision floor
#: (the guard bits of hilbert_precision are an estimate: a 2 x 2 universality pair stalled at 1.1e-30
#: against tol 1e-30 at 128 bits).
HILBERT_RUNGS = 3
#: The float-verified path's d_H does not go below about this (float64's rounding, the kernel's error): "auto"
#: tries it when this times 1/(1 - lambda) is below tol.
FLOAT_FLOOR = fmpq(1, 10**13)
#: "auto" keeps the arb paths (a ball per entry) up to this many plan entries n m, where they are as fast.
PLAIN_ENTRIES = 4096
#: The methods of Ball(prec).
BALL_METHODS = ("auto", "hilbert", "krawczyk", "float-verified", "convexity", "high-precision", "precise-convexity")
#: The methods on the high-precision evaluation (a fixed-point kernel: an integer cost's, or for precise-convexity a
#: float64 cost's too).
PRECISE_METHODS = ("high-precision", "precise-convexity")
#: Ball iterations without a smaller bound before declaring the precision floor reached.
STALL = 25
#: Residual checks (every 10 float iterations) without halving the residual that end a warm start.
WARM_START_STALL = 20
#: Default iteration limits per domain.
MAX_ITER = {"EE": 2, "Ball": 10_000, "Float": 100_000}
#: Default tolerances: certified bound on the log-plan error (Ball), L1 row residual (Float).
DEFAULT_TOL = {"Ball": fmpq(1, 10**30), "Float": fmpq(1, 10**13)}
#: Precision (bits) at which EE iterates are enclosed for their bound.
EE_BOUND_PREC = 128


@dataclass(frozen=True)
class SinkhornResult:
    """What a Sinkhorn run computed and what it certified."""

    problem: Problem
    domain: Domain
    method: str  # "exact-iterates" (EE), "hilbert", "krawczyk", "float-verified", "high-precision" (Ball), "log-domain" (Float)
    iterations: int  # full (row + column) iterations, or all Newton steps (float and arb) for krawczyk
    iterate: Rows | ScaledKernel  # the computed plan P^: exact (EE), enclosure (Ball, formed when read) or floats (Float)
    row_error: Sequence[Any]  # P^ 1 - a, in the iterate's domain (float-verified, high-precision: formed when read)
    col_error: list[Any]  # P^T 1 - b
    delta: fmpq  # the projective diameter Delta(K): exactly (hilbert, krawczyk, rational cost), else an exact upper bound
    lam: arb  # an enclosure of lambda = tanh(Delta/4)
    tol: fmpq | None
    bound: arb | None  # exact arb >= max |log P^ - log P*|, or None (not certified)
    plan: Rows | ScaledKernel | None  # enclosure of the Sinkhorn plan P* (Ball: formed when read), or None
    status: str
    details: dict[str, Any] = field(default_factory=dict)
    #: What lets anyone re-check ``plan`` from the inputs alone: the exact point u^ of a
    #: Hilbert certificate ({"u": [...]}) or the exact potentials and box radius of a
    #: Krawczyk certificate ({"x": [...], "y": [...], "rho": r}); None otherwise.
    witness: dict[str, Any] | None = None
    #: The float-verified or high-precision run behind the result (its factors, for a float plan); None otherwise.
    run: Any = field(default=None, repr=False, compare=False)

    @property
    def certified(self) -> bool:
        """True iff a rigorous bound exists and is <= tol."""
        return self.bound is not None and self.tol is not None and bool(self.bound <= arb(self.tol))


def sinkhorn(
    C: Any,
    a: Any,
    b: Any,
    eps: Any,
    domain: Domain = Ball(128),
    *,
    tol: Any = None,
    max_iter: int | None = None,
    method: str = "auto",
) -> SinkhornResult:
    """S_eps(C; a, b) in ``domain`` (EE, Ball(prec) or Float); see the module docstring.

    ``tol``: Ball -- the certified bound to reach (default 1e-30); EE -- stop early
    once the bound is below it (default: run ``max_iter`` iterations); Float --
    the L1 row residual to reach (default 1e-13). Raises SinkhornInputError on
    bad input: different totals, non-positive masses, eps <= 0, mismatched shapes, and in Ball and Float
    a problem outside the float range their float iterations start from (a mass outside float64's normal
    range; max |C_ij| / eps over 2^53 where the arb paths run: :mod:`constructions.sinkhorn.problem`).
    Float inputs (C, a, b, eps) are read as their exact binary values in Ball and
    Float, and refused in EE (write decimals as strings: "0.1" is exactly 1/10).
    """
    if max_iter is not None and (not isinstance(max_iter, int) or max_iter < 1):
        raise SinkhornInputError(f"max_iter must be a positive integer, got {max_iter!r}")
    if domain is Float:
        p = read_problem(C, a, b, eps, total_rtol=fmpq(1, 10**12), dyadic_floats=True)
        check_float_masses(p.a, p.b)
        check_float_scale(p)
        return _float(p, _tol(tol, "Float", dyadic_floats=True), max_iter or MAX_ITER["Float"])
    # Ball reads a float input as its exact binary value (as Ball.convert does); EE refuses floats.
    p = read_problem(C, a, b, eps, dyadic_floats=isinstance(domain, BallField))
    if domain is EE:
        if not p.rational:
            raise SinkhornInputError(
                "exact (EE) iterates need a rational cost: exp(-C/eps) of a cost that is not rational is not in EE; "
                "use Ball(prec), which encloses the kernel"
            )
        return _exact(p, None if tol is None else _tol(tol, "Ball"), max_iter or MAX_ITER["EE"])
    if isinstance(domain, BallField):
        if method not in BALL_METHODS:
            raise SinkhornInputError(f"unknown method {method!r}: expected {', '.join(BALL_METHODS)}")
        check_float_masses(p.a, p.b)
        if method in ("auto", "float-verified", "convexity", *PRECISE_METHODS):
            r = _shifted(p, method, domain.prec, _tol(tol, "Ball", dyadic_floats=True), max_iter or MAX_ITER["Ball"])
            if r is not None:
                return r
        check_float_scale(p)  # the arb paths start from -C/eps and the potentials in float64
        delta = projective_diameter(p)
        if method == "krawczyk" or (method == "auto" and delta > HILBERT_MAX_DELTA):
            return _krawczyk(p, delta, domain.prec, _tol(tol, "Ball", dyadic_floats=True))
        t = _tol(tol, "Ball", dyadic_floats=True)
        prec, limit = hilbert_precision(domain.prec, delta, t, p.n + p.m), max_iter or MAX_ITER["Ball"]
        if prec > current_limits().max_precision:  # Hilbert's bound at this Delta and tol is out of reach
            raise SinkhornInputError(
                f"method 'hilbert' at Delta(K) = {figure(delta)} and tol {t} needs about {prec:,} bits, over the precision "
                f"limit of {current_limits().max_precision:,} (max_precision); Krawczyk's method ('auto' or 'krawczyk') takes a large Delta"
            )
        for _ in range(HILBERT_RUNGS):
            r = _hilbert(p, delta, prec, t, limit)
            if r.certified or r.iterations >= limit:
                return r
            prec += 64  # the bound stalled at the precision floor, just above tol: one more limb
        return r
    raise SinkhornInputError(f"Sinkhorn runs in EE, Ball(prec) or Float, not in {domain}")


def _tol(tol: Any, kind: str, dyadic_floats: bool = False) -> fmpq:
    t = DEFAULT_TOL[kind] if tol is None else parse_rational(tol, dyadic_floats=dyadic_floats)
    if t <= 0:
        raise SinkhornInputError(f"the tolerance must be > 0, got {t}")
    return t


# -- shared pieces --------------------------------------------------------------------------


def _marginal_errors(P: Rows, p: Problem, zero: Any) -> tuple[list[Any], list[Any]]:
    rows = [sum(r, zero) - ai for r, ai in zip(P, p.a)]
    cols = [sum((r[j] for r in P), zero) - bj for j, bj in enumerate(p.b)]
    return rows, cols


def _widening(bound: arb, prec: int) -> arb:
    """[e^-bound, e^bound]: P*_ij lies in P^_ij times it when max |log P^ - log P*| <= bound."""
    with ctx.workprec(prec):
        return arb(0, bound).exp()


# -- EE: exact iterates ---------------------------------------------------------------------


def _exact(p: Problem, tol: fmpq | None, max_iter: int) -> SinkhornResult:
    K = ee_kernel(p.C, p.eps)
    delta = projective_diameter(p)
    prec = EE_BOUND_PREC
    a = [EE.convert(x) for x in p.a]
    b = [EE.convert(x) for x in p.b]
    u = [EE.one()] * p.n
    it = 0
    while True:
        v = [bj / EE.sum(K[i][j] * u[i] for i in range(p.n)) for j, bj in enumerate(b)]
        it += 1
        Kv = [EE.sum(kij * vj for kij, vj in zip(Ki, v)) for Ki in K]
        with ctx.workprec(prec):
            r = [(ui * kv).enclose(prec) for ui, kv in zip(u, Kv)]
            bound = a_posteriori_bound(hilbert_distance_upper(r, [arb(x) for x in p.a], prec), delta, prec)
        if it >= max_iter or (tol is not None and bound <= arb(tol)):
            break
        u = [ai / kv for ai, kv in zip(a, Kv)]
    P = [[ui * kij * vj for kij, vj in zip(Ki, v)] for ui, Ki in zip(u, K)]
    rows, cols = _marginal_errors(P, p, EE.zero())
    f = _widening(bound, prec)
    with ctx.workprec(prec):
        plan = [[x.enclose(prec) * f for x in row] for row in P]
    reached = tol is not None and bound <= arb(tol)
    status = f"{it} exact iteration(s); certified bound {bound.str(5, radius=False)} on the distance to the limit"
    if tol is not None and not reached:
        status += f", not below tol {tol}"
    return SinkhornResult(p, EE, "exact-iterates", it, P, rows, cols, delta, contraction(delta, prec), tol, bound, plan, status)


# -- Ball: the shifted kernel, float-verified or high-precision ----------------------------


def exact_array(p: Problem) -> ExactCost | None:
    """The rational cost as one array (:class:`ExactCost`): its integer form, or the doubles when every entry is one
    and the integers would not stay below 2^53 (binary floats of many exponents); None otherwise (or for an enclosure)."""
    if not p.rational:
        return None
    cost = exact_cost(p.integer_cost)
    if cost is not None and int(np.abs(cost.values).max()) < 2**53:  # the integer recipe's exponents need Z' < 2^53
        return cost
    if p.scale * p.eps <= LARGEST and all(int(x.q) & (int(x.q) - 1) == 0 for row in p.C for x in row):
        values = np.array([[float(x) for x in row] for row in p.C])
        if np.isfinite(values).all() and all(fmpq(*float(v).as_integer_ratio()) == x for vr, row in zip(values.tolist(), p.C) for v, x in zip(vr, row)):
            return ExactCost(values, None)
    return None


def _shifted(
    p: Problem, method: str, prec: int, tol: fmpq, max_iter: int, cost: ExactCost | None = None, log_u: np.ndarray | None = None
) -> SinkhornResult | None:
    """The float-verified or high-precision run ``method`` asks for (or "auto" chooses), or None for the arb paths.

    ``cost`` is the cost as one array when the caller has it (else :func:`exact_array` of the rows); ``log_u``
    the log of a row scaling of K = exp(-C/eps) to start the float iterations from (POT's own result; the bound
    does not depend on it). A method asked for by name that cannot run (a cost that is not rational or does not
    fit float64's range) is a SinkhornInputError; "auto" then falls back to the arb paths.
    """
    if method == "auto" and tol < FLOAT_FLOOR and (not p.rational or p.n * p.m <= PLAIN_ENTRIES):
        return None  # below the float floor, and no high-precision run at this size: the arb paths
    cost = exact_array(p) if cost is None else cost
    try:
        if not p.rational and method not in PRECISE_METHODS:
            K = enclosed_kernel(p.C, p.eps)
        elif cost is None:
            raise UnsupportedKernel("a rational cost whose integers fit int64, or binary floats, is needed")
        else:
            K = shifted_kernel(cost, p.eps)
        if method == "high-precision" and K.mode != "integers":
            raise UnsupportedKernel("the high-precision path needs an integer form of the cost (numerators in int64)")
        if method == "precise-convexity" and K.mode not in ("integers", "floats"):
            raise UnsupportedKernel("the precise-convexity path needs an integer form of the cost, or binary floats")
    except UnsupportedKernel as e:
        if method == "auto":
            return None
        raise SinkhornInputError(f"method {method!r}: {e}") from None
    run, u0 = None, None if log_u is None else _shifted_start(K, log_u, p.eps)
    if method == "float-verified" or (method == "auto" and FLOAT_FLOOR * inverse_gap(K.delta, 64) <= arb(tol)):
        run = float_verified(K, p.a, p.b, tol, u0, max_iter=max_iter)
        result = _float_result(p, run, tol)
        if result.certified or method == "float-verified":
            return result
    if method == "convexity" or (method == "auto" and K.mode != "balls" and reachable(tol)):
        if K.mode == "balls":
            raise SinkhornInputError("method 'convexity': the cost must be rational (a cost known as balls takes 'float-verified')")
        run = convexity_run(K, p.a, p.b, u0 if run is None else run.iterations.u, max_iter)
        result = _float_result(p, run, tol, "convexity")
        if result.certified or method == "convexity":
            return result
    large = K.mode != "balls" and p.n * p.m > PLAIN_ENTRIES
    if method == "high-precision" or (method == "auto" and large and K.mode == "integers" and K.delta <= HILBERT_MAX_DELTA):
        start = run.iterations if run is not None else float_start(K, p.a, p.b, max_iter, u0)
        return _precise_result(p, K, precise(K, p.a, p.b, tol, start.u, hilbert_precision(prec, K.delta, tol, p.n + p.m)), tol)
    if method == "precise-convexity" or (method == "auto" and large):
        pc = precise_convexity(K, cost, p.eps, p.a, p.b, tol, prec, u0 if run is None else run.iterations.u, max_iter)
        if pc.precise is None:
            if method == "auto":
                return None
            status = f"NOT certified: {pc.reason} (precise-convexity: the Hessian's gap is needed first)"
            return SinkhornResult(p, Ball(prec), "precise-convexity", 0, [], [], [arb(0)] * p.m, K.delta, contraction(K.delta, 64), tol, None, None, status)
        result = _precise_result(p, K, pc.precise, tol, "precise-convexity", pc.witness, pc.convexity.convexity.mu)
        if result.certified or method == "precise-convexity":
            return result
    return None


def _shifted_start(K: ShiftedKernel, log_u: np.ndarray, eps: fmpq) -> np.ndarray | None:
    """A row scaling u of K = exp(-C/eps) as one of the shifted kernel: u e^{-alpha/eps}, normalised (float only)."""
    alpha = K.shifts[0]
    if K.mode == "integers":
        x = log_u - alpha * float(K.scale)  # alpha = A/D: A (1/(D eps))
    else:
        x = log_u - alpha / float(eps)
    if x.shape != (K.shape[0],) or not np.isfinite(x).all():
        return None  # an unusable start is no start: the iterations begin from ones
    return np.exp(x - x.max())


def certified_array(
    cost: ExactCost, a: list[fmpq], b: list[fmpq], eps: fmpq, prec: int, tol: fmpq, method: str = "auto", log_u: np.ndarray | None = None
) -> SinkhornResult | None:
    """``method`` (auto, float-verified or high-precision) on a cost given as one array (no rows of rationals are
    formed): the result, or None where "auto" leaves it to the arb paths. a, b > 0 with equal totals and eps > 0
    (checked by the caller; masses outside float64's normal range are refused here). ``log_u``: a start for the
    float iterations (:func:`_shifted`)."""
    check_float_masses(a, b)
    return _shifted(Problem(ArrayRows(cost), a, b, eps), method, prec, tol, MAX_ITER["Ball"], cost, log_u)


class LazyList(Sequence):
    """A list of ``length`` items made by ``make`` when first read (n balls a large run's caller may never need)."""

    def __init__(self, make: Callable[[], list[Any]], length: int) -> None:
        self.make, self.length, self._items = make, length, None

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: Any) -> Any:
        if self._items is None:
            self._items = self.make()
        return self._items[i]


def _minus(balls: list[arb], xs: Sequence[fmpq], prec: int) -> list[arb]:
    with ctx.workprec(prec):
        return [r - arb(x) for r, x in zip(balls, xs)]


def _float_result(p: Problem, run: FloatRun, tol: fmpq, method: str = "float-verified") -> SinkhornResult:
    """The result of a float-verified run (Hilbert's bound) or of a convexity run (the strong-convexity bound)."""
    K, its = run.kernel, run.iterations.iterations
    lam = contraction(K.delta, 64)
    details: dict[str, Any] = {"prec": 64, "kernel": K.mode, "float_iterations": its}
    zeros = [arb(0)] * p.m  # P^ = diag(u^) K' diag(b / K'^T u^) has column sums b exactly
    if run.evaluation is None:
        status = f"NOT certified: {run.reason} after {its} float64 iterations ({method})"
        floats = (run.iterations.u[:, None] * K.K).tolist() if p.n * p.m <= PLAIN_ENTRIES else []
        return SinkhornResult(p, Ball(64), method, its, floats, [], zeros, K.delta, lam, tol, None, None, status, details)
    bound = arb(run.bound)
    rows = LazyList(lambda: _minus(run.row_sums(), p.a, 64), p.n)
    verdict = "certified" if bound <= arb(tol) else f"NOT certified to tol {tol}"
    status = f"{verdict} ({method}): bound {bound.str(5, radius=False)} after {its} float64 iterations, Delta <= {float(K.delta):.4g}"
    witness: dict[str, Any] = {"u": [fmpq(*x.as_integer_ratio()) for x in run.evaluation.u.tolist()]}
    if K.mode == "balls":  # the shift is a choice here, not a function of the cost: the witness names it
        witness["alpha"], witness["beta"] = ([fmpq(*x.as_integer_ratio()) for x in v.tolist()] for v in K.shifts)
    if run.convexity is not None:  # the witness x (and its column scaling y) of the balanced kernel, and sigma: choices
        x, y = run.balance
        witness["u"] = [fmpq(*t.as_integer_ratio()) for t in x.tolist()]
        witness["v"] = [fmpq(*t.as_integer_ratio()) for t in y.tolist()]
        witness["sigma"] = fmpq(*run.convexity.sigma.as_integer_ratio())
        status += f", Hessian gap mu >= {run.convexity.mu.str(3, radius=False)}"
    return SinkhornResult(p, Ball(64), method, its, run.iterate(), rows, zeros, K.delta, lam, tol, bound, run.widened(), status, details, witness, run)


def _precise_result(
    p: Problem, K: ShiftedKernel, run: PreciseRun, tol: fmpq, method: str = "high-precision", witness: dict[str, Any] | None = None, mu: arb | None = None
) -> SinkhornResult:
    """The result of a high-precision run: Hilbert's bound, or (``method`` precise-convexity, with its ``witness`` and
    the float run's gap ``mu``) the strong-convexity bound on the same evaluation."""
    ev, prec = run.evaluation, run.prec
    rows = LazyList(lambda: _minus(ev.row_balls(prec), p.a, prec), p.n)
    cols = [arb(0)] * p.m  # P^ = diag(u^) K' diag(b / K'^T u^) has column sums b exactly
    if not ev.bound.is_finite():  # the convexity hypothesis t < 0.34 failed at the last evaluation: no bound
        status = f"NOT certified ({method}): the residual is too large for the Hessian's gap (t >= 0.34) after {run.evaluations} evaluations"
        return SinkhornResult(p, Ball(prec), method, run.evaluations, run.plan(), rows, cols, K.delta, contraction(K.delta, prec), tol, None, None, status)
    verdict = "certified" if ev.bound <= arb(tol) else f"NOT certified to tol {tol}"
    status = (
        f"{verdict} ({method}): bound {ev.bound.str(5, radius=False)} after {run.evaluations} evaluations "
        f"({run.newton} Newton-corrected) at {prec} bits, Delta <= {float(K.delta):.4g}"
    )
    if mu is not None:
        status += f", Hessian gap mu >= {mu.str(3, radius=False)} (float witness)"
    details = {"prec": prec, "evaluations": run.evaluations, "newton_corrections": run.newton, "kernel_digits": len(run.kernel.digits.digits)}
    if witness is not None:  # precise-convexity: the float recipe of its gap's evaluation (and of its kernel)
        details["kernel"] = K.mode
    with ctx.workprec(prec):
        widen = arb(0, ev.bound).exp()
    return SinkhornResult(
        p, Ball(prec), method, run.evaluations, run.plan(), rows, cols, K.delta, contraction(K.delta, prec), tol, ev.bound,
        run.plan(widen), status, details, witness or {"u": run.witness}, run,
    )


# -- Ball: iterations certified by the Hilbert bound ---------------------------------------


def hilbert_precision(prec: int, delta: fmpq, tol: fmpq, terms: int) -> int:
    """Working bits: at least ``prec``, and enough that rounding stays below tol (1 - lambda).

    The bound multiplies d_H by 1/(1 - lambda) <= e^{Delta/2}, so d_H must reach
    tol e^{-Delta/2}; the row sums, sums of ``terms`` products, carry about
    log2(terms) bits of rounding. So log2(1/tol) + Delta/(2 ln 2) + log2(terms)
    bits, plus 8 guard bits, rounded up to a multiple of 64 (arb's limb).
    """
    # log2 of the integers, not of 1/tol as a float: tol = 1e-400 is below the floats
    need = math.ceil(math.log2(int(tol.q)) - math.log2(int(tol.p)) + float(delta) / (2 * math.log(2)) + math.log2(terms)) + 8
    return max(prec, -(-need // 64) * 64)


#: The largest log-step of u^ in the arb Hilbert loop: the warm start is floored at e^-700, and a kernel's range is
#: within e^-700 too; a larger Newton step (one of e^4,000,000 was seen, from a row of mass 1e-6) is not taken.
STEP_MAX = 1400.0


def _hilbert(p: Problem, delta: fmpq, prec: int, tol: fmpq, max_iter: int) -> SinkhornResult:
    n, m = p.n, p.m
    Ka = kernel_entries(p, prec)  # the same balls as K's entries, for the plan without converting K back
    with ctx.workprec(prec):
        K = arb_mat(Ka.tolist())
    KT = K.transpose()
    L, lb = p.log_kernel_float, np.log(p.float_marginals()[1])
    with ctx.workprec(prec):
        a = [arb(x) for x in p.a]
        b = [arb(x) for x in p.b]
        tol_b = arb(tol)
        warm = _float_warm_start(p)
        # An exact dyadic starting point; u is scale-free (diag(cu) K diag(v/c) is the same plan), so the
        # warm start is scaled to max 1, and floored at e^-700 so that no double overflows or reaches 0.
        x = np.maximum(warm.x - warm.x.max(), -700.0)  # log u^, in float: only for the Newton corrections
        u = [arb(t) for t in np.exp(x).tolist()]
        best, best_it, it, newton = None, 0, 0, 0
        while True:
            KTu = (KT * arb_mat(n, 1, u)).entries()
            v = [bj / t for bj, t in zip(b, KTu)]  # balls around the exact v^ = b / K^T u^
            it += 1
            r = [ui * t for ui, t in zip(u, (K * arb_mat(m, 1, v)).entries())]  # balls around the row sums of P^
            bound = a_posteriori_bound(hilbert_distance_upper(r, a, prec), delta, prec)
            improved = best is None or bound < best
            if improved:
                best, best_it = bound, it
            if bound <= tol_b or it >= max_iter or it - best_it >= STALL:
                break
            s = np.array([float((ri / ai - 1).mid()) for ri, ai in zip(r, a)])
            try:  # Newton while it helps, else a plain Sinkhorn row update u <- a / (K v) = u e^{-log(r/a)}
                step = row_correction(L, lb, x, s) if improved else -np.log1p(s)
                newton += improved
            except np.linalg.LinAlgError:
                step = -np.log1p(s)
            if not np.abs(step).max() <= STEP_MAX:  # a Newton step beyond any kernel's range (or NaN): Sinkhorn's
                step = -np.log1p(s)
                if not np.abs(step).max() <= STEP_MAX:
                    break  # u^ stays the last point, whose bound was just computed
            x = x + step
            # u^ e^step rounded to an exact point: any point will do (the bound is a posteriori), and
            # 1 + expm1(step) keeps the step's float accuracy relative to the step, not to 1. A step of -30 or less
            # takes e^step in arb: expm1(-40) is -1.0 in float, which made u_i exactly 0 (then v = b / 0: a traceback).
            u = [(ui * (1 + arb(e) if st > -30 else arb(st).exp())).mid() for ui, e, st in zip(u, np.expm1(step).tolist(), step.tolist())]
        P = ScaledKernel(u, Ka, v, prec)  # P^ = diag(u^) K diag(v^), formed when read
        rows = [ri - ai for ri, ai in zip(r, a)]  # P^ 1 = u (K v): already enclosed
        cols = [vj * t - bj for vj, t, bj in zip(v, KTu, b)]  # P^T 1 = v (K^T u), exactly b
    if bound <= tol_b:
        status = f"certified: bound {bound.str(5, radius=False)} <= tol {tol} after {it} iterations"
    elif it >= max_iter:
        status = f"NOT certified to tol {tol}: bound {bound.str(5, radius=False)} after the limit of {max_iter} iterations"
    else:
        status = (
            f"NOT certified to tol {tol}: bound stalled at {bound.str(5, radius=False)} after {it} iterations "
            f"(precision floor of Ball({prec}); raise prec)"
        )
    plan = P.scaled_rows(_widening(bound, prec))  # contains P*
    details = {"prec": prec, "float_warm_start": warm.iterations, "newton_corrections": newton}
    witness = {"u": [x.fmpq() for x in u]}
    return SinkhornResult(
        p, Ball(prec), "hilbert", it, P, rows, cols, delta, contraction(delta, prec), tol, bound, plan, status, details, witness
    )


def _float_warm_start(p: Problem) -> LogSinkhorn:
    """Float iterations to about 1e-14, or until they stall: only a starting point (the bound is a posteriori).

    Plain iterations on the rescaled kernel (:func:`~constructions.sinkhorn.logdomain.scaled_sinkhorn`);
    the log-domain ones where those leave the float range (a large Delta).
    """
    args = (p.log_kernel_float, *p.float_marginals(), 1e-14, 10_000)
    warm = scaled_sinkhorn(*args, stall=WARM_START_STALL)
    return warm if np.isfinite(warm.x).all() else log_sinkhorn(*args, stall=WARM_START_STALL)


# -- Ball: interval Newton on the dual equations --------------------------------------------


def _krawczyk(p: Problem, delta: fmpq, prec: int, tol: fmpq) -> SinkhornResult:
    """Interval Newton at ``prec`` bits; on failure, or a bound above tol, retry at doubled precision.

    The Jacobian's condition number can reach about e^{Delta/2}, so precision is
    doubled up to at least Delta / (2 ln 2) + 128 bits (and at least 4 prec), but
    not past the precision limit in force (``max_precision`` of
    :mod:`exact.limits`, the limit ``prove`` checks its cost model against): a
    problem whose ladder would climb further stops there, not certified, instead
    of running for hours at millions of bits.
    This ladder is a heuristic; the test at each rung is rigorous. Every rung
    starts from the same float eps-continuation point
    (:mod:`constructions.sinkhorn.continuation`). ``iterations`` counts every
    Newton step: the float ones of all continuation stages and the arb ones of
    all rungs (``details`` splits them).
    """
    start = continuation_start(p, delta)
    arb_steps = 0
    need, top = max(4 * prec, math.ceil(float(delta) / (2 * math.log(2))) + 128), current_limits().max_precision
    ladder = [prec]
    while ladder[-1] < min(need, top):
        ladder.append(min(2 * ladder[-1], top))
    for work in ladder:
        d = certify_dual(p, work, (start.x, start.y))
        arb_steps += d.newton_steps
        if d.verified:
            with ctx.workprec(work):
                bx = max(((xb - xh).abs_upper() for xb, xh in zip(d.x_box, d.x_hat)), key=lambda t: t.mid())
                by = max(((yb - yh).abs_upper() for yb, yh in zip(d.y_box, d.y_hat)), key=lambda t: t.mid())
                bound = (bx + by).upper()  # max |log P^ - log P*| <= max|x - x*| + max|y - y*|
            if bound <= arb(tol):
                break
    K = kernel_entries(p, d.prec)
    steps = start.newton_steps + arb_steps
    details = {
        "prec": d.prec,
        "continuation_stages": len(start.stages),
        "float_sinkhorn_iterations": start.sinkhorn_iterations,
        "float_newton_steps": start.newton_steps,
        "arb_newton_steps": arb_steps,
    }
    with ctx.workprec(d.prec):
        P = ScaledKernel([t.exp() for t in d.x_hat], K, [t.exp() for t in d.y_hat], d.prec)
        rows, cols = _marginal_errors(P, p, arb(0))
        lam = contraction(delta, d.prec)
        if not d.verified:
            cut = f"; the ladder's top, {need:,} bits, is over the precision limit (max_precision)" if need > top else ""
            status = f"NOT certified: {d.reason} (tried {prec} to {d.prec} bits{cut})"
            return SinkhornResult(p, Ball(prec), "krawczyk", steps, P, rows, cols, delta, lam, tol, None, None, status, details)
        plan = ScaledKernel([t.exp() for t in d.x_box], K, [t.exp() for t in d.y_box], d.prec)
    verdict = "certified" if bound <= arb(tol) else f"NOT certified to tol {tol}"
    status = (
        f"{verdict}: Krawczyk box verified at {d.prec} bits after {steps} Newton steps "
        f"({start.newton_steps} float in {len(start.stages)} eps stages, {arb_steps} in arb), "
        f"bound {bound.str(5, radius=False)}"
    )
    witness = {"x": [t.fmpq() for t in d.x_hat], "y": [t.fmpq() for t in d.y_hat], "rho": d.rho.fmpq()}
    return SinkhornResult(p, Ball(prec), "krawczyk", steps, P, rows, cols, delta, lam, tol, bound, plan, status, details, witness)


# -- Float: log-domain comparison path ------------------------------------------------------


def _float(p: Problem, tol: fmpq, max_iter: int) -> SinkhornResult:
    L = p.log_kernel_float
    a, b = p.float_marginals()
    t = float_of(min(tol, LARGEST))  # a tol beyond the doubles is met by every finite residual
    s = log_sinkhorn(L, a, b, t, max_iter)
    P = s.plan(L)
    rows = list(P.sum(1) - a)
    cols = list(P.sum(0) - b)
    delta = projective_diameter(p)
    reached = s.row_error <= t
    status = (
        f"float only (agreement, not a certificate): ||P1 - a||_1 = {s.row_error:.3g} after {s.iterations} iterations"
        + ("" if reached else f", NOT below tol {t:.3g} within the limit of {max_iter}")
    )
    return SinkhornResult(p, Float, "log-domain", s.iterations, P.tolist(), rows, cols, delta, contraction(delta, 64), tol, None, None, status, {"reached_tol": reached})
