r"""A Sinkhorn bound that does not degrade with Delta / eps: strong convexity of the dual, certified by a verified Cholesky.

**The theorem.** For the shifted kernel K' (:mod:`constructions.sinkhorn.shifted`) and potentials z = (f, g),

    Phi(f, g) = sum_ij K'_ij e^{f_i + g_j} - a.f - b.g

is convex, constant along w = (1_n, -1_m) (sum a = sum b), and its minimisers are the potentials of the Sinkhorn
plan P* (its gradient is (P 1 - a, P^T 1 - b), P_ij = K'_ij e^{f_i + g_j}). Its Hessian is
H(P) = sum_ij P_ij (e_i + e_{n+j})(e_i + e_{n+j})^T, a positive combination of fixed rank-one matrices, so
0 <= W <= P entrywise gives H(P) >= H(W). Norms: ||d||^2 = d^T D d with D = diag(a, b), on the quotient by w
(the representative D-orthogonal to w; S denotes that subspace); the dual norm of a gradient (x, y) is
(sum x_i^2 / a_i + sum y_j^2 / b_j)^{1/2}. Since |d_i + d_{n+j}| <= (1/a_i + 1/b_j)^{1/2} ||d|| (Cauchy-Schwarz),
moving z by d moves every log P_ij by at most kappa ||d||, kappa = (1/min a + 1/min b)^{1/2}.

Let z^ = (log u^, log v^) with v^ = b / (K'^T u^) (so P^ has column sums b exactly), eta >= the dual norm of
grad Phi(z^) = (P^ 1 - a, 0), and mu > 0 with H(P^) >= mu D on S. On the ball ||d|| <= rho every P >= P^ e^{-kappa rho},
so H >= mu e^{-kappa rho} D there, and on its sphere Phi(z^ + d) - Phi(z^) >= -eta rho + mu e^{-kappa rho} rho^2 / 2.
If 2 eta e^{kappa rho} < mu rho, that is > 0, so Phi has a minimiser z* inside the ball (a convex function whose
values on a sphere exceed its centre's attains its minimum inside), and then
mu e^{-kappa rho} ||d*||^2 <= <grad Phi(z*) - grad Phi(z^), d*> <= eta ||d*|| gives

    max_ij |log P*_ij - log P^_ij| <= kappa ||d*|| <= kappa eta e^{kappa rho} / mu.

We take kappa rho = 2t with t = 2 eta kappa / mu: the hypothesis holds whenever t < 0.34 (e^{2t} < 2), and the
bound is kappa eta e^{2t} / mu. No Delta and no eps appear: the difficulty is mu, which is about eps (in the
units of the cost) where the Hilbert factor 1/(1 - tanh(Delta/4)) is e^{Delta/2}.

**eta** comes from the float-verified evaluation (:func:`~constructions.sinkhorn.verified.hilbert_float_bound`):
every q_i = r_i / a_i lies in [q_lo, q_hi], so eta^2 = sum a_i (q_i - 1)^2 <= sum(a) max(q_hi - 1, 1 - q_lo)^2.

**mu** by a verified Cholesky of a Schur complement of the Hessian, below.

The evaluation runs on the kernel balanced by the witness, K2 = diag(x) K' diag(y) (:func:`balanced`; the same plans,
its witness is 1 and its plan P^ that of x on K'), whose sums are dominated by entries near 1.

The matrix: S = diag(s, t), s = fl(1/sqrt(fl(a))), t = fl(1/sqrt(fl(b))) (doubles; any positive scaling is
exact as stored), W' = diag(1) K^ diag(v~) (the doubles K^ of the balanced kernel and v~ of the evaluation),
H^ = S H(W') S, E^ = diag(e) with e = (fl(fl(s s) a~), fl(fl(t t) b~)) and w^ = S^-1 w, so that H^ w^ = 0.

*Inertia.* If H^ - sigma E^ (sigma > 0) has at most one eigenvalue <= 0, then y^T H^ y >= sigma y^T E^ y for every y
with w^T E^ y = 0: else the plane of w^ and such a y would be negative definite (w^T (H^ - sigma E^) w^ =
-sigma w^T E^ w^ < 0, and the cross term vanishes), which takes two negative eigenvalues. With d = S y this is
H(W') >= sigma D~ on {d : w^T D~ d = 0}, D~ = diag(e) S^-2, and :func:`moved_gap` turns it into H(W') >= sigma' D on
S, sigma' = sigma (1 - gamma_4). Since P^ >= omega W' entrywise (omega = the lower ends of the kernel's factor and
of v^ / v~; W' without the entries of K^ below the normal range, which are not within that factor of K2),
H(P^) >= omega sigma' D on S: mu = omega sigma'.

*The Schur complement.* Order H^ - sigma E^ as [[Delta_E, B^], [B^^T, Delta_K]], eliminating the larger of the two
blocks (Delta diagonal, B^ the off-diagonal block S_1 W' S_2). If Delta_E > 0 then, by Haynsworth's inertia
additivity, H^ - sigma E^ has as many eigenvalues <= 0 as the Schur complement Sigma = Delta_K - B^^T Delta_E^-1 B^,
and Sigma + zeta zeta^T > 0 for some vector zeta leaves Sigma at most one (Cauchy interlacing). zeta is a power of
two times the kept half of z = (s a~, -t b~), the direction of Sigma's one negative eigenvalue, about
-2 sigma / (1 - sigma) (:func:`lift_exponent`). This is a Cholesky of order min(n, m), after one ``dsyrk``, where the
whole Hessian's was of order n + m: about half the time and a quarter of the memory.

*Floating point* (:func:`schur_certified`). The float Sigma~ + zeta zeta^T = dsyrk(-1, C, 1, zeta zeta^T +
diag(Delta_K~)), C_ij = fl(B_ij fl(1/fl(sqrt(Delta_E~_i)))), is within e of the exact matrix in the infinity norm
(hence in the 2-norm: the error is symmetric); every term of the error is charged from the standard model
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Lemma 3.1 and §3.1: a sum of n terms in any
order, with or without a fused multiply-add, is within gamma_n of its exact value relative to the sum of the absolute
terms), products that underflow are excluded by counting (:func:`no_underflow`) or charged 2^-1074 each. Then
**mu by a verified Cholesky** (Rump, "Verification of positive definiteness", BIT 46 (2006) 433-452, Cor. 2.4,
with the constants of Rump & Jeannerod, SIAM J. Matrix Anal. Appl. 35 (2014) 684-698, as formalised in Coq by
ValidSDP, ``corollary_2_4_with_c_upper_bound``): for a symmetric float matrix A of order N with A_ii >= 0 and
4(N + 1) u < 1, if the floating-point Cholesky factorisation of a float matrix At with At_ij = A_ij (i != j) and
At_ii <= A_ii - c runs to completion with positive diagonal, where

    c >= (1/2) gamma_{2(N+1)} tr(A) + 4 eta_min N (2(N + 1) + max_i A_ii),   eta_min = 2^-1074,

then A is positive definite. The bound rests on the Cholesky backward error |R^T R - At| <= gamma |R^T| |R|, which
holds for every order of evaluation of the inner products (Higham §10.1 and Lemma 8.4; Rump & Jeannerod 2014), so
for LAPACK's blocked ``dpotrf`` too, and with a fused multiply-add. We use twice the constant above, on the matrix
whose diagonal is lowered by e and then by c, each rounded down (``nextafter``): its success proves
Sigma~ + zeta zeta^T - e I > 0, hence the exact Sigma + zeta zeta^T > 0. sigma is 0.9 of an ARPACK estimate
(``eigsh``) of the least eigenvalue of S H(W') S + tau z z^T over S D S; it is a choice, recorded in the witness,
and only the Cholesky decides.

Where the gap is tiny (a plan near a permutation, mu below about 1e-9 of the scale) the Cholesky fails or t >= 0.34,
and nothing is certified: :class:`NotConvexityCertified` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
from flint import arb, ctx, fmpq
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrf
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from attncert.constructions.sinkhorn.shifted import BOUND_BITS, TAIL, ShiftedKernel, UnsupportedKernel
from attncert.constructions.sinkhorn.logdomain import row_correction
from attncert.constructions.sinkhorn.verified import FloatBound, FloatIterations, FloatRun, float_sinkhorn, hilbert_float_bound, round_up, witness_point
from attncert.exact.roundoff import SMALLEST_NORMAL, Factor, exact, float_of, gamma

#: sigma is this fraction of the estimated least eigenvalue (the Cholesky needs some room: Rump's c, the error e).
SIGMA_SHARE = 0.9
#: t = 2 eta kappa / mu must stay below this for the ball argument (e^{2t} < 2).
T_MAX = fmpq(34, 100)
#: The smallest positive subnormal double.
ETA_MIN = fmpq(1, 2**1074)
#: The sums K v and K^T u of the Hessian's diagonal must be at least this (:meth:`Hessian.of`): a sum of at most 2^30
#: products each off by 2^-1074 is then within a relative 2^-100 of it, inside the gamma it is charged.
NORMAL_FLOOR = 2.0**-900
#: The float iterations run to this estimated d_H (float64's floor), or until STALL iterations find no lower one: the
#: bound is about kappa eta / mu, so every digit of the residual counts.
FLOAT_TARGET = 1e-15
STALL = 50
#: Float iterations before Newton steps take over (a small gap makes Sinkhorn slow), and the most Newton steps.
SINKHORN_BUDGET = 3000
NEWTON_STEPS = 6


class NotConvexityCertified(ValueError):
    """The strong-convexity bound could not be certified (the Cholesky failed, or the gap is too small)."""


@dataclass(frozen=True)
class ConvexityBound:
    """The certified bound and what proves it."""

    sigma: float  # the witness's sigma (a double)
    mu: arb  # a lower bound on the least Hessian eigenvalue over D on S at P^
    eta: arb  # an upper bound on the dual norm of the gradient at z^
    kappa: arb
    bound: fmpq  # as recorded: >= kappa eta e^{2t} / mu


def scaling(af: np.ndarray, bf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = fl(1/sqrt(a~)), t = fl(1/sqrt(b~)): the diagonal scaling S (any doubles would do: S is exact as stored)."""
    return 1.0 / np.sqrt(af), 1.0 / np.sqrt(bf)


