r"""A Lipschitz constant of an expression on [0, 1]^d in the max-norm, from its structure.

:func:`lipschitz_bound` returns a rational L_f with |f(x) - f(y)| <= L_f ||x - y||_inf
for all x, y in the cube, or None. It follows the expression tree, with R(e) the
interval enclosure of a node e on the whole cube (:mod:`.enclose`) and Lip(e)
a Lipschitz constant of e there:

* a constant: 0; a coordinate x_k: 1 (|x_k - y_k| <= ||x - y||_inf);
* a sum: the sum of the terms' constants (triangle inequality);
* a product: sum_i Lip(e_i) prod_{j != i} sup |R(e_j)| (a b - a' b' = a (b - b') + b' (a - a'));
* Abs, Max, Min: the largest of their arguments' constants (each is 1-Lipschitz in
  the max-norm of its arguments);
* phi(e) for phi = exp, log, sin, cos, atan, or a power e^p: sup over R(e) of
  |phi'| times Lip(e), by the mean value theorem on the interval R(e), which holds
  every value of e on the cube (the cube is convex and R(e) an interval): exp: sup
  exp R(e); log: 1 / inf R(e) (R(e) > 0); sin, cos, atan: 1; e^p: sup |p| |R(e)^(p-1)|,
  enclosed by the interval power (so it is refused where not finite, as for
  sqrt at 0).

Anything else (or a node with no finite enclosure on the cube) gives None. The
bound is an upper bound; it is exact for the piecewise linear library targets
(for three cones in d dimensions, 3d).
"""

from __future__ import annotations

from typing import Sequence

import sympy
from flint import arb, ctx, fmpq

from attncert.exact.expressions.enclose import EnclosureError, Interval, compile_enclosures, interval, power, rational


def _sup_abs(x: Interval) -> arb:
    return max(abs(x[0]), abs(x[1]))


def lipschitz_bound(expr: sympy.Expr, symbols: Sequence[sympy.Symbol], prec: int = 64) -> fmpq | None:
    """An upper bound of f's Lipschitz constant on [0, 1]^d in the max-norm (module docstring), or None."""
    nodes = list(dict.fromkeys(sympy.postorder_traversal(expr)))
    with ctx.workprec(prec):
        try:
            ranges = dict(zip(nodes, compile_enclosures(nodes, symbols)([interval(fmpq(0), fmpq(1))] * len(symbols))))
        except EnclosureError:
            return None
        lip: dict[sympy.Expr, arb | None] = {}
        for e in nodes:
            v = _node(e, ranges, lip, symbols)
            lip[e] = None if v is None or not v.is_finite() else v.upper()  # exact, so that max and == decide
        top = lip[expr]
        try:
            return None if top is None else rational(top)
        except EnclosureError:  # beyond the magnitudes a rational is read at
            return None


def _node(e: sympy.Expr, ranges: dict, lip: dict, symbols: Sequence[sympy.Symbol]) -> arb | None:
    """Lip(e) from its arguments' (already computed), or None."""
    if e in symbols:
        return arb(1)
    if e.is_Number or e is sympy.pi or e is sympy.E:
        return arb(0)
    args = [lip[a] for a in e.args]
    if any(a is None for a in args):
        return None
    name = type(e).__name__
    if e.is_Add:
        return sum(args, arb(0))
    if e.is_Mul:
        sups = [_sup_abs(ranges[a]) for a in e.args]
        total = arb(0)
        for i, li in enumerate(args):
            if li != 0:
                others = arb(1)
                for j, s in enumerate(sups):
                    if j != i:
                        others *= s
                total += li * others
        return total
    if name in ("Abs", "Max", "Min"):
        return max(args)
    inner = args[0]
    if inner == 0:
        return arb(0)
    r = ranges[e.args[0]]
    if e.is_Pow and e.exp.is_Rational:
        p = fmpq(int(e.exp.p), int(e.exp.q))
        try:
            return abs(arb(p)) * _sup_abs(power(r, p - 1)) * inner
        except EnclosureError:
            return None
    if name == "exp":
        return r[1].exp() * inner
    if name == "log":
        return inner / r[0] if r[0] > 0 else None
    if name in ("sin", "cos", "atan"):
        return inner
    return None
