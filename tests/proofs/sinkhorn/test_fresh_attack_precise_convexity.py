"""A fresh hostile audit of the Sinkhorn ``precise-convexity`` checker (2026-12-05): the gap and the crash it found.

The verified Cholesky proves H >= sigma D~ on {w^T D~ d = 0} for the doubles' D~ = e / s^2 (e = fl(fl(s s) a~),
s = fl(1/sqrt(a~)), a~ the double nearest a), not H >= sigma D on S = {d : a.d_1 = b.d_2} for the exact masses,
which the convexity theorem needs. For a mass like 1/3 (no double) the two differ by about 2^-53 relative, and both
checkers (``convexity`` and ``precise-convexity``) used sigma as if it were the gap on the exact D. The move to
sigma' (``exact_gap`` then; ``moved_gap``, sigma (1 - gamma_4), since the Schur-complement Cholesky of 2026-12-05)
closes it. The tests below check the lemma itself against mpmath at 60 digits on a matrix at the edge of the
premise, where the old reading (H >= sigma D on S) is false.

The crash: the kernel's bits were sized from float(max x / min x), an exact ratio of two doubles that need not be a
double (2^128 / 2^-900): a witness the verified Cholesky accepts (a 2 x 2 kernel with e^-699 off the diagonal)
raised OverflowError, which verify reported as a malformed certificate instead of refusing the witness.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np
from flint import fmpq

from attncert.exact.roundoff import exact
from attncert.proofs.checkers.sinkhorn.convexity import certified_gap, moved_gap
from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem
from attncert.proofs.checkers.sinkhorn.runs import check_run


def _mpf(x: float) -> mp.mpf:
    """A double's exact value in mpmath."""
    q = exact(x)
    return mp.mpf(int(q.p)) / int(q.q)


def _min_on_s(M: mp.matrix, a: list[Fraction], b: list[Fraction]) -> mp.mpf:
    """min over d in S = {a.d_1 = b.d_2}, d != 0, of d^T M d / d^T D d (D = diag(a, b)), in mpmath."""
    w = [mp.mpf(x.numerator) / x.denominator for x in a] + [-mp.mpf(x.numerator) / x.denominator for x in b]
    N = len(w)
    # a basis of S: e_i - (w_i / w_0) e_0 for i >= 1
    B = mp.zeros(N, N - 1)
    for i in range(1, N):
        B[i, i - 1] = 1
        B[0, i - 1] = -w[i] / w[0]
    D = mp.diag([abs(x) for x in w])
    L = mp.cholesky(B.T * D * B)
    Li = L**-1
    return min(mp.eigsy(Li * (B.T * M * B) * Li.T, eigvals_only=True))


def _edge(a: list[Fraction], b: list[Fraction], sigma: mp.mpf) -> mp.matrix:
    """M = sigma P^T D~ P, P the D~-orthogonal projector along w = (1, -1) onto {w^T D~ d = 0}: M w = 0 and
    M = sigma D~ on that subspace, the premise of the moved gap at its edge. D~ = e / s^2 for the checker's doubles
    a~ = fl(a), s = fl(1/sqrt(a~)), e = fl(fl(s s) a~) (computed here as the docstring states them)."""
    masses = np.array([float(x) for x in a + b])
    s = 1.0 / np.sqrt(masses)
    e = (s * s) * masses
    Dt = [_mpf(ei) / _mpf(si) ** 2 for ei, si in zip(e.tolist(), s.tolist())]
    N = len(Dt)
    w = mp.matrix([1] * len(a) + [-1] * len(b))
    Dm = mp.diag(Dt)
    P = mp.eye(N) - w * (w.T * Dm) / (w.T * Dm * w)[0]
    return sigma * P.T * Dm * P


@mp.workdps(60)
def test_moved_gap_holds_on_the_exact_masses_where_sigma_does_not() -> None:
    a = [Fraction(1, 3)] * 3  # fl(1/3) < 1/3: sigma D~ is below sigma D
    b = [Fraction(1, 5), Fraction(2, 5), Fraction(2, 5)]
    M = _edge(a, b, mp.mpf(1) / 2)
    true_gap = _min_on_s(M, a, b)
    moved = moved_gap(fmpq(1, 2))
    assert true_gap >= mp.mpf(int(moved.p)) / int(moved.q)  # the lemma: H >= sigma' D on S
    assert true_gap < mp.mpf(1) / 2  # and sigma itself is not a gap on the exact masses: the move is needed


@mp.workdps(60)
def test_moved_gap_holds_on_masses_that_are_no_doubles() -> None:
    rng = np.random.default_rng(7)
    for n, m in ((2, 3), (4, 4), (5, 2)):
        raw_a = [Fraction(int(k), 997) for k in rng.integers(1, 300, n)]
        raw_b = [Fraction(int(k), 991) for k in rng.integers(1, 300, m)]
        scale = sum(raw_a) / sum(raw_b)
        a, b = raw_a, [x * scale for x in raw_b]  # balanced exactly, no mass a double
        sigma = fmpq(3, 7)
        true_gap = _min_on_s(_edge(a, b, mp.mpf(3) / 7), a, b)
        moved = moved_gap(sigma)
        assert true_gap >= mp.mpf(int(moved.p)) / int(moved.q)


def _text(v: fmpq) -> str:
    """A rational as a certificate's canonical text."""
    return str(v.p) if v.q == 1 else f"{v.p}/{v.q}"


def test_scalings_wider_than_a_double_are_refused_not_a_crash() -> None:
    # K' = [[1, e^-699], [e^-699, 1]]; x = (2^128, 2^-900), y = (2^-128, 2^880): the balanced kernel is about
    # [[1, 2^-0.4], [0 (underflowed), 2^-20]], inside [0, 2) with every column above 2^-900, and its Hessian has a gap
    p = sinkhorn_problem([[fmpq(0), fmpq(699)], [fmpq(699), fmpq(0)]], [fmpq(1, 4)] * 2, [fmpq(1, 4)] * 2, fmpq(1))
    x, y, sigma = [fmpq(2) ** 128, fmpq(2) ** -900], [fmpq(2) ** -128, fmpq(2) ** 880], fmpq(1, 2**30)
    certified_gap(p, x, y, sigma, "integers")  # the Cholesky accepts it: the refusal below is the scalings'
    run = {
        "certified": True,
        "method": "precise-convexity",
        "details": {"prec": 100, "kernel": "integers"},
        "witness": {"u": ["1", "1"], "x": [_text(v) for v in x], "y": [_text(v) for v in y], "sigma": _text(sigma)},
        "bound": "1/1000000000000000000000000000000",
        "tol": "1/1000000000000000000000000000000",
    }
    problems = check_run(p, run, None, "eps 1")
    # x spans 2^1028 alone: the kernel's fixed point would need over 1024 bits
    assert len(problems) == 1 and "over 1024" in problems[0]
