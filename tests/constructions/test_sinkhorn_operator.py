"""The Sinkhorn operator in EE, Ball and Float: input errors, exactness, rigour, agreement with POT."""

import mpmath
import numpy as np
import pytest
from flint import arb, ctx, fmpq

from attncert.constructions.sinkhorn import SinkhornInputError, sinkhorn
from attncert.constructions.sinkhorn.problem import random_cost, random_marginal, uniform_marginal
from attncert.exact import EE, Ball, Float, QQ
from attncert.proofs.sinkhorn.common import exact_arb, mp_sinkhorn

C2 = [["0", "1/2"], ["1", "1/4"]]


@pytest.mark.parametrize(
    "C, a, b, eps, message",
    [
        (C2, ["1/2", "1/2"], ["1/3", "1/3"], "1", "different totals"),
        (C2, ["1", "0"], ["1/2", "1/2"], "1", "positive masses"),
        (C2, ["-1", "2"], ["1/2", "1/2"], "1", "positive masses"),
        (C2, ["1/2", "1/2"], ["1/2", "1/2"], "0", "eps must be > 0"),
        (C2, ["1/2", "1/2"], ["1/2", "1/2"], "-1/10", "eps must be > 0"),
        (C2, ["1/3", "1/3", "1/3"], ["1/2", "1/2"], "1", "shapes disagree"),
        ([["0", "1"], ["1"]], ["1/2", "1/2"], ["1/2", "1/2"], "1", "ragged"),
        (C2, [], ["1/2", "1/2"], "1", "non-empty"),
    ],
)
@pytest.mark.parametrize("domain", [EE, Ball(64), Float])
def test_bad_input_is_one_clear_error(C, a, b, eps, message, domain):
    with pytest.raises(SinkhornInputError, match=message):
        sinkhorn(C, a, b, eps, domain)


def test_bad_options_are_one_clear_error():
    with pytest.raises(SinkhornInputError, match="max_iter"):
        sinkhorn(C2, ["1/2", "1/2"], ["1/2", "1/2"], 1, Ball(64), max_iter=0)
    with pytest.raises(SinkhornInputError, match="tolerance"):
        sinkhorn(C2, ["1/2", "1/2"], ["1/2", "1/2"], 1, EE, tol="-1")


def test_unknown_method_and_domain():
    with pytest.raises(SinkhornInputError, match="unknown method"):
        sinkhorn(C2, ["1/2", "1/2"], ["1/2", "1/2"], 1, Ball(64), method="newton")
    with pytest.raises(SinkhornInputError, match="not in QQ"):
        sinkhorn(C2, ["1/2", "1/2"], ["1/2", "1/2"], 1, QQ)


def test_ee_iterates_are_exact():
    a, b = [fmpq(1, 3), fmpq(2, 3)], [fmpq(1, 2), fmpq(1, 2)]
    r = sinkhorn(C2, a, b, "1/2", EE, max_iter=2)
    assert r.method == "exact-iterates" and r.iterations == 2
    # after a column update the column sums are b exactly: decided by Lindemann-Weierstrass, no precision
    assert all(e.is_zero() for e in r.col_error)
    # the row sums are not yet a (the iteration has not converged), and that is decided exactly too
    assert not all(e.is_zero() for e in r.row_error)
    # the plan is exact: its entries' ratios reproduce the kernel's cross ratio e^{-(C00+C11-C01-C10)/eps}
    P = r.iterate
    assert P[0][0] * P[1][1] / (P[0][1] * P[1][0]) == EE.exp(fmpq(-2) * (fmpq(0) + fmpq(1, 4) - fmpq(1, 2) - 1))


def test_ee_bound_contains_the_true_error():
    a, b = [fmpq(1, 3), fmpq(2, 3)], [fmpq(1, 2), fmpq(1, 2)]
    r = sinkhorn(C2, a, b, "1/2", EE, max_iter=2)
    ref, _ = mp_sinkhorn(QQ_rows(C2), a, b, fmpq(1, 2), 200, 100000)
    with mpmath.workdps(200):
        err = max(abs(mpmath.log(x.to_mpmath(200)) - mpmath.log(y)) for rx, ry in zip(r.iterate, ref) for x, y in zip(rx, ry))
        bound = r.bound.fmpq()
        assert err <= mpmath.mpf(int(bound.p)) / int(bound.q)
        assert err > 0  # two iterations are not the limit, so the bound is not vacuous


def QQ_rows(C):
    return [[QQ.convert(x) for x in row] for row in C]


def _check_against_reference(r, C, a, b, eps, prec):
    """The enclosure contains the 200-digit reference, and the bound covers the iterate's true distance."""
    ref, its = mp_sinkhorn(C, a, b, eps, 200, 200000)
    assert ref is not None, "reference did not converge"
    with ctx.workprec(prec):
        for er, ir, fr in zip(r.plan, r.iterate, ref):
            for e, it, f in zip(er, ir, fr):
                x = exact_arb(f)
                assert e.contains(x)
                # |log P^ - log P*| <= bound for the exact P^ inside the iterate ball
                assert ((it.log() - x.log()).abs_lower()) <= r.bound


