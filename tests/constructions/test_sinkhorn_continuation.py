"""eps-continuation for Krawczyk at small eps: the schedule, the float start, every Newton step counted,
the same plans as other certified paths, and the independent checker (forgeries refused)."""

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn import sinkhorn
from attncert.constructions.sinkhorn.continuation import RATIO, START_DELTA, continuation_start, schedule
from attncert.constructions.sinkhorn.hilbert import projective_diameter
from attncert.constructions.sinkhorn.kernel import ball_kernel
from attncert.constructions.sinkhorn.logdomain import log_sinkhorn, scaled_sinkhorn, semidual_newton
from attncert.constructions.sinkhorn.problem import random_cost, random_marginal, read_problem, uniform_marginal
from attncert.exact import Ball
from attncert.proofs.checkers.sinkhorn.hilbert import hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.krawczyk import krawczyk_enclosure
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, sinkhorn_problem


def _problem(seed, n=8):
    return random_cost(n, n, seed), random_marginal(n, seed + 1), random_marginal(n, seed + 2)


def test_schedule_is_geometric_and_ends_at_eps():
    eps, delta = fmpq(1, 10000), fmpq(16050)
    s = schedule(eps, delta)
    assert s[0] == eps * delta / START_DELTA and s[-1] == eps
    assert all(s[k + 1] == s[k] / RATIO for k in range(len(s) - 2)) and s[-2] / RATIO <= eps < s[-2]
    assert schedule(fmpq(1, 5), fmpq(8)) == [fmpq(1, 5)]  # Delta below START_DELTA: one stage


def test_semidual_newton_reaches_the_sinkhorn_potentials():
    C, a, b = _problem(0)
    p = read_problem(C, a, b, fmpq(1, 20))
    L, (af, bf) = p.log_kernel_float, p.float_marginals()
    x, y, steps = semidual_newton(L, af, bf, np.zeros(len(bf)))
    P = np.exp(x[:, None] + L + y[None, :])
    assert steps > 0 and y[0] == 0
    assert np.abs(P.sum(1) - af).max() < 1e-13 and np.abs(P.sum(0) - bf).max() < 1e-12
    s = log_sinkhorn(L, af, bf, 1e-14, 100_000)
    assert np.abs(s.plan(L) - P).max() < 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_eps_certified_in_few_counted_newton_steps(seed):
    C, a, b = _problem(seed)
    r = sinkhorn(C, a, b, "1/10000", Ball(128), tol="1e-30")
    assert r.method == "krawczyk" and r.certified, r.status
    d = r.details
    assert r.iterations == d["float_newton_steps"] + d["arb_newton_steps"]  # every Newton step is counted
    assert d["continuation_stages"] == len(schedule(fmpq(1, 10000), projective_diameter(read_problem(C, a, b, "1/10000"))))
    assert d["float_sinkhorn_iterations"] > 0 and f"after {r.iterations} Newton steps" in r.status
    assert r.iterations <= 30  # issue 15's target (a count, not a time)


def test_the_independent_checker_accepts_the_witness_and_refuses_forgeries():
    C, a, b = _problem(1)
    eps = fmpq(1, 10000)
    r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-30")
    w, prec = r.witness, r.details["prec"] + 64
    q = sinkhorn_problem(C, a, b, eps)
    e = krawczyk_enclosure(q, w["x"], w["y"], w["rho"], prec)
    with ctx.workprec(prec):
        assert all(x.overlaps(y) for rx, ry in zip(e.plan, r.plan) for x, y in zip(rx, ry))
    assert e.log_error <= r.bound.upper().fmpq()
    moved = [w["x"][0] + 1000 * w["rho"]] + w["x"][1:]  # a point off the zero, same radius
    with pytest.raises(HypothesisError, match="Krawczyk"):
        krawczyk_enclosure(q, moved, w["y"], w["rho"], prec)
    with pytest.raises(HypothesisError, match="Krawczyk"):  # a box too small to hold the zero
        krawczyk_enclosure(q, w["x"], w["y"], w["rho"] / 10**6, prec)