def tau_exponent(a: Sequence[fmpq]) -> int:
    """k with tau = 4^k about 1 / (2 sum a): the lift tau z z^T of the direction z has about unit size."""
    total = float(sum(a, fmpq(0)))
    return int(round(-np.log2(2 * total) / 2))


@dataclass(frozen=True)
class Hessian:
    """The parts of T~ = S H(W') S - sigma S D S + tau z z^T in float64 (module docstring)."""

    B: np.ndarray  # fl(fl(x K~) y), x = fl(s u^), y = fl(t v~): the off-diagonal block
    d: np.ndarray  # the diagonal of S H(W') S: fl(fl(s x) fl(K~ v~)), fl(fl(t y) fl(K~^T u^))
    e: np.ndarray  # the diagonal of S D S: fl(fl(s s) a~), fl(fl(t t) b~)
    z: np.ndarray  # 2^k fl(s a~), -2^k fl(t b~): the rank-one lift's direction (module docstring)
    normal: bool  # no product of B below the normal range, the factors of d, e, z and d normal, K v and K^T u >= NORMAL_FLOOR

    @classmethod
    def of(cls, K: np.ndarray, u: np.ndarray, v: np.ndarray, af: np.ndarray, bf: np.ndarray, k: int) -> Hessian:
        s, t = scaling(af, bf)
        x, y = s * u, t * v
        # W' drops the entries of K^ below the normal range: a subnormal fl(fl(x K~) y) is not within the kernel's
        # factor of K2 (P^ >= omega W' could fail there), and dropping an entry only lowers H(W')
        tiny = K < SMALLEST_NORMAL
        zeros = int(np.count_nonzero(tiny))
        if zeros and (K[tiny] > 0).any():  # a copy only where there is a subnormal entry to drop
            K = np.where(tiny, 0.0, K)
        with np.errstate(all="ignore"):
            B = x[:, None] * K
            normal = no_underflow(B, zeros)
            B *= y[None, :]
            normal = normal and no_underflow(B, zeros)
            Kv, Ku = K @ v, K.T @ u
            d = np.concatenate([(s * x) * Kv, (t * y) * Ku])
            e = np.concatenate([(s * s) * af, (t * t) * bf])
            z = np.concatenate([s * af, -(t * bf)]) * 2.0**k
            # every factor of d, e and z normal (each product within a relative u; d itself too: a subnormal
            # diagonal's rounding is absolute, outside the bound on |Delta~ - Delta|), and each sum K v, K^T u far
            # above the underflow threshold: the products its BLAS sum drops (2^-1074 each) are below 2^-100 of it
            factors = np.concatenate([x, y, s * x, t * y, s * s, t * t, e, np.abs(z), d])
            sums = np.concatenate([Kv, Ku])
            normal = normal and bool(np.isfinite(factors).all() and factors.min() >= SMALLEST_NORMAL)
            normal = normal and bool(np.isfinite(sums).all() and sums.min() >= NORMAL_FLOOR)
        return cls(B, d, e, z, normal)

    def matvec(self, y: np.ndarray) -> np.ndarray:
        """(S H(W') S + tau z z^T) y, scaled by the diagonal of S D S: an operator for the eigenvalue estimate."""
        n = self.B.shape[0]
        h = self.d * y
        h[:n] += self.B @ y[n:]
        h[n:] += self.B.T @ y[:n]
        h += self.z * (self.z @ y)
        return h

    def estimate(self) -> float:
        """ARPACK's estimate of the least generalised eigenvalue of (S H S + tau z z^T, S D S), or 0 if it fails."""
        N = len(self.d)
        r = 1.0 / np.sqrt(self.e)
        if N <= 2:
            T = np.diag(self.d) + np.outer(self.z, self.z)
            T[: self.B.shape[0], self.B.shape[0] :] += self.B
            T[self.B.shape[0] :, : self.B.shape[0]] += self.B.T
            return float(np.linalg.eigvalsh(r[:, None] * T * r[None, :])[0])
        shift = 2.0 * float(np.max(self.d / self.e)) + float(self.z @ self.z) * float(np.max(1 / self.e))  # above the spectrum
        op = LinearOperator((N, N), matvec=lambda y: shift * y - r * self.matvec(r * y), dtype=np.float64)
        try:
            # a fixed start vector: sigma is recorded, and proving again must choose the same one
            top = eigsh(op, k=1, which="LA", tol=1e-4, maxiter=2000, v0=np.linspace(1.0, 2.0, N), return_eigenvectors=False)[0]
        except ArpackNoConvergence:
            return 0.0
        return shift - float(top)

    def certify(self, sigma: float) -> bool:
        """Whether the verified Schur complement proves H(W') >= sigma D~ on the D~-complement of w (module docstring)."""
        n, m = self.B.shape
        if not self.normal:
            return False
        if n >= m:  # eliminate the larger block: the Cholesky is of order min(n, m)
            return schur_certified(self.B, self.d[:n], self.d[n:], self.e[:n], self.e[n:], self.z[n:], sigma, max(n, m))
        return schur_certified(self.B.T, self.d[n:], self.d[:n], self.e[n:], self.e[:n], self.z[:n], sigma, max(n, m))


