"""A hostile audit of the corrected kernel exponentials (exact/roundoff.py two_sum, two_product, shifted_exponent,
corrected_exp_neg; commit 15ea4ad): every K'_ij / K~_ij against 60-digit exponentials of the recorded shifts, on
costs chosen to stress the roundings, and the inputs outside the method's range refused with one line."""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest
from flint import fmpq

from attncert.constructions.sinkhorn.shifted import ExactCost, UnsupportedKernel, shifted_kernel
from attncert.exact.roundoff import exact, shifted_exponent
from attncert.proofs.checkers.sinkhorn import float_hilbert
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, Problem, shifted_integers

HALF = fmpq(1, 2)


def _q(x: float) -> fmpq:
    return fmpq(*float(x).as_integer_ratio())


def _mpf(x) -> mp.mpf:  # an arb point or an fmpq, exactly enough at 90 digits
    if hasattr(x, "mid"):
        return mp.mpf(x.mid().str(80, radius=False))
    return mp.mpf(int(x.p)) / int(x.q)


def _ratios_inside(C: np.ndarray, eps: fmpq, den: int | None = None) -> tuple[int, list]:
    """The entries whose K'/K~ (K' from the recorded shifts, or from the cost itself for integers) leave the factor."""
    K = shifted_kernel(ExactCost(C, den), eps)
    with mp.workdps(90):
        lo, hi = _mpf(K.factor.lo), _mpf(K.factor.hi)
        A, B = K.shifts
        bad = []
        for i in range(C.shape[0]):
            for j in range(C.shape[1]):
                if den is None:
                    y = (exact(C[i, j]) - exact(A[i]) - exact(B[j])) / eps
                else:  # from the cost's own integers, not the recorded Z'
                    y = fmpq(int(C[i, j]) - int(A[i]) - int(B[j]), den) / eps
                ratio = mp.exp(-_mpf(y)) / mp.mpf(float(K.K[i, j]))
                if not lo <= ratio <= hi:
                    bad.append((i, j, mp.nstr(ratio, 20)))
    return C.size, bad


FLOAT_CASES = [
    ("cancellation near 1", np.array([[1.0, 1.0 + 2**-52], [1.0 + 2**-51, 1.0]]), fmpq(1, 2**45)),
    ("cancellation near 1e16", np.array([[1e16, 1e16 + 2], [1e16 + 4, 1e16]]), fmpq(2, 7)),
    ("negative, mixed", np.array([[-3.0, -1e10], [-1e-5, 7.0]]), fmpq(10**10, 70)),
    ("subnormal costs, 1/eps = 2^995", np.array([[5e-324, 1e-323, 3e-320], [0.0, 2.2e-308, 1e-310], [4.4e-308, 7e-315, 1.5e-323]]), fmpq(1, 2**995)),
    ("subnormal costs, 1/eps = 2^990 / 3", np.array([[5e-324, 1e-323, 3e-320], [0.0, 2.2e-308, 1e-310], [4.4e-308, 7e-315, 1.5e-323]]), fmpq(3, 2**990)),
    ("costs at 2^995, y near 700", np.array([[0.0, 2.0**995], [2.0**995, 0.0]]), _q(2.0**995 / 699.5)),
]


@pytest.mark.parametrize("name, C, eps", FLOAT_CASES, ids=[c[0] for c in FLOAT_CASES])
def test_float_kernel_factor_holds_against_60_digit_exponentials(name, C, eps):
    count, bad = _ratios_inside(C, eps)
    assert count == C.size and bad == [], bad


