"""The shifted kernel, the float-verified and the high-precision paths, against 60-digit mpmath.

The reference is independent of both: plain Sinkhorn in mpmath on the exact inputs (P*), and the plan
P^ = diag(u^) K' diag(b / K'^T u^) of the recorded witness, both at 60 digits, with K' the kernel of the
exactly shifted cost. The true distance max |log P^ - log P*| must lie within each certified bound.
"""

from __future__ import annotations

from itertools import product

import mpmath
import numpy as np
import pytest
from flint import fmpq

from attncert.constructions.sinkhorn import sinkhorn
from attncert.constructions.sinkhorn.operator import exact_array
from attncert.constructions.sinkhorn.problem import SinkhornInputError, random_cost, random_marginal, read_problem
from attncert.constructions.sinkhorn.shifted import UnsupportedKernel, array_cost, shifted_kernel
from attncert.exact import Ball
from attncert.exact.roundoff import exact
from attncert.proofs.checkers.sinkhorn.float_hilbert import float_hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.precise_hilbert import precise_hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem
from attncert.proofs.sinkhorn.common import mp_sinkhorn

DPS = 60


def _mp(q: fmpq) -> mpmath.mpf:
    return mpmath.mpf(int(q.p)) / int(q.q)


def true_distance(C, a, b, eps, u, alpha=None) -> mpmath.mpf:
    """max |log P^ - log P*| at 60 digits: P* by plain Sinkhorn, P^ from the witness u (which scales the shifted kernel,
    its rows shifted by alpha: the row minima of C unless a run records its own)."""
    ref, _ = mp_sinkhorn(C, a, b, eps, DPS, 5000)
    assert ref is not None, "the reference did not converge"
    with mpmath.workdps(DPS):
        alpha = [min(row) for row in C] if alpha is None else alpha
        K = [[mpmath.exp(-(_mp(c) - _mp(al)) / _mp(eps)) for c in row] for row, al in zip(C, alpha)]  # column shifts cancel in P^
        U = [_mp(x) for x in u]
        v = [_mp(bj) / mpmath.fsum(K[i][j] * U[i] for i in range(len(U))) for j, bj in enumerate(b)]
        return max(abs(mpmath.log(U[i] * K[i][j] * v[j] / ref[i][j])) for i, j in product(range(len(a)), range(len(b))))


def as_mp(x: fmpq) -> mpmath.mpf:
    with mpmath.workdps(DPS):
        return _mp(x)


@pytest.mark.parametrize(
    "n, m, seed, eps, tol",
    [(6, 7, 0, fmpq(1, 5), "1e-11"), (6, 7, 0, fmpq(1, 5), "1e-6"), (1, 5, 1, fmpq(1, 3), "1e-12"), (5, 1, 2, fmpq(2, 1), "1e-12"), (9, 9, 3, fmpq(1, 20), "1e-5")],
)
def test_float_verified_bound_holds_against_mpmath_and_the_checker_agrees(n, m, seed, eps, tol):
    C, a, b = random_cost(n, m, seed), random_marginal(n, seed + 1), random_marginal(m, seed + 2)
    r = sinkhorn(C, a, b, eps, Ball(128), tol=tol, method="float-verified")
    assert r.method == "float-verified" and r.certified, r.status
    bound = r.bound.fmpq()
    assert true_distance(C, a, b, eps, r.witness["u"]) <= as_mp(bound)
    e = float_hilbert_enclosure(sinkhorn_problem(C, a, b, eps), r.witness["u"], r.details["kernel"])
    assert e.log_error <= bound <= e.log_error * (1 + fmpq(1, 2**20))  # the same evaluation, rounded up on record


def test_the_float_recipe_on_binary_floats_and_its_checker():
    rng = np.random.default_rng(11)
    M = rng.random((7, 6)) * 3
    M[0, 0] = 1e-30  # doubles of many exponents: no int64 integer form
    C = [[exact(x) for x in row] for row in M.tolist()]
    a, b = random_marginal(7, 1), random_marginal(6, 2)
    eps = fmpq(1, 4)
    assert exact_array(read_problem(C, a, b, eps)).den is None
    r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-6", method="float-verified")
    assert r.certified and r.details["kernel"] == "floats", r.status
    assert true_distance(C, a, b, eps, r.witness["u"]) <= as_mp(r.bound.fmpq())
    assert float_hilbert_enclosure(sinkhorn_problem(C, a, b, eps), r.witness["u"], "floats").log_error <= r.bound.fmpq()


