"""A third hostile audit of the convexity checkers (2026-12-05), after 96e8d61 (the Hessian's factors need only be normal),
e069d31 (a normal fl(x K~) whose product with y_j underflows is 0 with the tail 2^-1021) and 27122d8 (TwoSum, Dekker's
product and the digits' carry in place, the cost read without a copy).

Found and fixed (each test below names its figures): the in-place TwoSum and Dekker's product raised where the textbook
formulas broadcast or took scalars (unreachable from the callers); sinkhorn2 of a square np.matrix returned sum(G @ M)
as the loss with a 1e-13 bound (np.matrix's * is the matrix product); the tail 2^-1020 y_j of an underflowed entry was a
double that rounds to 0 for y_j <= 2^-55; the tails' float ratio charged its subnormal products as relative; and, in
the float evaluation the convexity bound shares, fl(u^ t~) below the normal range gave a false Hilbert bound.
Held: the Schur test's largest accepted sigma against the pencil's second eigenvalue in mpmath, and the bound and the
plan balls (the 2^-1021 tail's included) against P* from Newton's method in mpmath at 60 digits.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from flint import arb, fmpq

import attncert
from attncert.constructions.sinkhorn import convexity as prover
from attncert.constructions.sinkhorn.operator import certified_array
from attncert.constructions.sinkhorn.problem import SinkhornInputError
from attncert.constructions.sinkhorn.shifted import UnsupportedKernel, array_cost, shifted_kernel
from attncert.constructions.sinkhorn.verified import hilbert_float_bound
from attncert.exact.roundoff import SMALLEST_NORMAL, exact, float_of, gamma, two_product, two_sum, underflow_charge
from attncert.proofs.checkers.sinkhorn import convexity as checker
from attncert.proofs.checkers.sinkhorn import float_hilbert
from attncert.proofs.checkers.sinkhorn.float_hilbert import _kernel as checker_kernel
from attncert.proofs.checkers.sinkhorn.float_hilbert import balanced_evaluation, float_hilbert_enclosure
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, sinkhorn_problem

SPLIT = 134217729.0  # Veltkamp's 2^27 + 1


def textbook_two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def textbook_two_product(a, b):
    x = a * b
    c = SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    return x, al * bl - (((x - ah * bh) - al * bh) - ah * bl)


def adversarial(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Doubles of every exponent and sign, a fifth of them special: signed zeros, subnormals, the normal range's ends."""
    special = np.array([0.0, -0.0, 5e-324, -5e-324, 2.0**-1022, -(2.0**-1022), 2.0**-1022 - 2.0**-1074, 1.7976931348623157e308,
                        -1.7976931348623157e308, 1.0, -1.0, 2.0**995, -(2.0**995), 1e-300, 1e300, np.nextafter(1.0, 2.0)])
    x = np.ldexp(rng.random(shape) + 0.5, rng.integers(-1074, 1024, size=shape)) * rng.choice([-1.0, 1.0], size=shape)
    mask = rng.random(shape) < 0.2
    x[mask] = rng.choice(special, size=int(mask.sum()))
    return x


def bits(x) -> bytes:
    return np.asarray(x, dtype=np.float64).tobytes()


SHAPES = [((7, 5), (7, 1)), ((7, 5), (1, 5)), ((7, 5), (7, 5)), ((7, 1), (7, 5)), ((5,), (7, 5)), ((7, 5), ()), ((), ()), ((), (4,))]


@pytest.mark.parametrize("sa, sb", SHAPES)
def test_two_sum_and_two_product_are_the_textbook_operations_for_every_shape(sa, sb):
    """Bit for bit the formulas of Higham section 4.3, whichever argument broadcasts, scalars included, on doubles with
    subnormals, signed zeros and the range's ends; the arguments are never written."""
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    with np.errstate(all="ignore"):
        for _ in range(200):
            a = adversarial(rng, sa) if sa else float(adversarial(rng, (1,))[0])
            b = adversarial(rng, sb) if sb else float(adversarial(rng, (1,))[0])
            a0, b0 = bits(a), bits(b)
            for got, want in ((two_sum(a, b), textbook_two_sum(a, b)), (two_product(a, b), textbook_two_product(a, b))):
                assert np.shape(got[0]) == np.shape(want[0]) and np.shape(got[1]) == np.shape(want[1])
                assert bits(got[0]) == bits(want[0]) and bits(got[1]) == bits(want[1])
            assert bits(a) == a0 and bits(b) == b0


