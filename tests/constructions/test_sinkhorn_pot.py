"""attncert.sinkhorn(a, b, M, reg): POT's argument order, the plan as numpy and a certified bound on its error.

Code written against ``ot.sinkhorn(a, b, M, reg)`` gets the same plan to float agreement, and the bound is
checked against an mpmath Sinkhorn computed here, from the exact values of the inputs, at 60 digits.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from flint import fmpq

import attncert
from attncert.constructions.sinkhorn import SinkhornInputError
from attncert.constructions.sinkhorn import sinkhorn as sinkhorn_c_first
from attncert.constructions.sinkhorn.pot import sinkhorn

ot = pytest.importorskip("ot")


def mp_plan(a, b, M, reg, dps: int = 60, max_iter: int = 20000) -> list[list[mpmath.mpf]]:
    """Plain Sinkhorn in mpmath on the exact values (Fractions) of the inputs, until the row residual is below
    10^-(dps - 10): the reference the bound is checked against (its own error is far below the bound's scale)."""
    with mpmath.workdps(dps):
        f = lambda x: mpmath.mpf(x.numerator) / x.denominator  # noqa: E731
        K = [[mpmath.exp(-f(c) / f(reg)) for c in row] for row in M]
        A, B = [f(x) for x in a], [f(x) for x in b]
        u, v = [mpmath.mpf(1)] * len(A), [mpmath.mpf(1)] * len(B)
        for _ in range(max_iter):
            v = [B[j] / mpmath.fsum(K[i][j] * u[i] for i in range(len(A))) for j in range(len(B))]
            Kv = [mpmath.fsum(K[i][j] * v[j] for j in range(len(B))) for i in range(len(A))]
            if max(abs(u[i] * Kv[i] - A[i]) for i in range(len(A))) < mpmath.mpf(10) ** (10 - dps):
                return [[u[i] * K[i][j] * v[j] for j in range(len(B))] for i in range(len(A))]
            u = [A[i] / Kv[i] for i in range(len(A))]
    raise AssertionError("the mpmath reference did not converge")


def exact(xs) -> list:
    return [Fraction(x) for x in np.asarray(xs, dtype=float).ravel().tolist()]


def assert_true_bound(G: np.ndarray, bound: Fraction, ref: list[list[mpmath.mpf]]) -> None:
    with mpmath.workdps(60):
        worst = max(abs(mpmath.mpf(float(g)) - p) for g_row, p_row in zip(G.tolist(), ref) for g, p in zip(g_row, p_row))
        assert worst <= mpmath.mpf(bound.numerator) / bound.denominator + mpmath.mpf(10) ** -45


@pytest.fixture
def problem():
    rng = np.random.default_rng(7)
    M = rng.random((5, 4))
    a = rng.random(5) + 0.5
    a /= a.sum()
    b = np.full(4, 0.25)
    return a, b, M


@pytest.mark.parametrize("reg", [0.5, 0.1, 0.05])
def test_the_plan_is_pots_and_the_bound_holds_against_mpmath(problem, reg):
    a, b, M = problem
    G, bound = attncert.sinkhorn(a, b, M, reg)  # the line that replaces G = ot.sinkhorn(a, b, M, reg)
    assert isinstance(G, np.ndarray) and G.dtype == np.float64 and G.shape == M.shape
    assert isinstance(bound, Fraction) and 0 < bound < Fraction(1, 10**15)  # the float64 rounding, about an ulp
    np.testing.assert_allclose(G, ot.sinkhorn(a, b, M, reg), rtol=0, atol=1e-8)  # POT at its default stopThr 1e-9
    np.testing.assert_allclose(G, ot.sinkhorn(a, b, M, reg, stopThr=1e-14, numItermax=100000), rtol=0, atol=1e-13)
    # a and b are floats: their exact totals are what the plan's marginals are, b scaled to sum(a) if they differ.
    ea, eb, eM = exact(a), exact(b), [exact(r) for r in M]
    eb = [x * sum(ea) / sum(eb) for x in eb]
    assert_true_bound(G, bound, mp_plan(ea, eb, eM, Fraction(reg)))


def test_small_reg_agrees_with_pot_and_is_certified_by_krawczyk(problem):
    a, b, M = problem
    G, bound, run = attncert.sinkhorn(a, b, M, 0.005, full=True)
    assert run.method == "krawczyk" and run.certified and bound < Fraction(1, 10**15)
    np.testing.assert_allclose(G, ot.sinkhorn(a, b, M, 0.005, stopThr=1e-14, numItermax=10**6), rtol=0, atol=1e-12)


def test_float_marginals_whose_exact_totals_differ_are_rescaled(problem):
    _, _, M = problem
    a3, b4 = np.ones(5) / 5, np.ones(4) / 4
    assert sum(exact(a3)) != 1 == sum(exact(b4))  # five doubles 0.2 do not sum to exactly 1
    G, bound, run = attncert.sinkhorn(a3, b4, M, 0.1, full=True)
    used_a, used_b = (Fraction(int(x.p), int(x.q)) for x in (sum(run.problem.a), sum(run.problem.b)))
    assert used_a == used_b == sum(exact(a3))
    np.testing.assert_allclose(G, ot.sinkhorn(a3, b4, M, 0.1, stopThr=1e-14, numItermax=100000), rtol=0, atol=1e-13)


def test_pot_defaults_uniform_marginals_and_exact_numbers(problem):
    _, _, M = problem
    G, _, run = attncert.sinkhorn([], [], M, "1/10", full=True)
    assert [str(x) for x in run.problem.a] == ["1/5"] * 5 and [str(x) for x in run.problem.b] == ["1/4"] * 4
    assert str(run.problem.eps) == "1/10"
    np.testing.assert_allclose(G, ot.sinkhorn([], [], M, 0.1, stopThr=1e-14, numItermax=100000), rtol=0, atol=1e-13)
    _, _, run = attncert.sinkhorn([], [], M, 0.1, full=True)
    assert Fraction(int(run.problem.eps.p), int(run.problem.eps.q)) == Fraction(0.1) != Fraction(1, 10)


def test_pots_tuning_options_change_nothing_and_its_log_is_refused(problem):
    a, b, M = problem
    G, bound = attncert.sinkhorn(a, b, M, 0.1)
    G2, bound2 = attncert.sinkhorn(a, b, M, 0.1, method="sinkhorn_log", numItermax=3, stopThr=1e-2, verbose=True)
    assert np.array_equal(G, G2) and bound == bound2
    with pytest.raises(SinkhornInputError, match="full=True"):
        attncert.sinkhorn(a, b, M, 0.1, log=True)
    with pytest.raises(TypeError, match="reg_m"):
        attncert.sinkhorn(a, b, M, 0.1, reg_m=1.0)


@pytest.mark.parametrize(
    "a, b, M, reg, match",
    [
        ([0.5, 0.5], [0.5, 0.6], [[0.0, 1.0], [1.0, 0.0]], 0.1, "different totals"),
        ([Fraction(1, 2)] * 2, [Fraction(1, 2), Fraction(1, 2) + Fraction(1, 10**15)], [[0, 1], [1, 0]], "1/10", "different totals"),
        ([1.5, -0.5], [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 0.1, "positive masses"),
        ([0.5, 0.5], [0.5, 0.5], [0.0, 1.0], 0.1, "cost matrix"),
        ([0.5, 0.5], [1.0], [[0.0, 1.0], [1.0, 0.0]], 0.1, "shapes disagree"),
        ([0.5, 0.5], [0.5, 0.5], [[0.0, np.nan], [1.0, 0.0]], 0.1, "not a finite number"),
        ([0.5, 0.5], [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], -0.1, "eps must be > 0"),
    ],
)
def test_bad_input_is_one_clear_error(a, b, M, reg, match):
    with pytest.raises(SinkhornInputError, match=match):
        attncert.sinkhorn(a, b, M, reg)


def test_the_operators_own_order_names_the_pot_entry_point():
    # Today's failure, "matrix row 0 is not a list", now says where POT's order lives.
    with pytest.raises(SinkhornInputError, match="attncert.sinkhorn"):
        sinkhorn_c_first([0.5, 0.5], [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 0.1)


def test_one_function_two_spellings():
    from attncert import sinkhorn as top

    assert top is sinkhorn is attncert.sinkhorn


def test_arrays_take_the_float_verified_path_when_tol_allows():
    rng = np.random.default_rng(3)
    M = rng.random((9, 8))  # binary floats of many exponents: the float recipe
    a, b = np.full(9, 1 / 9), np.full(8, 1 / 8)
    G, bound, run = sinkhorn(a, b, M, 0.25, tol="1e-9", full=True)
    assert run.method == "float-verified" and run.certified and bound <= Fraction(2, 10**9) * Fraction(float(G.max()))
    bb = [Fraction(x) * (sum(exact(a)) / sum(exact(b))) for x in exact(b)]  # b scaled to sum(a), as the call does
    assert_true_bound(G, bound, mp_plan(exact(a), bb, [exact(r) for r in M], Fraction(0.25)))
    P = ot.sinkhorn(a, b, M, 0.25, stopThr=1e-14, numItermax=10_000)
    assert np.abs(P - G).max() <= float(bound) + 1e-14  # POT converged to 1e-14 lies within our bound of P*


def test_integer_arrays_take_the_high_precision_path_past_the_arb_size():
    rng = np.random.default_rng(4)
    Z = rng.integers(0, 101, (65, 64))  # 4160 entries: integers over 1, the shifted kernel in fixed point
    a, b = np.full(65, 64), np.full(64, 65)  # integers: equal totals exactly
    G, bound, run = sinkhorn(a, b, Z, 20, full=True)
    assert run.method == "high-precision" and run.certified and run.bound.upper().fmpq() <= fmpq(1, 10**30)
    assert bound <= 8 * Fraction(float(np.spacing(G.max())))  # a few units in the last place of the largest entry
    ref = mp_plan([Fraction(int(x)) for x in a], [Fraction(int(x)) for x in b], [[Fraction(int(x)) for x in r] for r in Z], Fraction(20), dps=40)
    assert_true_bound(G, bound, ref)


def test_pots_own_result_starts_the_float_iterations():
    rng = np.random.default_rng(5)
    M = rng.random((20, 30))
    a, b = np.full(20, 1 / 20), np.full(30, 1 / 30)
    _, log = ot.sinkhorn(a, b, M, 0.25, stopThr=1e-12, log=True)
    G0, bound0, cold = sinkhorn(a, b, M, 0.25, tol="1e-10", full=True)
    G1, bound1, warm = sinkhorn(a, b, M, 0.25, tol="1e-10", warmstart=(np.log(log["u"]), np.log(log["v"])), full=True)
    assert cold.certified and warm.certified and warm.method == cold.method == "float-verified"
    assert warm.details["float_iterations"] < cold.details["float_iterations"]  # POT's scalings are already converged
    assert np.abs(G1 - G0).max() <= float(bound0 + bound1)  # both within their bounds of the same P*