@pytest.mark.parametrize("n, m, seed, eps", [(6, 7, 0, fmpq(1, 5)), (1, 4, 1, fmpq(1, 2)), (8, 8, 3, fmpq(1, 20))])
def test_high_precision_bound_holds_against_mpmath_and_the_checker_agrees(n, m, seed, eps):
    C, a, b = random_cost(n, m, seed), random_marginal(n, seed + 1), random_marginal(m, seed + 2)
    r = sinkhorn(C, a, b, eps, Ball(128), tol="1e-30", method="high-precision")
    assert r.method == "high-precision" and r.certified, r.status
    bound = r.bound.upper().fmpq()
    assert bound <= fmpq(1, 10**30)
    assert true_distance(C, a, b, eps, r.witness["u"]) <= as_mp(bound)
    e = precise_hilbert_enclosure(sinkhorn_problem(C, a, b, eps), r.witness["u"], r.details["prec"] + 64)
    assert e.log_error <= bound
    # the enclosure contains P* (the reference) entry by entry
    ref, _ = mp_sinkhorn(C, a, b, eps, DPS, 5000)
    from attncert.proofs.sinkhorn.common import contains

    assert contains(r.plan, ref, r.details["prec"]) and contains(e.plan, ref, r.details["prec"] + 64)


def test_the_shifted_kernel_encloses_exp_of_the_shifted_cost():
    C, eps = random_cost(5, 6, 4), fmpq(1, 7)
    K = shifted_kernel(exact_array(read_problem(C, random_marginal(5, 1), random_marginal(6, 2), eps)), eps)
    A, B = K.shifts
    with mpmath.workdps(40):
        for i, j in product(range(5), range(6)):
            z = int(K.index[i, j])
            assert z == int(C[i][j] * 1000) - int(A[i]) - int(B[j]) >= 0
            true = mpmath.exp(-mpmath.mpf(z) / 1000 / _mp(eps))
            ratio = true / mpmath.mpf(float(K.K[i, j]))
            assert as_mp(K.factor.lo.fmpq()) <= ratio <= as_mp(K.factor.hi.fmpq())
    assert (K.index.min(1) == 0).all() and (K.index.min(0) == 0).all()  # a zero in every row and column


@pytest.mark.parametrize("recipe", ["floats", "integers"])
def test_the_corrected_kernel_encloses_large_exponents_within_about_u(recipe):
    """Exponents up to about 690 (eps 1/100 on costs up to 6.9): every K'_ij / K~_ij, K'_ij = e^{-C'_ij / eps} computed
    at 60 digits from the recorded shifts, lies in the kernel's factor, and that factor is within 2e-15 of 1: the
    exponent's rounding is corrected, where the rounded exponent alone cost gamma_2 y (1.5e-13 at y = 690)."""
    rng = np.random.default_rng(11)
    eps = fmpq(1, 100)
    if recipe == "floats":
        M = rng.random((6, 7)) * 6.9
        K = shifted_kernel(array_cost(M), eps)
        alpha, beta = K.shifts
        cost = lambda i, j: mpmath.mpf(float(M[i, j])) - mpmath.mpf(float(alpha[i])) - mpmath.mpf(float(beta[j]))  # noqa: E731
    else:
        Z = rng.integers(0, 6900, (6, 7))
        K = shifted_kernel(array_cost(Z), eps * 1000)  # C = Z at eps 10: the same exponents Z / 10, up to 690
        cost = lambda i, j: mpmath.mpf(int(K.index[i, j])) / 1000  # noqa: E731
    assert K.mode == recipe
    with mpmath.workdps(60):
        ratios = [mpmath.exp(-cost(i, j) / _mp(eps)) / mpmath.mpf(float(K.K[i, j])) for i, j in product(range(6), range(7))]
        assert min(-cost(i, j) / _mp(eps) for i, j in product(range(6), range(7))) < -500  # exponents past 500 are here
        assert all(as_mp(K.factor.lo.fmpq()) <= r <= as_mp(K.factor.hi.fmpq()) for r in ratios)
    assert float(K.factor.hi.fmpq()) - 1 < 2e-15 and 1 - float(K.factor.lo.fmpq()) < 2e-15