def test_two_sum_is_exact_in_qq():
    """a + b = s + e exactly (decided in QQ) for finite doubles whose sum does not overflow, subnormals included."""
    rng = np.random.default_rng(3)
    a, b = adversarial(rng, (40, 30)), adversarial(rng, (40, 1))
    with np.errstate(all="ignore"):
        s, e = two_sum(a, b)
    ok = np.isfinite(s) & np.isfinite(e)
    assert ok.mean() > 0.5
    for i, j in zip(*np.nonzero(ok)):
        assert exact(a[i, j]) + exact(b[i, 0]) == exact(s[i, j]) + exact(e[i, j])


@pytest.mark.parametrize("method, tol", [("convexity", fmpq(1, 10**9)), ("precise-convexity", fmpq(1, 10**30))])
def test_the_users_float64_cost_is_never_written(method, tol):
    """array_cost reads a float64 array without a copy: a read-only cost (signed zero and a subnormal in it) goes
    through the convexity and the precise-convexity runs by name (a write would raise) and keeps its bytes."""
    rng = np.random.default_rng(11)
    X, Y = rng.random((6, 2)), rng.random((5, 2))
    M = ((X[:, None] - Y[None]) ** 2).sum(-1)
    M[0, 0], M[1, 1] = -0.0, 5e-324
    before = M.tobytes()
    M.setflags(write=False)
    cost = array_cost(M)
    assert cost.values is M  # read, not copied: what the test is about
    r = certified_array(cost, [fmpq(1, 6)] * 6, [fmpq(1, 5)] * 5, fmpq(1, 100), 128, tol, method=method)
    assert r is not None and r.certified and r.method == method
    assert M.tobytes() == before


# --- the lemmas against mpmath -------------------------------------------------------------------------------------


def mpq(q: fmpq) -> mp.mpf:
    return mp.mpf(int(q.p)) / int(q.q)


def pencil_gap(ev, a: list[fmpq], b: list[fmpq]) -> mp.mpf:
    """The second eigenvalue of D^-1/2 H(W') D^-1/2, W' = K^ (entries below the normal range dropped) diag(v~), D =
    diag(a, b) exact: the least of d^T H d / d^T D d over the D-complement of w (H w = 0)."""
    K = np.where(ev.K < SMALLEST_NORMAL, 0.0, ev.K)
    n, m = K.shape
    H = mp.zeros(n + m, n + m)
    for i in range(n):
        for j in range(m):
            w = mp.mpf(float(K[i, j])) * mp.mpf(float(ev.v[j]))
            for p_, q_ in ((i, i), (n + j, n + j), (i, n + j), (n + j, i)):
                H[p_, q_] += w
    r = [1 / mp.sqrt(mpq(x)) for x in list(a) + list(b)]
    M = mp.matrix(n + m, n + m)
    for p_ in range(n + m):
        for q_ in range(n + m):
            M[p_, q_] = r[p_] * H[p_, q_] * r[q_]
    return sorted(mp.eigsy(M, eigvals_only=True))[1]


