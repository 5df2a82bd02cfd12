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

**mu** by a verified Cholesky (Rump, "Verification of positive definiteness", BIT 46 (2006) 433-452, Cor. 2.4,
with the constants of Rump & Jeannerod, SIAM J. Matrix Anal. Appl. 35 (2014) 684-698, as formalised in Coq by
ValidSDP, ``corollary_2_4_with_c_upper_bound``): for a symmetric float matrix A of order N with A_ii >= 0 and
4(N + 1) u < 1, if the floating-point Cholesky factorisation of a float matrix At with At_ij = A_ij (i != j) and
At_ii <= A_ii - c runs to completion with positive diagonal, where

    c >= (1/2) gamma_{2(N+1)} tr(A) + 4 eta_min N (2(N + 1) + max_i A_ii),   eta_min = 2^-1074,

then A is positive definite. The bound rests on the Cholesky backward error |R^T R - At| <= gamma |R^T| |R|, which
holds for every order of evaluation of the inner products (Higham, *Accuracy and Stability of Numerical Algorithms*,
2nd ed., §10.1 and Lemma 8.4; Rump & Jeannerod 2014), so for LAPACK's blocked ``dpotrf`` too, and with a fused
multiply-add (one rounding where the model has two). We use twice the constant above.

The evaluation runs on the kernel balanced by the witness, K2 = diag(x) K' diag(y) (:func:`balanced`; the same plans,
its witness is 1 and its plan P^ that of x on K'), whose sums are dominated by entries near 1.

The matrix: S = diag(s, t), s = fl(1/sqrt(fl(a))), t = fl(1/sqrt(fl(b))) (doubles; any positive scaling is
exact as stored), W' = diag(1) K^ diag(v~) (the doubles K^ of the balanced kernel and v~ of the evaluation), and

    T = S H(W') S - sigma S D S + tau z z^T,   z = S D w = (s a, -t b),   tau = 4^k (a power of two),

whose exact value is T ⪰ 0 => for d = S y in S (z^T y = d^T D w = 0): d^T H(W') d >= sigma d^T D d. Since
P^ >= omega W' entrywise (omega = the lower ends of the kernel's factor and of v^ / v~), H(P^) >= omega sigma D on S:
mu = omega sigma. T is formed in float64 as T~; every entry of T~ is within gamma_K of a sum of non-negative terms
G_ij (K = max(n, m) + 8: at most m products summed by BLAS, in any order, and eight roundings), so
||T - T~||_2 <= ||T - T~||_inf <= e = 2 gamma_K (1 + gamma_{N+4}) max_i sum_j G_ij; the Cholesky is of T~ with its
diagonal lowered by e and then by Rump's c, each rounded down (``nextafter``), so its success proves T~ - e I > 0,
hence T > 0. sigma is 0.9 of an ARPACK estimate (``eigsh``) of the least eigenvalue of S H(W') S + tau z z^T over
S D S; it is a choice, recorded in the witness, and only the Cholesky decides.

Where the gap is tiny (a plan near a permutation, mu below about 1e-9 of the scale) the Cholesky fails or t >= 0.34,
and nothing is certified: :class:`NotConvexityCertified` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import scipy.linalg
from flint import arb, ctx, fmpq
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from attncert.constructions.sinkhorn.shifted import BOUND_BITS, TAIL, ShiftedKernel, UnsupportedKernel
from attncert.constructions.sinkhorn.logdomain import row_correction
from attncert.constructions.sinkhorn.verified import FloatBound, FloatIterations, FloatRun, float_sinkhorn, hilbert_float_bound, round_up, witness_point
from attncert.exact.roundoff import Factor, exact, float_of, gamma

#: sigma is this fraction of the estimated least eigenvalue (the Cholesky needs some room: Rump's c, the error e).
SIGMA_SHARE = 0.9
#: t = 2 eta kappa / mu must stay below this for the ball argument (e^{2t} < 2).
T_MAX = fmpq(34, 100)
#: The smallest positive subnormal double.
ETA_MIN = fmpq(1, 2**1074)
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
    z: np.ndarray  # 2^k fl(s a~), -2^k fl(t b~): sqrt(tau) z, to within gamma_2

    @classmethod
    def of(cls, K: np.ndarray, u: np.ndarray, v: np.ndarray, af: np.ndarray, bf: np.ndarray, k: int) -> Hessian:
        s, t = scaling(af, bf)
        x, y = s * u, t * v
        B = x[:, None] * K
        B *= y[None, :]
        d = np.concatenate([(s * x) * (K @ v), (t * y) * (K.T @ u)])
        e = np.concatenate([(s * s) * af, (t * t) * bf])
        z = np.concatenate([s * af, -(t * bf)]) * 2.0**k
        return cls(B, d, e, z)

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
        """Whether the verified Cholesky proves T > 0 for this sigma (module docstring)."""
        n, N = self.B.shape[0], len(self.d)
        K = max(self.B.shape) + 8
        T = np.empty((N, N))
        T[:n, :n] = 0.0
        T[n:, n:] = 0.0
        T[:n, n:] = self.B
        T[n:, :n] = self.B.T
        T += np.outer(self.z, self.z)  # fl(z_i z_j) = fl(z_j z_i): symmetric
        diag = self.d - sigma * self.e
        idx = np.arange(N)
        T[idx, idx] += diag
        if not np.isfinite(T).all():
            return False
        # G: the non-negative terms each entry of T~ is formed from; e >= 2 gamma_K (1 + gamma_{N+4}) max row sum of G
        rows = np.abs(self.z) * float(np.abs(self.z).sum()) + self.d + sigma * self.e
        rows[:n] += self.B.sum(axis=1)
        rows[n:] += self.B.sum(axis=0)
        with ctx.workprec(BOUND_BITS):
            e = (2 * arb(gamma(K)) * (1 + arb(gamma(N + 4))) * arb(exact(rows.max()))).upper()
            lowered = np.nextafter(T[idx, idx] - float(e.upper().fmpq()) * (1 + 2**-50), -np.inf)  # A' <= T~ - e I
            if not (lowered >= 0).all():
                return False
            trace = sum((exact(x) for x in lowered.tolist()), fmpq(0))
            c = 2 * (gamma(2 * (N + 1)) / 2 * trace + 4 * ETA_MIN * N * (2 * (N + 1) + exact(lowered.max())))
        T[idx, idx] = np.nextafter(lowered - float(c) * (1 + 2**-50), -np.inf)  # At <= A' - c
        try:
            R = scipy.linalg.cholesky(T, lower=False, overwrite_a=True, check_finite=False)
        except np.linalg.LinAlgError:
            return False
        return bool((np.diag(R) > 0).all() and np.isfinite(np.diag(R)).all())


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
                mu = (omega * arb(exact(s))).lower()
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
    and its tail entry is 2^-1020 y_j, above K2_ij / phi_hi; UnsupportedKernel where a column has no product above
    2^-900 (the tail would then carry it)."""
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
    tail = np.minimum(t, TAIL)
    if under.any():
        tail = np.where(under, 2.0**-1020 * y[None, :], tail)
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