def test_the_cheap_delta_bounds_the_exact_one():
    from attncert.constructions.sinkhorn.hilbert import projective_diameter

    for seed in range(8):
        C = random_cost(4, 5, seed, den=20)
        p = read_problem(C, random_marginal(4, 1), random_marginal(5, 2), fmpq(1, 3))
        K = shifted_kernel(exact_array(p), p.eps)
        assert projective_diameter(p) <= K.delta <= 2 * projective_diameter(p) + 6  # an upper bound, not a wild one


def test_float_path_falls_back_where_float64_cannot_hold_the_kernel():
    C = [[fmpq(0), fmpq(1000)], [fmpq(1000), fmpq(0)]]  # Delta = 10^4 at eps = 1/5: entries e^-5000
    a = [fmpq(1, 2)] * 2
    with pytest.raises(UnsupportedKernel):
        shifted_kernel(exact_array(read_problem(C, a, a, fmpq(1, 5))), fmpq(1, 5))
    with pytest.raises(SinkhornInputError, match="float-verified"):
        sinkhorn(C, a, a, "1/5", Ball(128), tol="1e-6", method="float-verified")
    assert sinkhorn(C, a, a, "1/5", Ball(128), tol="1e-6").method == "krawczyk"  # auto: the arb paths


def test_auto_picks_by_tolerance_and_size():
    C, a, b = random_cost(8, 8, 0), random_marginal(8, 1), random_marginal(8, 2)
    assert sinkhorn(C, a, b, "1/5", Ball(128), tol="1e-9").method == "float-verified"
    assert sinkhorn(C, a, b, "1/5", Ball(128), tol="1e-30").method == "hilbert"  # small: the arb path
    C, a = random_cost(70, 70, 0), random_marginal(70, 1)
    r = sinkhorn(C, a, a, "1/5", Ball(128), tol="1e-30")
    assert r.method == "high-precision" and r.certified
    assert sinkhorn(C, a, a, "1/5", Ball(128), tol="1e-30", method="float-verified").certified is False  # below its floor


def test_array_costs_refuse_what_is_not_a_cost():
    with pytest.raises(ValueError):
        array_cost(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError):
        array_cost(np.array(["a"]))
    assert array_cost(np.array([[1, 2]], dtype=np.int16)).den == 1


class RationalAsBalls:
    """A rational cost handed over as a cost enclosure (as a Sinkhorn Transformer's is): balls at any precision."""

    exact = True

    def __init__(self, C):
        self.C, self.shape = C, (len(C), len(C[0]))

    def balls(self, prec):
        from flint import arb, ctx

        with ctx.workprec(prec):
            return [[arb(x) for x in row] for row in self.C]


@pytest.mark.parametrize("n, m, seed, eps", [(5, 6, 0, fmpq(1, 5)), (1, 3, 1, fmpq(1, 2))])
def test_float_verified_on_a_cost_known_as_balls(n, m, seed, eps):
    from attncert.proofs.checkers.sinkhorn.hilbert import hilbert_enclosure
    from attncert.proofs.checkers.sinkhorn.problem import BallCost

    C, a, b = random_cost(n, m, seed), random_marginal(n, seed + 1), random_marginal(m, seed + 2)
    cost = RationalAsBalls(C)
    r = sinkhorn(cost, a, b, eps, Ball(128), tol="1e-9")
    assert r.method == "float-verified" and r.details["kernel"] == "balls" and r.certified, r.status
    bound = r.bound.fmpq()
    assert true_distance(C, a, b, eps, r.witness["u"], r.witness["alpha"]) <= as_mp(bound)
    p = sinkhorn_problem(BallCost(cost.balls, cost.shape), a, b, eps)
    e = hilbert_enclosure(p, r.witness["u"], 192, (r.witness["alpha"], r.witness["beta"]))
    assert e.log_error <= bound  # the checker's arb evaluation is tighter than the float one
    assert sinkhorn(cost, a, b, eps, Ball(128), tol="1e-30").method in ("hilbert", "krawczyk")  # below the float floor


def test_the_witness_is_the_point_whose_digits_are_exact():
    from attncert.constructions.sinkhorn.verified import witness_point
    from attncert.exact.slices import vector_digits

    u = np.array([1.0, 0.3])
    assert witness_point(u) is u  # doubles of nearby exponents: themselves
    w = witness_point(np.array([1.0, 1e-300, 0.3]))  # 1000 binary orders of magnitude: rounded onto 512 bits
    assert (w > 0).all() and w[0] == 1.0 and w[2] <= 0.3 and vector_digits(w, 8)[0].shape[1] <= 64