def no_underflow(product: np.ndarray, zeros: int) -> bool:
    """Whether an entrywise product of a non-negative array with ``zeros`` zero entries by positive doubles has no result
    below the normal range but those zeros (so that each product is within a relative u of its exact value)."""
    return int(np.count_nonzero(product < SMALLEST_NORMAL)) == zeros


def lift_exponent(z: np.ndarray, sigma: float) -> int:
    """The least integer j with |2^j z|^2 >= need = 1 + 4 sigma / max(1 - sigma, 2^-6): the Schur complement's one
    negative eigenvalue is about -2 sigma / (1 - sigma) (for the normalised Laplacian), the lift 2^{2j} z z^T must
    exceed it, and no more, since the error bound charges gamma |2^j z|^2 (j < 0 where |z|^2 is large). The least j
    makes 2^j z the checker's vector whatever power of two z carries (2^k here, none there)."""
    with np.errstate(over="ignore"):
        zz = float(z @ z)
    need = 1.0 + 4.0 * sigma / max(1.0 - sigma, 2.0**-6)
    if not (0 < zz < math.inf and 0 < need < math.inf):  # |z|^2 overflowing: kept (refused later if not finite)
        return 0
    # decided in QQ; the logarithms (apart: need / zz overflows for a tiny zz) only start it
    j = math.ceil((math.log2(need) - math.log2(zz)) / 2)
    q, r = exact(zz), exact(need)
    while q * fmpq(4) ** j < r:
        j += 1
    while q * fmpq(4) ** (j - 1) >= r:
        j -= 1
    return j


