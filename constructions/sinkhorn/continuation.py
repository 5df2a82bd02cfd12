r"""eps-continuation: a float starting point for Krawczyk's test at small eps.

Nothing here is rigorous, and nothing needs to be: the point it returns is
only the start of the Newton steps in arb that precede Krawczyk's test
(:mod:`constructions.sinkhorn.krawczyk`), and the test alone certifies.

At small eps a cold start is far from the Sinkhorn potentials (x, y) (they are
of size |C|/eps), float Sinkhorn converges at the rate 1 - O(e^{-gap/eps}),
and Newton from far away walks slowly. So we solve a sequence of problems,
eps_0 > eps_1 > ... > eps_K = eps, in float64 (the classical eps-scaling of
Kosowsky & Yuille, Neural Networks 7 (1994) 477-490; Schmitzer, SIAM J. Sci.
Comput. 41 (2019) A1443-A1481):

* eps_0 = eps Delta(K) / START_DELTA (or eps itself if that is smaller), so that
  the first problem has projective diameter START_DELTA, where log-domain
  Sinkhorn from 0 converges quickly; then eps_{k+1} = eps_k / RATIO, the last
  stage clipped to eps exactly.
* The predictor works on the unscaled potentials f = eps x, g = eps y. As eps
  -> 0 they converge to Kantorovich potentials, and for a non-degenerate
  transport problem they are affine in eps up to exponentially small terms:
  on the support tree of the optimal plan, f_i + g_j = C_ij + eps log P_ij and
  P_ij tends to the optimal flow exponentially fast (Cominetti & San Martin,
  Math. Programming 67 (1994) 169-187). So (f, g) at eps_{k+1} is extrapolated
  linearly from the last two stages (from one stage: kept constant).
* At each stage, up to STAGE_SINKHORN log-domain Sinkhorn iterations from the
  prediction, then damped Newton on the semi-dual
  (:func:`constructions.sinkhorn.logdomain.semidual_newton`) to a gradient of
  SEMIDUAL_GTOL.

The start is then good to about 1e-12 in the marginals, and Newton in arb,
which converges quadratically from there, needs a few steps. Every Sinkhorn
iteration and Newton step is counted (:class:`FloatStart`).

Where this does not help: when the optimal transport plan is degenerate (for
example a permutation, with uniform marginals), the relative potentials of its
components are fixed by masses below float resolution (about e^{-gap/eps}),
and the float stages cannot see them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import fmpq

from attncert.constructions.sinkhorn.logdomain import log_sinkhorn, semidual_newton
from attncert.constructions.sinkhorn.problem import Problem
from attncert.exact.roundoff import float_of

#: Projective diameter Delta(K) of the first stage's problem.
START_DELTA = 40
#: eps_{k+1} = eps_k / RATIO.
RATIO = 10
#: Float Sinkhorn iterations at the first stage (from 0) and at each later stage (from the prediction).
FIRST_SINKHORN = 5000
STAGE_SINKHORN = 100
#: The marginal residual ||b - P^T 1||_inf at which a stage's Newton steps stop.
SEMIDUAL_GTOL = 1e-12


@dataclass(frozen=True)
class Stage:
    """One stage of the continuation: its eps and the float work done there."""

    eps: fmpq
    sinkhorn_iterations: int
    newton_steps: int


@dataclass(frozen=True)
class FloatStart:
    """Float potentials (x, y), y_1 = 0, at the target eps, and the stages that produced them."""

    x: np.ndarray
    y: np.ndarray
    stages: tuple[Stage, ...]

    @property
    def sinkhorn_iterations(self) -> int:
        return sum(s.sinkhorn_iterations for s in self.stages)

    @property
    def newton_steps(self) -> int:
        return sum(s.newton_steps for s in self.stages)


def schedule(eps: fmpq, delta: fmpq) -> list[fmpq]:
    """eps_0 = eps Delta / START_DELTA (at least eps), eps_{k+1} = eps_k / RATIO, ending at eps exactly."""
    e = max(eps, eps * delta / START_DELTA)
    out = [e]
    while out[-1] > eps:
        out.append(max(out[-1] / RATIO, eps))
    return out


def continuation_start(p: Problem, delta: fmpq) -> FloatStart:
    """The float start for ``p`` (Delta(K) = ``delta``) by eps-continuation (see the module docstring).

    The floats are in units of the target eps: stage k has t_k = eps_k / eps in [1, Delta / START_DELTA] and
    log-kernel L / t_k (L = -C/eps), and the predictor extrapolates t y = g / eps, which is linear in t
    exactly when g is linear in eps_k. So neither eps nor C is formed as a double: either may be far outside
    float64's range when C / eps is not (eps = 1e-400 with a cost of the same size).
    """
    L0 = p.log_kernel_float
    a, b = p.float_marginals()
    stages: list[Stage] = []
    history: list[tuple[float, np.ndarray]] = []  # (t_k, t_k y at stage k)
    y: np.ndarray | None = None
    for k, e in enumerate(schedule(p.eps, delta)):
        t = float_of(e / p.eps)
        if len(history) >= 2:
            (t1, h1), (t2, h2) = history[-2:]
            y = (h2 + (t - t2) * (h2 - h1) / (t2 - t1)) / t
        elif history:
            y = history[-1][1] / t
        L = L0 / t
        s = log_sinkhorn(L, a, b, 1e-12, STAGE_SINKHORN if k else FIRST_SINKHORN, y0=y)
        x, y, steps = semidual_newton(L, a, b, s.y, gtol=SEMIDUAL_GTOL)
        stages.append(Stage(e, s.iterations, steps))
        history.append((t, t * y))
    return FloatStart(x, y, tuple(stages))