def largest_accepted_sigma(ev) -> float:
    """The largest double sigma the checker's Schur test accepts (bisection on the bit patterns of positive doubles)."""
    lo, hi = int(np.float64(2.0**-1074).view(np.int64)), int(np.float64(16.0).view(np.int64))
    assert checker.schur_gap(ev, 2.0**-1074) and not checker.schur_gap(ev, 16.0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if checker.schur_gap(ev, float(np.int64(mid).view(np.float64))):
            lo = mid
        else:
            hi = mid
    return float(np.int64(lo).view(np.float64))


def sinkhorn_plans(C: np.ndarray, a: list[fmpq], b: list[fmpq], eps: fmpq, x: list[float]):
    """P* by Newton's method on the row potentials in mpmath, and P^ = diag(x) K' diag(b / K'^T x) with K'_ij =
    exp(-(C_ij - min_k C_ik) / eps) (the checker's row shift; a column shift changes no plan)."""
    n, m = C.shape
    A, B, e = [mpq(t) for t in a], [mpq(t) for t in b], mpq(eps)
    Cq = [[mpq(exact(C[i, j])) for j in range(m)] for i in range(n)]
    L = [[-(Cq[i][j] - min(Cq[i])) / e for j in range(m)] for i in range(n)]
    xs = [mpq(exact(t)) for t in x]
    vh = [B[j] / mp.fsum(xs[i] * mp.exp(L[i][j]) for i in range(n)) for j in range(m)]
    Ph = [[xs[i] * mp.exp(L[i][j]) * vh[j] for j in range(m)] for i in range(n)]
    f = [mp.log(t) for t in xs]
    for _ in range(100):
        g = [mp.log(B[j]) - mp.log(mp.fsum(mp.exp(f[i] + L[i][j]) for i in range(n))) for j in range(m)]
        P = [[mp.exp(f[i] + L[i][j] + g[j]) for j in range(m)] for i in range(n)]
        r = [mp.fsum(row) for row in P]
        if max(abs(r[i] / A[i] - 1) for i in range(n)) < mp.mpf(10) ** -55:
            return P, Ph
        J = mp.matrix(n - 1, n - 1)
        for i in range(1, n):
            for k in range(1, n):
                J[i - 1, k - 1] = (r[i] if i == k else 0) - mp.fsum(P[i][j] * P[k][j] / B[j] for j in range(m))
        d = mp.lu_solve(J, mp.matrix([A[i] - r[i] for i in range(1, n)]))
        for i in range(1, n):
            f[i] += d[i - 1]
    raise AssertionError("Newton's method did not converge")


def witness(C: np.ndarray, a: list[fmpq], b: list[fmpq], eps: fmpq):
    run = prover.convexity_run(shifted_kernel(array_cost(C), eps), a, b)
    assert run.convexity is not None, run.reason
    x, y = run.balance
    return [float(t) for t in x], [float(t) for t in y]


@mp.workdps(60)  # mpmath's precision for this check only, not the process's
def assert_enclosure_holds(C, a, b, eps, x, y):
    """At the largest sigma the Schur test accepts: sigma (1 - gamma_4) at most the pencil's gap, the bound at least the
    true max |log P* - log P^|, and every ball (the underflowed entries' [0, hi] included) containing P*."""
    p = sinkhorn_problem([[exact(t) for t in row] for row in C], a, b, eps)
    xq, yq = [exact(t) for t in x], [exact(t) for t in y]
    ev = balanced_evaluation(p, xq, yq, "floats")
    sigma = largest_accepted_sigma(ev)
    assert mp.mpf(sigma) * (1 - mpq(gamma(4))) <= pencil_gap(ev, a, b)
    enc = checker.convexity_enclosure(p, xq, yq, exact(sigma), "floats")
    P, Ph = sinkhorn_plans(C, a, b, eps, x)
    n, m = C.shape
    assert max(abs(mp.log(P[i][j] / Ph[i][j])) for i in range(n) for j in range(m)) <= mpq(enc.log_error)
    for i in range(n):
        for j in range(m):
            lo, hi = enc.plan[i][j]
            assert mpq(lo.mid().fmpq()) <= P[i][j] <= mpq(hi.mid().fmpq())
    return ev


def test_a_product_underflowing_against_y_keeps_p_star_in_its_ball():
    """e069d31's case built on purpose: K~_21 = e^-699 (2^-1008.5), and y_1 taken so that fl(x_2 K~_21) y_1 lies just
    under 2^-1022 (at the top of what the tail 2^-1021 must cover): K^_21 = 0, its ball [0, hi] contains P*_21 =
    1.5e-304, and the gap and the bound hold."""
    C = np.array([[0.0, 0.3, 0.2], [0.1, 0.0, 70.0], [69.9, 0.4, 0.0]])
    a = b = [fmpq(1, 3)] * 3
    eps = fmpq(1, 10)
    x, y = witness(C, a, b, eps)
    K = checker_kernel(sinkhorn_problem([[exact(t) for t in row] for row in C], a, b, eps), "floats")[0]
    y[0] = 2.0**-1022 / (x[2] * K[2, 0]) * (1 - 2.0**-50)
    ev = assert_enclosure_holds(C, a, b, eps, x, y)
    assert ev.K[2, 0] == 0.0 and x[2] * K[2, 0] >= SMALLEST_NORMAL


def test_masses_near_1e300_and_mixed_exponents_hold_against_mpmath():
    """96e8d61's range (factors normal, not >= 2^-900): masses of 10^300 / 3 (s about 2^-498) and masses whose
    exponents span 10^-3 to 10^3 in one problem (10^-6 to 10^6 is not certified: t >= 0.34): the gap and the plan hold."""
    rng = np.random.default_rng(2)
    X, Y = rng.random((3, 2)), rng.random((4, 2))
    C = ((X[:, None] - Y[None]) ** 2).sum(-1)
    for a, b in (
        ([fmpq(10**300 * k, 3) for k in (1, 5, 7)], [fmpq(10**300 * k, 3) for k in (2, 3, 4, 4)]),
        ([fmpq(1, 10**3), fmpq(1), fmpq(10**3)], [fmpq(10**3, 2), fmpq(10**3, 2), fmpq(1, 10**3), fmpq(1)]),
    ):
        eps = fmpq(1, 4)
        x, y = witness(C, a, b, eps)
        assert_enclosure_holds(C, a, b, eps, x, y)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # numpy's, on making an np.matrix
def test_an_ndarray_subclass_cost_is_read_as_its_plain_array():
    """Found probing 27122d8's "read without a copy": sinkhorn2 of a square np.matrix M returned sum(G @ M) as the loss
    (1.548 against <P*, M> = 0.189, with a 'certified' bound of 1.3e-13: G * M is np.matrix's matrix product), and
    sinkhorn raised TypeError at tol 1e-30 (np.ptp of a matrix stays 2-D). Now the same loss, plan and bound as the
    plain array; a masked array is refused in one error (a masked entry has no cost)."""
    rng = np.random.default_rng(4)
    X, Y = rng.random((5, 2)), rng.random((5, 2))
    M = ((X[:, None] - Y[None]) ** 2).sum(-1)
    a = np.ones(5) / 5
    P = np.asarray(attncert.sinkhorn(a, a, M, 0.05, tol="1e-9")[0])
    assert float(np.sum(P @ M) - np.sum(P * M)) > 1  # what G * M meant for np.matrix: far from the entrywise <G, M>
    for tol in ("1e-9", "1e-30"):
        assert attncert.sinkhorn2(a, a, np.matrix(M), 0.05, tol=tol) == attncert.sinkhorn2(a, a, M, 0.05, tol=tol)
        G, bound = attncert.sinkhorn(a, a, np.matrix(M), 0.05, tol=tol)
        G0, bound0 = attncert.sinkhorn(a, a, M, 0.05, tol=tol)
        assert type(G) is np.ndarray and np.array_equal(G, G0) and bound == bound0
        with pytest.raises(SinkhornInputError, match="masked array"):
            attncert.sinkhorn2(a, a, np.ma.masked_array(M, mask=np.eye(5, dtype=bool)), 0.05, tol=tol)


def test_an_underflowed_entrys_tail_covers_it_for_a_tiny_column_scaling(monkeypatch):
    """The tail of an entry whose fl(x K~) underflowed must be >= K2_ij / phi_hi (<= x K~_ij y_j exactly): 2^-1020 y_j
    was formed as a double, which rounds below the normal range, to 0 for y_j = 2^-60 (K^_22 here, from x_2 = 2^-20 and
    K~_22 = e^-699): an uncharged entry of the sums. Now rounded up, in the checker and the prover alike; decided in QQ."""
    C = np.array([[0.0, 0.0], [0.0, 699.0]])
    a = b = [fmpq(1, 2)] * 2
    x, y = [1.0, 2.0**-20], [1.0, 2.0**-60]
    p = sinkhorn_problem([[exact(t) for t in row] for row in C], a, b, fmpq(1))
    seen = {}
    real = float_hilbert._evaluate

    def spy(p_, K, phi, tail, u, spread):
        seen["tail"] = tail.copy()
        return real(p_, K, phi, tail, u, spread)

    monkeypatch.setattr(float_hilbert, "_evaluate", spy)
    ev = balanced_evaluation(p, [exact(t) for t in x], [exact(t) for t in y], "floats")
    K = checker_kernel(p, "floats")[0]
    assert ev.K[1, 1] == 0.0 and x[1] * K[1, 1] < SMALLEST_NORMAL  # the entry underflowed
    assert exact(seen["tail"][1, 1]) >= exact(x[1]) * exact(K[1, 1]) * exact(y[1]) > 0
    K2, _ = prover.balanced(shifted_kernel(array_cost(C), fmpq(1)), np.array(x), np.array([0.5, 0.5]), np.array(y))
    assert K2.tail.tobytes() == seen["tail"].tobytes()


def test_the_tail_ratio_charges_its_products_below_the_normal_range():
    """tau >= max_j (tail^T x)_j / den_j was read from the float ratio with relative errors only: tails of 2^-1021 (a
    product that underflowed against y_j) times x_i = 0.49 2^-53 are each 0.49 2^-1074, which rounds to 0, so the float
    ratio was 0 and tau = 0 over a true ratio of 3 0.49 2^-1074 / 2^-960 = 2.8e-34. Now the absolute term of
    exact.roundoff.underflow_charge is added (checker and prover alike); decided in QQ."""
    tail = np.full((3, 1), 2.0**-1021)
    x = np.full(3, 0.49 * 2.0**-53)
    den = np.array([2.0**-960])
    ratio = float(np.max((tail.T @ x) / den))
    assert ratio == 0.0  # every product rounded to 0
    true = sum(exact(tail[i, 0]) * exact(x[i]) for i in range(3)) / exact(den[0])
    charge = underflow_charge(ratio, tail, x, den)
    tau = float_hilbert._tail(ratio, fmpq(0), 3, charge).hi - 1
    assert true > 0 and arb(true) < tau
    # where every product and the ratio are normal there is no absolute term (the bounds are unchanged there)
    assert underflow_charge(0.25, np.full((3, 1), 2.0**-62), np.full(3, 0.5), np.array([1.0])) == 0


def float_hilbert_case(u1: float):
    """C = 0 (K' = 1, Delta = 0), a = (2^-1022, 2 beta - 2^-1022), b = (beta, beta), beta = 2^-524 / 3, u^ = (u1, 1): the row
    sums r_i = u^_i sum(b) / (u1 + 1), P* = a b^T / sum(b), so max |log P^ - log P*| = max_i |log(r_i / a_i)| exactly."""
    beta, a1 = fmpq(1, 3 * 2**524), fmpq(1, 2**1022)
    a, b = [a1, 2 * beta - a1], [beta, beta]
    p = sinkhorn_problem([[fmpq(0)] * 2] * 2, a, b, fmpq(1))
    u = [exact(u1), fmpq(1)]
    with mp.workdps(50):
        true = max(abs(mp.log(mpq(ui * 2 * beta / (u[0] + 1) / ai))) for ui, ai in zip(u, a))
    return p, u, true


def test_a_row_product_below_the_normal_range_is_refused_by_the_float_evaluation():
    """Found by this audit in the evaluation the convexity bound shares (float-verified Hilbert, pre-existing): q~ = fl(fl(u^ t~) / a~)
    charged u for fl(u^ t~), which is off by up to 2^-1075 below the normal range. With u1 = 2.257943622398837e-161
    (u1 t~_1 about 2^-1058) the checker's q_lo was 1.23185905920e-11 over the true r_1 / a_1 = 1.23185524112e-11, and its
    bound 25.1199115644 below the true max |log P^ - log P*| = 25.1199146638 (a false Hilbert bound). Now refused by the
    checker and the prover; a witness whose product is normal (u1 = 1.3 2^-480) is proven, with a bound that holds."""
    p, u, true = float_hilbert_case(2.257943622398837e-161)
    with pytest.raises(HypothesisError, match="u\\^ K v"):
        float_hilbert_enclosure(p, u, "floats")
    K = shifted_kernel(array_cost(np.zeros((2, 2))), fmpq(1))
    with pytest.raises(UnsupportedKernel, match="u K v"):
        hilbert_float_bound(K, np.array([float(x) for x in u]), p.a, p.b, np.array([float_of(x) for x in p.a]), np.array([float_of(x) for x in p.b]))
    p, u, true = float_hilbert_case(1.3 * 2.0**-480)
    assert mpq(float_hilbert_enclosure(p, u, "floats", plan=False).log_error) >= true
