r"""The closed-form bound of the McShane network's error, with its hypotheses checked first.

g(x) = max_i (y_i - L ||x - x_i||_inf) on the grid {0..m}^d / m, with samples
|y_i - f(x_i)| <= 2^-b (checked by the caller). If f satisfies the modulus
|f(x) - f(y)| <= H ||x - y||_inf^alpha on [0, 1]^d, then for every x in the cube,
with x_j its nearest grid point (||x - x_j||_inf <= 1/(2m)):

    g(x) - f(x) <= max_i (H ||x - x_i||^alpha - L ||x - x_i||) + 2^-b,
    f(x) - g(x) <= f(x) - y_j + L ||x - x_j|| <= H (1/(2m))^alpha + L/(2m) + 2^-b.

* alpha = 1 (H = L_f <= L): the first line is at most 2^-b, so
  sup |f - g| <= (L_f + L) / (2m) + 2^-b  (at most L h + 2^-b, h = 1/m);
* alpha < 1: max_t (H t^alpha - L t) = (1 - alpha) H (alpha H / L)^(alpha / (1 - alpha)),
  so sup |f - g| <= max of that and H (2m)^-alpha + L/(2m), plus 2^-b (upper
  ends of arb balls, read as rationals).

The modulus of f is a hypothesis, checked here from the expression alone, never
taken from the certificate's stated constant:

* alpha = 1: H = L_f, the structural Lipschitz bound of :mod:`exact.expressions.lipschitz`,
  and it must not exceed the slope L;
* alpha < 1: H = C, the stated constant, when f = x_k^a with a >= alpha and
  C >= 1 (|x^a - y^a| <= |x - y|^a <= |x - y|^alpha for |x - y| <= 1: t -> t^a is
  subadditive), or when L_f <= C (|f(x) - f(y)| <= L_f t <= C t^alpha for t <= 1).

Otherwise there is no closed-form bound, and the reason is given.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from flint import arb, ctx, fmpq

from attncert.exact.expressions import variables
from attncert.exact.expressions.enclose import rational
from attncert.exact.expressions.lipschitz import lipschitz_bound
from attncert.proofs.checkers.approximation.subgrid import holder_power

PREC = 64


@dataclass(frozen=True)
class ClosedForm:
    bound: fmpq | None  # sup |f - g| <= bound, or None (reason says why)
    modulus: str  # the modulus of f that was proven, and how
    reason: str


def closed_form(expr: sympy.Expr, d: int, m: int, C: fmpq, alpha: fmpq, L: fmpq, bits: int) -> ClosedForm:
    """The bound of the module docstring for the grid of step 1/m, slope L and samples to 2^-bits."""
    Lf = lipschitz_bound(expr, variables(d), PREC)
    sample = fmpq(1, 2**bits)
    if alpha == 1:
        if Lf is None:
            return ClosedForm(None, "", "no Lipschitz constant of f follows from its expression (exact/expressions/lipschitz.py)")
        if Lf > L:
            return ClosedForm(None, "", f"the structural Lipschitz bound L_f = {Lf} of f exceeds the slope L = {L}")
        return ClosedForm((Lf + L) / (2 * m) + sample, f"|f(x) - f(y)| <= L_f ||x - y||_inf, L_f = {Lf} <= L (structural bound)", "")
    a = holder_power(expr, variables(d))
    if a is not None and a >= alpha and C >= 1:
        modulus = f"|f(x) - f(y)| <= {C} ||x - y||_inf^{alpha}: f = x_k^{a}, Hölder theorem (a >= alpha, C >= 1)"
    elif Lf is not None and Lf <= C:
        modulus = f"|f(x) - f(y)| <= {C} ||x - y||_inf^{alpha}: L_f = {Lf} <= C (structural bound)"
    else:
        return ClosedForm(None, "", f"no Hölder modulus with constant {C} and exponent {alpha} follows from the expression of f")
    with ctx.workprec(PREC):
        al, H, Lb = arb(alpha), arb(C), arb(L)
        overshoot = (1 - al) * H * (al * H / Lb) ** (al / (1 - al))
        reach = H * arb(fmpq(1, 2 * m)) ** al + Lb / (2 * m)
        bound = rational(overshoot.upper()) if overshoot.upper() > reach.upper() else rational(reach.upper())
    return ClosedForm(bound + sample, modulus, "")
