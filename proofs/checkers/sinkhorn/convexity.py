r"""The strong-convexity certificate of a Sinkhorn plan, re-derived from the witness (u^, sigma).

**Theorem.** Let Phi(f, g) = sum_ij K'_ij e^{f_i + g_j} - a.f - b.g for the shifted kernel K' (the Sinkhorn plan
P* is exp of its minimiser), z^ = (log u^, log v^) with v^ = b / (K'^T u^), P^ the plan at z^, D = diag(a, b) and S
the subspace D-orthogonal to w = (1, -1). If eta >= (sum_i (r_i - a_i)^2 / a_i)^{1/2} (r = P^ 1; P^ has column sums b),
H(P^) >= mu D on S with mu > 0, kappa = (1/min a + 1/min b)^{1/2} and t = 2 eta kappa / mu < 0.34, then

    max_ij |log P*_ij - log P^_ij| <= kappa eta e^{2t} / mu.

(Proof: on the D-ball of radius rho = 2t / kappa every plan is within e^{+-kappa rho} of P^ entrywise, so the Hessian is
>= mu e^{-2t} D there on S; Phi on the sphere exceeds Phi(z^) since 2 eta e^{2t} < mu rho, so a minimiser lies inside,
and strong convexity along the segment gives ||z* - z^|| <= eta e^{2t} / mu; finally |d_i + d_{n+j}| <= kappa ||d||.)

The evaluation runs on the kernel balanced by the witness, K2 = diag(u^) K' diag(v) (the same plans; its witness is 1,
and its plan P^ is that of u^ on K'), whose sums are dominated by entries near 1.

**mu** is checked here, from the recorded sigma: with s = fl(1/sqrt(a~)), t = fl(1/sqrt(b~)), W' = diag(1) K^ diag(v~)
(the doubles of :func:`~proofs.checkers.sinkhorn.float_hilbert.balanced_evaluation`) and z = (s a, -t b), the matrix
T = S H(W') S - sigma S D S + 4^k z z^T is positive definite by a verified Cholesky (Rump, BIT 46 (2006), Cor. 2.4;
the Rump-Jeannerod constants, as in ValidSDP's ``corollary_2_4_with_c_upper_bound``, doubled): its float form T~
lowered by e = 2 gamma_K (1 + gamma_{N+4}) max_i sum_j G_ij (G the non-negative terms of each entry, K = max(n, m) + 8)
and then by Rump's c, each rounded down, factors with LAPACK's ``dpotrf``. Since P^ >= omega W' entrywise (omega the
lower ends of the kernel's factor and of v^ / v~), H(P^) >= omega sigma' D on S: mu = omega sigma', where sigma'
(:func:`exact_gap`) moves the gap from the doubles' D~ and z to the exact D = diag(a, b) and its S. eta <=
sum(a)^{1/2} max(q_hi - 1, 1 - q_lo) from the same evaluation. Everything is this module's own code; it shares
:mod:`exact` with the prover, and the float evaluation with the float-verified check.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from flint import arb, ctx, fmpq

from attncert.exact.numberfiles import is_double
from attncert.exact.roundoff import exact, gamma
from attncert.proofs.checkers.sinkhorn.float_hilbert import BITS, FloatEvaluation, balanced_evaluation
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, PlanEnclosure, Problem

#: The ball argument needs t = 2 eta kappa / mu below this (e^{2t} < 2).
T_MAX = fmpq(34, 100)
ETA_MIN = fmpq(1, 2**1074)


def _scalings(ev: FloatEvaluation, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The doubles s, t of S = diag(s, t), the diagonal e of sigma's term and the rank-one vector z (module docstring)."""
    s, t = 1.0 / np.sqrt(ev.a), 1.0 / np.sqrt(ev.b)
    e = np.concatenate([(s * s) * ev.a, (t * t) * ev.b])
    z = np.concatenate([s * ev.a, -(t * ev.b)]) * 2.0**k
    return s, t, e, z


def exact_gap(p: Problem, ev: FloatEvaluation, sigma: fmpq, k: int) -> fmpq:
    r"""sigma' with H(W') >= sigma' D on S for the exact D = diag(a, b) and S = {d : a.d_1 = b.d_2}, from T > 0.

    T > 0 gives, for d = S w, d^T H d >= sigma sum_i e_i d_i^2 / S_i^2 - (zeta.d)^2 with zeta = S^-1 z (exact values of
    the doubles). e_i / S_i^2 is D~_i (the doubles a~, b~, rounded again), not D_i, and zeta is not c = 2^k (a, -b),
    whose D-orthogonal complement is S: both differ by about 2^-53 relative (fl(s a~) / s != a; a = 1/3 is no double).
    On S, c.d = 0, so (zeta.d)^2 = ((zeta - c).d)^2 <= eps^2 d^T D d (Cauchy-Schwarz), eps^2 = sum_i (zeta_i - c_i)^2 / D_i;
    and sum_i e_i d_i^2 / S_i^2 >= rho d^T D d, rho = min_i e_i / (S_i^2 D_i). So sigma' = sigma rho - eps^2, exact."""
    s, t, e, z = _scalings(ev, k)
    scale = [exact(v) for v in s.tolist() + t.tolist()]
    D = list(p.a) + list(p.b)
    c = [x * 2**k if k >= 0 else x / 2**-k for x in list(p.a) + [-y for y in p.b]]
    rho = min(exact(ei) / (si * si * Di) for ei, si, Di in zip(e.tolist(), scale, D))
    eps2 = sum(((exact(zi) / si - ci) ** 2 / Di for zi, si, ci, Di in zip(z.tolist(), scale, c, D)), fmpq(0))
    return sigma * rho - eps2


