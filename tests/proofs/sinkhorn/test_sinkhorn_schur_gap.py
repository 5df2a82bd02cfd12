"""The Hessian's gap by the verified Cholesky of a Schur complement (prover: constructions/sinkhorn/convexity.py
``Hessian.certify``; checker: proofs/checkers/sinkhorn/convexity.py ``schur_gap``), against 40-digit mpmath.

What the test proves is "H^ - sigma E^ has at most one eigenvalue <= 0" for H^ = S H(W') S, E^ = diag(fl(s s) a~,
fl(t t) b~), which (H^ w^ = 0) is "the second eigenvalue of the pencil (H^, E^) is at least sigma". The reference
computes that eigenvalue in mpmath from the same doubles, independently of both codes: sigma just above it must be
refused (soundness), 0.9 of it accepted (the test is not vacuous), by both sides, for tall, wide and square kernels,
masses that are no doubles' round values, and the lift's extremes (a gap near 1, and near 1e-4)."""

from __future__ import annotations

from types import SimpleNamespace

import mpmath as mp
import numpy as np
import pytest

from attncert.constructions.sinkhorn.convexity import Hessian
from attncert.exact.roundoff import exact
from attncert.proofs.checkers.sinkhorn.convexity import schur_gap


def _mpf(x: float) -> mp.mpf:
    q = exact(x)
    return mp.mpf(int(q.p)) / int(q.q)


def pencil_gap(K: np.ndarray, u: np.ndarray, v: np.ndarray, af: np.ndarray, bf: np.ndarray) -> mp.mpf:
    """The second least eigenvalue of (H^, E^) at 40 digits: H^ = S H(W') S for W'_ij = u_i K_ij v_j (exact products of
    the doubles), s = fl(1/sqrt(a~)), e = fl(fl(s s) a~), computed here from the definitions."""
    n, m = K.shape
    s, t = 1.0 / np.sqrt(af), 1.0 / np.sqrt(bf)
    e = np.concatenate([(s * s) * af, (t * t) * bf])
    with mp.workdps(40):
        W = [[_mpf(u[i]) * _mpf(K[i, j]) * _mpf(v[j]) for j in range(m)] for i in range(n)]
        S = [_mpf(x) for x in s.tolist() + t.tolist()]
        H = mp.zeros(n + m, n + m)
        for i in range(n):
            for j in range(m):
                H[i, i] += W[i][j]
                H[n + j, n + j] += W[i][j]
                H[i, n + j] = H[n + j, i] = W[i][j]
        root = [1 / mp.sqrt(_mpf(x)) for x in e.tolist()]
        M = mp.matrix(n + m, n + m)
        for i in range(n + m):
            for j in range(n + m):
                M[i, j] = root[i] * S[i] * H[i, j] * S[j] * root[j]
        return sorted(mp.eigsy(M, eigvals_only=True))[1]


