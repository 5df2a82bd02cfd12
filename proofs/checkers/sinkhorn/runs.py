r"""One recorded Ball run of certified Sinkhorn, checked against the theorem its method names.

A run records ``method`` (hilbert or krawczyk in arb; float-verified, the Hilbert
bound evaluated in float64 with proven rounding errors; convexity, the strong-convexity
bound on the same evaluation with a verified Cholesky, its witness naming sigma; high-precision, the Hilbert
bound for the shifted kernel with exact integer products; precise-convexity, the strong-convexity bound on that
evaluation, the gap from the Cholesky of a float witness (x, y, sigma)), a ``witness``, the
precision it worked at, the plan enclosure it claims (or none, for a large plan: then
the conclusion is the bound for the witness's plan), its ``bound`` on
max |log P^ - log P*|, its ``tol`` and whether it is ``certified``. :func:`check_run`
concludes that the recorded enclosure contains P* only if

* the problem's hypotheses hold (:mod:`proofs.checkers.sinkhorn.problem`),
* the method's theorem holds on the witness (:mod:`~proofs.checkers.sinkhorn.hilbert`,
  :mod:`~proofs.checkers.sinkhorn.krawczyk`, :mod:`~proofs.checkers.sinkhorn.float_hilbert`,
  :mod:`~proofs.checkers.sinkhorn.convexity`, :mod:`~proofs.checkers.sinkhorn.precise_hilbert`,
  :mod:`~proofs.checkers.sinkhorn.precise_convexity`), recomputed at 64 bits more than the prover
  used (float-verified: by the prover's float64 recipe, named in ``details.kernel``; for a
  cost known as balls, recipe ``balls``, in arb for the kernel shifted as the witness records),
* the recorded bound is at least the bound the theorem proves,
* the recorded plan contains the recomputed enclosure (ball by ball), and
* ``certified`` is exactly ``bound <= tol``.
"""

from __future__ import annotations

from typing import Any

from flint import arb

from attncert.exact import Ball, ParseError
from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import CEILINGS, current as current_limits
from attncert.exact.matrices import matrix_from_json
from attncert.proofs.checkers.sinkhorn.convexity import convexity_enclosure
from attncert.proofs.checkers.sinkhorn.float_hilbert import float_hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.hilbert import hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.krawczyk import krawczyk_enclosure
from attncert.proofs.checkers.sinkhorn.precise_convexity import precise_convexity_enclosure
from attncert.proofs.checkers.sinkhorn.precise_hilbert import precise_hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, Problem
from attncert.proofs.checkers.reading import flag, integer, obj, qvector, rational

EXTRA_BITS = 64


def run_precision(run: dict[str, Any]) -> int:
    """A run's recorded working precision, within the precision limit in force (max_precision, docs/limits.md), as
    verify's estimate of the claim is: the theorems are re-checked at it plus EXTRA_BITS, so a certificate cannot
    make verify work at more bits than the limit by recording them (one proven under a raised limit is verified under it)."""
    prec = integer(obj(run, "details"), "prec", 2, CEILINGS["max_precision"])
    if prec > current_limits().max_precision:
        raise LimitExceeded(
            f"a Sinkhorn run records a working precision of {prec:,} bits, over the limit of {current_limits().max_precision:,} "
            "(raise it with --max-precision if you mean it)"
        )
    return prec


def read_plan(plan_json: Any, prec: int) -> list[list[arb]]:
    return matrix_from_json(plan_json, Ball(prec + EXTRA_BITS))


def check_run(p: Problem, run: dict[str, Any], plan_json: Any, label: str) -> list[str]:
    """Problems with one run; an empty list means the recorded plan (if ``plan_json`` is not None) provably
    contains P*, and the recorded bound holds for the witness's plan."""
    if not isinstance(run, dict):
        raise ParseError("a Sinkhorn run must be an object")
    certified = flag(run, "certified")
    if not certified:
        return [f"{label}: the run is not certified"]
    prec = run_precision(run)
    witness = obj(run, "witness")
    method = run.get("method")
    try:
        if method == "hilbert":
            enclosure = hilbert_enclosure(p, qvector(witness.get("u")), prec + EXTRA_BITS)
        elif method == "krawczyk":
            enclosure = krawczyk_enclosure(p, qvector(witness.get("x")), qvector(witness.get("y")), rational(witness.get("rho")), prec + EXTRA_BITS)
        elif method == "float-verified" and obj(run, "details").get("kernel") == "balls":
            # a cost known as balls: the prover's doubles are not reproducible, so the theorem is evaluated in arb
            shift = (qvector(witness.get("alpha")), qvector(witness.get("beta")))
            enclosure = hilbert_enclosure(p, qvector(witness.get("u")), prec + EXTRA_BITS, shift)
        elif method == "float-verified":
            recipe = obj(run, "details").get("kernel")
            enclosure = float_hilbert_enclosure(p, qvector(witness.get("u")), recipe if isinstance(recipe, str) else "", plan_json is not None)
        elif method == "convexity":
            recipe = obj(run, "details").get("kernel")
            u, v, sigma = qvector(witness.get("u")), qvector(witness.get("v")), rational(witness.get("sigma"))
            enclosure = convexity_enclosure(p, u, v, sigma, recipe if isinstance(recipe, str) else "", plan_json is not None)
        elif method == "high-precision":
            enclosure = precise_hilbert_enclosure(p, qvector(witness.get("u")), prec + EXTRA_BITS, plan_json is not None)
        elif method == "precise-convexity":
            u, x, y = (qvector(witness.get(k)) for k in ("u", "x", "y"))
            recipe = obj(run, "details").get("kernel")
            sigma = rational(witness.get("sigma"))
            enclosure = precise_convexity_enclosure(p, u, x, y, sigma, prec + EXTRA_BITS, recipe if isinstance(recipe, str) else "", plan_json is not None)
        else:
            raise ParseError(f"unknown Sinkhorn method {method!r:.30}")
    except HypothesisError as e:
        return [f"{label}: {e}"]
    problems = []
    bound, tol = rational(run.get("bound")), rational(run.get("tol"))
    if bound < enclosure.log_error:
        problems.append(f"{label}: the recorded bound is below what the {method} theorem proves ({float(enclosure.log_error):.3g})")
    if not bound <= tol:
        problems.append(f"{label}: marked certified but the bound exceeds tol")
    if plan_json is not None and not contains_all(read_plan(plan_json, prec), enclosure.plan):
        problems.append(f"{label}: the recorded plan does not contain the recomputed enclosure")
    return problems


def contains_all(outer: list[list[arb]], inner: list[list]) -> bool:
    """Entry by entry, the ball of outer contains inner (same shape): a ball, or an interval (lo, hi) of exact
    endpoints (the float evaluations' enclosures), compared endpoint by endpoint."""
    return len(outer) == len(inner) and all(len(r) == len(s) and all(_contains(x, y) for x, y in zip(r, s)) for r, s in zip(outer, inner))


def _contains(x: arb, y: arb | tuple[arb, arb]) -> bool:
    if isinstance(y, tuple):
        return bool(x.lower() <= y[0] and x.upper() >= y[1])
    return x.contains(y)