def test_continuation_and_hilbert_certify_the_same_plan():
    """Where both methods apply (Delta = 64), the Krawczyk plan from the continuation start and the
    Hilbert plan overlap entrywise; the continuation there has two stages."""
    C, a, b = _problem(0)
    eps = fmpq(1, 40)
    k = sinkhorn(C, a, b, eps, Ball(128), method="krawczyk")
    h = sinkhorn(C, a, b, eps, Ball(128), method="hilbert")
    assert k.certified and h.certified and k.details["continuation_stages"] == 2
    with ctx.workprec(256):
        assert all(x.overlaps(y) for rx, ry in zip(k.plan, h.plan) for x, y in zip(rx, ry))


def test_the_float_start_is_close_and_counts_its_work():
    C, a, b = _problem(2)
    p = read_problem(C, a, b, fmpq(1, 10000))
    s = continuation_start(p, projective_diameter(p))
    assert s.stages[-1].eps == p.eps and s.y[0] == 0
    assert s.newton_steps == sum(t.newton_steps for t in s.stages)
    L, (af, bf) = p.log_kernel_float, p.float_marginals()
    P = np.exp(s.x[:, None] + L + s.y[None, :])
    assert np.abs(P.sum(0) - bf).max() < 1e-10 and np.abs(P.sum(1) - af).max() < 1e-10


def test_hilbert_with_newton_corrections_is_checked_independently():
    """The 64x64 benchmark problem: a few Newton-corrected Hilbert iterations, a bound the checker
    reproduces from the witness u alone, enclosures that overlap, and a moved witness whose proven
    bound is above tol (so a certificate recording it and the old bound is refused)."""
    n, eps = 64, fmpq(1, 5)
    C, a = random_cost(n, n, 0), uniform_marginal(n)
    r = sinkhorn(C, a, a, eps, Ball(128), tol="1e-30")
    assert r.method == "hilbert" and r.certified and r.details["newton_corrections"] >= 1 and r.iterations <= 5
    q = sinkhorn_problem(C, a, a, eps)
    e = hilbert_enclosure(q, r.witness["u"], r.details["prec"] + 64)
    assert e.log_error <= r.bound.upper().fmpq()
    with ctx.workprec(256):
        assert all(x.overlaps(y) for rx, ry in zip(e.plan, r.plan) for x, y in zip(rx, ry))
    moved = [r.witness["u"][0] * (1 + fmpq(1, 10**20))] + r.witness["u"][1:]
    assert hilbert_enclosure(q, moved, r.details["prec"] + 64).log_error > fmpq(1, 10**30)  # a worse point: a bound above tol


@pytest.mark.parametrize("eps", [fmpq(1, 5), fmpq(1, 20)])
def test_scaled_kernel_iterations_give_the_log_domain_plan(eps):
    """The Hilbert warm start (plain iterations on the rescaled kernel) reaches the log-domain iterations' plan."""
    C, a, b = _problem(0)
    p = read_problem(C, a, b, eps)
    L, (af, bf) = p.log_kernel_float, p.float_marginals()
    s = scaled_sinkhorn(L, af, bf, 1e-14, 100_000, stall=20)
    ref = log_sinkhorn(L, af, bf, 1e-14, 100_000)
    P = s.plan(L)
    assert s.row_error < 1e-13 and np.abs(P.sum(0) - bf).max() < 1e-14
    assert np.abs(P - ref.plan(L)).max() < 1e-13


def test_hilbert_iterate_from_the_kernel_entries_overlaps_the_plain_product():
    """P^ built from kernel_entries' balls (not from the arb_mat) overlaps diag(u^) K diag(v^) from ball_kernel."""
    n, eps = 16, fmpq(1, 5)
    C, a = random_cost(n, n, 0), uniform_marginal(n)
    r = sinkhorn(C, a, a, eps, Ball(128), tol="1e-30")
    p = read_problem(C, a, a, eps)
    K = ball_kernel(p, 128).tolist()
    with ctx.workprec(128):
        u = [arb(x) for x in r.witness["u"]]
        v = [arb(bj) / sum((K[i][j] * u[i] for i in range(n)), arb(0)) for j, bj in enumerate(a)]
        assert all(r.iterate[i][j].overlaps(u[i] * K[i][j] * v[j]) for i in range(n) for j in range(n))
    assert hilbert_enclosure(sinkhorn_problem(C, a, a, eps), r.witness["u"], 192).log_error <= r.bound.upper().fmpq()
