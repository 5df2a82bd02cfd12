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

**mu** is checked here, from the recorded sigma. With s = fl(1/sqrt(a~)), t = fl(1/sqrt(b~)) (S = diag(s, t), exact as
stored), W' = diag(1) K^ diag(v~) (the doubles of :func:`~proofs.checkers.sinkhorn.float_hilbert.balanced_evaluation`),
H^ = S H(W') S, E^ = diag(e), e = (fl(fl(s s) a~), fl(fl(t t) b~)) and w^ = S^-1 w (so H^ w^ = 0):

1. If H^ - sigma E^ has at most one eigenvalue <= 0 then y^T H^ y >= sigma y^T E^ y whenever w^T E^ y = 0 (otherwise
   the plane of w^ and y is negative definite: w^T (H^ - sigma E^) w^ = -sigma w^T E^ w^ < 0, no cross term), i.e.
   H(W') >= sigma D~ on {d : w^T D~ d = 0}, D~ = E^ S^-2.
2. :func:`moved_gap`: |D~_i - D_i| <= gamma_3 D_i (a~ = fl(a), every factor normal), and projecting d in S along w
   onto that subspace (H w = 0; Cauchy-Schwarz in D) gives H(W') >= sigma' D on S, sigma' = sigma (1 - gamma_4).
3. With the larger block eliminated, H^ - sigma E^ = [[Delta_E, B^], [B^^T, Delta_K]], Delta diagonal. If Delta_E > 0,
   H^ - sigma E^ has as many eigenvalues <= 0 as Sigma = Delta_K - B^^T Delta_E^-1 B^ (Haynsworth), and
   Sigma + zeta zeta^T > 0 for any zeta leaves Sigma at most one (Cauchy interlacing); zeta = :func:`lift` of the
   kept half of z = (s a~, t b~).
4. :func:`schur_gap`: the float Sigma~ + zeta zeta^T = dsyrk(-1, C, 1, zeta zeta^T + diag(Delta_K~)), C_ij =
   fl(B_ij fl(1/fl(sqrt(Delta_E~_i)))), B = fl(fl(fl(s u) K^) fl(t v~)), is within err of the exact matrix in the
   infinity norm: |Delta~ - Delta| <= 2 gamma_{max(n,m)+4} (d + sigma e + |Delta~|) (d the computed diagonals of
   H^: a BLAS sum and three roundings), hence Delta_E > 0 and 1/Delta_E~ = f / Delta_E with |f - 1| <= g psi;
   each c_ij c_ik is the exact term B^_ij B^_ik / Delta_E_i within Xi = (1 + gamma_14)(1 + g psi) - 1; dsyrk's
   sums are within gamma_{n+2} of their absolute terms (Higham, *Accuracy and Stability of Numerical Algorithms*,
   2nd ed., Lemma 3.1, any order, with or without FMA), and a product it underflows is off by 2^-1074 at most.
   Products of B and C that underflow are refused by counting their entries below the normal range; every other
   factor, and the diagonals d themselves, must be normal (a subnormal one is not within a relative u of its value),
   and the sums K v~, K^T u at least 2^-900, so the products a BLAS sum drops are within a relative 2^-100 of them.
5. Rump's verified Cholesky (BIT 46 (2006), Cor. 2.4; the Rump-Jeannerod constants, as in ValidSDP's
   ``corollary_2_4_with_c_upper_bound``, doubled): the diagonal lowered by err and then by Rump's c, each rounded
   down, factors with LAPACK's ``dpotrf`` (the backward error holds for any order of the inner products, so for the
   blocked ``dpotrf``), which proves Sigma~ + zeta zeta^T - err I > 0, hence the exact Sigma + zeta zeta^T > 0.

Since P^ >= omega W' entrywise (omega the lower ends of the kernel's factor and of v^ / v~; W' drops the entries of K^
below the normal range, which are not within the factor of K2), H(P^) >= omega sigma' D on
S: mu = omega sigma'. eta <= sum(a)^{1/2} max(q_hi - 1, 1 - q_lo) from the same evaluation. Everything is this module's own code; it shares
:mod:`exact` with the prover, and the float evaluation with the float-verified check.
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb, ctx, fmpq
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrf

from attncert.exact.numberfiles import is_double
from attncert.exact.roundoff import SMALLEST_NORMAL, exact, gamma
from attncert.proofs.checkers.sinkhorn.float_hilbert import BITS, FloatEvaluation, balanced_evaluation
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, PlanEnclosure, Problem

#: The ball argument needs t = 2 eta kappa / mu below this (e^{2t} < 2).
T_MAX = fmpq(34, 100)
ETA_MIN = fmpq(1, 2**1074)
#: The sums K v~ and K^T u of the Hessian's diagonal at least this: a BLAS sum of products each off by at most 2^-1074
#: is then within a relative 2^-100 of a sum this large, inside the gamma it is charged.
FACTOR_FLOOR = 2.0**-900


