"""Real functions of x1..xd written as expressions: a restricted parser, rigorous enclosures, exact values.

:mod:`.parse` reads a user's text into a sympy expression without evaluating any
Python (the syntax tree is walked, numbers are read exactly); :mod:`.enclose`
turns a sympy expression into an interval evaluator (arb endpoints, rounded
outward, magnitudes bounded) that encloses the function on a box, and converts
endpoints to rationals within bounds; :mod:`.radicals` evaluates it exactly at
a rational point where its value is a rational or a radical; :mod:`.lipschitz`
bounds its Lipschitz constant on the cube from its structure. The approximation
constructions and their independent checkers both read targets through these
modules.
"""

from attncert.exact.expressions.enclose import EnclosureError, Interval, compile_enclosure, compile_enclosures, endpoints, interval, point, rational
from attncert.exact.expressions.parse import ExpressionError, parse_function, variables

__all__ = ["EnclosureError", "ExpressionError", "Interval", "compile_enclosure", "compile_enclosures", "endpoints", "interval", "parse_function", "point", "rational", "variables"]
