"""Float Sinkhorn in the log domain (for comparison only, never a certificate).

Potentials x = log u, y = log v and the log-kernel L = -C/eps are doubles;
each half-step is a log-sum-exp, so nothing underflows however small eps is
(Peyre & Cuturi, *Computational Optimal Transport*, 2019, section 4.4). The
iteration is the same as POT's ``ot.sinkhorn(..., method="sinkhorn_log")``.
Also here: damped Newton on the semi-dual, used only to find a good starting
point for the interval-Newton certificate (:mod:`constructions.sinkhorn.continuation`,
:mod:`constructions.sinkhorn.krawczyk`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def logsumexp(M: np.ndarray, axis: int) -> np.ndarray:
    mx = M.max(axis=axis, keepdims=True)
    return (mx + np.log(np.exp(M - mx).sum(axis=axis, keepdims=True))).squeeze(axis)


@dataclass(frozen=True)
class LogSinkhorn:
    """Potentials after the last column update, the iterations done, and the row residual."""

    x: np.ndarray
    y: np.ndarray
    iterations: int
    row_error: float  # || P 1 - a ||_1 in floating point (P^T 1 = b up to rounding)

    def plan(self, L: np.ndarray) -> np.ndarray:
        return np.exp(self.x[:, None] + L + self.y[None, :])


def log_sinkhorn(
    L: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    tol: float,
    max_iter: int,
    check_every: int = 10,
    stall: int | None = None,
    y0: np.ndarray | None = None,
) -> LogSinkhorn:
    """Iterate x <- log a - lse_j(L + y), y <- log b - lse_i(L + x) until ||P1 - a||_1 <= tol, from y0 (default 0).

    The residual is checked every ``check_every`` iterations (as POT does) and
    after the last one. With ``stall``, also stop once ``stall`` checks in a row
    have not halved the best residual (a warm start: float rounding can keep the
    residual above tol for ever).
    """
    la, lb = np.log(a), np.log(b)
    x, y = np.zeros(len(a)), (np.zeros(len(b)) if y0 is None else y0)
    err, it, best, since = np.inf, 0, np.inf, 0
    while it < max_iter:
        x = row_update(L, la, y)
        y = lb - logsumexp(L + x[:, None], 0)
        it += 1
        if it % check_every == 0 or it == max_iter:
            err = float(np.abs(np.exp(logsumexp(L + y[None, :], 1) + x) - a).sum())
            if err <= tol:
                break
            best, since = (err, 0) if err < best / 2 else (best, since + 1)
            if stall is not None and since >= stall:
                break
    return LogSinkhorn(x, y, it, err)


def scaled_sinkhorn(L: np.ndarray, a: np.ndarray, b: np.ndarray, tol: float, max_iter: int, stall: int, check_every: int = 10) -> LogSinkhorn:
    """Plain float Sinkhorn u <- a / (K' v), v <- b / (K'^T u) on a rescaled kernel, as potentials of exp(L).

    K' = exp(L - alpha 1^T - 1 beta^T) with alpha_i = max_j L_ij and beta_j =
    max_i (L_ij - alpha_i) has every entry in [e^-Delta, 1] and a 1 in every row
    and column: with k the argmax of row i and i' that of column j,
    L_ij - alpha_i - beta_j = L_ij - L_ik - L_i'j + L_i'k, a cross difference,
    >= -Delta. So for moderate Delta nothing under- or overflows, and each
    iteration is two float matrix-vector products instead of two log-sum-exps.
    diag(u) K' diag(v) = diag(e^x) exp(L) diag(e^y) with x = log u - alpha,
    y = log v - beta. Stops at ||P1 - a||_1 <= tol (checked every
    ``check_every`` iterations), after ``max_iter`` iterations, or once
    ``stall`` checks in a row have not halved the best residual (float
    rounding). Float only: a starting point, never a certificate.
    """
    alpha = L.max(1)
    beta = (L - alpha[:, None]).max(0)
    K = np.exp(L - alpha[:, None] - beta[None, :])
    u, v = np.ones(len(a)), np.ones(len(b))
    err, it, best, since = np.inf, 0, np.inf, 0
    with np.errstate(all="ignore"):
        while it < max_iter:
            u = a / (K @ v)
            v = b / (K.T @ u)
            it += 1
            if it % check_every == 0 or it == max_iter:
                err = float(np.abs(u * (K @ v) - a).sum())
                if err <= tol:
                    break
                best, since = (err, 0) if err < best / 2 else (best, since + 1)
                if since >= stall:
                    break
        return LogSinkhorn(np.log(u) - alpha, np.log(v) - beta, it, err)


def row_update(L: np.ndarray, la: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x(y) = log a - lse_j(L + y): the potentials that make the rows of diag(e^x) K diag(e^y) sum to a."""
    return la - logsumexp(L + y[None, :], 1)