def schur_certified(B: np.ndarray, dE: np.ndarray, dK: np.ndarray, eE: np.ndarray, eK: np.ndarray, z: np.ndarray, sigma: float, size: int) -> bool:
    r"""Whether the verified Cholesky of the Schur complement proves H^ - sigma E^ has at most one eigenvalue <= 0.

    H^ - sigma E^ = [[Delta_E, B^], [B^^T, Delta_K]] in the order (eliminated block, kept block), Delta = diag(d - sigma e)
    exact (d the exact diagonals of S H(W') S, known within gamma_{size+4}; B^ the exact block, B within gamma_4 of it).
    Delta_E > 0 and Sigma + zeta zeta^T > 0 for the Schur complement Sigma = Delta_K - B^^T Delta_E^-1 B^ and any zeta give
    (Haynsworth's inertia additivity and Cauchy interlacing) at most one eigenvalue <= 0. Here zeta = 2^j z, the float
    Sigma~ + zeta zeta^T = dsyrk(-1, C, 1, zeta zeta^T + diag(Delta_K~)) with C_ij = fl(B_ij fl(1 / fl(sqrt(Delta_E~_i)))),
    within e of the exact matrix in the infinity norm; its diagonal is lowered by e and by Rump's c, and LAPACK's dpotrf
    decides. Errors: |Delta~ - Delta| <= beta = 2 gamma_{size+4} (d + sigma e + |Delta~|); 1/Delta_E~ = (1/Delta_E) f,
    |f - 1| <= g' Psi (Psi >= max (d + sigma e + Delta~) / Delta~); each product c_ij c_ik is t_i (1 + xi) with t_i the
    exact term and |xi| <= Xi = (1 + gamma_14)(1 + g' Psi) - 1; a product that underflows in dsyrk is off by eta_min at
    most, so every entry is within (gamma_{n+2} + Xi / (1 - Xi)) S_jk + gamma_{n+4} (|zeta_j zeta_k| + |Delta_K~_j|)
    + beta_j + 2 n eta_min, S_jk = sum_i c_ij c_ik, whose row sums are C^T (C 1) (within gamma_{n+m+2})."""
    nE, nK = B.shape
    with np.errstate(all="ignore"):
        sE, sK = sigma * eE, sigma * eK
        lE, lK = dE - sE, dK - sK
        if not ((lE > 0).all() and np.isfinite(lE).all() and np.isfinite(lK).all()):
            return False
        psi = float(np.max((dE + sE + lE) / lE))
        r = 1.0 / np.sqrt(lE)
        C = B * r[:, None]
        j = lift_exponent(z, sigma)
        zeta = z * 2.0**j
        beta = np.abs(dK) + sK + np.abs(lK)
        rows = C.T @ C.sum(axis=1)
        za = np.abs(zeta)
        tail = za * float(za.sum()) + np.abs(lK)
        # every double the bound reads finite (C^T C 1 overflowed for C near 2^511: OverflowError)
        if not (all(np.isfinite(x).all() for x in (C, zeta, rows, tail, beta)) and np.isfinite(psi)):
            return False
    if not no_underflow(C, int(np.count_nonzero(B == 0))):
        return False
    with ctx.workprec(BOUND_BITS):
        g = 2 * gamma(size + 4)
        gpsi = (arb(g) * arb(exact(psi)) * (1 + arb(gamma(5)))).upper()
        if not gpsi < arb(fmpq(1, 2)):
            return False
        xi = ((1 + arb(gamma(14))) * (1 + gpsi) - 1).upper()
        lam = ((arb(gamma(nE + 2)) + xi / (1 - xi)) / (1 - arb(gamma(nE + nK + 2)))).upper()
        # every term non-negative: each row's double is within (1 + gamma_{nK+8}) of its exact value (the sum of |zeta|
        # has nK terms; the rows' own sums are charged in lam)
        e_lam, e_g, e_beta = float(rows.max()), float(tail.max()), float(beta.max())
        e = (
            (lam * arb(exact(e_lam)) + arb(gamma(nE + 4)) * arb(exact(e_g)) + arb(g) * arb(exact(e_beta))) * (1 + arb(gamma(nK + 8)))
            + 4 * nE * nK * arb(ETA_MIN)
        ).upper().fmpq()
    A = np.multiply.outer(zeta, zeta, out=np.empty((nK, nK), order="F"))  # dsyrk overwrites a Fortran-order array
    i = np.arange(nK)
    A[i, i] += lK
    A = dsyrk(-1.0, C.T, beta=1.0, c=A, trans=0, lower=0, overwrite_c=1)
    if not (np.isfinite(A).all() and e < exact(A[i, i].max())):  # else no proof (and float(e) might overflow)
        return False
    return verified_cholesky(A, float(e) * (1 + 2.0**-50))


