"""A fresh hostile audit of the Sinkhorn ``precise-convexity`` checker (2026-12-05): the gap and the crash it found.

The verified Cholesky proves T = S H S - sigma diag(e) + z z^T > 0 for the doubles e = fl(s^2 a~) and
z = fl(s a~) 2^k (s = fl(1/sqrt(a~)), a~ the double nearest a): that is H >= sigma D~ on the complement of S^-1 z,
not H >= sigma D on S = {d : a.d_1 = b.d_2} for the exact masses, which the convexity theorem needs. For a mass
like 1/3 (no double) the two differ by about 2^-53 relative, and both checkers (``convexity`` and
``precise-convexity``) used sigma as if it were the gap on the exact D. ``exact_gap`` moves it (sigma' = sigma rho -
eps^2). The tests below check the lemma itself against mpmath at 60 digits on a matrix at the edge of the premise,
where the old reading (H >= sigma D on S) is false.

The crash: the kernel's bits were sized from float(max x / min x), an exact ratio of two doubles that need not be a
double (2^128 / 2^-900): a witness the verified Cholesky accepts (a 2 x 2 kernel with e^-699 off the diagonal)
raised OverflowError, which verify reported as a malformed certificate instead of refusing the witness.
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import mpmath as mp
import numpy as np
from flint import fmpq

from attncert.exact.roundoff import exact
from attncert.proofs.checkers.sinkhorn.convexity import _scalings, certified_gap, exact_gap
from attncert.proofs.checkers.sinkhorn.problem import sinkhorn_problem
from attncert.proofs.checkers.sinkhorn.runs import check_run


def _stub(a: list[Fraction], b: list[Fraction]) -> tuple[SimpleNamespace, SimpleNamespace]:
    """The problem (exact masses) and the float evaluation's doubles a~, b~: all exact_gap reads."""
    p = SimpleNamespace(a=[fmpq(x.numerator, x.denominator) for x in a], b=[fmpq(x.numerator, x.denominator) for x in b])
    ev = SimpleNamespace(a=np.array([float(x) for x in a]), b=np.array([float(x) for x in b]))
    return p, ev


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


def test_nothing_rounded_leaves_sigma_as_is() -> None:
    # a = b = 1/4: a~ = a, s = 2, e = s^2 a = 1 and z = s a = 1/2 are exact, so S^-1 z = a and D~ = D: no move
    quarter = [Fraction(1, 4)] * 4
    p, ev = _stub(quarter, quarter)
    assert exact_gap(p, ev, fmpq(1, 2), 0) == fmpq(1, 2)


@mp.workdps(60)
def test_moved_gap_holds_on_the_exact_masses_where_sigma_does_not() -> None:
    a = [Fraction(1, 3)] * 3  # fl(1/3) < 1/3: sigma D~ is below sigma D
    b = [Fraction(1, 5), Fraction(2, 5), Fraction(2, 5)]
    p, ev = _stub(a, b)
    sigma = fmpq(1, 2)
    s, t, e, z = _scalings(ev, 0)
    scale = [_mpf(x) for x in s.tolist() + t.tolist()]
    E = [_mpf(x) for x in e.tolist()]
    Z = mp.matrix([_mpf(x) for x in z.tolist()])
    N = len(E)
    delta = mp.mpf(10) ** -40
    # the premise at its edge: S M S - sigma diag(e) + z z^T = delta I > 0
    inner = mp.diag([mp.mpf(1) / 2 * x + delta for x in E]) - Z * Z.T
    Sinv = mp.diag([1 / x for x in scale])
    M = Sinv * inner * Sinv
    T = mp.diag(scale) * M * mp.diag(scale) - mp.diag([mp.mpf(1) / 2 * x for x in E]) + Z * Z.T
    assert min(mp.eigsy(T, eigvals_only=True)) > 0 and N == 6
    true_gap = _min_on_s(M, a, b)
    moved = exact_gap(p, ev, sigma, 0)
    assert true_gap >= mp.mpf(int(moved.p)) / int(moved.q)  # the lemma: H >= sigma' D on S
    assert true_gap < mp.mpf(1) / 2  # and sigma itself is not a gap on the exact masses: the hole was real


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
