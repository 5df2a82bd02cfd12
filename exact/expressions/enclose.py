r"""Rigorous enclosures of a sympy expression on a box: interval arithmetic with arb endpoints.

:func:`compile_enclosure` walks the expression once and returns a function F
from intervals to an interval with the *enclosure property*: if x_k lies in
X_k = [lo_k, hi_k] for every k, then f(x) lies in F(X). An interval is a pair
of exact arb numbers (lo, hi); every node computes its endpoints with arb's
ball arithmetic and keeps the ball's lower end for lo and upper end for hi, so
rounding is always outward:

* ``+ - *`` and constants: endpoint sums and the four endpoint products;
* monotone functions (exp, log, atan, rational powers on [0, inf)) at the two
  endpoints; integer powers, Abs, Max, Min from the endpoints
  (|[a, b]| = [0, max(-a, b)] when a < 0 < b, and so on);
* sin and cos: arb's function on a ball containing the interval;
* sign and Heaviside of an interval that contains 0 are their whole ranges
  [-1, 1] and [0, 1] — the values a generalised derivative can take there.

Endpoints, not midpoint-radius balls, because a ball of [0, b] rounds its
radius up and reaches below 0, where sqrt and log are not real.

A node whose enclosure is not finite or not real (a division by an interval
containing 0, log of an interval reaching 0, a root of an interval reaching
below 0), or reaches 2^MAX_MAGNITUDE_BITS in magnitude, raises
:class:`EnclosureError` naming the node: the function is then refused rather
than bounded.

**Bounded conversions.** arb stores a huge or tiny number as a mantissa and an
exponent, cheaply (exp(10^30) is a few words), but the rational it equals has
as many bits as the exponent says, and converting it (arb -> fmpq) makes GMP
or FLINT abort. So every node is below 2^MAX_MAGNITUDE_BITS in magnitude, an
output endpoint below 2^-MAX_MAGNITUDE_BITS is rounded outward (to 0 or
+-2^-MAX_MAGNITUDE_BITS), and :func:`rational` is the one conversion of an arb
to a rational, refusing what these bounds exclude: a rational read from an
enclosure has at most MAX_MAGNITUDE_BITS + MAX_PRECISION bits. sign and Heaviside are not in the user language
(:mod:`exact.expressions.parse`); they come from sympy's derivatives of Abs,
Max and Min, which the checkers enclose. Precision is the one in force
(``flint.ctx.workprec``).
"""

from __future__ import annotations

from typing import Callable, Sequence

import mpmath
import sympy
from flint import arb, fmpq

from attncert.exact.errors import AttncertError

#: A closed interval [lo, hi] with exact arb endpoints.
Interval = tuple[arb, arb]
Enclosure = Callable[[Sequence[Interval]], Interval]


#: Every node of an enclosure is below 2^MAX_MAGNITUDE_BITS in magnitude (about 1.8e308, the float range).
MAX_MAGNITUDE_BITS = 1024
#: Most bits of precision an enclosure is computed with (the lowest bit of an output endpoint is above
#: 2^-(MAX_MAGNITUDE_BITS + MAX_PRECISION)).
MAX_PRECISION = 1 << 16


class EnclosureError(AttncertError, ArithmeticError):
    """An expression that cannot be enclosed rigorously (on this box, or at all)."""


def magnitude_bits(v: arb) -> int:
    """The least k with |v| < 2^k, for a finite exact arb v != 0 (read from its exponent: nothing is expanded)."""
    man, exp = v.man_exp()
    return int(exp) + int(man).bit_length()


def rational(v: arb) -> fmpq:
    """The rational an exact endpoint equals; EnclosureError if it is beyond the bounds of the module docstring."""
    if not (v.is_finite() and v.is_exact()):
        raise EnclosureError(f"an enclosure endpoint is not a finite exact number: {v.str(5)}")
    if v == 0:
        return fmpq(0)
    man, exp = v.man_exp()
    top = int(exp) + int(man).bit_length()
    if top > MAX_MAGNITUDE_BITS or int(exp) < -(MAX_MAGNITUDE_BITS + MAX_PRECISION):
        raise EnclosureError(f"an enclosure endpoint of about 2^{top:,} is beyond the bounds 2^-{MAX_MAGNITUDE_BITS + MAX_PRECISION:,}..2^{MAX_MAGNITUDE_BITS:,} of a rational read from it")
    return v.fmpq()


