r"""SizeExpr expressions: integers written in size symbols, so that one builder serves every size.

A builder called with integers builds the program of those sizes; called with :class:`SizeExpr`
symbols it builds the *template*, whose parameters are size expressions, and
``instantiate(template, sizes)`` (:mod:`.template`) is exactly the graph the integers give.

A :class:`SizeExpr` is an integer polynomial over *atoms*: a size symbol (``n``), or ``max(a, b, ...)``,
``min(a, b, ...)``, ``a // k`` and ``a % k`` of size expressions, k a positive integer. Sums,
products and integer powers are kept in polynomial normal form (a dict from monomials to integer
coefficients), so two expressions that are equal as polynomials in their atoms are equal here, and
print the same: the *text* (:meth:`SizeExpr.text`) is canonical, and :func:`parse` reads it back.

A size expression is never compared with an integer by ``==``, ``<`` or ``bool``: those raise, so a
Python branch on a size fails loudly where a template needs an explicit case (:func:`case`,
:mod:`.template`). Symbols stand for positive integers (each size is at least 1).

Grammar of the text (``parse``)::

    expr   := term (("+" | "-") term)*          term := ["-"] factor ("*" factor)*
    factor := atom ["^" int]                     atom := int | name | "(" expr ")"
            | ("max" | "min") "(" expr ("," expr)+ ")" | "floor(" expr "," int ")" | "mod(" expr "," int ")"
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping, Union

from attncert.exact.errors import ParseError

Monomial = tuple[tuple["Atom", int], ...]  # sorted (atom, exponent) pairs, exponents >= 1
SizeLike = Union[int, "SizeExpr"]

#: The longest size text read (a template's parameters are short; this bounds a hostile one).
MAX_TEXT = 4096
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_RESERVED = frozenset({"max", "min", "floor", "mod"})


class Atom:
    """An indivisible part of a size polynomial: a symbol, or max / min / floor / mod of size expressions."""

    __slots__ = ("op", "args", "_text", "_hash")

    def __init__(self, op: str, args: tuple[Any, ...]):
        self.op, self.args = op, args
        if op == "sym":
            self._text = args[0]
        elif op in ("max", "min"):
            self._text = f"{op}({', '.join(a.text() for a in args)})"
        else:  # floor, mod: (expression, positive integer)
            self._text = f"{op}({args[0].text()}, {args[1]})"
        self._hash = hash(self._text)

    def text(self) -> str:
        return self._text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Atom) and self._text == other._text

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: "Atom") -> bool:  # the canonical order of atoms in a monomial
        return (self.op != "sym", self._text) < (other.op != "sym", other._text)

    def value(self, env: Mapping[str, int]) -> int:
        if self.op == "sym":
            try:
                return env[self.args[0]]
            except KeyError:
                raise ParseError(f"no value for the size {self.args[0]!r}") from None
        vals = [a.value(env) if isinstance(a, SizeExpr) else a for a in self.args]
        if self.op == "max":
            return max(vals)
        if self.op == "min":
            return min(vals)
        return vals[0] // vals[1] if self.op == "floor" else vals[0] % vals[1]

    def substitute(self, m: Mapping[str, SizeLike]) -> "SizeExpr":
        """The atom with symbols replaced, as an expression (a max of integers is one integer)."""
        if self.op == "sym":
            return size(m[self.args[0]]) if self.args[0] in m else SizeExpr.of_atom(self)
        args = [a.substitute(m) if isinstance(a, SizeExpr) else a for a in self.args]
        if self.op in ("max", "min"):
            return size((smax if self.op == "max" else smin)(*args))
        return args[0] // args[1] if self.op == "floor" else args[0] % args[1]

    def symbols(self) -> set[str]:
        if self.op == "sym":
            return {self.args[0]}
        return set().union(*(a.symbols() for a in self.args if isinstance(a, SizeExpr)))


class SizeExpr:
    """An integer polynomial in atoms (module docstring); immutable, hashable by its canonical text."""

    __slots__ = ("terms", "_text", "_hash")

    def __init__(self, terms: Mapping[Monomial, int]):
        self.terms: dict[Monomial, int] = {m: c for m, c in terms.items() if c != 0}
        self._text: str | None = None  # rendered when first asked for: most expressions are never printed
        self._hash: int | None = None

    # -- building -----------------------------------------------------------------------------
    @staticmethod
    def symbol(name: str) -> "SizeExpr":
        return _symbol(name)

    @staticmethod
    def const(k: int) -> "SizeExpr":
        return SizeExpr({(): int(k)} if k else {})

    @staticmethod
    def of_atom(a: Atom) -> "SizeExpr":
        return SizeExpr({((a, 1),): 1})

    # -- reading ------------------------------------------------------------------------------
    def text(self) -> str:
        if self._text is None:
            self._text = _render(self.terms)
        return self._text

    def constant(self) -> int | None:
        """The integer this expression is, if it has no atom."""
        if not self.terms:
            return 0
        if set(self.terms) == {()}:
            return self.terms[()]
        return None

    def value(self, env: Mapping[str, int]) -> int:
        """The integer at the given sizes (every symbol of the expression must be given)."""
        total = 0
        for mono, c in self.terms.items():
            t = c
            for atom, e in mono:
                t *= atom.value(env) ** e
            total += t
        return total

    def symbols(self) -> set[str]:
        return set().union(*(a.symbols() for m in self.terms for a, _ in m))

    def substitute(self, m: Mapping[str, SizeLike]) -> "SizeExpr":
        """The expression with the symbols of m replaced by integers or expressions (atoms rebuilt)."""
        if not (self.symbols() & set(m)):
            return self
        out = SizeExpr.const(0)
        for mono, c in self.terms.items():
            t = SizeExpr.const(c)
            for atom, e in mono:
                t = t * atom.substitute(m) ** e
            out = out + t
        return out

    def atoms(self) -> set[Atom]:
        return {a for m in self.terms for a, _ in m}

    # -- arithmetic ---------------------------------------------------------------------------
    def __add__(self, other: SizeLike) -> "SizeExpr":
        o = size(other)
        out = dict(self.terms)
        for m, c in o.terms.items():
            out[m] = out.get(m, 0) + c
        return SizeExpr(out)

    __radd__ = __add__

    def __neg__(self) -> "SizeExpr":
        return SizeExpr({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: SizeLike) -> "SizeExpr":
        return self + (-size(other))

    def __rsub__(self, other: SizeLike) -> "SizeExpr":
        return size(other) - self

    def __mul__(self, other: SizeLike) -> "SizeExpr":
        o = size(other)
        out: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.terms.items():
                m = _times(m1, m2)
                out[m] = out.get(m, 0) + c1 * c2
        return SizeExpr(out)

    __rmul__ = __mul__

    def __pow__(self, k: int) -> "SizeExpr":
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise ParseError("a size expression is raised to a non-negative integer power only")
        out = SizeExpr.const(1)
        for _ in range(k):
            out = out * self
        return out

    def __floordiv__(self, k: int) -> "SizeExpr":
        return _divmod_const(self, k, "floor")

    def __mod__(self, k: int) -> "SizeExpr":
        return _divmod_const(self, k, "mod")

    # -- no silent decisions --------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, SizeExpr):
            return self.terms == other.terms
        if isinstance(other, int) and self.constant() is not None:
            return self.constant() == other
        raise TypeError(f"the size expression {self.text()} is compared with {other!r:.20}: a template needs an explicit case")

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def _undecided(self, *_: Any) -> bool:
        raise TypeError(f"the size expression {self.text()} is compared or branched on: a template needs an explicit case")

    __lt__ = __le__ = __gt__ = __ge__ = _undecided

    def __bool__(self) -> bool:
        return self._undecided()

    def __index__(self) -> int:
        raise TypeError(f"the size expression {self.text()} is used as an integer (a range, an index): fix the size or refine it")

    def __repr__(self) -> str:
        return f"SizeExpr({self.text()!r})"


@functools.lru_cache(maxsize=1 << 14)
def _symbol(name: str) -> SizeExpr:
    if not isinstance(name, str) or not _NAME.match(name) or name in _RESERVED:
        raise ParseError(f"a size symbol is a name (letters, digits, _), not {name!r:.30}")
    return SizeExpr({((Atom("sym", (name,)), 1),): 1})


def size(x: SizeLike) -> SizeExpr:
    """An integer or a size expression as a :class:`SizeExpr`."""
    if isinstance(x, SizeExpr):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return SizeExpr.const(x)
    raise TypeError(f"not a size: {x!r:.30}")


def symbolic(x: Any) -> bool:
    """Whether x is a size expression with a symbol (an integer, or a constant expression, is not)."""
    return isinstance(x, SizeExpr) and x.constant() is None


def concrete(x: SizeLike) -> int | None:
    """The integer x is, or None for an expression with symbols."""
    return x if isinstance(x, int) else x.constant()


def smax(*xs: SizeLike) -> SizeLike:
    """max of integers and size expressions: an integer when every argument is one, else a ``max`` atom
    (nested maxima flattened, constants merged into one, duplicates dropped)."""
    return _extremum("max", xs)


def smin(*xs: SizeLike) -> SizeLike:
    """min, as :func:`smax`."""
    return _extremum("min", xs)


def _extremum(op: str, xs: Iterable[SizeLike]) -> SizeLike:
    pick = max if op == "max" else min
    ints, exprs = [], []
    for x in xs:
        k = concrete(x)
        if k is not None:
            ints.append(k)
            continue
        inner = next(iter(x.terms)) if len(x.terms) == 1 else None
        if inner is not None and x.terms[inner] == 1 and len(inner) == 1 and inner[0][1] == 1 and inner[0][0].op == op:
            for a in inner[0][0].args:  # max(a, max(b, c)) = max(a, b, c)
                (ints if a.constant() is not None else exprs).append(a.constant() if a.constant() is not None else a)
        else:
            exprs.append(x)
    if not exprs:
        return pick(ints)
    args = sorted({e.text(): e for e in exprs}.values(), key=SizeExpr.text)
    if ints:
        args.append(SizeExpr.const(pick(ints)))
    return args[0] if len(args) == 1 else SizeExpr.of_atom(Atom(op, tuple(args)))


def _divmod_const(x: SizeExpr, k: int, op: str) -> SizeExpr:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise TypeError("a size expression is divided by a positive integer constant only")
    c = x.constant()
    if c is not None:
        return SizeExpr.const(c // k if op == "floor" else c % k)
    if k == 1:
        return x if op == "floor" else SizeExpr.const(0)
    # floor(a + k b, k) = b + floor(a, k) and mod(a + k b, k) = mod(a, k): the terms k divides leave the atom
    whole = SizeExpr({m: coef // k for m, coef in x.terms.items()})
    rest = SizeExpr({m: coef % k for m, coef in x.terms.items()})
    r = rest.constant()
    if r is not None:
        return whole + (r // k) if op == "floor" else SizeExpr.const(r % k)
    return whole + SizeExpr.of_atom(Atom("floor", (rest, k))) if op == "floor" else SizeExpr.of_atom(Atom("mod", (rest, k)))


def _times(a: Monomial, b: Monomial) -> Monomial:
    exps: dict[Atom, int] = dict(a)
    for atom, e in b:
        exps[atom] = exps.get(atom, 0) + e
    return tuple(sorted(exps.items()))


def _mono_text(m: Monomial) -> str:
    return "*".join(a.text() if e == 1 else f"{a.text()}^{e}" for a, e in m)


def _render(terms: Mapping[Monomial, int]) -> str:
    if not terms:
        return "0"
    # higher degree first, then by text: one order for every expression
    order = sorted(terms, key=lambda m: (-sum(e for _, e in m), _mono_text(m)))
    out = []
    for i, m in enumerate(order):
        c = terms[m]
        body = _mono_text(m)
        if not body:
            piece = str(abs(c))
        elif abs(c) == 1:
            piece = body
        else:
            piece = f"{abs(c)}*{body}"
        out.append(("-" if c < 0 else "") + piece if i == 0 else (" - " if c < 0 else " + ") + piece)
    return "".join(out)


# -- reading the text back --------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z][A-Za-z0-9_]*)|(\S))")


def parse(text: Any) -> SizeExpr:
    """The size expression a text spells (the grammar of the module docstring); ParseError otherwise.
    Reading never evaluates anything but this grammar."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ParseError(f"a size expression is a string of at most {MAX_TEXT} characters")
    tokens = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            break
        if m.group(0).strip() == "":
            break
        tokens.append(("int", int(m.group(1))) if m.group(1) else ("name", m.group(2)) if m.group(2) else ("op", m.group(3)))
        pos = m.end()
    if text[pos:].strip():
        raise ParseError(f"not a size expression: {text!r:.60}")
    p = _Parser(tokens, text)
    out = p.expr()
    if p.i != len(tokens):
        raise ParseError(f"not a size expression: {text!r:.60}")
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, Any]], text: str):
        self.t, self.i, self.text, self.depth = tokens, 0, text, 0

    def _peek(self) -> tuple[str, Any] | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def _take(self, kind: str, value: Any = None) -> Any:
        tok = self._peek()
        if tok is None or tok[0] != kind or value is not None and tok[1] != value:
            raise ParseError(f"not a size expression: {self.text!r:.60}")
        self.i += 1
        return tok[1]

    def expr(self) -> SizeExpr:
        self.depth += 1
        if self.depth > 64:
            raise ParseError("a size expression nests too deeply")
        out = self.term()
        while (tok := self._peek()) in (("op", "+"), ("op", "-")):
            self.i += 1
            out = out + self.term() if tok[1] == "+" else out - self.term()
        self.depth -= 1
        return out

    def term(self) -> SizeExpr:
        neg = self._peek() == ("op", "-")
        if neg:
            self.i += 1
        out = self.factor()
        while self._peek() == ("op", "*"):
            self.i += 1
            out = out * self.factor()
        return -out if neg else out

    def factor(self) -> SizeExpr:
        base = self.atom()
        if self._peek() == ("op", "^"):
            self.i += 1
            k = self._take("int")
            if k > 64:
                raise ParseError("a size exponent is at most 64")
            base = base**k
        return base

    def atom(self) -> SizeExpr:
        tok = self._peek()
        if tok is None:
            raise ParseError(f"not a size expression: {self.text!r:.60}")
        if tok[0] == "int":
            self.i += 1
            return SizeExpr.const(tok[1])
        if tok == ("op", "("):
            self.i += 1
            out = self.expr()
            self._take("op", ")")
            return out
        name = self._take("name")
        if name in ("max", "min"):
            self._take("op", "(")
            args = [self.expr()]
            while self._peek() == ("op", ","):
                self.i += 1
                args.append(self.expr())
            self._take("op", ")")
            if len(args) < 2:
                raise ParseError(f"{name} takes two or more size expressions")
            return size((smax if name == "max" else smin)(*args))
        if name in ("floor", "mod"):
            self._take("op", "(")
            x = self.expr()
            self._take("op", ",")
            k = self._take("int")
            self._take("op", ")")
            if k < 1:
                raise ParseError(f"{name} divides by a positive integer")
            return x // k if name == "floor" else x % k
        return SizeExpr.symbol(name)
