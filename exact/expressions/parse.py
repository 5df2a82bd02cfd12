"""A restricted parser for real functions of x1..xd (targets of the approximation claims).

The text is read with Python's :mod:`ast` (a syntax tree, nothing is evaluated)
and each node is translated into the sympy expression it denotes; anything not
on the list below is refused with one line. Numbers are read exactly (``0.1`` is
1/10), so ``1/3`` is the rational 1/3, not a float.

Allowed: integer and decimal literals; the variables ``x1``..``xd``; ``pi`` and
``E``; ``+ - * /``; powers ``a**r`` (``a^r`` is read as ``a**r``) whose exponent ``r`` is a
rational number; the functions ``sqrt exp log sin cos atan Abs Max Min``.

Why not ``sympy.parsing.sympy_parser.parse_expr``: it runs the (transformed)
text through Python's ``eval``, and with its transformations off ``1/3`` is
the float 0.333...; a walk over the syntax tree needs neither.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Callable

import sympy

from attncert.exact.errors import ParseError
from attncert.exact.rationals import parse_rational

#: Longest expression text and most syntax nodes accepted.
MAX_CHARS = 4000
MAX_NODES = 2000
#: Largest numerator or denominator of an exponent, and largest bit size of a constant power.
MAX_EXPONENT = 1000
MAX_CONSTANT_BITS = 10_000

FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "sqrt": sympy.sqrt,
    "exp": sympy.exp,
    "log": sympy.log,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "atan": sympy.atan,
    "Abs": sympy.Abs,
    "Max": sympy.Max,
    "Min": sympy.Min,
}
CONSTANTS = {"pi": sympy.pi, "E": sympy.E}
_VARIABLE = re.compile(r"x([1-9][0-9]*)")
_ONE_ARG = {"sqrt", "exp", "log", "sin", "cos", "atan", "Abs"}


class ExpressionError(ParseError):
    """A target expression that is refused: not in the allowed language, or not a function of x1..xd."""


def variables(d: int) -> tuple[sympy.Symbol, ...]:
    """The real symbols x1..xd (declared real, so that derivatives of Abs are sign functions)."""
    return tuple(sympy.Symbol(f"x{k}", real=True) for k in range(1, d + 1))


@functools.lru_cache(maxsize=256)
def parse_function(text: str, d: int) -> sympy.Expr:
    """The sympy expression of ``text``, a real function of x1..xd; ExpressionError (one line) otherwise.

    Cached: the same text and d give the same (immutable) expression, read once."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("the target expression is empty")
    if len(text) > MAX_CHARS:
        raise ExpressionError(f"the target expression is longer than {MAX_CHARS} characters")
    text = text.strip().replace("^", "**")  # a power, with the precedence of ** (Python's ^ binds looser than -)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ExpressionError(f"the target {text!r:.60} is not an expression: {e.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ExpressionError(f"the target expression has more than {MAX_NODES} syntax nodes")
    expr = _Translator(text, d).visit(tree.body)
    if expr.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
        raise ExpressionError(f"the target {text!r:.60} is not finite (it divides by zero or takes log 0)")
    if expr.has(sympy.I):
        raise ExpressionError(f"the target {text!r:.60} is not real")
    return expr


class _Translator:
    def __init__(self, text: str, d: int):
        self.text, self.d, self.symbols = text, d, variables(d)

    def visit(self, node: ast.AST) -> sympy.Expr:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise ExpressionError(f"not allowed in a target: {_describe(node)} (allowed: numbers, x1..x{self.d}, pi, E, + - * / **, {', '.join(FUNCTIONS)})")
        return method(node)

    def visit_Constant(self, node: ast.Constant) -> sympy.Expr:
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"not allowed in a target: the constant {node.value!r:.30}")
        # The literal as written (a float literal would round): 0.1 is 1/10.
        q = parse_rational(ast.get_source_segment(self.text, node) or str(node.value))
        return sympy.Rational(int(q.p), int(q.q))

    def visit_Name(self, node: ast.Name) -> sympy.Expr:
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        m = _VARIABLE.fullmatch(node.id)
        if m:
            k = int(m.group(1))
            if k > self.d:
                raise ExpressionError(f"the target uses {node.id}, but it must be a function of d = {self.d} variable(s) (x1..x{self.d})")
            return self.symbols[k - 1]
        if node.id in FUNCTIONS:
            raise ExpressionError(f"{node.id} is a function: call it, as in {node.id}(x1)")
        raise ExpressionError(f"unknown name {node.id!r:.30} in the target (allowed: x1..x{self.d}, pi, E, {', '.join(FUNCTIONS)})")

    def visit_UnaryOp(self, node: ast.UnaryOp) -> sympy.Expr:
        if isinstance(node.op, ast.USub):
            return -self.visit(node.operand)
        if isinstance(node.op, ast.UAdd):
            return self.visit(node.operand)
        raise ExpressionError(f"not allowed in a target: {_describe(node)}")

    def visit_BinOp(self, node: ast.BinOp) -> sympy.Expr:
        a, b = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.Pow):
            return _power(a, b)
        raise ExpressionError(f"not allowed in a target: {_describe(node)}")

    def visit_Call(self, node: ast.Call) -> sympy.Expr:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS or node.keywords:
            raise ExpressionError(f"not allowed in a target: a call of {ast.unparse(node.func)[:30]!r} (allowed functions: {', '.join(FUNCTIONS)})")
        args = [self.visit(a) for a in node.args]
        if (name in _ONE_ARG and len(args) != 1) or not args:
            raise ExpressionError(f"{name} takes {'one argument' if name in _ONE_ARG else 'one or more arguments'}, got {len(args)}")
        return FUNCTIONS[name](*args)


def _power(base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
    """base**exponent for a rational exponent of bounded size (a constant power is computed by sympy)."""
    if not exponent.is_Rational:
        raise ExpressionError(f"only rational powers are allowed in a target, got the exponent {exponent}")
    if abs(exponent.p) > MAX_EXPONENT or exponent.q > MAX_EXPONENT:
        raise ExpressionError(f"the exponent {exponent} is too large (numerator and denominator at most {MAX_EXPONENT})")
    if base.is_Rational and max(abs(base.p), base.q).bit_length() * abs(exponent.p) > MAX_CONSTANT_BITS:
        raise ExpressionError(f"a constant power in the target is too large (over {MAX_CONSTANT_BITS} bits)")
    return base**exponent


def _describe(node: ast.AST) -> str:
    return f"{type(node).__name__.lower()} {ast.unparse(node)[:40]!r}" if hasattr(ast, "unparse") else type(node).__name__