def display(q: fmpq, digits: int = 6) -> str:
    """q to ``digits`` significant digits for a message (mpmath only displays; a float would overflow past 1.8e308)."""
    return mpmath.nstr(mpmath.mpf(int(q.p)) / int(q.q), digits)


def endpoints(x: Interval) -> tuple[fmpq, fmpq]:
    """The interval's ends as rationals (:func:`rational`)."""
    return rational(x[0]), rational(x[1])


def point(q: fmpq) -> Interval:
    """The interval of a rational point: [q, q] if q is exact at this precision, else a tight enclosure."""
    return _of_ball(arb(q))


def interval(lo: fmpq, hi: fmpq) -> Interval:
    """An interval containing [lo, hi] (exactly it when both ends are exact at this precision)."""
    return arb(lo).lower(), arb(hi).upper()


def compile_enclosure(expr: sympy.Expr, symbols: Sequence[sympy.Symbol]) -> Enclosure:
    """F with f(x) in F(X) whenever x in X (componentwise), for an expression in ``symbols``.

    EnclosureError at once for a node that has no rigorous enclosure here (a
    non-rational power, a function outside the list); at evaluation, for a node
    whose enclosure is not finite on the given box.
    """
    run = compile_enclosures([expr], symbols)
    return lambda xs: run(xs)[0]


def compile_enclosures(exprs: Sequence[sympy.Expr], symbols: Sequence[sympy.Symbol]) -> Callable[[Sequence[Interval]], list[Interval]]:
    """Enclosures of several expressions at once, each common subexpression evaluated once per call.

    The expressions are flattened into one list of steps (a DAG in topological
    order: sympy's equal subexpressions are one step); a call runs the steps in
    order, one interval operation each.
    """
    slots: dict[sympy.Expr, int] = {s: k for k, s in enumerate(symbols)}
    steps: list[tuple[Callable[..., Interval], tuple[int, ...], str]] = []
    outputs = [_compile(e, slots, steps) for e in exprs]

    def run(xs: Sequence[Interval]) -> list[Interval]:
        vals = list(xs)
        for op, args, what in steps:
            lo, hi = op(*[vals[a] for a in args])
            if not (-_HUGE < lo and hi < _HUGE):  # false too for an infinite or undefined end
                if not (lo.is_finite() and hi.is_finite()):
                    raise EnclosureError(f"{what} has no finite enclosure on this box")
                top = max(magnitude_bits(v) for v in (lo, hi) if v != 0)
                raise EnclosureError(f"{what} reaches about 2^{top - 1:,} in magnitude, over the limit of 2^{MAX_MAGNITUDE_BITS:,} for a target's values")
            vals.append((lo, hi))
        return [_outward_from_tiny(vals[k]) for k in outputs]

    return run


def _compile(e: sympy.Expr, slots: dict[sympy.Expr, int], steps: list) -> int:
    """The slot of e's value, adding the steps that compute it (once per distinct subexpression)."""
    if e in slots:
        return slots[e]
    if e.is_Symbol:
        raise EnclosureError(f"the expression uses {e}, which is not one of its variables")
    if e.is_Rational:
        q = fmpq(int(e.p), int(e.q))
        op, args, what = (lambda: point(q)), (), str(e)
    elif e is sympy.pi:
        op, args, what = (lambda: _of_ball(arb.pi())), (), "pi"
    elif e is sympy.E:
        op, args, what = (lambda: _of_ball(arb.const_e())), (), "E"
    else:
        name = type(e).__name__
        if e.is_Pow:
            if not e.exp.is_Rational:
                raise EnclosureError(f"cannot enclose the power {e}: only rational exponents are enclosed")
            p = fmpq(int(e.exp.p), int(e.exp.q))
            op, args, what = (lambda x: power(x, p)), (_compile(e.base, slots, steps),), f"the power {e}"
        else:
            args = tuple(_compile(a, slots, steps) for a in e.args)
            if e.is_Add:
                op = lambda *xs: _reduce(_add, xs)  # noqa: E731
            elif e.is_Mul:
                op = lambda *xs: _reduce(_mul, xs)  # noqa: E731
            elif name in _UNARY:
                op, args = _UNARY[name], args[:1]  # Heaviside(x, H0): the whole [0, 1] at 0 covers any H0
            elif name in ("Max", "Min"):
                pick = max if name == "Max" else min
                op = lambda *xs, pick=pick: _extreme(xs, pick)  # noqa: E731
            else:
                raise EnclosureError(f"cannot enclose {name} rigorously (it is not in the list of enclosed functions)")
            what = f"{name}({e.args[0]}{', ...' if len(e.args) > 1 else ''})"
    slots[e] = len(slots)
    steps.append((op, args, what))
    return slots[e]