def test_random_magnitudes_factor_holds():
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(12):
        C = 10.0 ** rng.uniform(-320, 290, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
        t = C - C.min(1)[:, None]
        t = t - t.min(0)
        for y in (1e-3, 50.0, 699.0):
            try:
                _, bad = _ratios_inside(C, _q(t.max() / y))
            except UnsupportedKernel:
                continue
            assert bad == []
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("den, f", [(1, fmpq(1, 3)), (7, fmpq(2, 7)), (10**17, fmpq(1, 10**17))])
def test_integer_kernel_factor_holds_near_2_53(den, f):
    rng = np.random.default_rng(den)
    Z = rng.integers(0, 2**53 - 1, (4, 5), dtype=np.int64)
    Z[0, 0], Z[1, 1] = 0, 2**53 - 1
    for y in (1e-9, 699.0):
        eps = fmpq(2**53 - 1, den) / _q(y) * (1 + f / 10**6)
        _, bad = _ratios_inside(Z, eps, den)
        assert bad == []


# numerators whose differences wrap around int64: the wrapped Z' = [[7, 0], [0, 0]] looked like a fine shifted cost,
# while the true one is [[0, 0], [2^64 - 7, 0]]; attncert.sinkhorn(a, b, WRAP, 4096.0) certified a plan 0.25 away
# from the true one with a bound of 3.9e-11, and the checker's shifted_integers wrapped the same way
WRAP = np.array([[2, 2], [2**63 - 7, -(2**63)]], dtype=np.int64)


def test_int64_wraparound_is_refused_by_prover_and_checker():
    with pytest.raises(UnsupportedKernel, match="2\\^63"):
        shifted_kernel(ExactCost(WRAP, 1), fmpq(4096))
    p = Problem([[fmpq(int(x)) for x in row] for row in WRAP.tolist()], [HALF, HALF], [HALF, HALF], fmpq(4096))
    with pytest.raises(HypothesisError, match="2\\^63"):
        shifted_integers(p, "float-verified")


def test_int64_wraparound_is_not_certified_by_sinkhorn():
    import attncert

    a = b = np.array([0.5, 0.5])
    try:
        G, bound, run = attncert.sinkhorn(a, b, WRAP, 4096.0, tol=1e-9, full=True)
    except Exception as e:  # refused: fine, if it is the package's one-line refusal
        assert "\n" not in str(e) and type(e).__name__ != "IndexError"
        return
    # certified: then the plan must be the true one, [[~0.49988, ~0.00012], [0, 0.5]]
    assert abs(G[1, 0]) <= float(bound) and abs(G[0, 0] - 0.49987503) <= float(bound) + 1e-8


def _checker_kernel(rows: list[list[float]], eps: fmpq):
    p = Problem([[exact(x) for x in r] for r in rows], [HALF, HALF], [HALF, HALF], eps)
    return float_hilbert._kernel(p, "floats")


def test_column_range_overflow_is_no_traceback():
    """Rows of equal costs at +-1e308: the rows' shifts are exact, the columns' range overflows; the rows' bound on
    Delta alone holds (the prover and checker used to raise OverflowError from exact(inf))."""
    C = np.array([[1e308, 1e308], [-1e308, -1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        K = shifted_kernel(ExactCost(C, None), fmpq(1))
        _, E, spread = _checker_kernel(C.tolist(), fmpq(1))
    assert K.delta == 0 and spread == 0 and np.all(K.K == 1.0) and E < fmpq(1, 10**14)


@pytest.mark.parametrize(
    "rows, eps, words",
    [
        ([[0.0, 1.0], [1.0, 0.0]], fmpq(1, 10**400), "outside float64's normal range"),  # 1/eps above the doubles
        ([[0.0, 1.0], [1.0, 0.0]], fmpq(10**400), "outside float64's normal range"),
        ([[0.0, 2.0**995], [2.0**995, 0.0]], fmpq(1, 2**29), "overflow"),  # t s~ overflows inside Dekker's product
        ([[0.0, 2.0**996], [2.0**996, 0.0]], fmpq(2**996, 600), "Dekker"),
        ([[-1.7e308, 1.7e308], [0.0, 1.0]], fmpq(10**306), "range"),
    ],
)
def test_checker_refuses_out_of_range_with_one_line(rows, eps, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(HypothesisError, match=words) as info:
            _checker_kernel(rows, eps)
    assert "\n" not in str(info.value)


def test_shifted_exponent_refuses_overflow_and_huge_scale():
    t = np.array([0.0, 2.0**995])
    with pytest.raises(ValueError, match="overflow"):
        shifted_exponent(t, None, fmpq(2**29))
    with pytest.raises(ValueError, match="Dekker"):
        shifted_exponent(t, None, fmpq(10**400))


def test_shifted_exponent_bound_holds_exactly_on_random_float_costs():
    """|y - ỹ - r| <= R in exact rationals, y from the cost itself (C - alpha - beta~) s: the float recipe's rounded
    e = fl(e1 + e2) is inside R's slack; costs across the exponent range, cancelling, subnormal."""
    from attncert.exact.roundoff import two_sum

    rng = np.random.default_rng(12)
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(150):
            base = 2.0 ** rng.uniform(-1000, 900)
            C = (rng.standard_normal((3, 4)) * 2.0 ** rng.uniform(-60, 0, (3, 4)) + rng.choice([0, 1, -1])) * base
            C[rng.random((3, 4)) < 0.2] *= 2.0 ** rng.integers(-200, 60)
            alpha = C.min(1)
            t1, e1 = two_sum(C, -alpha[:, None])
            beta = t1.min(0)
            t2, e2 = two_sum(t1, -beta[None, :])
            if not (np.isfinite(t2).all() and np.isfinite(e1).all() and np.isfinite(e2).all()) or t2.max() == 0:
                continue
            sv = rng.uniform(1, 700) / t2.max()
            if not 0 < sv < 1e308:
                continue
            s = _q(sv) * fmpq(int(rng.integers(1, 1000)), int(rng.integers(1, 1000)))
            try:
                y, r, R = shifted_exponent(t2, e1 + e2, s)
            except ValueError:
                continue
            for (i, j), yij in np.ndenumerate(y):
                exact_y = (exact(C[i, j]) - exact(alpha[i]) - exact(beta[j])) * s
                assert abs(exact_y - exact(yij) - exact(r[i, j])) <= R
            checked += 1
    assert checked >= 100


def test_negative_shifted_cost_gives_a_kernel_entry_above_one_inside_the_factor():
    """fl(C - alpha) rounded up at a column's minimum: C'_ij = e1 < 0, K'_ij = e^{|e1|/eps} > 1 and K~ = fl(1 - r) > 1."""
    al = -(2.0**-53 + 2.0**-60)
    C = np.array([[al, 1.0, 0.5], [0.0, 1.0 + 2**-50, 0.25], [0.0, 1.0 + 2**-49, 0.3]])
    assert shifted_kernel(ExactCost(C, None), fmpq(1, 700)).K.max() > 1
    _, bad = _ratios_inside(C, fmpq(1, 700))
    assert bad == []
