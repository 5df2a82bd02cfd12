r"""A second, independent bound on sup |f - g|: a uniform sub-grid and moduli of continuity of f and g.

Cut [0, 1]^d into n^d cubes C of side delta = 1/n (n = resolution times m) with
centres c. Every x in C has ||x - c||_inf <= delta/2, so

    |f(x) - g(x)| <= |f(c) - g(c)| + omega_f(C) + L_g delta/2,

with L_g the network's Lipschitz constant (max-norm, from its weights) and
omega_f(C) a bound of |f(x) - f(c)| on C:

* the Hölder theorem for f = x_k^a, 0 < a <= 1: |x^a - y^a| <= |x - y|^a (t -> t^a
  is subadditive on [0, inf)), so omega_f = (delta/2)^a;
* otherwise the mean value inequality |f(x) - f(c)| <= sup_C ||grad f||_1 delta/2,
  with each partial derivative (sympy's, in which Abs, Max and Min give sign and
  Heaviside) enclosed on C by interval arithmetic; sign and Heaviside of an
  interval that contains 0 are their whole ranges, which contain every value of
  the generalised gradient there, so the inequality holds for the piecewise
  smooth targets too.

The bound is the max over cells (a rational from the intervals' upper ends);
the largest certain |f(c) - g(c)| over the centres is a lower bound of the sup.
Nothing here uses the branch-and-bound's partition or code: only the target, the
samples and the slope. If some partial derivative has no finite enclosure on a
cell (sqrt near 0 without the theorem), the method gives no bound and says where.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Callable, Sequence

import sympy
from flint import arb, ctx, fmpq

from attncert.exact.expressions import EnclosureError, Interval, compile_enclosure, compile_enclosures, endpoints, interval, point, rational, variables
from attncert.proofs.checkers.approximation.mcshane import Interpolant

#: Cells per grid step and side.
RESOLUTION = 2


@dataclass(frozen=True)
class SubgridBound:
    cells: int
    bound: fmpq | None  # sup |f - g| <= bound, or None (reason says why)
    lower: fmpq  # sup |f - g| >= lower
    modulus: str  # how omega_f was bounded
    reason: str


def holder_power(expr: sympy.Expr, symbols: tuple[sympy.Symbol, ...]) -> fmpq | None:
    """a if expr is x_k^a with 0 < a <= 1 (a rational), else None."""
    if expr in symbols:
        return fmpq(1)
    if expr.is_Pow and expr.base in symbols and expr.exp.is_Rational and 0 < expr.exp <= 1:
        return fmpq(int(expr.exp.p), int(expr.exp.q))
    return None


@functools.lru_cache(maxsize=64)
def gradient_enclosure(expr: sympy.Expr, d: int) -> Callable[[Sequence[Interval]], list[Interval]]:
    """Enclosures of the d partial derivatives of expr (sympy's; computed once per expression: they are slow)."""
    symbols = variables(d)
    return compile_enclosures([sympy.diff(expr, s) for s in symbols], symbols)


def subgrid_bound(expr: sympy.Expr, d: int, g: Interpolant, L_g: fmpq, prec: int) -> SubgridBound:
    """The bound of the module docstring on the n^d cells, n = RESOLUTION * m."""
    n = RESOLUTION * g.m
    symbols = variables(d)
    f = compile_enclosure(expr, symbols)
    a = holder_power(expr, symbols)
    half = fmpq(1, 2 * n)
    with ctx.workprec(prec):
        if a is not None:
            omega_const = rational((arb(half) ** arb(a)).upper()) if a != 1 else half
            gradient, modulus = None, f"Hölder theorem |x^a - y^a| <= |x - y|^a with a = {a}"
        else:
            omega_const = None
            modulus = "mean value inequality, the gradient's l1 norm enclosed on each cell"
            try:
                gradient = gradient_enclosure(expr, d)
            except EnclosureError as e:  # sympy's derivative has a function without an enclosure
                return SubgridBound(n**d, None, fmpq(0), modulus, f"no bound: the gradient of f cannot be enclosed: {e}")
        slack = L_g * half
        worst, lower = fmpq(0), fmpq(0)
        for cell in itertools.product(range(n), repeat=d):
            centre = [(2 * j + 1) * half for j in cell]
            lo, hi = endpoints(f([point(c) for c in centre]))
            gc = g.value(centre)
            lower = max(lower, lo - gc, gc - hi)
            if omega_const is None:
                box = [interval(fmpq(j, n), fmpq(j + 1, n)) for j in cell]
                try:
                    grad = rational(sum((max(-lo_k, hi_k) for lo_k, hi_k in gradient(box)), arb(0)).upper())
                except EnclosureError as e:
                    where = ", ".join(f"[{fmpq(j, n)}, {fmpq(j + 1, n)}]" for j in cell)
                    return SubgridBound(n**d, None, lower, modulus, f"no bound: a partial derivative of f on the cell {where}: {e}")
                omega = grad * half
            else:
                omega = omega_const
            worst = max(worst, max(hi - gc, gc - lo) + omega + slack)
    return SubgridBound(n**d, worst, lower, modulus, "")