def lift(z: np.ndarray, sigma: float) -> np.ndarray:
    """zeta = 2^j z, j the least integer with |zeta|^2 >= need = 1 + 4 sigma / max(1 - sigma, 2^-6): above the Schur
    complement's one negative eigenvalue (about -2 sigma / (1 - sigma)), and no longer, since the error bound charges
    gamma |zeta|^2 (j < 0 where |z|^2 = sum b is large: z kept whole at masses totalling 1e14 made that charge exceed
    the gap, and verify refused genuine certificates). The prover's z is 2^k times this one, so its zeta is the same
    vector. Any zeta is sound; this one lets a true gap factor."""
    with np.errstate(over="ignore"):
        zz = float(z @ z)
    need = 1.0 + 4.0 * sigma / max(1.0 - sigma, 2.0**-6)
    if not (0 < zz < math.inf and 0 < need < math.inf):  # |z|^2 overflowing: kept (refused later if not finite)
        return z
    return z * 2.0 ** _least_power(zz, need)


def _least_power(zz: float, need: float) -> int:
    """The least integer j with 4^j zz >= need (positive finite doubles), decided in QQ: the logarithms only start it
    (apart, since need / zz overflows for a tiny zz)."""
    j = math.ceil((math.log2(need) - math.log2(zz)) / 2)
    q, r = exact(zz), exact(need)
    while q * fmpq(4) ** j < r:
        j += 1
    while q * fmpq(4) ** (j - 1) >= r:
        j -= 1
    return j


def moved_gap(sigma: fmpq) -> fmpq:
    """sigma' = sigma (1 - gamma_4): from H(W') >= sigma D~ on {w^T D~ d = 0} to H(W') >= sigma' D on S (module
    docstring: |D~_i - D_i| <= gamma_3 D_i for e_i = fl(fl(S_i^2) a~_i), a~_i = fl(a_i), all normal)."""
    return sigma * (1 - gamma(4))


def _counts_zeros(x: np.ndarray, zeros: int) -> bool:
    """No entry of x below the normal range but ``zeros`` of them (the exact zeros of a product's non-negative factor)."""
    return int(np.count_nonzero(x < SMALLEST_NORMAL)) == zeros


def schur_gap(ev: FloatEvaluation, sigma: float) -> bool:
    """Whether the verified Cholesky of the Schur complement proves H^ - sigma E^ has at most one eigenvalue <= 0, for
    H^ = S H(W') S and E^ = diag(fl(s s) a~, fl(t t) b~) (module docstring, "mu")."""
    n, m = ev.K.shape
    # W' without the entries of K^ below the normal range: a subnormal K^_ij = fl(fl(x K~) y) is not within phi of
    # K2_ij, so P^ >= omega W' could fail there; dropping an entry only lowers H(W')
    tiny = ev.K < SMALLEST_NORMAL
    zeros = int(np.count_nonzero(tiny))
    K = np.where(tiny, 0.0, ev.K) if zeros and (ev.K[tiny] > 0).any() else ev.K  # a copy only where there is one to drop
    s, t = 1.0 / np.sqrt(ev.a), 1.0 / np.sqrt(ev.b)
    with np.errstate(all="ignore"):
        x, y = s * ev.u, t * ev.v
        B = x[:, None] * K
        if not _counts_zeros(B, zeros):
            return False
        B *= y[None, :]
        if not _counts_zeros(B, zeros):
            return False
        Kv, Ku = K @ ev.v, K.T @ ev.u
        sx, ty, ss, tt = s * x, t * y, s * s, t * t
        ea, eb = ss * ev.a, tt * ev.b
        za, zb = s * ev.a, t * ev.b
        da, db = sx * Kv, ty * Ku
        # every factor normal, so each product is within a relative u; the diagonals themselves too: a subnormal d~
        # is off by up to 2^-1075, not by a relative u, and the bound on |Delta~ - Delta| (item 4) does not hold (a gap
        # 1.7 times too large was proven with d~ = 2^-1073); the sums K v~, K^T u far above underflow
        factors = np.concatenate([x, y, sx, ty, ss, tt, ea, eb, za, zb, da, db])
        sums = np.concatenate([Kv, Ku])
        if not (np.isfinite(factors).all() and factors.min() >= SMALLEST_NORMAL and np.isfinite(sums).all() and sums.min() >= FACTOR_FLOOR):
            return False
    if n >= m:  # eliminate the rows: the Cholesky is of order m
        return _schur(B, da, db, ea, eb, zb, sigma, max(n, m))
    return _schur(B.T, db, da, eb, ea, za, sigma, max(n, m))


