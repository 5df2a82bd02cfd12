r"""Targets: real functions on [0, 1]^d with a stated modulus of continuity.

A target is an expression in x1..xd (read by the restricted parser of
:mod:`exact.expressions`, never evaluated as Python) with a stated constant C
and exponent alpha in (0, 1]:

    |f(x) - f(y)| <= C ||x - y||_inf^alpha   for x, y in [0, 1]^d,

Lipschitz with constant L = C when alpha = 1, Hölder with constant H = C
otherwise. The statement is the user's (or the library's); the claims decide it
on the tested grid pairs and hold only when it is proven on every one
(proofs/checkers/approximation/modulus.py).

The library, with its constants in the max-norm (the max-norm Lipschitz constant
of ||x - c||_1 is d, since |sum_k (|x_k - c_k| - |y_k - c_k|)| <= d ||x - y||_inf):

=============  ===================================================  ==========
name           f                                                    C, alpha
=============  ===================================================  ==========
abs            |x1 + ... + xd - d/3|                                d, 1
cone           max(0, 1 - ||x||_1)                                  d, 1
three_cones    max(1 - 3||x - a||_1, 3/4 - 3||x - b||_1,
               1/2 - 3||x - c||_1, 0)  (centres below)              3d, 1
minmax         min(max(x1 - 1/4, 1/2 - xd), 2/3 - x1/2)             1, 1
sin            sin(pi x1)                                           355/113, 1 (pi < 355/113)
sqrt           x1^(1/2)                                             1, 1/2
cbrt           x1^(1/3)                                             1, 1/3
=============  ===================================================  ==========

Centres of three_cones: a = (1/3, ..., 1/3); b_k = 5/7 for odd k, 2/7 for even
k; c_k = 9/10 for odd k, 3/4 for even k. The Hölder constants of x^alpha are a
theorem: t -> t^alpha is subadditive on [0, inf), so |x^alpha - y^alpha| <= |x - y|^alpha.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import sympy
from flint import fmpq

from attncert.exact.errors import ParseError
from attncert.exact.expressions import parse_function
from attncert.exact.rationals import parse_rational


@dataclass(frozen=True)
class Target:
    """f on [0, 1]^d, with |f(x) - f(y)| <= constant ||x - y||_inf^alpha stated."""

    name: str  # a library name, or "expr" for a user expression
    text: str  # the expression as parsed (exact.expressions.parse_function)
    d: int
    constant: fmpq  # L (alpha = 1) or H (alpha < 1)
    alpha: fmpq
    expr: sympy.Expr = field(compare=False, repr=False)

    @property
    def lipschitz(self) -> bool:
        return self.alpha == 1


def _l1(d: int, centre: Callable[[int], str]) -> str:
    return " + ".join(f"Abs(x{k} - {centre(k)})" for k in range(1, d + 1))


def _alternating(odd: str, even: str) -> Callable[[int], str]:
    return lambda k: odd if k % 2 else even


def _sum(d: int) -> str:
    return " + ".join(f"x{k}" for k in range(1, d + 1))


#: name -> (expression text for d, constant for d, alpha)
LIBRARY: dict[str, tuple[Callable[[int], str], Callable[[int], fmpq], fmpq]] = {
    "abs": (lambda d: f"Abs({_sum(d)} - {d}/3)", lambda d: fmpq(d), fmpq(1)),
    "cone": (lambda d: f"Max(0, 1 - ({_sum(d)}))", lambda d: fmpq(d), fmpq(1)),
    "three_cones": (
        lambda d: (
            f"Max(1 - 3*({_l1(d, lambda k: '1/3')}), 3/4 - 3*({_l1(d, _alternating('5/7', '2/7'))}), "
            f"1/2 - 3*({_l1(d, _alternating('9/10', '3/4'))}), 0)"
        ),
        lambda d: fmpq(3 * d),
        fmpq(1),
    ),
    "minmax": (lambda d: f"Min(Max(x1 - 1/4, 1/2 - x{d}), 2/3 - x1/2)", lambda d: fmpq(1), fmpq(1)),
    "sin": (lambda d: "sin(pi*x1)", lambda d: fmpq(355, 113), fmpq(1)),
    "sqrt": (lambda d: "x1**(1/2)", lambda d: fmpq(1), fmpq(1, 2)),
    "cbrt": (lambda d: "x1**(1/3)", lambda d: fmpq(1), fmpq(1, 3)),
}
USER = "expr"


#: Largest numerator or denominator of the stated constant (in bits) and of alpha: the grid pairs compare
#: q-th powers of C (proofs/checkers/approximation/modulus.py), so both are kept small.
MAX_CONSTANT_BITS = 256
MAX_ALPHA_TERMS = 1000


def check_hypotheses(d: int, constant: fmpq, alpha: fmpq) -> None:
    """ParseError (one line) unless d >= 1, the constant is > 0 and alpha is in (0, 1], both of bounded size."""
    if d < 1:
        raise ParseError(f"d must be a positive integer, got {d}")
    if max(int(constant.p).bit_length(), int(constant.q).bit_length()) > MAX_CONSTANT_BITS:
        raise ParseError(f"L must have a numerator and denominator of at most {MAX_CONSTANT_BITS} bits")
    if max(abs(int(alpha.p)), int(alpha.q)) > MAX_ALPHA_TERMS:
        raise ParseError(f"alpha must have a numerator and denominator of at most {MAX_ALPHA_TERMS}, got {alpha}")
    if not constant > 0:
        raise ParseError(f"L must be > 0, got {constant}")
    if not 0 < alpha <= 1:
        raise ParseError(f"alpha must be in (0, 1], got {alpha}")


def target(name: str, d: int, expr: str = "", constant: str = "", alpha: str = "") -> Target:
    """A library target (its stated constants unless given), or the user expression ``expr`` (constant required).

    ``constant`` and ``alpha`` are rational strings; empty means the library's value.
    """
    if expr:
        if not constant:
            raise ParseError("a user expression needs its Lipschitz (or Hölder) constant: give --L")
        text, c, a = expr, parse_rational(constant), parse_rational(alpha) if alpha else fmpq(1)
        name = USER
    else:
        if name not in LIBRARY:
            raise ParseError(f"unknown target {name!r:.40}; choose one of {', '.join(LIBRARY)}, or give --expr")
        text_of, const_of, alpha0 = LIBRARY[name]
        text = text_of(d) if d >= 1 else ""
        c = parse_rational(constant) if constant else const_of(max(d, 1))
        a = parse_rational(alpha) if alpha else alpha0
    check_hypotheses(d, c, a)
    return Target(name, text, d, c, a, parse_function(text, d))