def verified_cholesky(A: np.ndarray, e: float) -> bool:
    """Whether Rump's test proves A - e I > 0 for the symmetric matrix A given by its upper triangle (module docstring):
    the diagonal lowered by e, then by c, each rounded down, factors with dpotrf (A is overwritten)."""
    N = A.shape[0]
    i = np.arange(N)
    lowered = np.nextafter(A[i, i] - e, -np.inf)
    if not (lowered >= 0).all():
        return False
    with ctx.workprec(BOUND_BITS):
        trace = sum((exact(x) for x in lowered.tolist()), fmpq(0))
        c = 2 * (gamma(2 * (N + 1)) / 2 * trace + 4 * ETA_MIN * N * (2 * (N + 1) + exact(lowered.max())))
    A[i, i] = np.nextafter(lowered - float(c) * (1 + 2**-50), -np.inf)
    R, info = dpotrf(A, lower=0, clean=0, overwrite_a=1)
    diagonal = np.diag(R)
    return bool(info == 0 and (diagonal > 0).all() and np.isfinite(diagonal).all())


def moved_gap(sigma: float) -> fmpq:
    r"""sigma' = sigma (1 - gamma_4): H(W') >= sigma D~ on S~ = {d : w^T D~ d = 0} gives H(W') >= sigma' D on S.

    D~ = diag(e_i / S_i^2) is the doubles' D: e_i = fl(fl(S_i^2) a~_i) with a~_i = fl(a_i), all normal, so
    |D~_i - D_i| <= gamma_3 D_i. For d in S let c = w^T D~ d / w^T D~ w and d' = d - c w in S~; H w = 0, so
    d^T H d = d'^T H d' >= sigma (d^T D~ d - (w^T D~ d)^2 / w^T D~ w), where d^T D~ d >= (1 - gamma_3) d^T D d and
    (w^T D~ d)^2 = (w^T (D~ - D) d)^2 <= gamma_3^2 (w^T D w)(d^T D d) (Cauchy-Schwarz in D) with w^T D~ w >=
    (1 - gamma_3) w^T D w: sigma' = sigma (1 - gamma_3 - gamma_3^2 / (1 - gamma_3)) >= sigma (1 - gamma_4)."""
    return exact(sigma) * (1 - gamma(4))