def _gap_matrix(ev: FloatEvaluation, sigma: float, k: int) -> np.ndarray | None:
    """T~ lowered by e and by Rump's c (module docstring), ready for dpotrf; None where a diagonal would be negative."""
    n, m = ev.K.shape
    N = n + m
    s, t, e, z = _scalings(ev, k)
    x, y = s * ev.u, t * ev.v
    B = (x[:, None] * ev.K) * y[None, :]
    d = np.concatenate([(s * x) * (ev.K @ ev.v), (t * y) * (ev.K.T @ ev.u)])
    T = np.zeros((N, N))
    T[:n, n:] = B
    T[n:, :n] = B.T
    T += np.outer(z, z)
    i = np.arange(N)
    with np.errstate(over="ignore", invalid="ignore"):  # a huge recorded sigma: not finite, refused below
        T[i, i] += d - sigma * e
    if not np.isfinite(T).all():
        return None
    G = np.abs(z) * float(np.abs(z).sum()) + d + sigma * e
    G[:n] += B.sum(axis=1)
    G[n:] += B.sum(axis=0)
    with ctx.workprec(BITS):
        err = (2 * arb(gamma(max(n, m) + 8)) * (1 + arb(gamma(N + 4))) * arb(exact(G.max()))).upper().fmpq()
    lowered = np.nextafter(T[i, i] - float(err) * (1 + 2.0**-50), -np.inf)
    if not (lowered >= 0).all():
        return None
    trace = sum((exact(v) for v in lowered.tolist()), fmpq(0))
    c = gamma(2 * (N + 1)) * trace + 8 * ETA_MIN * N * (2 * (N + 1) + exact(lowered.max()))
    T[i, i] = np.nextafter(lowered - float(c) * (1 + 2.0**-50), -np.inf)
    return T


def positive_definite(T: np.ndarray) -> bool:
    """Whether LAPACK's Cholesky of T runs to completion with a positive, finite diagonal."""
    try:
        R = scipy.linalg.cholesky(T, lower=False, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        return False
    diagonal = np.diag(R)
    return bool((diagonal > 0).all() and np.isfinite(diagonal).all())


def certified_gap(p: Problem, u: list[fmpq], v: list[fmpq], sigma: fmpq, recipe: str) -> tuple[FloatEvaluation, fmpq]:
    """The balanced evaluation for the witness (u^, v) whose matrix T (module docstring) the verified Cholesky proves
    positive definite for ``sigma``, and sigma' (:func:`exact_gap`) > 0 with H(W') >= sigma' D on S for its doubles
    W' = K^ diag(v~); HypothesisError else."""
    if not (sigma > 0 and is_double(sigma)):
        raise HypothesisError("the convexity witness's sigma is not a positive binary64 value")
    ev = balanced_evaluation(p, u, v, recipe)
    k = int(round(-np.log2(2 * float(sum(p.a, fmpq(0)))) / 2))
    T = _gap_matrix(ev, float(sigma), k)
    if T is None or not positive_definite(T):
        raise HypothesisError("the verified Cholesky does not prove the Hessian's gap sigma: the convexity bound does not apply")
    gap = exact_gap(p, ev, sigma, k)
    if not gap > 0:
        raise HypothesisError("the Hessian's gap on the exact masses is not positive: the convexity bound does not apply")
    return ev, gap


def kappa(p: Problem) -> arb:
    """kappa = (1/min a + 1/min b)^{1/2}, rounded up: |log P_ij| moves by at most kappa ||d|| when z moves by d."""
    return (1 / arb(min(p.a)) + 1 / arb(min(p.b))).sqrt().upper()


def convexity_bound(eta: arb, k: arb, mu: arb) -> arb:
    """kappa eta e^{2t} / mu, t = 2 eta kappa / mu, rounded up; HypothesisError unless mu > 0 and t < 0.34."""
    ratio = 2 * eta * k / mu
    if not (mu > 0 and ratio.upper() < arb(T_MAX)):
        raise HypothesisError(f"t = 2 eta kappa / mu = {ratio.str(3, radius=False)} is not below 0.34: the convexity bound does not apply")
    return (k * eta * (2 * ratio).exp() / mu).upper()


def convexity_enclosure(p: Problem, u: list[fmpq], v: list[fmpq], sigma: fmpq, recipe: str, plan: bool = True) -> PlanEnclosure:
    """The bound from the witness (u^, v, sigma) by the theorem above (on the kernel diag(u^) K' diag(v), balanced by the
    witness: :func:`~proofs.checkers.sinkhorn.float_hilbert.balanced_evaluation`), and, with ``plan``, balls containing P*."""
    ev, gap = certified_gap(p, u, v, sigma, recipe)
    with ctx.workprec(BITS):
        dev = max((ev.q_hi - 1).upper(), (1 - ev.q_lo).upper(), key=lambda v: v.mid())
        eta = (arb(sum(p.a, fmpq(0))).sqrt() * max(dev, arb(0))).upper()
        mu = ((ev.phi.lo * ev.v_ball.lo).lower() * arb(gap)).lower()
        bound = convexity_bound(eta, kappa(p), mu)
        balls = ev.balls(bound) if plan else []
    return PlanEnclosure(balls, bound.fmpq())