def balance(K: np.ndarray, af: np.ndarray, bf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float Sinkhorn scalings (u, v) of K for the masses: the plans the convexity path meets are balanced."""
    u, v = np.ones(len(af)), np.ones(len(bf))
    for _ in range(3000):
        u = af / (K @ v)
        v = bf / (K.T @ u)
    return u, v


def _case(n: int, m: int, spread: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A kernel exp(-spread * U[0, 1)), random masses summing to about 1, and Sinkhorn's scalings of it."""
    rng = np.random.default_rng(seed)
    K = np.exp(-spread * rng.random((n, m)))
    af = rng.random(n) + 0.1
    af /= af.sum()
    bf = rng.random(m) + 0.1
    bf /= bf.sum()
    return (K, *balance(K, af, bf), af, bf)


def _prover(K, u, v, af, bf, sigma: float) -> bool:
    return Hessian.of(K, u, v, af, bf, 0).certify(sigma)


def _checker(K, u, v, af, bf, sigma: float) -> bool:
    return schur_gap(SimpleNamespace(K=K, u=u, v=v, a=af, b=bf), sigma)


CASES = [(6, 6, 2.0, 0), (9, 3, 5.0, 1), (3, 9, 5.0, 2), (1, 5, 1.0, 3), (5, 1, 1.0, 4), (2, 2, 0.1, 5), (8, 8, 30.0, 6), (7, 4, 12.0, 7)]


@pytest.mark.parametrize("side", [_prover, _checker], ids=["prover", "checker"])
@pytest.mark.parametrize("n, m, spread, seed", CASES)
def test_the_schur_test_accepts_below_the_gap_and_refuses_above(side, n, m, spread, seed) -> None:
    K, u, v, af, bf = _case(n, m, spread, seed)
    gap = pencil_gap(K, u, v, af, bf)
    assert gap > 0
    above = float(gap * (1 + mp.mpf(10) ** -9))
    assert not side(K, u, v, af, bf, above)  # sound: no sigma above the true gap
    assert not side(K, u, v, af, bf, float(gap) * 2)
    assert side(K, u, v, af, bf, float(gap) * 0.9)  # and not vacuous


@pytest.mark.parametrize("side", [_prover, _checker], ids=["prover", "checker"])
def test_a_gap_near_one_is_lifted_and_proven(side) -> None:
    # spread 0: K = 1, the plan is the product a b^T and every nonzero eigenvalue of the pencil is 1 (or 2): sigma up
    # to 0.98 leaves the Schur complement a negative eigenvalue near -2 sigma / (1 - sigma) = -98, which the lift covers
    K, u, v, af, bf = _case(7, 5, 0.0, 11)
    gap = pencil_gap(K, u, v, af, bf)
    assert abs(gap - 1) < mp.mpf(10) ** -12
    assert side(K, u, v, af, bf, 0.98)
    assert not side(K, u, v, af, bf, 1.0 + 1e-9)


@pytest.mark.parametrize("side", [_prover, _checker], ids=["prover", "checker"])
def test_a_product_below_the_normal_range_is_refused_not_trusted(side) -> None:
    # one kernel entry 2^-1022 among ones: fl(x K) with x = fl(s u) below 1 underflows, its relative error is no
    # longer u, and the test must refuse rather than charge gamma; the same entry 0 (exact) or 2^-1000 is proven
    af, bf = np.array([0.5, 0.5]), np.array([1.0, 1.0, 1.0]) / 3
    for entry, proven in ((2.0**-1022, False), (0.0, True), (2.0**-1000, True)):
        K = np.array([[1.0, 1.0, entry], [1.0, 1.0, 1.0]])
        u, v = balance(K, af, bf)
        x_k = float(((1 / np.sqrt(af[0])) * u[0]) * entry)  # the first product, fl(x K) (x = fl(s u) about 0.5)
        assert (0 < x_k < 2.0**-1022) == (entry == 2.0**-1022)
        assert side(K, u, v, af, bf, 0.1) is proven


def test_a_lift_whose_length_overflows_is_kept_not_a_crash() -> None:
    # masses near 1e308: z = sqrt(b) has |z|^2 beyond the doubles; log2(need / inf) raised ValueError in verify
    from attncert.constructions.sinkhorn.convexity import lift_exponent
    from attncert.proofs.checkers.sinkhorn.convexity import lift

    z = np.full(3, 1e154)
    assert np.array_equal(lift(z, 0.5), z) and lift_exponent(z, 0.5) == 0
    short = np.array([0.3, 0.4])  # |z|^2 = 1/4 below 1 + 4 sigma / (1 - sigma) = 5: scaled by 2^3 to |zeta|^2 = 16
    assert np.array_equal(lift(short, 0.5), short * 8) and lift_exponent(short, 0.5) == 3


@pytest.mark.parametrize("mass", [1e300, 1e-200])
def test_masses_far_from_one_are_proven_by_both_sides(mass) -> None:
    # s = 1/sqrt(a) near 2^-500 (or 2^330): the products' factors are normal, which is all the error model needs (the
    # floor 2^-900 is for the BLAS sums K v~, K^T u alone); masses of 1e300 had been refused as "too close to a vertex"
    from flint import fmpq

    from attncert.constructions.sinkhorn.operator import sinkhorn
    from attncert.exact import Ball
    from attncert.proofs.checkers.sinkhorn.convexity import convexity_enclosure
    from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem

    C = [[exact(c) for c in row] for row in np.random.default_rng(0).random((4, 4))]
    a = [exact(mass)] * 4
    r = sinkhorn(C, a, a, fmpq(1, 10), Ball(128), tol="1e-9", method="convexity")
    assert r.certified, r.status
    p = sinkhorn_problem(C, a, a, fmpq(1, 10))
    enclosure = convexity_enclosure(p, r.witness["u"], r.witness["v"], r.witness["sigma"], r.details["kernel"], plan=False)
    assert enclosure.log_error <= fmpq(*float(r.bound).as_integer_ratio()) * 2 and enclosure.log_error < fmpq(1, 10**9)