@pytest.mark.parametrize("max_iter", [1, 2, 10_000])
def test_hilbert_bound_contains_the_200_digit_reference(max_iter):
    C = random_cost(4, 5, 3)
    a, b = random_marginal(4, 4), random_marginal(5, 5)
    r = sinkhorn(C, a, b, "1/4", Ball(256), max_iter=max_iter)
    assert r.method == "hilbert"
    assert r.certified == (max_iter == 10_000)
    if max_iter < 10_000:
        assert "NOT certified" in r.status and "limit of" in r.status  # never a silent "converged"
    _check_against_reference(r, C, a, b, fmpq(1, 4), 256)


def test_krawczyk_contains_the_200_digit_reference():
    C = random_cost(3, 3, 7)
    a, b = random_marginal(3, 8), random_marginal(3, 9)
    r = sinkhorn(C, a, b, "1/40", Ball(128), method="krawczyk")
    assert r.method == "krawczyk" and r.certified, r.status
    _check_against_reference(r, C, a, b, fmpq(1, 40), r.details["prec"])


def test_auto_picks_krawczyk_for_small_eps_and_certifies_where_pot_underflows():
    ot = pytest.importorskip("ot")
    n = 8
    C = random_cost(n, n, 0)
    a, b = random_marginal(n, 1), random_marginal(n, 2)
    r = sinkhorn(C, a, b, "1/10000", Ball(128))
    assert r.method == "krawczyk" and r.certified, r.status
    with ctx.workprec(r.details["prec"]):
        rows = [sum(row, arb(0)) for row in r.plan]
        cols = [sum((row[j] for row in r.plan), arb(0)) for j in range(n)]
        assert all(x.contains(arb(v)) for x, v in zip(rows + cols, a + b))
    Cf = np.array([[float(c) for c in row] for row in C])
    with np.errstate(all="ignore"), pytest.warns(UserWarning):
        P = ot.sinkhorn(np.array([float(x) for x in a]), np.array([float(x) for x in b]), Cf, 1e-4)
    assert not np.allclose(P.sum(1), [float(x) for x in a], atol=1e-3)  # POT's float64 answer is wrong here


def test_hilbert_stall_is_reported_not_hidden(monkeypatch):
    import attncert.constructions.sinkhorn.operator as op

    monkeypatch.setattr(op, "hilbert_precision", lambda prec, delta, tol, terms: prec)  # no automatic extra bits
    C = random_cost(3, 3, 1)
    a = uniform_marginal(3)
    r = sinkhorn(C, a, a, "1/2", Ball(64), tol="1e-300", max_iter=5000)
    assert not r.certified and "stalled" in r.status and r.iterations < 5000


def test_hilbert_degenerates_at_small_eps_and_says_so():
    C = random_cost(3, 3, 1)
    a = uniform_marginal(3)
    r = sinkhorn(C, a, a, "1/500", Ball(128), method="hilbert", max_iter=300)
    assert r.delta > 500 and not r.certified and "NOT certified" in r.status
    assert r.bound is not None and r.bound > 1  # a valid but useless bound: lambda = tanh(Delta/4) is 1 - 1e-200
    r = sinkhorn(C, a, a, "1/500", Ball(128))
    assert r.method == "krawczyk" and r.certified


def test_float_agrees_with_pot_where_pot_converges():
    ot = pytest.importorskip("ot")
    for seed in range(3):
        n, m = 6, 7
        C = random_cost(n, m, seed)
        a, b = random_marginal(n, seed + 10), random_marginal(m, seed + 20)
        for eps in ["1/2", "1/10", "1/50"]:
            r = sinkhorn(C, a, b, eps, Float)
            assert r.details["reached_tol"] and r.bound is None and not r.certified
            P, log = ot.sinkhorn(
                np.array([float(x) for x in a]), np.array([float(x) for x in b]), np.array([[float(c) for c in row] for row in C]),
                float(fmpq(eps)), stopThr=1e-14, numItermax=100_000, log=True,
            )
            assert log["err"][-1] < 1e-14  # POT converged
            assert np.abs(np.array(r.iterate) - P).max() < 1e-10


def test_float_inputs_are_read_exactly_and_float_totals_tolerated():
    a = np.array([0.1, 0.2, 0.7])
    b = np.array([0.5, 0.5])
    C = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    r = sinkhorn(C, a, b, 0.5, Float)
    assert np.allclose(np.array(r.iterate).sum(0), b)
    with pytest.raises(SinkhornInputError, match="different totals"):
        sinkhorn(C, a, b, 0.5, Ball(64))  # 0.1 + 0.2 + 0.7 != 1 exactly as doubles
