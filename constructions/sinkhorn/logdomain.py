"""Float Sinkhorn in the log domain (for comparison only, never a certificate).

Potentials x = log u, y = log v and the log-kernel L = -C/eps are doubles;
each half-step is a log-sum-exp, so nothing underflows however small eps is
(Peyre & Cuturi, *Computational Optimal Transport*, 2019, section 4.4). The
iteration is the same as POT's ``ot.sinkhorn(..., method="sinkhorn_log")``.
Also here: a capped Newton method on the same log-domain equations, used only
to find a good starting point for the interval-Newton certificate
(:mod:`constructions.sinkhorn.krawczyk`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from constructions.sinkhorn.newton import capped_newton


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
    L: np.ndarray, a: np.ndarray, b: np.ndarray, tol: float, max_iter: int, check_every: int = 10, stall: int | None = None
) -> LogSinkhorn:
    """Iterate x <- log a - lse_j(L + y), y <- log b - lse_i(L + x) until ||P1 - a||_1 <= tol.

    The residual is checked every ``check_every`` iterations (as POT does) and
    after the last one. With ``stall``, also stop once ``stall`` checks in a row
    have not halved the best residual (a warm start: float rounding can keep the
    residual above tol for ever).
    """
    la, lb = np.log(a), np.log(b)
    x, y = np.zeros(len(a)), np.zeros(len(b))
    err, it, best, since = np.inf, 0, np.inf, 0
    while it < max_iter:
        x = la - logsumexp(L + y[None, :], 1)
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


def residual(x: np.ndarray, y: np.ndarray, L: np.ndarray, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """The dual equations in log form: (log(P1) - log a, log(P^T 1)_{2..m} - log b_{2..m})."""
    M = x[:, None] + L + y[None, :]
    return np.concatenate([logsumexp(M, 1) - la, (logsumexp(M, 0) - lb)[1:]])


def log_newton(
    L: np.ndarray, a: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray, steps: int = 200
) -> tuple[np.ndarray, np.ndarray, int]:
    """Capped Newton (:mod:`constructions.sinkhorn.newton`) on :func:`residual`, gauge y_1 = 0; float only.

    The Jacobian is [[I, A], [B, I]] with A = diag(1/r) P (columns 2..m) and
    B = diag(1/c) P^T (rows 2..m), r and c the row and column sums of P, each
    computed with its own row or column shift so that no row underflows.
    Returns x, y and the number of steps taken.
    """
    n = len(a)
    la, lb = np.log(a), np.log(b)

    def direction(z: np.ndarray) -> tuple[np.ndarray, float] | None:
        xx, yy = z[:n], np.concatenate([[0.0], z[n:]])
        M = xx[:, None] + L + yy[None, :]
        A = np.exp(M - M.max(1, keepdims=True))
        B = np.exp(M - M.max(0, keepdims=True))
        J = np.eye(len(z))
        J[:n, n:] = (A / A.sum(1, keepdims=True))[:, 1:]
        J[n:, :n] = (B / B.sum(0, keepdims=True)).T[1:, :]
        try:
            d = np.linalg.solve(J, residual(xx, yy, L, la, lb))
        except np.linalg.LinAlgError:
            return None
        return (d, float(np.abs(d).max())) if np.isfinite(d).all() else None

    def merit(z: np.ndarray) -> float:
        return float(np.square(residual(z[:n], np.concatenate([[0.0], z[n:]]), L, la, lb)).sum())

    z, k = capped_newton(np.concatenate([x, (y - y[0])[1:]]), direction, merit, lambda z, d, s: z - s * d, steps)
    return z[:n], np.concatenate([[0.0], z[n:]]), k