def convexity_bound(
    K: ShiftedKernel, ev: FloatBound, a: Sequence[fmpq], b: Sequence[fmpq], af: np.ndarray, bf: np.ndarray, sigma: float | None = None
) -> ConvexityBound:
    """The strong-convexity bound for the float-verified evaluation ``ev`` of the witness (module docstring);
    ``sigma`` as recorded, or chosen here. NotConvexityCertified where it cannot be certified."""
    k = tau_exponent(a)
    H = Hessian.of(K.K, ev.u, ev.v, af, bf, k)
    with ctx.workprec(BOUND_BITS):
        q_lo, q_hi = ev.q_range
        dev = max((q_hi - 1).upper(), (1 - q_lo).upper(), key=lambda x: x.mid())
        eta = (arb(sum(a, fmpq(0))).sqrt() * max(dev, arb(0))).upper()
        kappa = (1 / arb(min(a)) + 1 / arb(min(b))).sqrt().upper()
        omega = (K.factor.lo * ev.v_factor.lo).lower()
    if sigma is None:
        guess = H.estimate()
        tries = [SIGMA_SHARE * guess, SIGMA_SHARE * guess / 4] if guess > 0 else []
    else:
        tries = [sigma]
    for s in tries:
        s = float(np.float64(s))
        if s > 0 and H.certify(s):
            with ctx.workprec(BOUND_BITS):
                mu = (omega * arb(moved_gap(s))).lower()
                t = 2 * eta * kappa / mu
                if not t.upper() < arb(T_MAX):
                    raise NotConvexityCertified(f"the gradient is too large for the gap: t = 2 eta kappa / mu = {t.str(3, radius=False)} >= 0.34")
                bound = kappa * eta * (2 * t).exp() / mu
            return ConvexityBound(s, mu, eta, kappa, round_up(bound))
    raise NotConvexityCertified("the verified Cholesky did not prove the Hessian's gap (the plan is too close to a vertex)")


