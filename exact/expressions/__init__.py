"""Real functions of x1..xd written as expressions: a restricted parser and rigorous enclosures.

:mod:`.parse` reads a user's text into a sympy expression without evaluating any
Python (the syntax tree is walked, numbers are read exactly); :mod:`.enclose`
turns a sympy expression into an interval evaluator (arb endpoints, rounded
outward) that encloses the function on a box. The approximation constructions
and their independent checkers both read targets through these two modules.
"""

from exact.expressions.enclose import EnclosureError, Interval, compile_enclosure, compile_enclosures, interval, point
from exact.expressions.parse import ExpressionError, parse_function, variables

__all__ = ["EnclosureError", "ExpressionError", "Interval", "compile_enclosure", "compile_enclosures", "interval", "parse_function", "point", "variables"]