_HUGE, _TINY = arb(2) ** MAX_MAGNITUDE_BITS, arb(2) ** -MAX_MAGNITUDE_BITS


def _outward_from_tiny(x: Interval) -> Interval:
    """x with an endpoint below 2^-MAX_MAGNITUDE_BITS in magnitude rounded outward to 0 or +-2^-MAX_MAGNITUDE_BITS."""
    lo, hi = x
    if 0 < lo < _TINY:
        lo = arb(0)
    elif -_TINY < lo < 0:
        lo = -_TINY
    if 0 < hi < _TINY:
        hi = _TINY
    elif -_TINY < hi < 0:
        hi = arb(0)
    return lo, hi


def _of_ball(b: arb) -> Interval:
    return b.lower(), b.upper()


def _reduce(op: Callable[[Interval, Interval], Interval], xs: Sequence[Interval]) -> Interval:
    out = xs[0]
    for x in xs[1:]:
        out = op(out, x)
    return out


def _add(x: Interval, y: Interval) -> Interval:
    return (x[0] + y[0]).lower(), (x[1] + y[1]).upper()


def _mul(x: Interval, y: Interval) -> Interval:
    if x[0] >= 0 and y[0] >= 0:
        return (x[0] * y[0]).lower(), (x[1] * y[1]).upper()
    ps = [a * b for a in x for b in y]
    return min(p.lower() for p in ps), max(p.upper() for p in ps)


def _increasing(f: Callable[[arb], arb]) -> Callable[[Interval], Interval]:
    return lambda x: (f(x[0]).lower(), f(x[1]).upper())


def _log(x: Interval) -> Interval:
    if x[0] <= 0:
        raise EnclosureError("log of an interval reaching 0 or below has no real enclosure")
    return x[0].log().lower(), x[1].log().upper()


def _by_ball(f: Callable[[arb], arb]) -> Callable[[Interval], Interval]:
    """f on a ball containing the interval (sin, cos: defined everywhere, arb encloses any ball)."""
    return lambda x: _of_ball(f(x[0] if x[0] == x[1] else x[0].union(x[1])))


def _abs(x: Interval) -> Interval:
    lo, hi = x
    if lo >= 0:
        return x
    if hi <= 0:
        return -hi, -lo
    return arb(0), max(-lo, hi)


def _extreme(xs: Sequence[Interval], pick: Callable) -> Interval:
    return pick(x[0] for x in xs), pick(x[1] for x in xs)


def _sign(x: Interval) -> Interval:
    lo, hi = x
    return arb(-1 if lo < 0 else 0 if lo == 0 else 1), arb(1 if hi > 0 else 0 if hi == 0 else -1)


def _heaviside(x: Interval) -> Interval:
    lo, hi = x
    return arb(1 if lo > 0 else 0), arb(0 if hi < 0 else 1)


def power(x: Interval, p: fmpq) -> Interval:
    """x^p for a rational p: integer powers from the endpoints, other powers on [0, inf) only."""
    lo, hi = x
    if p.q == 1:
        n = int(p.p)
        if n == 0:
            return arb(1), arb(1)
        if n < 0 and lo <= 0 <= hi:
            raise EnclosureError("a negative power of an interval that contains 0 is not finite")
        if n % 2 == 0 and lo < 0 < hi:
            return arb(0), (max(-lo, hi) ** n).upper()
        a, b = lo**n, hi**n
        return min(a.lower(), b.lower()), max(a.upper(), b.upper())
    if lo < 0 or (p < 0 and lo <= 0):
        raise EnclosureError(f"the power {p} of an interval reaching {'below 0' if p > 0 else '0 or below'} has no real enclosure")
    a, b = _root_power(lo, p), _root_power(hi, p)
    return min(a.lower(), b.lower()), max(a.upper(), b.upper())


def _root_power(v: arb, p: fmpq) -> arb:
    """A ball around v^p for an exact v >= 0 (q-th root, then the p-th power)."""
    return arb(0) if v == 0 else v.root(int(p.q)) ** int(p.p)


_UNARY: dict[str, Callable[[Interval], Interval]] = {
    "exp": _increasing(arb.exp),
    "atan": _increasing(arb.atan),
    "log": _log,
    "sin": _by_ball(arb.sin),
    "cos": _by_ball(arb.cos),
    "Abs": _abs,
    "sign": _sign,
    "Heaviside": _heaviside,
}
