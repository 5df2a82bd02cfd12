r"""Exact values of an expression at a rational point: rationals, and radicals s r^(1/n).

At a rational point many targets take a value that is known exactly: a
rational expression gives a rational, x^(1/2) at 1/4 gives 1/2, and at 2/9 the
radical (2/9)^(1/2). :func:`compile_exact` returns F with F(x) = f(x) as an
``fmpq`` or a :class:`Radical` s r^(1/n) (s = +-1, r > 0 rational, n >= 2, r
not a perfect p-th power for a prime p dividing n, so that the value is
irrational), or None where the value is not of that form, or not found by these
rules:

* rationals and the coordinates: themselves;
* a sum: the sum when every term is rational; the one nonzero term when the
  others are 0; otherwise None;
* a product: s_1 s_2 (r_1^(N/n_1) r_2^(N/n_2))^(1/N), N = lcm(n_1, n_2);
* a power with rational exponent p/q: (s r^(1/n))^p = s^p (r^p)^(1/n) for an
  integer p; for q > 1 the base must be >= 0, and the value is (r^p)^(1/(n q));
* Abs, Max, Min: by exact comparison (same sign: compare r_1^(N/n_1) with
  r_2^(N/n_2));
* exp(0) = cos(0) = 1, sin(0) = atan(0) = log(1) = 0; any other argument of
  these, and pi and E, give None.

Every rule is an identity of real numbers, so a value returned is f(x)
exactly. Sizes are bounded before they are computed: a rational of more than
MAX_BITS bits, or a root index over MAX_INDEX, gives None (the caller encloses
f instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import lcm
from typing import Callable, Optional, Sequence, Union

import sympy
from flint import arb, fmpq, fmpz

#: Largest bit size of a numerator or denominator, and largest root index, kept exact.
MAX_BITS = 4096
MAX_INDEX = 1 << 12


@dataclass(frozen=True)
class Radical:
    """The irrational s r^(1/n): s = +-1, r > 0 rational, n >= 2 least."""

    s: int
    r: fmpq
    n: int

    def enclose(self) -> arb:
        """A ball containing the value, at the precision in force."""
        return self.s * arb(self.r).root(self.n)


Value = Union[fmpq, Radical]
Exact = Callable[[Sequence[fmpq]], Optional[Value]]


def bits(q: fmpq) -> int:
    return max(int(q.p).bit_length(), int(q.q).bit_length())


def _parts(v: Value) -> tuple[int, fmpq, int]:
    """(s, r, n) with v = s r^(1/n); r = 1 for 0."""
    if isinstance(v, Radical):
        return v.s, v.r, v.n
    return (0, fmpq(1), 1) if v == 0 else (1 if v > 0 else -1, abs(v), 1)


def _bounded(q: fmpq) -> fmpq | None:
    return q if bits(q) <= MAX_BITS else None


def radical(s: int, r: fmpq, n: int) -> Value | None:
    """s r^(1/n) in reduced form (a rational when it is one), or None beyond the size bounds."""
    if s == 0:
        return fmpq(0)
    if n > MAX_INDEX or bits(r) > MAX_BITS:
        return None
    for p in _prime_factors(n):
        while n % p == 0:
            a, b = fmpz(r.p).root(p), fmpz(r.q).root(p)
            if a**p != r.p or b**p != r.q:
                break
            r, n = fmpq(a, b), n // p
    return s * r if n == 1 else Radical(s, r, n)


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        if n % p == 0:
            out.append(p)
            while n % p == 0:
                n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def magnitude_power(v: Value, N: int) -> fmpq:
    """|v|^N for a multiple N of v's root index, exactly."""
    _, r, n = _parts(v)
    return r ** (N // n) if v != 0 else fmpq(0)


def compare(a: Value, b: Value) -> int | None:
    """-1, 0 or 1 as a < b, a = b, a > b, exactly; None beyond the size bounds."""
    if isinstance(a, fmpq) and isinstance(b, fmpq):
        return (a > b) - (a < b)
    (sa, ra, na), (sb, rb, nb) = _parts(a), _parts(b)
    if sa != sb:
        return -1 if sa < sb else 1
    N = lcm(na, nb)
    if N > MAX_INDEX or max(bits(ra) * (N // na), bits(rb) * (N // nb)) > MAX_BITS:
        return None
    x, y = magnitude_power(a, N), magnitude_power(b, N)
    return 0 if x == y else sa * (1 if x > y else -1)


def _add(*xs: Value) -> Value | None:
    if all(isinstance(x, fmpq) for x in xs):
        return _bounded(sum(xs, fmpq(0)))
    nonzero = [x for x in xs if not (isinstance(x, fmpq) and x == 0)]
    return nonzero[0] if len(nonzero) == 1 else None


def _mul(*xs: Value) -> Value | None:
    out: Value = xs[0]
    for x in xs[1:]:
        if isinstance(out, fmpq) and isinstance(x, fmpq):
            if bits(out) + bits(x) > MAX_BITS:
                return None
            out = out * x
            continue
        (sa, ra, na), (sb, rb, nb) = _parts(out), _parts(x)
        N = lcm(na, nb)
        if N > MAX_INDEX or bits(ra) * (N // na) + bits(rb) * (N // nb) > MAX_BITS:
            return None
        v = radical(sa * sb, ra ** (N // na) * rb ** (N // nb), N)
        if v is None:
            return None
        out = v
    return out


def _power(x: Value, p: int, q: int) -> Value | None:
    """x^(p/q) for a real x (q > 1 needs x >= 0; a negative power needs x != 0)."""
    s, r, n = _parts(x)
    if s == 0:
        return None if p < 0 else (fmpq(1) if p == 0 else fmpq(0))
    if (q > 1 and s < 0) or bits(r) * abs(p) > MAX_BITS or n * q > MAX_INDEX:
        return None
    return radical(s if p % 2 else 1, r**p, n * q)


def _extreme(*xs: Value, sign: int) -> Value | None:
    best = xs[0]
    for x in xs[1:]:
        c = compare(x, best)
        if c is None:
            return None
        if c == sign:
            best = x
    return best


def _known_at(arg: fmpq, value: fmpq) -> Callable[[Value], Value | None]:
    """A function known exactly only at ``arg``, where it is ``value``."""
    return lambda x: value if isinstance(x, fmpq) and x == arg else None


_UNARY: dict[str, Callable[[Value], Value | None]] = {
    "Abs": lambda x: abs(x) if isinstance(x, fmpq) else Radical(1, x.r, x.n),
    "exp": _known_at(fmpq(0), fmpq(1)),
    "cos": _known_at(fmpq(0), fmpq(1)),
    "sin": _known_at(fmpq(0), fmpq(0)),
    "atan": _known_at(fmpq(0), fmpq(0)),
    "log": _known_at(fmpq(1), fmpq(0)),
}


def compile_exact(expr: sympy.Expr, symbols: Sequence[sympy.Symbol]) -> Exact:
    """F with F(x) = f(x) exactly (a rational or a Radical), or None (module docstring), at a rational point x."""
    slots: dict[sympy.Expr, int] = {s: k for k, s in enumerate(symbols)}
    steps: list[tuple[Callable[..., Value | None], tuple[int, ...]]] = []
    out = _compile(expr, slots, steps)

    def run(x: Sequence[fmpq]) -> Value | None:
        vals: list[Value | None] = list(x)
        for op, args in steps:
            a = [vals[k] for k in args]
            vals.append(None if None in a else op(*a))
        return vals[out]

    return run


def _compile(e: sympy.Expr, slots: dict[sympy.Expr, int], steps: list) -> int:
    if e in slots:
        return slots[e]
    name = type(e).__name__
    if e.is_Rational:
        v = fmpq(int(e.p), int(e.q))
        op, args = (lambda v=v: v), ()
    elif e.is_Pow and e.exp.is_Rational:
        p, q = int(e.exp.p), int(e.exp.q)
        op, args = (lambda x, p=p, q=q: _power(x, p, q)), (_compile(e.base, slots, steps),)
    elif e.is_Add or e.is_Mul or (name in _UNARY and len(e.args) == 1) or name in ("Max", "Min"):
        args = tuple(_compile(a, slots, steps) for a in e.args)
        if e.is_Add:
            op = _add
        elif e.is_Mul:
            op = _mul
        elif name in _UNARY:
            op = _UNARY[name]
        else:
            op = lambda *xs, s=(1 if name == "Max" else -1): _extreme(*xs, sign=s)  # noqa: E731
    else:  # pi, E, and anything else: not known exactly here
        op, args = (lambda: None), ()
    slots[e] = len(slots)
    steps.append((op, args))
    return slots[e]
