"""Newton's method with a capped step, generic over float and arb vectors.

The dual equations of Sinkhorn at small eps have a Jacobian that is nearly
singular (its smallest singular value is about e^{-gap/eps}, where gap is a
cost difference between nearly optimal couplings), and the solution lies far
along the near-null direction. Plain or backtracked Newton then jumps
astronomically far. Capping the step's sup-norm at a radius that doubles after
each capped success and shrinks by 4 after a failure (a trust region in the
sup norm, cf. Nocedal & Wright, *Numerical Optimization*, 2nd ed., ch. 4)
walks along that direction at a growing pace and becomes plain Newton, with
quadratic convergence, near the solution. Nothing here needs rigour: the
result is only a starting point for Krawczyk's test.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

Z = TypeVar("Z")


def capped_newton(
    z: Z,
    direction: Callable[[Z], tuple[Any, Any] | None],
    merit: Callable[[Z], Any],
    move: Callable[[Z, Any, float], Z],
    max_steps: int,
    radius: float = 4.0,
) -> tuple[Z, int]:
    """Steps z <- move(z, d, s), s = min(1, radius / |d|_inf), while merit(z) decreases.

    ``direction(z)`` returns the Newton step d and its sup-norm (a float or an
    exact arb, which may exceed any float), or None if it cannot be computed; ``merit`` is any value that vanishes at the solution
    and supports ``<``. Returns the last point and the number of steps taken.
    """
    res, steps = merit(z), 0
    while steps < max_steps and res > 0:
        found = direction(z)
        if found is None:
            break
        d, size = found
        for _ in range(40):
            s = radius / size if size > radius else 1.0
            trial = move(z, d, s)
            r = merit(trial)
            if r < res:
                break
            radius /= 4
        else:
            break  # no decrease even for tiny steps: the precision floor is reached
        if size > radius:
            radius *= 2
        z, res, steps = trial, r, steps + 1
    return z, steps