def _schur(B: np.ndarray, dE: np.ndarray, dK: np.ndarray, eE: np.ndarray, eK: np.ndarray, z: np.ndarray, sigma: float, size: int) -> bool:
    """The Schur complement's test for the eliminated block (rows of B) and the kept one (module docstring, "mu")."""
    nE, nK = B.shape
    with np.errstate(all="ignore"):
        sE, sK = sigma * eE, sigma * eK
        lE, lK = dE - sE, dK - sK
        if not ((lE > 0).all() and np.isfinite(lE).all() and np.isfinite(lK).all()):
            return False
        psi = float(np.max((dE + sE + lE) / lE))
        C = B * (1.0 / np.sqrt(lE))[:, None]
        zeta = lift(z, sigma)
        cc = C.T @ C.sum(axis=1)  # the row sums of C^T C (their rounding is in lam; the rest's, nK + 8 roundings, below)
        za = np.abs(zeta)
        rest = za * float(za.sum()) + np.abs(lK)
        beta = np.abs(dK) + sK + np.abs(lK)
        # every double the bound reads finite (C^T C 1 overflowed for C near 2^511: OverflowError in verify)
        if not (all(np.isfinite(x).all() for x in (C, zeta, cc, rest, beta)) and np.isfinite(psi)):
            return False
    if not _counts_zeros(C, int(np.count_nonzero(B == 0))):
        return False
    with ctx.workprec(BITS):
        g = 2 * arb(gamma(size + 4))  # |Delta~ - Delta| <= g (d + sigma e + |Delta~|)
        gpsi = (g * arb(exact(psi)) * (1 + arb(gamma(5)))).upper()
        if not gpsi < arb(fmpq(1, 2)):
            return False
        xi = ((1 + arb(gamma(14))) * (1 + gpsi) - 1).upper()  # each c_ij c_ik against B^_ij B^_ik / Delta_E_i
        lam = ((arb(gamma(nE + 2)) + xi / (1 - xi)) / (1 - arb(gamma(nE + nK + 2)))).upper()
        err = (
            (lam * arb(exact(cc.max())) + arb(gamma(nE + 4)) * arb(exact(rest.max())) + g * arb(exact(beta.max()))) * (1 + arb(gamma(nK + 8)))
            + 4 * nE * nK * arb(ETA_MIN)
        ).upper().fmpq()
    A = np.multiply.outer(zeta, zeta, out=np.empty((nK, nK), order="F"))  # dsyrk overwrites a Fortran-order array
    i = np.arange(nK)
    A[i, i] += lK
    A = dsyrk(-1.0, C.T, beta=1.0, c=A, trans=0, lower=0, overwrite_c=1)
    if not np.isfinite(A).all():
        return False
    return rump_positive_definite(A, err)


def rump_positive_definite(A: np.ndarray, err: fmpq) -> bool:
    """Whether A - err I > 0 (A symmetric, given by its upper triangle; overwritten): its diagonal lowered by err and by
    Rump's c, each rounded down, and LAPACK's dpotrf runs to completion with a positive, finite diagonal."""
    N = A.shape[0]
    i = np.arange(N)
    if not err < exact(A[i, i].max()):  # the lowered diagonal would not be positive (and float(err) might overflow)
        return False
    lowered = np.nextafter(A[i, i] - float(err) * (1 + 2.0**-50), -np.inf)
    if not (lowered >= 0).all():
        return False
    trace = sum((exact(v) for v in lowered.tolist()), fmpq(0))
    c = gamma(2 * (N + 1)) * trace + 8 * ETA_MIN * N * (2 * (N + 1) + exact(lowered.max()))
    A[i, i] = np.nextafter(lowered - float(c) * (1 + 2.0**-50), -np.inf)
    R, info = dpotrf(A, lower=0, clean=0, overwrite_a=1)
    diagonal = np.diag(R)
    return bool(info == 0 and (diagonal > 0).all() and np.isfinite(diagonal).all())


def certified_gap(p: Problem, u: list[fmpq], v: list[fmpq], sigma: fmpq, recipe: str) -> tuple[FloatEvaluation, fmpq]:
    """The balanced evaluation for the witness (u^, v) whose Schur complement (module docstring) the verified Cholesky
    proves for ``sigma``, and sigma' = :func:`moved_gap` (sigma) > 0 with H(W') >= sigma' D on S for its doubles
    W' = K^ diag(v~); HypothesisError else."""
    if not (sigma > 0 and is_double(sigma)):
        raise HypothesisError("the convexity witness's sigma is not a positive binary64 value")
    ev = balanced_evaluation(p, u, v, recipe)
    if not schur_gap(ev, float(sigma)):
        raise HypothesisError("the verified Cholesky does not prove the Hessian's gap sigma: the convexity bound does not apply")
    return ev, moved_gap(sigma)


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