def semidual_newton(
    L: np.ndarray, a: np.ndarray, b: np.ndarray, y: np.ndarray, max_steps: int = 60, gtol: float = 1e-12, cap: float = 16.0
) -> tuple[np.ndarray, np.ndarray, int]:
    """Damped Newton on the semi-dual, gauge y_1 = 0; float only (a starting point, never a certificate).

    With x(y) from :func:`row_update` the plan P = diag(e^x) K diag(e^y) has row
    sums a, and the semi-dual Psi(y) = <b, y> + <a, x(y)> is concave with
    gradient b - P^T 1 and Hessian -(diag(P^T 1) - P^T diag(1/a) P), a sum of
    a_i (diag(s_i) - s_i s_i^T) over the rows' softmax vectors s_i (Cuturi &
    Peyre, SIAM J. Imaging Sci. 9 (2016) 320-343). Its maximiser with y_1 = 0
    is the Sinkhorn solution. Each step solves the Newton system in y_2..y_m,
    caps the step's sup norm at ``cap`` (a log-sum-exp is nearly linear beyond
    a few units, so longer steps are not trusted), then backtracks until the
    Armijo condition holds (Nocedal & Wright, *Numerical Optimization*, 2nd
    ed., ch. 3); a step below 1e-3 is taken in full (the quadratic phase,
    where differences of Psi are below float resolution). Stops when
    ||b - P^T 1||_inf <= gtol, when the system is singular or when no step
    increases Psi. Returns x(y), y and the number of steps taken.
    """
    la = np.log(a)

    def psi(v: np.ndarray) -> float:
        return float(b @ v + a @ row_update(L, la, v))

    y = y - y[0]
    val, steps = psi(y), 0
    while steps < max_steps:
        x = row_update(L, la, y)
        P = np.exp(x[:, None] + L + y[None, :])
        c = P.sum(0)
        g = b - c
        if np.abs(g).max() <= gtol:
            break
        H = np.diag(c) - P.T @ (P / a[:, None])
        d = np.zeros_like(y)
        try:
            d[1:] = np.linalg.solve(H[1:, 1:], g[1:])
        except np.linalg.LinAlgError:
            break
        size = float(np.abs(d).max())
        if not np.isfinite(size):
            break
        if size > cap:
            d *= cap / size
        t = 1.0
        trial = y + d
        if size > 1e-3:
            slope, new = float(g @ d), psi(trial)
            while new < val + 1e-4 * t * slope:
                t /= 2
                if t < 1e-12:
                    return row_update(L, la, y), y, steps
                trial = y + t * d
                new = psi(trial)
        y, val, steps = trial, psi(trial), steps + 1
    return row_update(L, la, y), y, steps


#: Row and column sums of P e^{-max log P} below this are taken as underflowed (row_correction).
SUM_FLOOR = 1e-280


def row_correction(L: np.ndarray, lb: np.ndarray, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """A Newton correction delta to log u for the Hilbert iterations; float only (the bound is a posteriori).

    After a column update v = b / (K^T u) the row sums r(u) = u * K (b / K^T u)
    are invariant under u -> c u, and d log r / d log u = I - A B with A the
    row-normalised plan P / r and B the column-normalised plan (P / b)^T: A B
    is row-stochastic, with right null vector 1 of I - A B and left null
    vector r. Given the relative residual s = r / a - 1 (computed rigorously
    elsewhere and rounded), returns the solution of
    (I - A B + 1 r^T / sum r) delta = -s, i.e. Newton's step for r = a with the
    component along the scale direction fixed (rank-one deflation). u e^delta
    then has residual O(|s|^2) instead of Sinkhorn's O(lambda |s|).
    ``x`` = log u (float), ``lb`` = log b. A, B and r / sum r do not change when
    P is scaled, so they are formed from P e^{-max log P}, whose largest entry
    is 1; where its smallest row or column sum underflows (a plan spread over
    more than about 700 in log), as row and column softmaxes of log P instead.
    """
    y = lb - logsumexp(L + x[:, None], 0)
    M = x[:, None] + L + y[None, :]
    P = np.exp(M - M.max())
    rows, cols = P.sum(1), P.sum(0)
    if min(rows.min(), cols.min()) > SUM_FLOOR:
        A, B = P / rows[:, None], P / cols[None, :]
    else:
        A = np.exp(M - M.max(1, keepdims=True))
        A /= A.sum(1, keepdims=True)
        B = np.exp(M - M.max(0, keepdims=True))
        B /= B.sum(0, keepdims=True)
        rows = np.exp(logsumexp(M, 1) - M.max())
    J = np.eye(len(x)) - A @ B.T + (rows / rows.sum())[None, :]
    return np.linalg.solve(J, -s)