def balanced(K: ShiftedKernel, x: np.ndarray, bf: np.ndarray, y: np.ndarray | None = None) -> tuple[ShiftedKernel, np.ndarray]:
    """The kernel K2 = diag(x) K' diag(y) for the witness x (the float iterate) and y (about b / K'^T x, scaled by a power
    of two so that max K2 is about 1), as doubles K^ = fl(fl(x K~) y) with K2 in K^ phi (1 +- gamma_2)^-1 entrywise.

    K2 has the plan of K' (diagonal scalings), and its witness is u = 1: the plan P^ = diag(1) K2 diag(b / K2^T 1) is
    diag(x) K' diag(b / K'^T x), the plan of the witness x on K'. Its sums are dominated by entries near 1, where the
    evaluation's truncations (2^-63) are negligible: on K' itself a column whose mass sits on entries e^-100 and a
    row scaling of e^100 made them dominate. Where a product fl(x K~) underflows (below 2^-1022) the entry is 0 in K^
    and its tail entry is 2^-1020 y_j rounded up, above K2_ij / phi_hi; where fl(x K~) is normal but its product with y_j is not,
    the entry is 0 with the tail 2^-1021; UnsupportedKernel where a column has no product above 2^-900 (the tail
    would then carry it)."""
    t = x[:, None] * K.K
    if y is None:
        with np.errstate(all="ignore"):
            y = bf / (K.K.T @ x)
        y = y * 2.0 ** -int(np.frexp(np.max(t * y[None, :]))[1])  # max K^ in [1/2, 1), by an exact power of two
    if not (np.isfinite(y).all() and (y > 0).all()):
        raise UnsupportedKernel("the witness's column scaling leaves float64's range")
    if not (t.max(axis=0) >= 2.0**-900).all():
        raise UnsupportedKernel("a column of the balanced kernel is all below 2^-900")
    under = t < 2.0**-1022
    t[under] = 0.0
    with np.errstate(over="ignore"):
        t *= y[None, :]
    if not (np.isfinite(t).all() and t.max() < 2.0):
        raise UnsupportedKernel("the balanced kernel leaves [0, 2)")
    # a second product below the normal range (fl(x K~) normal, times y) is no longer within a relative u: 0 in K^,
    # with the tail 2^-1021 >= K2_ij / phi_hi (the exact product is below 2^-1022 + 2^-1075)
    low = t < 2.0**-1022
    t[low] = 0.0
    # the default tail min(K^, TAIL) (verified.py) unless a product underflowed: no second n x m array held
    if low.any():
        # 2^-1020 y_j rounded up: below the normal range the product rounds, to 0 for y_j < 2^-55 (an uncharged tail)
        tail = np.where(under, np.nextafter(2.0**-1020 * y[None, :], np.inf), np.where(low, 2.0**-1021, np.minimum(t, TAIL)))
    else:
        tail = None
    with ctx.workprec(BOUND_BITS):
        factor = K.factor / Factor.within(gamma(2))
    return ShiftedKernel(t, factor, K.delta, K.mode, K.shifts, tail=tail), y


def convexity_run(K: ShiftedKernel, a: Sequence[fmpq], b: Sequence[fmpq], u0: np.ndarray | None = None, max_iter: int = 10_000) -> FloatRun:
    """Float iterations to their floor, the float-verified evaluation of the witness on the kernel it balances, then the
    strong-convexity bound in place of Hilbert's (``run.convexity``, ``run.balance`` = (x, y)); ``run.evaluation`` is
    None, with the reason, where a step fails."""
    af = np.array([float_of(x) for x in a])
    bf = np.array([float_of(x) for x in b])
    its = float_sinkhorn(K.K, af, bf, u0, FLOAT_TARGET, min(max_iter, SINKHORN_BUDGET), halving=False, stall=STALL)
    if its.estimate > FLOAT_TARGET * 100:  # slow (a small gap): Newton on the row sums, then Sinkhorn to the floor again
        its = _polished(K.K, af, bf, its, max_iter)
    try:
        x = witness_point(its.u)
        K2, y = balanced(K, x, bf)
        ev = hilbert_float_bound(K2, np.ones(len(af)), a, b, af, bf)
        cb = convexity_bound(K2, ev, a, b, af, bf)
    except (UnsupportedKernel, NotConvexityCertified) as e:
        return FloatRun(K, its, None, str(e))
    return FloatRun(K2, its, replace(ev, bound=cb.bound), "", cb, (x, y))


def _polished(K: np.ndarray, af: np.ndarray, bf: np.ndarray, its: FloatIterations, max_iter: int) -> FloatIterations:
    """Up to NEWTON_STEPS Newton steps for the row sums (:func:`~constructions.sinkhorn.logdomain.row_correction`, a
    dense n x n solve) while they lower the estimated d_H, then float iterations to the floor: a witness only."""
    u, best = its.u, its
    with np.errstate(all="ignore"):
        L, lb = np.log(K), np.log(bf)
        for _ in range(NEWTON_STEPS):
            v = bf / (K.T @ u)
            q = u * (K @ v) / af
            try:
                step = row_correction(L, lb, np.log(u), q - 1)
            except np.linalg.LinAlgError:  # a singular Newton system (a small plan near a vertex): Sinkhorn alone
                break
            trial = u * np.exp(step)
            if not np.isfinite(trial).all():
                break
            u = trial / trial.max()
            cand = float_sinkhorn(K, af, bf, u, FLOAT_TARGET, 0, halving=False, stall=STALL)
            if not cand.estimate < best.estimate:
                break
            best = FloatIterations(cand.u, best.iterations + 1, cand.estimate)
    more = float_sinkhorn(K, af, bf, best.u, FLOAT_TARGET, max_iter, halving=False, stall=STALL)
    return FloatIterations(more.u, best.iterations + more.iterations, more.estimate) if more.estimate <= best.estimate else best


def reachable(tol: fmpq) -> bool:
    """Whether the convexity path can reach tol: its bound is kappa eta / mu with eta at float64's floor (1e-14 at
    best), so tol must be above that."""
    return tol >= fmpq(1, 10**14) and math.isfinite(float(tol))
